from mteb_evalrank.evaluation.slices import QUARTILE_NAMES

from ._gap import AbsTaskGapSTS, wmt17_metadata


class WMT17DAGranularity(AbsTaskGapSTS):
    metadata = wmt17_metadata(
        name="WMT17DAGranularity",
        description=(
            "WMT17 DA (to-English) subsets by quartile of the gold DA z-score, Sim-Low to Sim-High "
            "(Abe et al., 2022, factor 3)."
        ),
        hf_subsets=[f"gold-{name}" for name in QUARTILE_NAMES],
    )
