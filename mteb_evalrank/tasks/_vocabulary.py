"""The background words of a word-level task (:func:`task_words`), and the vocabulary file of the
word-level tasks' ``vocabulary`` scores (``$MTEB_EVALRANK_VOCABULARY``; the conventions:
:mod:`mteb_evalrank.evaluation.unknown_words`)."""

from __future__ import annotations

import os
from pathlib import Path

from mteb_evalrank.data.sources import read_items
from mteb_evalrank.evaluation.unknown_words import VOCABULARY_ENV


def environment_vocabulary() -> frozenset[str] | None:
    """The words of the file named by ``$MTEB_EVALRANK_VOCABULARY`` (one per non-blank line,
    surrounding whitespace stripped), ``None`` when it is unset or empty.

    Raises:
        FileNotFoundError: naming the file.
        mteb_evalrank.data.sources.SourceFormatError: the file is not UTF-8 (``file:line``) or
            holds no word.
    """
    name = os.environ.get(VOCABULARY_ENV)
    if not name:
        return None
    path = Path(name)
    if not path.is_file():
        raise FileNotFoundError(f"vocabulary file {path} not found (given by ${VOCABULARY_ENV})")
    return frozenset(read_items(path, "words"))


def task_words(task_name: str = "EvalRankWord") -> list[str]:
    """The distinct words of an EvalRank task's background (its corpus), in corpus order."""
    import mteb

    from mteb_evalrank.tasks._encoding import as_list

    task = mteb.get_task(task_name)
    task.load_data()
    if task.dataset is None:
        raise ValueError(f"{task_name}: no data after load_data()")
    corpus = task.dataset["default"]["test"]["corpus"]
    return list(dict.fromkeys(as_list(corpus["text"])))
