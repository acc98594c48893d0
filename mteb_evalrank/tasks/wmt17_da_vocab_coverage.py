"""WMT17DAVocabCoverage: WMT17 DA pairs by vocabulary coverage by STS-B (Abe et al., 2022, 4.2).

``Recall(s, s') = |(s ∪ s') ∩ V_sts| / |s ∪ s'|`` over lower-cased tokens. hf_subsets
``coverage-high`` / ``coverage-low`` (top / bottom 100 pairs, as in the paper) and
``coverage-q1`` (lowest) ... ``coverage-q4`` (quartile bands).
"""

from ._gap import AbsTaskGapSTS, wmt17_metadata


class WMT17DAVocabCoverage(AbsTaskGapSTS):
    metadata = wmt17_metadata(
        name="WMT17DAVocabCoverage",
        description=(
            "WMT17 DA (to-English) subsets by the share of the pair's lower-cased tokens that occur "
            "in STS-B: the 100 best and 100 worst covered pairs and the four quartile bands (Abe et "
            "al., 2022, factor 2)."
        ),
        hf_subsets=["coverage-high", "coverage-low", *(f"coverage-q{i}" for i in range(1, 5))],
    )
