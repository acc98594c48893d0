"""``PluginTaskMetadata``: mteb's ``TaskMetadata`` whose descriptive statistics (which mteb requires
of every non-aggregate task) live in this package, ``mteb_evalrank/descriptive_stats/<TaskType>/
<TaskName>.json``, recomputed by ``mteb-evalrank datasets describe`` (:mod:`._describe`).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from pathlib import Path

from mteb.abstasks.task_metadata import TaskMetadata

#: Where the shipped statistics live: ``<dir>/<TaskType>/<TaskName>.json``.
DESCRIPTIVE_STATS_DIR = Path(__file__).resolve().parent.parent / "descriptive_stats"

#: The statistics folder of this thread (:func:`descriptive_stats_dir`).
_STATS_DIR: ContextVar[Path] = ContextVar("mteb_evalrank_stats_dir", default=DESCRIPTIVE_STATS_DIR)


class PluginTaskMetadata(TaskMetadata):
    """``TaskMetadata`` whose descriptive statistics are stored in the plugin package."""

    @property
    def descriptive_stat_path(self) -> Path:
        """``<stats dir>/<type>/<name>.json`` (:data:`DESCRIPTIVE_STATS_DIR` or this thread's)."""
        return _STATS_DIR.get() / str(self.type) / f"{self.name}.json"


def subset_task_metadata(
    parent: TaskMetadata, *, name: str, description: str, hf_subset: str
) -> PluginTaskMetadata:
    """Metadata of a task that evaluates one hf_subset of ``parent``'s dataset (an ablation or a part):
    ``parent``'s but ``name``, ``description`` and ``eval_langs = {hf_subset: <parent's languages>}``,
    so that mteb loads only that subset."""
    langs = parent.eval_langs
    languages = (
        sorted({lang for group in langs.values() for lang in group}) if isinstance(langs, dict) else langs
    )
    fields = parent.model_dump()
    fields.update(name=name, description=description, eval_langs={hf_subset: languages})
    return PluginTaskMetadata(**fields)


@contextmanager
def descriptive_stats_dir(path: Path | str) -> Iterator[Path]:
    """Read and write every plugin task's statistics under ``path`` for the block (in this thread:
    a :class:`contextvars.ContextVar`, so another thread keeps reading the shipped files)."""
    folder = Path(path)
    token = _STATS_DIR.set(folder)
    try:
        yield folder
    finally:
        _STATS_DIR.reset(token)
