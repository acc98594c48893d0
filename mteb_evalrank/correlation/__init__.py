"""Which intrinsic task predicts downstream performance: rank correlations over MTEB results.

>>> from mteb_evalrank.correlation import correlate
>>> result = correlate(["../shared/data/mteb-results"], ["STSBenchmark"], ["Banking77Classification"])
>>> result.to_frame()  # doctest: +SKIP
>>> result.write("out/")  # doctest: +SKIP

See :func:`correlate` (and ``mteb-evalrank correlate --help``), the column syntax in
:mod:`.table` and the statistics in :mod:`.stats`.
"""

from .core import CorrelationResult, correlate
from .results import CorrelationData, PairResult, Settings
from .table import ColumnSpec, CorrelationInputError, load_results, tasks_of_type

__all__ = [
    "ColumnSpec",
    "CorrelationData",
    "CorrelationInputError",
    "CorrelationResult",
    "PairResult",
    "Settings",
    "correlate",
    "load_results",
    "tasks_of_type",
]
