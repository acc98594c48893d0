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
