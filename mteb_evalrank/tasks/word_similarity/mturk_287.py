from ._common import WordSimilarityTask, word_similarity_metadata


class WordSimMTurk287(WordSimilarityTask):
    min_score, max_score = 1, 5
    metadata = word_similarity_metadata(
        name="WordSimMTurk287",
        description=(
            "MTurk-287 (Radinsky et al., 2011): 287 English word pairs rated for relatedness by "
            "Mechanical Turk workers on a 1-5 scale."
        ),
        reference="https://doi.org/10.1145/1963405.1963455",
        config="mturk-287",
        year=2011,
        bibtex_citation=r"""@inproceedings{radinsky2011word,
  author = {Radinsky, Kira and Agichtein, Eugene and Gabrilovich, Evgeniy and Markovitch, Shaul},
  booktitle = {Proceedings of the 20th International Conference on World Wide Web},
  title = {A Word at a Time: Computing Word Relatedness Using Temporal Semantic Analysis},
  year = {2011},
}""",
    )
