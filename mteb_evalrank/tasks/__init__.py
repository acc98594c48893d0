"""The plugin's mteb task classes, one task per file."""

from ._evalrank import AbsTaskEvalRank
from .evalrank_sent import EvalRankSent
from .evalrank_word import EvalRankWord

TASKS: tuple[type, ...] = (EvalRankWord, EvalRankSent)

__all__ = ["TASKS", "AbsTaskEvalRank", "EvalRankSent", "EvalRankWord"]
