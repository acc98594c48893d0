"""Deprecated alias of :mod:`mteb_evalrank.study.dispatch` (running the chains of a study in this
process, on a local Dask cluster or on a remote one); it will be removed in a later release."""

from __future__ import annotations

import warnings

from .dispatch import CLOSE_TIMEOUT, FORWARDED_ENV, POLL_SECONDS, default_workers, run_chains, worker_env

warnings.warn(
    "mteb_evalrank.study.engine is renamed mteb_evalrank.study.dispatch; import from there.",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["CLOSE_TIMEOUT", "FORWARDED_ENV", "POLL_SECONDS", "default_workers", "run_chains", "worker_env"]
