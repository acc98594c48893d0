"""WordSimMTurk771: mteb STS task on the ``mturk-771`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimMTurk771(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimMTurk771",
        description=(
            "MTurk-771 (Halawi et al., 2012): 771 English word pairs rated for relatedness by "
            "Mechanical Turk workers on a 1-5 scale." + EVALRANK_NOTE
        ),
        reference="https://doi.org/10.1145/2339530.2339751",
        dataset=WORD_SIMILARITY.mteb_dataset("mturk-771"),
        **WORD_SIMILARITY_METADATA,
        date=("2012-01-01", "2012-12-31"),
        bibtex_citation=r"""@inproceedings{halawi2012large,
  author = {Halawi, Guy and Dror, Gideon and Gabrilovich, Evgeniy and Koren, Yehuda},
  booktitle = {Proceedings of the 18th ACM SIGKDD International Conference on Knowledge Discovery and
Data Mining},
  title = {Large-Scale Learning of Word Relatedness with Constraints},
  year = {2012},
}""",
    )

    min_score = 1
    max_score = 5
