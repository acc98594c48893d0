"""``mteb-evalrank datasets describe``: recompute the descriptive statistics files of the plugin's tasks.

Kept apart from :mod:`._metadata` (which every task file imports) because it reads the list of all
tasks, :data:`mteb_evalrank.tasks.TASKS`: the task modules never import back from here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ._metadata import DESCRIPTIVE_STATS_DIR, descriptive_stats_dir


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
    with descriptive_stats_dir(out_dir or DESCRIPTIVE_STATS_DIR) as stats_dir:
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
            for stale in remove_stale_stats(stats_dir, set(written.values())):
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
