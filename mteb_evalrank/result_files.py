"""Reading an mteb result folder when some of its files are damaged or outdated (the rule:
docs/faults.md): :func:`load_result_folder` for reading (nothing changes on disk),
:func:`result_is_done` for a study (which moves such results aside).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from mteb_evalrank._files import CORRUPT_SUFFIX, move_aside, read_json_object

if TYPE_CHECKING:
    from mteb.results import BenchmarkResults

MODEL_META = "model_meta.json"
_FIRST_CURRENT_FORMAT = (1, 11)
"""mteb writes the current ``TaskResult`` format since 1.11.0; older files have other keys."""


class DamagedResultWarning(UserWarning):
    """A result file (or ``model_meta.json``) could not be parsed and was skipped."""


class OutdatedResultWarning(UserWarning):
    """A result was written for another dataset revision than its task now reads."""


def outdated(task_name: str, dataset_revision: str | None) -> str | None:
    """Why a result of ``task_name`` is outdated, or ``None``: only a task registered with mteb
    whose dataset revision differs from the result's counts (unknown tasks are not judged)."""
    import mteb

    try:
        current = mteb.get_task(task_name).metadata.dataset.get("revision")
    except (KeyError, ValueError):
        return None
    if not current or not dataset_revision or str(current) == str(dataset_revision):
        return None
    return f"written for dataset revision {dataset_revision!r}, the task now reads {current!r}"


def missing_scores(task_name: str, scores: Any, requested: Sequence[str] = ()) -> str | None:
    """Why a study redoes a result of ``task_name``, or ``None``: it lacks one of the task's
    ``required_scores`` (an older version of the task wrote it) or of the ``requested`` scores."""
    import mteb

    try:
        required = tuple(getattr(mteb.get_task(task_name), "required_scores", ()))
    except (KeyError, ValueError):
        return None
    entries = [entry for rows in (scores or {}).values() for entry in rows if isinstance(entry, dict)]
    lacking = sorted({key for entry in entries for key in required if key not in entry})
    if lacking:
        return f"written by an older version of the task: no {', '.join(lacking)} score"
    unasked = sorted({key for entry in entries for key in requested if key not in entry})
    return f"run without the score(s) asked for now: no {', '.join(unasked)}" if unasked else None


def _rerun(task: str, model: str, folder: Path) -> str:
    return f"mteb run -t {task} -m {model} --output-folder {folder} --overwrite-strategy always"


def _json_object(path: Path) -> tuple[dict[str, Any] | None, str | None]:
    """``(data, None)`` for a file holding a JSON object, else ``(None, what is wrong)``."""
    try:
        data = json.loads(path.read_bytes())
    except OSError as error:
        return None, f"unreadable ({error.strerror or error})"
    except UnicodeDecodeError as error:
        return None, f"not UTF-8 (byte 0x{error.object[error.start]:02x} at offset {error.start})"
    except ValueError as error:
        return None, f"not valid JSON ({error})"
    if not isinstance(data, dict):
        return None, f"not a JSON object (a {type(data).__name__})"
    return data, None


def _validation_summary(error: Any) -> str:
    """A pydantic ``ValidationError`` in a few words: the missing keys, else its first problem."""
    problems = error.errors()
    missing = [".".join(map(str, p["loc"])) for p in problems if p["type"] == "missing"]
    if missing:
        return f"missing key(s) {', '.join(missing)}"
    first = problems[0]
    return f"{'.'.join(map(str, first['loc']))}: {first['msg']}"


def result_damage(path: Path) -> str | None:
    """What is wrong with a result file, or ``None``: damaged is not UTF-8, not JSON, not a JSON
    object, or a current-format result (mteb >= 1.11) that mteb's ``TaskResult`` refuses."""
    from mteb.results import TaskResult
    from packaging.version import InvalidVersion, Version
    from pydantic import ValidationError

    data, problem = _json_object(path)
    if data is None:
        return problem
    try:
        version = Version(str(data["mteb_version"])).release if "mteb_version" in data else None
    except InvalidVersion:
        version = None
    if version is None or version < _FIRST_CURRENT_FORMAT:
        return None if "task_name" in data or "mteb_dataset_name" in data else "missing key(s) task_name"
    try:
        TaskResult.model_validate(data)
    except ValidationError as error:
        return _validation_summary(error)
    return None


def model_meta_damage(path: Path) -> str | None:
    """What is wrong with a ``model_meta.json``, or ``None`` (it names the model and revision)."""
    data, problem = _json_object(path)
    if data is None:
        return problem
    missing = [key for key in ("name", "revision") if not isinstance(data.get(key), str)]
    return f"missing key(s) {', '.join(missing)}" if missing else None


def find_damaged(
    folder: Path, tasks: Sequence[str] | None = None, models: Sequence[str] | None = None
) -> dict[Path, str]:
    """The damaged files of a result folder (result files of ``tasks`` and ``models``, and their
    models' ``model_meta.json``)."""
    from mteb.cache import ResultCache

    paths = ResultCache(folder).get_cache_paths(
        models=list(models) if models else None, tasks=list(tasks) if tasks else None,
        include_remote=False, require_model_meta=False,
    )  # fmt: skip
    metas = sorted((folder / "results").rglob(MODEL_META))
    if models:  # a model's folder name as mteb's filter of the result paths writes it
        named = {name.replace("/", "__").replace(" ", "_") for name in models}
        metas = [meta for meta in metas if meta.parent.parent.name in named]
    damaged: dict[Path, str] = {}
    for path in [*paths, *metas]:
        problem = model_meta_damage(path) if path.name == MODEL_META else result_damage(path)
        if problem is not None:
            damaged[path] = problem
    return damaged


def result_is_done(path: Path, requested: Sequence[str] = ()) -> bool:
    """Whether ``path`` holds a usable result with every ``requested`` score; a damaged one is moved
    aside to ``<name>.corrupt``, an outdated or incomplete one to ``<name>.outdated``, one warning each."""
    if not path.is_file():
        return False
    category: type[UserWarning] = DamagedResultWarning
    suffix = CORRUPT_SUFFIX
    problem = result_damage(path)
    if problem is None:
        data = read_json_object(path) or {}  # not damaged: a JSON object
        task = str(data.get("task_name", path.stem))
        scores = data.get("scores")
        problem = outdated(task, data.get("dataset_revision")) or missing_scores(task, scores, requested)
        if problem is None:
            return True
        category, suffix = OutdatedResultWarning, ".outdated"
    target = move_aside(path, suffix)
    warnings.warn(
        f"{path}: {problem}; moved aside to {target.name}, the job runs again.", category, stacklevel=2
    )
    return False


def _warn(folder: Path, path: Path, problem: str) -> str:
    """Warn once about a damaged file (saying how to write it again); return the message."""
    model = path.parent.parent.name.replace("__", "/")
    if path.name == MODEL_META:
        message = (
            f"{path}: {problem}; ignored: the model name and revision are taken from the folder names "
            f"({model}, {path.parent.name})."
        )
    else:
        message = (
            f"{path}: {problem}; skipped. To write it again: {_rerun(path.stem, model, folder)} "
            "(or move the file away)."
        )
    warnings.warn(message, DamagedResultWarning, stacklevel=3)
    return message


def load_result_folder(
    folder: Path, tasks: Sequence[str] | None = None, models: Sequence[str] | None = None
) -> tuple[BenchmarkResults, list[str]]:
    """mteb's ``load_results`` of a result folder (only ``tasks``' and ``models``' results, if given),
    skipping its damaged files (read through a temporary copy), one warning each; the results and the
    warnings' messages, outdated results among them (only of what was read). mteb's error on a file that
    is not damaged (a result of mteb < 1.12.48 for a task mteb does not know) is raised for the caller
    to name."""
    from mteb.cache import ResultCache

    def load(root: Path) -> BenchmarkResults:
        return ResultCache(root).load_results(
            models=list(models) if models else None, tasks=list(tasks) if tasks else None,
            include_remote=False, require_model_meta=False,
        )  # fmt: skip

    try:
        results = load(folder)
        return results, _flag_outdated(results, folder)
    except (KeyError, ValueError, OSError, AttributeError, TypeError):  # mteb's reader on a bad file
        damaged = find_damaged(folder, tasks, models)
        if not damaged:
            raise
    messages = [_warn(folder, path, problem) for path, problem in sorted(damaged.items())]
    skip = {path.resolve() for path in damaged}
    with tempfile.TemporaryDirectory(prefix="mteb-evalrank-results-") as copy:

        def ignore(directory: str, names: list[str]) -> list[str]:
            return [name for name in names if (Path(directory) / name).resolve() in skip]

        shutil.copytree(folder / "results", Path(copy) / "results", ignore=ignore)
        results = load(Path(copy))
    return results, messages + _flag_outdated(results, folder)


def _flag_outdated(results: BenchmarkResults, folder: Path) -> list[str]:
    """One :class:`OutdatedResultWarning` per :func:`outdated` result (kept); the messages."""
    messages = []
    for model in results.model_results:
        for task in model.task_results:
            stale = outdated(task.task_name, task.dataset_revision)
            if stale is None:
                continue
            revision = model.model_revision or "no_revision_available"
            path = (
                folder / "results" / model.model_name.replace("/", "__") / revision / f"{task.task_name}.json"
            )
            rerun = _rerun(task.task_name, model.model_name, folder)
            message = f"{path}: {stale}; kept. To write it again: {rerun}."
            warnings.warn(message, OutdatedResultWarning, stacklevel=3)
            messages.append(message)
    return messages
