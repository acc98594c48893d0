"""WordSimWS353Sim: mteb STS task on the ``ws-353-sim`` word-similarity set (see ``_common``)."""

from __future__ import annotations

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import AGIRRE2009_CITATION
from ._common import EVALRANK_NOTE, WORD_SIMILARITY_METADATA, WordSimilarityTask


class WordSimWS353Sim(WordSimilarityTask):
    metadata = PluginTaskMetadata(
        name="WordSimWS353Sim",
        description=(
            "WordSim-353 similarity subset (Agirre et al., 2009): 203 English word pairs of WS-353 "
            "judged similar (synonyms, hypernyms, ...), plus unrelated pairs; 0-10 scale." + EVALRANK_NOTE
        ),
        reference="https://aclanthology.org/N09-1003",
        dataset=WORD_SIMILARITY.mteb_dataset("ws-353-sim"),
        **WORD_SIMILARITY_METADATA,
        date=("2009-01-01", "2009-12-31"),
        bibtex_citation=AGIRRE2009_CITATION,
    )

    min_score = 0
    max_score = 10
