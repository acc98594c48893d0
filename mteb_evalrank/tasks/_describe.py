"""``mteb-evalrank datasets describe``: recompute the descriptive statistics files of the plugin's
tasks (apart from :mod:`._metadata`, which every task file imports, because it reads ``TASKS``)."""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from ._metadata import DESCRIPTIVE_STATS_DIR, descriptive_stats_dir

if TYPE_CHECKING:
    from mteb.abstasks import AbsTask


def regenerate_descriptive_stats(
    tasks: Iterable[type[AbsTask]] | None = None,
    out_dir: Path | str | None = None,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Path]:
    """Recompute and write the descriptive statistics of plugin tasks (mteb's
    ``calculate_descriptive_statistics(overwrite_results=True)``, data built first if needed); returns
    name -> file. Tasks of one :func:`same_data_groups` group are computed once and the others get a
    copy. For all tasks (``tasks`` None), files of tasks that no longer exist are removed.

    Args:
        tasks: task classes (default: ``mteb_evalrank.tasks.TASKS``).
        out_dir: statistics folder (default: :data:`DESCRIPTIVE_STATS_DIR`, the package's own).
        progress: called with one line per task written."""
    from mteb_evalrank.tasks import TASKS

    written: dict[str, Path] = {}
    say = progress or (lambda line: None)
    with descriptive_stats_dir(out_dir or DESCRIPTIVE_STATS_DIR) as stats_dir:
        for first, *others in same_data_groups(TASKS if tasks is None else tasks):
            task = first()
            if task.is_aggregate:  # mteb keeps no statistics for aggregate tasks
                continue
            task.calculate_descriptive_statistics(overwrite_results=True)
            task.unload_data()
            source = task.metadata.descriptive_stat_path
            for cls in (first, *others):
                path = cls.metadata.descriptive_stat_path
                if path != source:
                    shutil.copyfile(source, path)
                written[cls.metadata.name] = path
                note = "" if cls is first else f" (same data as {first.metadata.name})"
                say(f"{cls.metadata.name}: {path}{note}")
        if tasks is None:
            for stale in remove_stale_stats(stats_dir, set(written.values())):
                say(f"removed {stale} (no such plugin task)")
    return written


def same_data_groups(tasks: Iterable[type[AbsTask]]) -> list[list[type[AbsTask]]]:
    """``tasks`` grouped by the data mteb describes, in first-seen order: a task joins a group with the
    same type, dataset, splits and subsets when it subclasses the group's first without defining
    ``load_data`` or ``dataset_transform`` (then mteb's statistics are one computation)."""
    groups: dict[str, list[list[type[AbsTask]]]] = {}
    order: list[list[type[AbsTask]]] = []
    for cls in tasks:
        meta = cls.metadata
        key = json.dumps(
            [meta.type, meta.dataset, meta.eval_splits, meta.hf_subsets], sort_keys=True, default=str
        )
        same_data = not {"load_data", "dataset_transform"} & set(vars(cls))
        for group in groups.get(key, []):
            if same_data and issubclass(cls, group[0]):
                group.append(cls)
                break
        else:
            group = [cls]
            groups.setdefault(key, []).append(group)
            order.append(group)
    return order


def remove_stale_stats(stats_dir: Path, keep: set[Path]) -> list[Path]:
    """Delete the ``*.json`` files under ``stats_dir`` not in ``keep`` (and emptied folders)."""
    keep = {path.resolve() for path in keep}
    stale = sorted(path for path in stats_dir.rglob("*.json") if path.resolve() not in keep)
    for path in stale:
        path.unlink()
        if not any(path.parent.iterdir()):
            path.parent.rmdir()
    return stale
