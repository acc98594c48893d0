from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimMTurk771(WordSimilarityTask):
    min_score, max_score = 1, 5
    metadata = word_similarity_metadata(
        name="WordSimMTurk771",
        description=(
            "MTurk-771 (Halawi et al., 2012): 771 English word pairs rated for relatedness by "
            "Mechanical Turk workers on a 1-5 scale."
        ),
        reference="https://doi.org/10.1145/2339530.2339751",
        config="mturk-771",
        year=2012,
        bibtex_citation=r"""@inproceedings{halawi2012large,
  author = {Halawi, Guy and Dror, Gideon and Gabrilovich, Evgeniy and Koren, Yehuda},
  booktitle = {Proceedings of the 18th ACM SIGKDD International Conference on Knowledge Discovery and
Data Mining},
  title = {Large-Scale Learning of Word Relatedness with Constraints},
  year = {2012},
}""",
    )
