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

# Word-similarity baselines of EvalRank (issue 3).
from .tasks.word_similarity import WORD_SIMILARITY_TASKS  # noqa: E402

EVALRANK_WORD_SIMILARITY = Benchmark(
    name="EvalRank-WordSimilarity",
    display_name="EvalRank word similarity",
    tasks=[task() for task in WORD_SIMILARITY_TASKS],
    description=(
        "The 13 word-similarity sets that EvalRank (Wang et al., ACL 2022) uses as baselines "
        "(WS-353 all/rel/sim, MC-30, RG-65, RW, MEN, MTurk-287/771, YP-130, SimLex-999, "
        "Verb-143, SimVerb-3500): Spearman correlation of cosine similarity with human ratings, "
        "one STS task per set."
    ),
    reference="https://aclanthology.org/2022.acl-long.419",
    citation=EVALRANK_CITATION,
)
BENCHMARKS = (*BENCHMARKS, EVALRANK_WORD_SIMILARITY)
