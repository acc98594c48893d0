"""Deprecated alias of :mod:`mteb_evalrank.study.chain_execution` (one chain of jobs in one
process, each result written atomically); it will be removed in a later release."""

from __future__ import annotations

import warnings

from .chain_execution import (
    EMBEDDINGS,
    STAGING,
    ChainReport,
    JobOutcome,
    clear_staging,
    load_cached,
    run_chain,
    run_job,
)

warnings.warn(
    "mteb_evalrank.study.runner is renamed mteb_evalrank.study.chain_execution; import from there.",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "EMBEDDINGS",
    "STAGING",
    "ChainReport",
    "JobOutcome",
    "clear_staging",
    "load_cached",
    "run_chain",
    "run_job",
]
