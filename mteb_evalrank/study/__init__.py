"""Studies: every (model, task) job into one results folder, then the correlation report.

>>> from mteb_evalrank.study import run_study
>>> summary = run_study(["evalrank/glove.6B.50d"], ["WordSimMC30"], out="study")  # doctest: +SKIP

Modules: :mod:`.jobs` (the job plan, skipping finished jobs, model families),
:mod:`.runner` (a chain of jobs in one process, atomic result files),
:mod:`.engine` (in-process, local Dask cluster or remote scheduler), :mod:`.core`
(``run_study``: timing, report). Embeddings: the plugin's one cache,
:mod:`mteb_evalrank.embedding_cache`. CLI: ``mteb-evalrank study``.
"""

from typing import Any

from mteb_evalrank.embedding_cache import EncodeStats

from .core import StudyInputError, StudySummary, default_downstream, run_study
from .runner import JobOutcome


def __getattr__(name: str) -> Any:
    if name == "StudyEmbeddingCache":  # deprecated: warns on use, not on import of the package
        from . import embedding_cache

        return embedding_cache.StudyEmbeddingCache
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "EncodeStats",
    "JobOutcome",
    "StudyInputError",
    "StudySummary",
    "default_downstream",
    "run_study",
]
