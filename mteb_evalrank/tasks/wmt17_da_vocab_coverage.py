"""WMT17DAVocabCoverage: WMT17 DA pairs by vocabulary coverage by STS-B (Abe et al., 2022, 4.2).

``Recall(s, s') = |(s ∪ s') ∩ V_sts| / |s ∪ s'|`` over lower-cased tokens. hf_subsets
``coverage-high`` / ``coverage-low`` (top / bottom 100 pairs, as in the paper) and
``coverage-q1`` (lowest) ... ``coverage-q4`` (quartile bands).
"""

from __future__ import annotations

from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._gap import WMT17_METADATA, WMT17_SOURCE, AbsTaskGapSTS, subsets


class WMT17DAVocabCoverage(AbsTaskGapSTS):
    metadata = PluginTaskMetadata(
        name="WMT17DAVocabCoverage",
        description=(
            "WMT17 DA (to-English) subsets by the share of the pair's lower-cased tokens that occur "
            "in STS-B: the 100 best and 100 worst covered pairs and the four quartile bands (Abe et "
            "al., 2022, factor 2)." + WMT17_SOURCE
        ),
        eval_langs=subsets(["coverage-high", "coverage-low", *(f"coverage-q{i}" for i in range(1, 5))]),
        **WMT17_METADATA,
    )
