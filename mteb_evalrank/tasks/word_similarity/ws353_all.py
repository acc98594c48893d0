"""WordSimWS353All: mteb STS task on the ``ws-353-all`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimWS353All(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimWS353All",
        description=(
            "WordSim-353, all pairs (Finkelstein et al., 2001): 353 English word pairs rated for "
            "relatedness by 13-16 annotators on a 0-10 scale." + EVALRANK_NOTE
        ),
        reference="https://doi.org/10.1145/371920.372094",
        dataset=WORD_SIMILARITY.mteb_dataset("ws-353-all"),
        **WORD_SIMILARITY_METADATA,
        date=("2001-01-01", "2001-12-31"),
        bibtex_citation=r"""@inproceedings{finkelstein2001placing,
  author = {Finkelstein, Lev and Gabrilovich, Evgeniy and Matias, Yossi and Rivlin, Ehud and Solan, Zach
and Wolfman, Gadi and Ruppin, Eytan},
  booktitle = {Proceedings of the 10th International Conference on World Wide Web},
  title = {Placing Search in Context: The Concept Revisited},
  year = {2001},
}""",
    )

    min_score = 0
    max_score = 10
