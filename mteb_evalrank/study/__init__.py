"""Studies: every (model, task) job into one results folder, then the correlation report.

>>> from mteb_evalrank.study import run_study
>>> summary = run_study(["evalrank/glove.6B.50d"], ["WordSimMC30"], out="study")  # doctest: +SKIP

Modules: :mod:`.jobs` (the job plan, skipping finished jobs, model families),
:mod:`.chain_execution` (a chain of jobs in one process, atomic result files),
:mod:`.dispatch` (the chains in this process, on a local Dask cluster or a remote scheduler),
:mod:`.api` (``run_study``: check, plan, dispatch with a progress bar, record), :mod:`.timing`
(``study_timing.json``), :mod:`.summary` (``StudySummary``, the report). Embeddings: the
plugin's one cache, :mod:`mteb_evalrank.embedding_cache`.
CLI: ``mteb-evalrank study``.
"""

from .api import StudyInputError, default_downstream, run_study
from .chain_execution import JobOutcome
from .summary import StudySummary

__all__ = [
    "JobOutcome",
    "StudyInputError",
    "StudySummary",
    "default_downstream",
    "run_study",
]
