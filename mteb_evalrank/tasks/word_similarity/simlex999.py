from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimSimLex999(WordSimilarityTask):
    min_score, max_score = 0, 10
    metadata = word_similarity_metadata(
        name="WordSimSimLex999",
        description=(
            "SimLex-999 (Hill et al., 2015): 999 English noun, verb and adjective pairs rated for "
            "genuine similarity (not relatedness) on a 0-10 scale."
        ),
        reference="https://aclanthology.org/J15-4004",
        config="simlex-999",
        year=2015,
        bibtex_citation=r"""@article{hill2015simlex,
  author = {Hill, Felix and Reichart, Roi and Korhonen, Anna},
  journal = {Computational Linguistics},
  number = {4},
  title = {{SimLex-999}: Evaluating Semantic Models With (Genuine) Similarity Estimation},
  url = {https://aclanthology.org/J15-4004},
  volume = {41},
  year = {2015},
}""",
    )
