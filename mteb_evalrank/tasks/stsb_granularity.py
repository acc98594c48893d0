import itertools

from mteb_evalrank.data.registry import STSB_GRANULARITY
from mteb_evalrank.evaluation.slices import STS_BAND_EDGES, band_name

from ._citations import ABE2022_CITATION, STSB_CITATION, cite
from ._gap import AbsTaskGapSTS, gap_metadata


class STSBenchmarkGranularity(AbsTaskGapSTS):
    min_score, max_score = 0, 5
    metadata = gap_metadata(
        name="STSBenchmarkGranularity",
        description=(
            "STS Benchmark test pairs split by gold similarity into [0, 1], (1, 2], (2, 3], (3, 4] "
            "and (4, 5] (Abe et al., 2022, factor 3). Main score: Pearson correlation of cosine "
            "similarity with the gold score within each band."
        ),
        dataset=STSB_GRANULARITY.mteb_dataset(),
        hf_subsets=[band_name(lo, hi) for lo, hi in itertools.pairwise(STS_BAND_EDGES)],
        date=("2012-01-01", "2017-12-31"),
        domains=["News", "Social", "Web", "Written"],
        license="multiple",  # STS-B sentences keep the licences of their sources
        bibtex_citation=cite(STSB_CITATION, ABE2022_CITATION),
    )
