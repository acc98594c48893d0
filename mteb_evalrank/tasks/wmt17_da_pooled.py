from ._gap import AbsTaskGapSTS, wmt17_metadata


class WMT17DAPooled(AbsTaskGapSTS):
    metadata = wmt17_metadata(
        name="WMT17DAPooled",
        description=(
            "WMT17 segment-level direct assessment, to-English, the 7 language pairs pooled into one "
            "set of 3,795 pairs (hf_subset all of the dataset); WMT17DA is the per-language-pair "
            "mean."
        ),
        hf_subsets=["all"],
    )
