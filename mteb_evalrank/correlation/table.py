"""From mteb result folders (``ResultCache`` layout) or a score table to a model x column score table.

Columns (``Task``: main score, mean over the split's subsets, union over models, a model lacking
one has none; ``Task:subset``, ``Task:subset:metric``, ``Task::metric``, ``Task:*``) and the
revision choice (newest by ``mteb_version``, ties: more tasks, then name; or ``merge``):
docs/correlation.md. Damaged files are skipped and noted (:mod:`mteb_evalrank.result_files`).
"""

from __future__ import annotations

import difflib
import logging
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

if TYPE_CHECKING:
    import pandas as pd
    from mteb.results import TaskResult

logger = logging.getLogger(__name__)


class CorrelationInputError(ValueError):
    """Bad input to the correlation analysis: the message says what is wrong and what to do."""


@dataclass(frozen=True)
class ColumnSpec:
    """One score column: ``Task``, ``Task:subset``, ``Task:subset:metric`` (see module docstring)."""

    task: str
    subset: str | None = None
    metric: str | None = None

    @classmethod
    def parse(cls, text: str) -> ColumnSpec:
        parts = text.split(":")
        if not parts[0] or len(parts) > 3:
            raise CorrelationInputError(
                f"column {text!r}: write Task, Task:subset or Task:subset:metric (Task::metric for the mean)"
            )
        subset = parts[1] if len(parts) > 1 and parts[1] else None
        metric = parts[2] if len(parts) > 2 and parts[2] else None
        return cls(parts[0], subset, metric)

    @property
    def label(self) -> str:
        text = self.task if self.subset is None else f"{self.task}:{self.subset}"
        return text if self.metric is None else f"{text}{':' if self.subset else '::'}{self.metric}"


def task_names(columns: Iterable[str | ColumnSpec]) -> list[str]:
    """The tasks of score columns (each once, in order); ``"dim"`` (the dimension control) is none."""
    specs = (ColumnSpec.parse(c) if isinstance(c, str) else c for c in columns if c != "dim")
    return list(dict.fromkeys(spec.task for spec in specs))


@dataclass
class ModelScores:
    """The task results of one (model, revision), its embedding dimension, parameter count (None: unknown)."""

    name: str
    revision: str
    tasks: dict[str, TaskResult]
    embed_dim: int | None
    dim_source: str
    n_parameters: int | None = None


@dataclass
class LoadedResults:
    """One revision per model, after the model filters, plus what the selection left out."""

    models: dict[str, ModelScores]
    folders: list[str]
    notes: list[str] = field(default_factory=list)
    scores: pd.DataFrame | None = None
    """Set when read from a score table (:func:`load_score_table`): model x label."""

    def task_names(self) -> set[str]:
        if self.scores is not None:
            return {str(label).split(":")[0] for label in self.scores.columns}
        return {task for model in self.models.values() for task in model.tasks}


@dataclass
class ScoreTable:
    """Scores as a model x column frame (NaN = missing) with a description of each column."""

    frame: pd.DataFrame
    describe: dict[str, str]
    loaded: LoadedResults


def _version_key(version: str | None) -> tuple[int, ...]:
    from packaging.version import InvalidVersion, Version

    if not version:
        return (-1,)
    try:
        return Version(version).release
    except InvalidVersion:
        return (-1,)


def _revision_key(tasks: Mapping[str, TaskResult], revision: str) -> tuple[Any, ...]:
    """Newest first: highest mteb_version of its results, then more tasks, then the name."""
    return (max(_version_key(t.mteb_version) for t in tasks.values()), len(tasks), revision)


def _meta_int(name: str, meta: Any, key: str = "embed_dim") -> tuple[int | None, str]:
    """A positive int field of the model's meta, else of mteb's registry, and its source (None, "unknown")."""
    value = getattr(meta, key, None) if meta is not None else None
    source = "model_meta"
    if not isinstance(value, int):
        from mteb_evalrank._mteb_adapter import model_registry

        registered = model_registry().get(name)
        value = getattr(registered, key, None)
        source = "mteb registry"
    return (value, source) if isinstance(value, int) and value > 0 else (None, "unknown")


def _unreadable(cache: Any, error: Exception) -> str:
    """Name the result file mteb cannot read (load_results fails as a whole on the first one)."""
    from mteb.results import TaskResult

    from mteb_evalrank.result_files import result_damage

    for path in cache.get_cache_paths(include_remote=False, require_model_meta=False):
        if result_damage(path) is not None:  # skipped by load_result_folder, with a warning
            continue
        try:
            TaskResult.from_disk(path)
        except (KeyError, ValueError) as file_error:
            return (
                f"{path}: mteb cannot read this result ({file_error}). Results written before mteb "
                "1.12.48 need the task registered with mteb: import the package that defines it "
                "(this plugin's tasks are registered on import), or remove the file."
            )
    return f"{cache.cache_path}: mteb cannot read the results: {error}"


def load_results(
    folders: Sequence[str | Path],
    *,
    models: Iterable[str] | None = None,
    model_regex: str | None = None,
    revisions: Mapping[str, str] | None = None,
    revision_policy: str = "newest",
    tasks: Sequence[str] | None = None,
) -> LoadedResults:
    """Read result folders (``ResultCache``) or one score table, and keep one revision per model. With
    ``tasks`` (names), or ``models`` named, the folders' other results are not read (nor noted when
    outdated or damaged)."""
    if revision_policy not in ("newest", "merge"):
        raise CorrelationInputError(f"revision policy {revision_policy!r}: use 'newest' or 'merge'")

    if not folders:
        raise CorrelationInputError("no result folder given")
    tables = [Path(f) for f in folders if Path(f).suffix.lower() == ".csv"]
    if tables:
        if len(folders) > 1:
            raise CorrelationInputError(
                f"give either one score table ({tables[0]}) or result folders, not both / not several tables"
            )
        if revisions or revision_policy != "newest":
            raise CorrelationInputError(f"{tables[0]}: a score table records no revisions (--revision*)")
        return load_score_table(tables[0], models=models, model_regex=model_regex)
    named = None if models is None else list(models)  # read twice: the folders, then the selection
    merged, metas, notes = _read_folders(folders, tasks, named)
    by_model: dict[str, list[str]] = {}  # model -> its revisions
    for name, revision in merged:
        by_model.setdefault(name, []).append(revision)
    selected = _select_models(by_model, named, model_regex, "result folders")
    revisions = dict(revisions or {})
    for name in sorted(set(revisions) - set(selected)):
        raise CorrelationInputError(f"--revision {name}=...: model {name!r} is not in the selected results")
    chosen = {
        name: _choose_revision(
            name, by_model[name], merged, metas, revisions.get(name), revision_policy, notes
        )
        for name in selected
    }
    return LoadedResults(chosen, [str(f) for f in folders], notes)


def _read_folders(
    folders: Sequence[str | Path],
    only_tasks: Sequence[str] | None = None,
    only_models: Sequence[str] | None = None,
) -> tuple[dict[tuple[str, str], dict[str, TaskResult]], dict[tuple[str, str], Any], list[str]]:
    """Each (model, revision)'s task results over the folders (a later folder wins), its meta, and notes."""
    from mteb.cache import ResultCache

    from mteb_evalrank.result_files import load_result_folder

    merged: dict[tuple[str, str], dict[str, TaskResult]] = {}
    metas: dict[tuple[str, str], Any] = {}
    notes: list[str] = []
    for folder in map(Path, folders):
        if not folder.is_dir():
            raise CorrelationInputError(
                f"{folder}: no such folder: pass the folder given to mteb's --output-folder."
            )
        if not (folder / "results").is_dir():
            raise CorrelationInputError(
                f"{folder} holds no 'results/' folder: pass a folder in ResultCache layout "
                "(the one given to mteb's --output-folder, holding "
                "results/<org__model>/<revision>/<Task>.json)."
            )
        try:
            loaded, skipped = load_result_folder(folder, only_tasks, only_models)
        except (KeyError, ValueError) as error:
            raise CorrelationInputError(_unreadable(ResultCache(folder), error)) from error
        notes += skipped
        if not loaded.model_results and (skipped or not _result_files([str(folder)])):  # not filtered out
            if skipped:
                raise CorrelationInputError(
                    f"{folder}/results: {len(skipped)} result file(s), all damaged: " + "; ".join(skipped)
                )
            raise CorrelationInputError(f"{folder}/results holds no task results (no <Task>.json files)")
        for model in loaded.model_results:
            # mteb names the folder of a result without a model revision "no_revision_available"
            key = (model.model_name, model.model_revision or "no_revision_available")
            tasks = merged.setdefault(key, {})
            for task in model.task_results:
                if task.task_name in tasks:
                    notes.append(
                        f"{model.model_name}@{model.model_revision} {task.task_name}: taken from {folder}"
                    )
                tasks[task.task_name] = task
            if model.model_meta is not None or key not in metas:
                metas[key] = model.model_meta
    return merged, metas, notes


def _select_models(
    names: Iterable[str], models: Iterable[str] | None, model_regex: str | None, where: str
) -> list[str]:
    """The ``names`` (sorted) named in ``models`` and matching ``model_regex``; errors name the models
    not in ``where`` and an empty selection."""
    names = sorted(names)
    if models is not None:
        wanted = set(models)
        if unknown := sorted(wanted - set(names)):
            raise CorrelationInputError(f"models not in the {where}: {', '.join(unknown)}")
        names = [n for n in names if n in wanted]
    if model_regex:
        pattern = re.compile(model_regex)
        names = [n for n in names if pattern.search(n)]
    if not names:
        raise CorrelationInputError("no model left after the model filters (--models / --model-regex)")
    return names


def _choose_revision(
    name: str,
    revs: list[str],
    merged: Mapping[tuple[str, str], dict[str, TaskResult]],
    metas: Mapping[tuple[str, str], Any],
    requested: str | None,
    revision_policy: str,
    notes: list[str],
) -> ModelScores:
    """Model ``name``'s scores: the ``requested`` revision, the newest, or (``merge``) per task; noted."""
    ordered = sorted(revs, key=lambda r: _revision_key(merged[(name, r)], r), reverse=True)
    if requested is not None:
        if requested not in revs:
            raise CorrelationInputError(
                f"model {name}: revision {requested!r} not found; available: {', '.join(sorted(revs))}"
            )
        ordered = [requested]
    if revision_policy == "merge" and len(ordered) > 1:
        combined: dict[str, TaskResult] = {}
        for revision in reversed(ordered):  # newest last, so it wins
            combined.update(merged[(name, revision)])
        dim, source = next(
            (d for r in ordered if (d := _meta_int(name, metas.get((name, r))))[0] is not None),
            (None, "unknown"),
        )
        label = "+".join(ordered)
        notes.append(f"{name}: revisions merged per task, newest first: {', '.join(ordered)}")
        n_parameters, _ = _meta_int(name, metas.get((name, ordered[0])), "n_parameters")
        return ModelScores(name, label, combined, dim, source, n_parameters)
    revision = ordered[0]
    if len(revs) > 1:
        others = ", ".join(r for r in sorted(revs) if r != revision)
        notes.append(f"{name}: revision {revision} used; also present: {others}")
    dim, source = _meta_int(name, metas.get((name, revision)))
    n_parameters, _ = _meta_int(name, metas.get((name, revision)), "n_parameters")
    return ModelScores(name, revision, merged[(name, revision)], dim, source, n_parameters)


def load_score_table(
    path: str | Path, *, models: Iterable[str] | None = None, model_regex: str | None = None
) -> LoadedResults:
    """Read a model x label score table (CSV, first column the model name; see module docstring)."""
    import pandas as pd

    path = Path(path)
    if not path.is_file():
        raise CorrelationInputError(f"score table {path} not found")
    frame = pd.read_csv(path, index_col=0)
    if frame.index.has_duplicates or frame.empty:
        raise CorrelationInputError(f"{path}: need one row per model (first column) and one column per label")
    try:
        frame = frame.astype(float)
    except ValueError as error:
        raise CorrelationInputError(f"{path}: scores must be numbers: {error}") from None
    frame.index = frame.index.astype(str)
    frame.index.name = "model"
    names = _select_models(frame.index, models, model_regex, "score table")
    chosen = {
        name: ModelScores(name, "", {}, *_meta_int(name, None), _meta_int(name, None, "n_parameters")[0])
        for name in names
    }
    return LoadedResults(chosen, [str(path)], [], frame.loc[names])


def tasks_of_type(loaded: LoadedResults, task_type: str, language: str | None = None) -> list[str]:
    """Tasks in the results whose mteb metadata has ``type == task_type`` (and the language, ISO 639-3)."""
    import mteb

    names = []
    unknown = []
    for name in sorted(loaded.task_names()):
        try:
            metadata = mteb.get_task(name).metadata
        except KeyError:
            unknown.append(name)
            continue
        if metadata.type == task_type and (language is None or language in metadata.languages):
            names.append(name)
    if unknown:
        loaded.notes.append(f"tasks unknown to mteb, not selectable by type: {', '.join(unknown)}")
    if not names:
        raise CorrelationInputError(
            f"no task of type {task_type!r}{f' in language {language!r}' if language else ''} in the results"
        )
    return names


#: the downstream protocols, each correlated on its own (docs/correlation.md): name -> what its tasks measure
PROTOCOLS = {
    "senteval": "the SentEval transfer tasks under SentEval's protocol: the accuracy of a logistic "
    "regression trained on the frozen sentence vectors of the whole training split",
    "sequence-labelling": "Chiu et al.'s (2016) sequence labelling: a window tagger trained over frozen "
    "word vectors (POS tagging accuracy, chunking and NER F1)",
    "classification": "mteb's own classification protocol (a classifier trained on the frozen vectors of a "
    "few examples per label), for every other task of mteb type Classification",
}


def downstream_protocol(task: str) -> str | None:
    """The downstream protocol of ``task`` (:data:`PROTOCOLS`): ``senteval``, ``sequence-labelling``, any
    other mteb Classification task ``classification``; ``None`` for an intrinsic or unknown task.
    """
    import mteb

    from mteb_evalrank.tasks import SENTEVAL_PROTOCOL_TASKS, SEQUENCE_LABELLING_TASKS

    for protocol, classes in (
        ("senteval", SENTEVAL_PROTOCOL_TASKS),
        ("sequence-labelling", SEQUENCE_LABELLING_TASKS),
    ):
        if task in {cls.metadata.name for cls in classes}:
            return protocol
    try:
        is_classification = mteb.get_task(task).metadata.type == "Classification"
    except KeyError:
        return None
    return "classification" if is_classification else None


def by_protocol(tasks: Iterable[str]) -> dict[str, list[str]]:
    """The downstream tasks among ``tasks`` per protocol (:data:`PROTOCOLS` order); the others left out."""
    found: dict[str, list[str]] = {name: [] for name in PROTOCOLS}
    for task in tasks:
        if (protocol := downstream_protocol(task)) is not None:
            found[protocol].append(task)
    return {name: group for name, group in found.items() if group}


def default_downstream(tasks: Sequence[str]) -> list[str]:
    """The tasks of ``tasks`` that belong to a downstream protocol, in their given order."""
    return [name for name in tasks if downstream_protocol(name) is not None]


def column_protocols(labels: Iterable[str]) -> dict[str, list[str]]:
    """:func:`by_protocol` of the tasks of the column labels ``labels``."""
    return by_protocol(dict.fromkeys(ColumnSpec.parse(label).task for label in labels))


def tasks_of_protocol(loaded: LoadedResults, protocol: str) -> list[str]:
    """The tasks in the results of the downstream ``protocol`` (a key of :data:`PROTOCOLS`)."""
    if protocol not in PROTOCOLS:
        raise CorrelationInputError(f"protocol {protocol!r}: use one of {', '.join(PROTOCOLS)}")
    names = by_protocol(sorted(loaded.task_names())).get(protocol, [])
    if not names:
        raise CorrelationInputError(f"no task of the downstream protocol {protocol!r} in the results")
    return names


def intrinsic_columns(tasks: Sequence[str]) -> list[str]:
    """Correlation rows: ``Task`` for a one-subset task, else one ``Task:subset`` per subset."""
    import mteb

    columns = []
    for name in tasks:
        try:
            subsets = mteb.get_task(name).metadata.hf_subsets
        except KeyError:  # a task mteb does not know: its main score, as the correlation module reads it
            subsets = []
        columns += [f"{name}:{subset}" for subset in subsets] if len(subsets) > 1 else [name]
    return columns


def _closest(name: str, options: Iterable[str]) -> str:
    close = difflib.get_close_matches(name, list(options), n=3)
    return f" Did you mean: {', '.join(close)}?" if close else ""


def _result_files(folders: Iterable[str]) -> set[str]:
    """The task names of the result files in ``folders`` (also those not read: a table reads only its
    tasks' results), as mteb's ``ResultCache`` lists them."""
    from mteb.cache import ResultCache

    return {
        path.stem
        for folder in folders
        for path in ResultCache(folder).get_cache_paths(include_remote=False, require_model_meta=False)
    }


def _split_entries(loaded: LoadedResults, task: str, split: str) -> dict[str, list[Mapping[str, Any]]]:
    """Per model: the score dicts of ``task`` in ``split``; errors if no model has the task or the split."""
    having = {name: m.tasks[task] for name, m in loaded.models.items() if task in m.tasks}
    if not having:
        raise CorrelationInputError(
            f"unknown task {task!r}: no selected model has results for it."
            f"{_closest(task, loaded.task_names() | _result_files(loaded.folders))}"
        )
    entries = {name: result.scores[split] for name, result in having.items() if split in result.scores}
    if not entries:
        splits = sorted({s for result in having.values() for s in result.scores})
        raise CorrelationInputError(
            f"task {task}: no results in split {split!r}; available splits: {', '.join(splits)} (use --split)"
        )
    return entries


def expand_columns(loaded: LoadedResults, specs: Iterable[str | ColumnSpec], split: str) -> list[ColumnSpec]:
    """Parse column specs and expand ``Task:*`` into one column per subset (in sorted order)."""
    out: list[ColumnSpec] = []
    for spec in specs:
        column = spec if isinstance(spec, ColumnSpec) else ColumnSpec.parse(spec)
        if loaded.scores is not None and column.subset == "*":
            prefix = f"{column.task}:"
            found = [ColumnSpec.parse(str(c)) for c in loaded.scores.columns if str(c).startswith(prefix)]
            found = [c for c in found if c.subset is not None and c.metric == column.metric]
            if not found:
                raise CorrelationInputError(f"no column {column.label} in the score table")
            out.extend(sorted(found, key=lambda c: _natural_key(c.subset or "")))
            continue
        if column.subset != "*":
            out.append(column)
            continue
        entries = _split_entries(loaded, column.task, split)
        subsets = sorted({e["hf_subset"] for rows in entries.values() for e in rows}, key=_natural_key)
        out.extend(ColumnSpec(column.task, subset, column.metric) for subset in subsets)
    labels = [c.label for c in out]
    if duplicated := sorted({label for label in labels if labels.count(label) > 1}):
        raise CorrelationInputError(f"columns given twice: {', '.join(duplicated)}")
    return out


def _natural_key(text: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", text)]


def column_scores(loaded: LoadedResults, column: ColumnSpec, split: str) -> tuple[dict[str, float], str]:
    """Score of every model that has ``column`` and a sentence describing how it was computed."""
    if loaded.scores is not None:
        if column.label not in loaded.scores.columns:
            labels = [str(c) for c in loaded.scores.columns]
            raise CorrelationInputError(
                f"no column {column.label!r} in the score table {loaded.folders[0]}."
                f"{_closest(column.label, labels)}"
            )
        values = loaded.scores[column.label].dropna()
        return {str(k): float(v) for k, v in values.items()}, f"column {column.label} of {loaded.folders[0]}"
    entries = _split_entries(loaded, column.task, split)
    subsets = sorted({e["hf_subset"] for rows in entries.values() for e in rows}, key=_natural_key)
    if column.subset is not None and column.subset not in subsets:
        raise CorrelationInputError(
            f"task {column.task}: no subset {column.subset!r} in split {split}; "
            f"available: {', '.join(subsets)}.{_closest(column.subset, subsets)}"
        )
    use = [column.subset] if column.subset is not None else subsets
    metric = column.metric or "main_score"
    metrics = {key for rows in entries.values() for e in rows for key in e}
    if metric not in metrics:
        available = sorted(metrics - {"hf_subset", "languages"})
        raise CorrelationInputError(
            f"task {column.task}: no metric {metric!r}; available: {', '.join(available)}."
            f"{_closest(metric, available)}"
        )
    scores: dict[str, float] = {}
    for name, rows in entries.items():
        by_subset = {e["hf_subset"]: e.get(metric) for e in rows}
        values = [by_subset.get(subset) for subset in use]
        if all(isinstance(v, (int, float)) and np.isfinite(v) for v in values):
            scores[name] = float(np.mean(values))
    what = "main score" if column.metric is None else f"metric {metric}"
    where = f"subset {column.subset}" if column.subset else f"mean over subsets {', '.join(use)}"
    return scores, f"{what}, {where}, split {split}"


def build_table(loaded: LoadedResults, columns: Sequence[ColumnSpec], split: str = "test") -> ScoreTable:
    """The model x column frame of scores (NaN where a model lacks a column)."""
    import pandas as pd

    data: dict[str, dict[str, float]] = {}
    describe: dict[str, str] = {}
    for column in columns:
        data[column.label], describe[column.label] = column_scores(loaded, column, split)
    frame = pd.DataFrame(data, index=sorted(loaded.models), columns=[c.label for c in columns], dtype=float)
    frame.index.name = "model"
    return ScoreTable(frame, describe, loaded)
