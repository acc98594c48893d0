"""The word-level tasks' options ``unknown_words`` and ``vocabulary`` (the conventions:
:mod:`mteb_evalrank.evaluation.unknown_words`), taken once per evaluation, and the background
words of a word-level task (:func:`task_words`)."""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING

from mteb_evalrank.data.sources import read_items
from mteb_evalrank.evaluation import unknown_words as conventions
from mteb_evalrank.settings import VOCABULARY_ENV

from ._encoding import EncodeOnce

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata

    from mteb_evalrank.settings import Settings


class VocabularyOption(EncodeOnce):
    """Mixin of a word-level task class (before its mteb base class).

    Options (class attributes; set them on an instance):
        unknown_words: the convention whose score is the main score (``zero``, default;
            ``covered``, ``vocabulary``, ``mean_vector``: that prefix's).
        vocabulary: the words of the ``vocabulary`` convention; ``None`` (default): the file
            ``Settings.vocabulary`` names (``$MTEB_EVALRANK_VOCABULARY``), else no ``vocabulary_`` scores.

    :attr:`vocabulary_record` goes into each result's scores: ``vocabulary_words`` (the number of
    words) and, for a file, ``vocabulary_file`` (its name) and ``vocabulary_sha256`` (of its bytes).
    """

    metadata: TaskMetadata
    unknown_words: str = "zero"
    vocabulary: frozenset[str] | None = None
    vocabulary_in_use: frozenset[str] | None = None
    """The words of this evaluation's ``vocabulary`` scores (:meth:`use_settings`), or ``None``."""
    vocabulary_record: dict[str, str | int]

    def use_settings(self, settings: Settings) -> None:
        """Check ``unknown_words`` and read the vocabulary file of ``settings`` when the task has no words.

        Raises:
            FileNotFoundError: naming the file.
            mteb_evalrank.data.sources.SourceFormatError: the file is not UTF-8 (``file:line``) or
                holds no word.
        """
        words, self.vocabulary_record = self.vocabulary, {}
        path = settings.vocabulary
        if words is None and path is not None:
            if not path.is_file():
                raise FileNotFoundError(f"vocabulary file {path} not found (given by ${VOCABULARY_ENV})")
            words = frozenset(read_items(path, "words"))
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            self.vocabulary_record = {"vocabulary_file": path.name, "vocabulary_sha256": digest}
        if words is not None:
            self.vocabulary_record["vocabulary_words"] = len(words)
        conventions.check_convention(self.metadata.name, self.unknown_words, words)
        self.vocabulary_in_use = words


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
