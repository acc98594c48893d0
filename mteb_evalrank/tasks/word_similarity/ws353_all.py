from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimWS353All(WordSimilarityTask):
    min_score, max_score = 0, 10
    metadata = word_similarity_metadata(
        name="WordSimWS353All",
        description=(
            "WordSim-353, all pairs (Finkelstein et al., 2001): 353 English word pairs rated for "
            "relatedness by 13-16 annotators on a 0-10 scale."
        ),
        reference="https://doi.org/10.1145/371920.372094",
        config="ws-353-all",
        year=2001,
        bibtex_citation=r"""@inproceedings{finkelstein2001placing,
  author = {Finkelstein, Lev and Gabrilovich, Evgeniy and Matias, Yossi and Rivlin, Ehud and Solan, Zach
and Wolfman, Gadi and Ruppin, Eytan},
  booktitle = {Proceedings of the 10th International Conference on World Wide Web},
  title = {Placing Search in Context: The Concept Revisited},
  year = {2001},
}""",
    )
