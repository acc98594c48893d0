"""WordSimMTurk287: mteb STS task on the ``mturk-287`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimMTurk287(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimMTurk287",
        description=(
            "MTurk-287 (Radinsky et al., 2011): 287 English word pairs rated for relatedness by "
            "Mechanical Turk workers on a 1-5 scale." + EVALRANK_NOTE
        ),
        reference="https://doi.org/10.1145/1963405.1963455",
        dataset=WORD_SIMILARITY.mteb_dataset("mturk-287"),
        **WORD_SIMILARITY_METADATA,
        date=("2011-01-01", "2011-12-31"),
        bibtex_citation=r"""@inproceedings{radinsky2011word,
  author = {Radinsky, Kira and Agichtein, Eugene and Gabrilovich, Evgeniy and Markovitch, Shaul},
  booktitle = {Proceedings of the 20th International Conference on World Wide Web},
  title = {A Word at a Time: Computing Word Relatedness Using Temporal Semantic Analysis},
  year = {2011},
}""",
    )

    min_score = 1
    max_score = 5
