"""Deprecated alias of :mod:`mteb_evalrank.scores_table` (renamed so that it is not confused with
``mteb_evalrank.correlation.report``); it will be removed in a later release."""

from __future__ import annotations

import warnings

from .scores_table import mean_over_folds, print_scores, score_rows

warnings.warn(
    "mteb_evalrank.reporting is renamed mteb_evalrank.scores_table; import from there.",
    DeprecationWarning,
    stacklevel=2,
)

__all__ = ["mean_over_folds", "print_scores", "score_rows"]
