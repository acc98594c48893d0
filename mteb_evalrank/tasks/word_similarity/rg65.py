from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimRG65(WordSimilarityTask):
    min_score, max_score = 0, 4
    metadata = word_similarity_metadata(
        name="WordSimRG65",
        description=(
            "RG-65 (Rubenstein and Goodenough, 1965): 65 English noun pairs rated for synonymy on a 0-4"
            " scale, the oldest word-similarity set."
        ),
        reference="https://doi.org/10.1145/365628.365657",
        config="rg-65",
        year=1965,
        bibtex_citation=r"""@article{rubenstein1965contextual,
  author = {Rubenstein, Herbert and Goodenough, John B.},
  journal = {Communications of the ACM},
  number = {10},
  title = {Contextual Correlates of Synonymy},
  volume = {8},
  year = {1965},
}""",
    )
