"""WordSimMC30: mteb STS task on the ``mc-30`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimMC30(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimMC30",
        description=(
            "MC-30 (Miller and Charles, 1991): 30 English noun pairs, a subset of RG-65 re-rated for "
            "similarity on a 0-4 scale." + EVALRANK_NOTE
        ),
        reference="https://doi.org/10.1080/01690969108406936",
        dataset=WORD_SIMILARITY.mteb_dataset("mc-30"),
        **WORD_SIMILARITY_METADATA,
        date=("1991-01-01", "1991-12-31"),
        bibtex_citation=r"""@article{miller1991contextual,
  author = {Miller, George A. and Charles, Walter G.},
  journal = {Language and Cognitive Processes},
  number = {1},
  title = {Contextual Correlates of Semantic Similarity},
  volume = {6},
  year = {1991},
}""",
    )

    min_score = 0
    max_score = 4
