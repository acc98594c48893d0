"""Benchmarks (task collections) registered by the plugin."""

from __future__ import annotations

from mteb.benchmarks.benchmark import Benchmark

from .tasks import EvalRankSent, EvalRankWord
from .tasks._citations import EVALRANK_CITATION

EVALRANK = Benchmark(
    name="EvalRank",
    display_name="EvalRank",
    tasks=[EvalRankWord(), EvalRankSent()],
    description=(
        "EvalRank (Wang et al., ACL 2022): word- and sentence-level retrieval-style intrinsic "
        "evaluation. Each positive pair is scored by its rank among all background items; "
        "the paper shows it correlates with downstream performance far better than word or "
        "sentence similarity."
    ),
    reference="https://aclanthology.org/2022.acl-long.419",
    citation=EVALRANK_CITATION,
)

BENCHMARKS: tuple[Benchmark, ...] = (EVALRANK,)
