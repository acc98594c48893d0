"""WMT17DAGranularity: WMT17 DA pairs in quartile bands of the DA score (Abe et al., 2022, 4.3).

hf_subsets ``gold-low`` [min, Q1], ``gold-midlow`` (Q1, Q2], ``gold-midhigh`` (Q2, Q3],
``gold-high`` (Q3, max]: the paper's Sim-Low, Sim-MidLow, Sim-MidHigh, Sim-High.
"""

from __future__ import annotations

from mteb_evalrank.evaluation.slices import QUARTILE_NAMES
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._gap import WMT17_METADATA, WMT17_SOURCE, AbsTaskGapSTS, subsets


class WMT17DAGranularity(AbsTaskGapSTS):
    metadata = PluginTaskMetadata(
        name="WMT17DAGranularity",
        description=(
            "WMT17 DA (to-English) subsets by quartile of the gold DA z-score, Sim-Low to Sim-High "
            "(Abe et al., 2022, factor 3)." + WMT17_SOURCE
        ),
        eval_langs=subsets([f"gold-{name}" for name in QUARTILE_NAMES]),
        **WMT17_METADATA,
    )
