"""WordSimRG65: mteb STS task on the ``rg-65`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimRG65(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimRG65",
        description=(
            "RG-65 (Rubenstein and Goodenough, 1965): 65 English noun pairs rated for synonymy on a 0-4"
            " scale, the oldest word-similarity set." + EVALRANK_NOTE
        ),
        reference="https://doi.org/10.1145/365628.365657",
        dataset=WORD_SIMILARITY.mteb_dataset("rg-65"),
        **WORD_SIMILARITY_METADATA,
        date=("1965-01-01", "1965-12-31"),
        bibtex_citation=r"""@article{rubenstein1965contextual,
  author = {Rubenstein, Herbert and Goodenough, John B.},
  journal = {Communications of the ACM},
  number = {10},
  title = {Contextual Correlates of Synonymy},
  volume = {8},
  year = {1965},
}""",
    )

    min_score = 0
    max_score = 4
