from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimSimVerb3500(WordSimilarityTask):
    min_score, max_score = 0, 10
    metadata = word_similarity_metadata(
        name="WordSimSimVerb3500",
        description=(
            "SimVerb-3500 (Gerz et al., 2016): 3,500 English verb pairs rated for similarity on a 0-10 scale."
        ),
        reference="https://aclanthology.org/D16-1235",
        config="simverb-3500",
        year=2016,
        bibtex_citation=r"""@inproceedings{gerz2016simverb,
  author = {Gerz, Daniela and Vuli{\'c}, Ivan and Hill, Felix and Reichart, Roi and Korhonen, Anna},
  booktitle = {Proceedings of the 2016 Conference on Empirical Methods in Natural Language Processing},
  title = {{SimVerb-3500}: A Large-Scale Evaluation Set of Verb Similarity},
  url = {https://aclanthology.org/D16-1235},
  year = {2016},
}""",
    )
