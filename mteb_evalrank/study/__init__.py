"""Studies: every (model, task) job into one results folder, then the correlation report (docs/study.md).

:mod:`.jobs` (plan), :mod:`.chain_execution` (one chain), :mod:`.dispatch` (local, Dask),
:mod:`.api` (``run_study``), :mod:`.timing`, :mod:`.summary`. CLI: ``mteb-evalrank study``.
"""

from .api import StudyInputError, default_downstream, run_study
from .chain_execution import JobOutcome
from .summary import StudySummary

__all__ = ["JobOutcome", "StudyInputError", "StudySummary", "default_downstream", "run_study"]
