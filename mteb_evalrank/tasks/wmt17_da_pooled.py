"""WMT17DAPooled: WMT17DA's seven to-English language pairs pooled into one STS set (``all``).

Data: ``mteb-evalrank/wmt17-da``, hf_subset ``all`` (3,795 pairs). See ``_gap``.
"""

from __future__ import annotations

from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._gap import WMT17_METADATA, WMT17_SOURCE, AbsTaskGapSTS, subsets


class WMT17DAPooled(AbsTaskGapSTS):
    metadata = PluginTaskMetadata(
        name="WMT17DAPooled",
        description=(
            "WMT17 segment-level direct assessment, to-English, the 7 language pairs pooled into one "
            "set of 3,795 pairs (hf_subset all of the dataset); WMT17DA is the per-language-pair "
            "mean." + WMT17_SOURCE
        ),
        eval_langs=subsets(["all"]),
        **WMT17_METADATA,
    )
