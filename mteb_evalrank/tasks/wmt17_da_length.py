from mteb_evalrank.evaluation.slices import PAPER_LENGTH_WINDOWS, window_name

from ._gap import AbsTaskGapSTS, wmt17_metadata


class WMT17DALength(AbsTaskGapSTS):
    metadata = wmt17_metadata(
        name="WMT17DALength",
        description=(
            "WMT17 DA (to-English) subsets by mean sentence length of the pair, windows [0, 40) to "
            "[30, 70), each sampled to follow the STS-B length distribution (Abe et al., 2022, "
            "factor 1)."
        ),
        hf_subsets=[window_name(window) for window in PAPER_LENGTH_WINDOWS],
    )
