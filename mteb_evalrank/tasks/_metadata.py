"""``PluginTaskMetadata``: mteb's ``TaskMetadata`` with the descriptive statistics in this package.

mteb requires descriptive statistics for every non-aggregate task (``metadata.descriptive_stats``,
``metadata.n_samples``), computed by ``AbsTask.calculate_descriptive_statistics`` and stored with
the task so they are available without loading the data. mteb's ``TaskMetadata`` keeps them in
mteb's own package folder; every plugin task declares its metadata with
:class:`PluginTaskMetadata` instead, whose ``descriptive_stat_path`` is

    mteb_evalrank/descriptive_stats/<TaskType>/<TaskName>.json

inside this package (shipped in the wheel). :func:`regenerate_descriptive_stats` (the command
``mteb-evalrank datasets describe``) recomputes them, with mteb's own code, from the built
datasets.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from mteb.abstasks.task_metadata import TaskMetadata

#: Where the shipped statistics live: ``<dir>/<TaskType>/<TaskName>.json``.
DESCRIPTIVE_STATS_DIR = Path(__file__).resolve().parent.parent / "descriptive_stats"

_stats_dir: Path = DESCRIPTIVE_STATS_DIR


class PluginTaskMetadata(TaskMetadata):
    """``TaskMetadata`` whose descriptive statistics are stored in the plugin package."""

    @property
    def descriptive_stat_path(self) -> Path:
        """``<stats dir>/<type>/<name>.json`` (the stats dir is :data:`DESCRIPTIVE_STATS_DIR`)."""
        return _stats_dir / str(self.type) / f"{self.name}.json"


def subset_task_metadata(
    parent: TaskMetadata, *, name: str, description: str, hf_subset: str
) -> PluginTaskMetadata:
    """Metadata of a task that evaluates one hf_subset of ``parent``'s dataset (an ablation or a part).

    Everything is ``parent``'s except ``name``, ``description`` and ``eval_langs``, which becomes
    ``{hf_subset: <parent's languages>}``: mteb then loads only that subset, so the task's one
    headline number is that subset's score. Validated like any ``TaskMetadata``.
    """
    langs = parent.eval_langs
    languages = (
        sorted({lang for group in langs.values() for lang in group}) if isinstance(langs, dict) else langs
    )
    fields = parent.model_dump()
    fields.update(name=name, description=description, eval_langs={hf_subset: languages})
    return PluginTaskMetadata(**fields)


@contextmanager
def descriptive_stats_dir(path: Path | str) -> Iterator[Path]:
    """Read and write every plugin task's statistics under ``path`` for the block."""
    global _stats_dir
    before, _stats_dir = _stats_dir, Path(path)
    try:
        yield _stats_dir
    finally:
        _stats_dir = before


def normalised(stats: Any) -> Any:
    """``stats`` as stored in a JSON file (tuples become lists, keys strings)."""
    return json.loads(json.dumps(stats))


def regenerate_descriptive_stats(
    tasks: Iterable[type] | None = None,
    out_dir: Path | str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Path]:
    """Recompute and write the descriptive statistics of plugin tasks; returns name -> file.

    Each task's data are loaded (built first from ``$MTEB_EVALRANK_SOURCE`` if not installed),
    described by mteb's ``calculate_descriptive_statistics(overwrite_results=True)`` and unloaded.
    For all tasks (``tasks`` is ``None``), files of tasks that no longer exist (renamed, split, or
    of another type) are removed (:func:`remove_stale_stats`).

    Args:
        tasks: task classes (default: every registered plugin task, ``mteb_evalrank.tasks.TASKS``).
        out_dir: statistics folder (default: :data:`DESCRIPTIVE_STATS_DIR`, the package's own).
        progress: called with one line per task written.
    """
    from mteb_evalrank.tasks import TASKS

    written: dict[str, Path] = {}
    with descriptive_stats_dir(out_dir or DESCRIPTIVE_STATS_DIR):
        for cls in TASKS if tasks is None else tasks:
            task = cls()
            if task.is_aggregate:  # mteb keeps no statistics for aggregate tasks
                continue
            task.calculate_descriptive_statistics(overwrite_results=True)
            task.unload_data()
            written[task.metadata.name] = task.metadata.descriptive_stat_path
            if progress is not None:
                progress(f"{task.metadata.name}: {task.metadata.descriptive_stat_path}")
        if tasks is None:
            for stale in remove_stale_stats(_stats_dir, set(written.values())):
                if progress is not None:
                    progress(f"removed {stale} (no such plugin task)")
    return written


def remove_stale_stats(stats_dir: Path, keep: set[Path]) -> list[Path]:
    """Delete the ``*.json`` files under ``stats_dir`` not in ``keep`` (and emptied folders)."""
    keep = {path.resolve() for path in keep}
    stale = sorted(path for path in stats_dir.rglob("*.json") if path.resolve() not in keep)
    for path in stale:
        path.unlink()
        if not any(path.parent.iterdir()):
            path.parent.rmdir()
    return stale
