from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimMC30(WordSimilarityTask):
    min_score, max_score = 0, 4
    metadata = word_similarity_metadata(
        name="WordSimMC30",
        description=(
            "MC-30 (Miller and Charles, 1991): 30 English noun pairs, a subset of RG-65 re-rated for "
            "similarity on a 0-4 scale."
        ),
        reference="https://doi.org/10.1080/01690969108406936",
        config="mc-30",
        year=1991,
        bibtex_citation=r"""@article{miller1991contextual,
  author = {Miller, George A. and Charles, Walter G.},
  journal = {Language and Cognitive Processes},
  number = {1},
  title = {Contextual Correlates of Semantic Similarity},
  volume = {6},
  year = {1991},
}""",
    )
