"""Deprecated alias of :mod:`mteb_evalrank.suites` (the mteb ``Benchmark`` suites; renamed so that it
is not confused with the speed benchmarks of the top-level ``benchmarks/`` folder); it will be removed
in a later release."""

from __future__ import annotations

import warnings

from .suites import (
    BENCHMARKS,
    EVALRANK,
    EVALRANK_DOWNSTREAM,
    EVALRANK_DOWNSTREAM_SENTEVAL,
    EVALRANK_STUDY,
    EVALRANK_WORD_SIMILARITY,
    STUDY_STS_TASKS,
)

warnings.warn(
    "mteb_evalrank.benchmarks is renamed mteb_evalrank.suites; import from there.",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "BENCHMARKS",
    "EVALRANK",
    "EVALRANK_DOWNSTREAM",
    "EVALRANK_DOWNSTREAM_SENTEVAL",
    "EVALRANK_STUDY",
    "EVALRANK_WORD_SIMILARITY",
    "STUDY_STS_TASKS",
]
