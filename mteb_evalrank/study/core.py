"""Deprecated alias of :mod:`mteb_evalrank.study.api` (``run_study``), which was split into
:mod:`~mteb_evalrank.study.api` (the entry point and its steps), :mod:`~mteb_evalrank.study.summary`
(``StudySummary`` and the report) and :mod:`~mteb_evalrank.study.timing` (``study_timing.json``);
it will be removed in a later release."""

from __future__ import annotations

import warnings

from .api import StudyInputError, default_downstream, resolve_tasks, run_study
from .summary import OUTCOMES, REPORT, StudySummary, intrinsic_columns, write_report
from .timing import TIMING, with_history

warnings.warn(
    "mteb_evalrank.study.core is renamed mteb_evalrank.study.api (run_study), with StudySummary and "
    "write_report in mteb_evalrank.study.summary and with_history in mteb_evalrank.study.timing; "
    "import from there.",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = [
    "OUTCOMES",
    "REPORT",
    "TIMING",
    "StudyInputError",
    "StudySummary",
    "default_downstream",
    "intrinsic_columns",
    "resolve_tasks",
    "run_study",
    "with_history",
    "write_report",
]
