"""EvalRank on your own data (docs/evalrank.md, "EvalRank on your own data"): a pair file and a
background file as an :class:`~mteb_evalrank.tasks.AbsTaskEvalRank` task, fed from memory.

Files (UTF-8, blank lines skipped, whitespace stripped): pairs ``left<TAB>right`` (``right`` ranked
for ``left``; no reverse pair added); background one item per line (duplicates dropped). The
task's background is the pair items in first-appearance order, then the background file's items,
deduplicated (as ``EvalRankSent`` is built). ``$MTEB_EVALRANK_TASKS_FROM_FILES``
(``NAME=PAIRS,BACKGROUND[,strict][,allow_identical]``, ``;``-separated) registers such tasks
(:func:`tasks_from_settings`).
"""

from __future__ import annotations

import functools
import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
from mteb.abstasks.task_metadata import TaskMetadata

from mteb_evalrank.data.layout import SPLIT, config_names, evalrank_configs
from mteb_evalrank.data.sources import SourceFormatError, read_items, read_lines, read_pairs, unique_in_order
from mteb_evalrank.settings import TASKS_FROM_FILES_ENV as ENV_VAR

from ._evalrank import EVALRANK_METADATA, AbsTaskEvalRank

if TYPE_CHECKING:
    from collections.abc import Sequence

    from mteb_evalrank.settings import Settings

logger = logging.getLogger(__name__)

#: the options an entry of ``$MTEB_EVALRANK_TASKS_FROM_FILES`` may give after its two paths
ENV_OPTIONS = ("strict", "allow_identical")


@dataclass(frozen=True)
class EvalRankFiles:
    """Where a task's data come from and how they are checked (see :func:`read_evalrank_files`)."""

    pairs: Path
    background: Path
    strict: bool = False
    allow_identical: bool = False

    def digest(self) -> str:
        """First 16 hex digits of the SHA-256 of both files (the task's dataset revision)."""
        sha = hashlib.sha256(self.pairs.read_bytes())
        sha.update(b"\0")
        sha.update(self.background.read_bytes())
        return sha.hexdigest()[:16]


@dataclass(frozen=True)
class EvalRankData:
    """A checked background (no duplicates, every pair item in it) and its positive pairs."""

    background: list[str]
    pairs: list[tuple[str, str]]
    n_added: int
    n_duplicate_lines: int


def _check_pairs(
    path: Path, pairs: Sequence[tuple[str, str]], lines: Sequence[int], allow_identical: bool
) -> None:
    """Refuse identical sides (unless allowed) and repeated pairs, naming ``file:line``."""
    first_line: dict[tuple[str, str], int] = {}
    for line_no, (left, right) in zip(lines, pairs, strict=True):
        if left == right and not allow_identical:
            raise SourceFormatError(
                path,
                line_no,
                f"left and right are the same item {left!r}: such a pair ranks 1 by definition. "
                "Remove it, or pass allow_identical=True to keep it (the EvalRank release has 13).",
            )
        if (left, right) in first_line:
            raise SourceFormatError(
                path,
                line_no,
                f"the pair repeats line {first_line[left, right]}; each pair counts once "
                "(the reverse direction is a different pair, on its own line).",
            )
        first_line[left, right] = line_no


def _missing_items(
    files: EvalRankFiles, pairs: Sequence[tuple[str, str]], lines: Sequence[int], items: Sequence[str]
) -> list[str]:
    """The pair items absent from the background file, in order; with ``strict``, an error instead."""
    known = set(items)
    missing = unique_in_order(side for pair in pairs for side in pair if side not in known)
    if missing and files.strict:
        line_no = next(n for n, pair in zip(lines, pairs, strict=True) if missing[0] in pair)
        raise SourceFormatError(
            files.pairs,
            line_no,
            f"{missing[0]!r} is not in the background file {files.background} "
            f"({len(missing)} pair item(s) in all are missing; strict=True refuses them, "
            "strict=False adds them to the background).",
        )
    return missing


def read_evalrank_files(files: EvalRankFiles) -> EvalRankData:
    """Read and check a pair file and a background file (the module docstring); returns the task's
    background and the pairs in file order.

    Raises:
        FileNotFoundError: a file does not exist.
        mteb_evalrank.data.sources.SourceFormatError: (a ``ValueError``) naming ``file:line``
            for a line that is not ``left<TAB>right`` with two non-empty fields, a pair whose
            sides are the same item (unless ``allow_identical``), a repeated pair, a pair item
            missing from the background file (with ``strict``); naming the file for an empty file."""
    for path, what in ((files.pairs, "pair"), (files.background, "background")):
        if not path.is_file():
            raise FileNotFoundError(f"{what} file {path} not found")
    pairs = read_pairs(files.pairs)
    lines = [line_no for line_no, _ in read_lines(files.pairs)]  # read_pairs keeps every non-blank line
    _check_pairs(files.pairs, pairs, lines, files.allow_identical)
    items = read_items(files.background)
    if not items:
        raise SourceFormatError(files.background, None, "the file holds no background items")
    missing = _missing_items(files, pairs, lines, items)
    if missing:
        logger.warning(
            "%s: %d pair item(s) not in the background file %s were added to the background, e.g. %r "
            "(strict=True refuses them).",
            files.pairs,
            len(missing),
            files.background,
            missing[0],
        )
    n_duplicates = len(items) - len(set(items))
    if n_duplicates:
        logger.info(
            "%s: %d duplicate line(s) dropped (first occurrence kept).", files.background, n_duplicates
        )
    background = unique_in_order((side for pair in pairs for side in pair), items)
    return EvalRankData(background, pairs, len(missing), n_duplicates)


def retrieval_split(data: EvalRankData) -> RetrievalSplitData:
    """The data in the form mteb's retrieval loader gives a task (corpus, queries, qrels dict)."""
    corpus, queries, qrels = (
        evalrank_configs("default", data.background, data.pairs)[name][SPLIT]
        for name in config_names("default")
    )
    relevant: dict[str, dict[str, int]] = {}
    for query_id, doc_id, score in zip(qrels["query-id"], qrels["corpus-id"], qrels["score"], strict=True):
        relevant.setdefault(query_id, {})[doc_id] = int(score)
    return RetrievalSplitData(corpus=corpus, queries=queries, relevant_docs=relevant, top_ranked=None)


class FilesEvalRankTask(AbsTaskEvalRank):
    """An EvalRank task over local files (:func:`evalrank_task_from_files`): ``files`` and the ``data``
    they held when the class was made (its ``dataset.revision`` is their digest)."""

    files: ClassVar[EvalRankFiles]
    data: ClassVar[EvalRankData]

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """The class's data in mteb's retrieval form (from memory; no ``datasets`` cache is involved)."""
        if self.data_loaded:
            return
        self.dataset = {"default": {SPLIT: retrieval_split(self.data)}}
        self.dataset_transform(num_proc=num_proc)
        self.data_loaded = True


def _task_class(files: EvalRankFiles, name: str, metadata: dict[str, Any]) -> type[FilesEvalRankTask]:
    """The task class over ``files`` (read and checked here), as registration adds it to mteb."""
    data = read_evalrank_files(files)
    description = (
        f"EvalRank (Wang et al., 2022) on local files: each of {len(data.pairs)} positive pairs of "
        f"{files.pairs.name} is scored by the rank of its right item among all {len(data.background)} "
        f"background items ({files.background.name} plus the pair items) for its left item, on "
        "mean-centred embeddings with exact tie handling."
    )
    dataset = {"path": str(files.pairs), "revision": files.digest()}
    meta = TaskMetadata(**{
        "name": name, "description": description, "dataset": dataset, **EVALRANK_METADATA,
        "eval_splits": [SPLIT], "license": "not specified", **metadata,
    })  # fmt: skip
    return type(
        f"FilesEvalRank_{meta.dataset['revision']}",
        (FilesEvalRankTask,),
        {"metadata": meta, "files": files, "data": data, "__module__": __name__},
    )


def evalrank_task_from_files(
    pairs: Path | str,
    background: Path | str,
    name: str,
    *,
    strict: bool = False,
    allow_identical: bool = False,
    **metadata: Any,
) -> AbsTaskEvalRank:
    """An EvalRank task (usable with ``mteb.evaluate``) over your own positive pairs and background.

    Args:
        pairs: ``left<TAB>right`` per line, ranked in the direction given (list both directions to
            score both).
        background: one item per line; duplicates are dropped (first occurrence kept).
        name: the task's name (``metadata.name``).
        strict: refuse a pair item missing from the background file (naming the pair's ``file:line``)
            instead of adding it to the background with one warning.
        allow_identical: keep pairs whose two sides are the same item (rank 1) instead of refusing them.
        **metadata: ``TaskMetadata`` fields replacing the defaults, e.g. ``eval_langs``, ``domains``.

    The files are read and checked here (:func:`read_evalrank_files`); ``dataset.revision`` is the
    first 16 hex digits of the SHA-256 of both files."""
    files = EvalRankFiles(Path(pairs).resolve(), Path(background).resolve(), strict, allow_identical)
    task = _task_class(files, name, metadata)()
    task.load_data()
    return task


# ----------------------------------------------------------------- the command line
def parse_environment(value: str) -> list[tuple[str, EvalRankFiles]]:
    """The entries of ``$MTEB_EVALRANK_TASKS_FROM_FILES``: ``NAME=PAIRS,BACKGROUND[,OPTION...]``
    separated by ``;``, options from :data:`ENV_OPTIONS`; relative paths from the current folder."""
    entries: list[tuple[str, EvalRankFiles]] = []
    for entry in filter(None, (part.strip() for part in value.split(";"))):
        name, equals, rest = (part.strip() for part in entry.partition("="))
        fields = [field.strip() for field in rest.split(",")]
        options = set(fields[2:])
        if not equals or not name or len(fields) < 2 or not all(fields[:2]) or options - set(ENV_OPTIONS):
            raise ValueError(
                f"${ENV_VAR}: entry {entry!r} is not NAME=PAIRS,BACKGROUND[,strict][,allow_identical]."
            )
        if name in (known for known, _ in entries):
            raise ValueError(f"${ENV_VAR}: the task name {name!r} is given twice.")
        files = EvalRankFiles(
            Path(fields[0]).resolve(), Path(fields[1]).resolve(), *(o in options for o in ENV_OPTIONS)
        )
        entries.append((name, files))
    return entries


@functools.cache
def _classes_for(value: str) -> tuple[type[FilesEvalRankTask], ...]:
    """One class per entry, made once per process (registration must see the same objects)."""
    return tuple(_task_class(files, name, {}) for name, files in parse_environment(value))


def tasks_from_settings(settings: Settings) -> tuple[type[FilesEvalRankTask], ...]:
    """The task classes ``settings.tasks_from_files`` lists (none when it is empty), which
    ``mteb_evalrank.register()`` (and so the ``mteb`` CLI) registers.

    Raises:
        TaskFilesError: a malformed entry, a file that does not exist, or (naming ``file:line``)
            a malformed file.
    """
    try:
        return _classes_for(settings.tasks_from_files)
    except (OSError, ValueError) as error:
        message = str(error)
        raise TaskFilesError(
            message if message.startswith(f"${ENV_VAR}") else f"${ENV_VAR}: {message}"
        ) from None


def declared_task_names(settings: Settings) -> list[str]:
    """The task names ``settings.tasks_from_files`` declares (its ``NAME=`` parts), files unread."""
    entries = settings.tasks_from_files.split(";")
    return [name for entry in entries if (name := entry.partition("=")[0].strip())]


class TaskFilesError(ValueError):
    """``$MTEB_EVALRANK_TASKS_FROM_FILES`` is malformed or names a missing or malformed file."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)
