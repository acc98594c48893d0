"""Which intrinsic task predicts downstream performance: rank correlations over MTEB results.

:func:`correlate`, the columns in :mod:`.table`, the statistics in :mod:`.stats`; docs/correlation.md.
"""

from .core import CorrelationResult, correlate
from .results import CorrelationData, PairResult, Settings
from .table import ColumnSpec, CorrelationInputError, load_results, tasks_of_type

__all__ = [
    "ColumnSpec", "CorrelationData", "CorrelationInputError", "CorrelationResult", "PairResult", "Settings",
    "correlate", "load_results", "tasks_of_type",
]  # fmt: skip
