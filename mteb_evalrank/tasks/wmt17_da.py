from ._gap import WMT17_LANGUAGE_PAIRS, AbsTaskGapSTS, wmt17_metadata


class WMT17DA(AbsTaskGapSTS):
    metadata = wmt17_metadata(
        name="WMT17DA",
        description=(
            "WMT17 segment-level direct assessment, to-English, 7 language pairs (score: the mean "
            "over language pairs): the application task against which Abe et al. (2022) measure "
            "the evaluation gap of STS-B."
        ),
        hf_subsets=WMT17_LANGUAGE_PAIRS,
    )
