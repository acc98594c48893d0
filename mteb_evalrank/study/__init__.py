"""Studies: every (model, task) job into one results folder, then the correlation report.

>>> from mteb_evalrank.study import run_study
>>> summary = run_study(["evalrank/glove.6B.50d"], ["WordSimMC30"], out="study")  # doctest: +SKIP

Modules: :mod:`.jobs` (the job plan, skipping finished jobs, model families),
:mod:`.runner` (a chain of jobs in one process, atomic result files),
:mod:`.embedding_cache` (one disk embedding cache per model across tasks),
:mod:`.engine` (in-process, local Dask cluster or remote scheduler), :mod:`.core`
(``run_study``: timing, report). CLI: ``mteb-evalrank study``.
"""

from .core import StudyInputError, StudySummary, default_downstream, run_study
from .embedding_cache import EncodeStats, StudyEmbeddingCache
from .runner import JobOutcome

__all__ = [
    "EncodeStats",
    "JobOutcome",
    "StudyEmbeddingCache",
    "StudyInputError",
    "StudySummary",
    "default_downstream",
    "run_study",
]
