"""Loading a plugin dataset: ready on first use, or one clear paragraph; quietly.

Every plugin task class puts :class:`PluginDatasetLoading` before its mteb base class; its
``load_data`` is the entry of the data pipeline (:func:`mteb_evalrank.data.ready.load_ready`,
drawn in docs/architecture.md, "Loading a dataset"). :func:`guard_sts_mirrors` gives mteb's own
STS task classes, whose datasets the plugin may mirror, the same check of a damaged mirror, only
when their loading fails and only for a mirror the plugin wrote.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import datasets

from mteb_evalrank._mteb_adapter import hub_switched_off
from mteb_evalrank.data.hub import datasets_progress_bars
from mteb_evalrank.data.mirrors import rebuild_mirror_if_damaged
from mteb_evalrank.data.ready import LOAD_ERRORS, load_ready
from mteb_evalrank.data.registry import spec_for_hub_id
from mteb_evalrank.settings import Settings


@contextmanager
def quiet_datasets() -> Iterator[None]:
    """Lower ``datasets``' logger to errors for the block, if it is at its default (warnings), and
    switch its progress bars (``Casting the dataset``, ...) off."""
    logging = datasets.utils.logging
    before = logging.get_verbosity()
    if before == logging.WARNING:
        logging.set_verbosity_error()
    try:
        with datasets_progress_bars(False):
            yield
    finally:
        logging.set_verbosity(before)


class PluginDatasetLoading:
    """Mixin for the plugin's task classes (put it first among the bases)."""

    metadata: Any
    data_loaded: bool

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return

        def load() -> None:
            with quiet_datasets():
                self._load_plugin_data(num_proc=num_proc, **kwargs)

        spec = spec_for_hub_id(self.metadata.dataset["path"])
        if spec is None:  # a task over the user's own files
            return load()
        load_ready(spec, self.metadata.name, Settings.from_environment(), load)

    def _load_plugin_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """The loading itself: mteb's ``load_data`` unless a task class overrides this."""
        # a mixin: mypy sees only ``object`` above it; at run time the next class in the MRO is mteb's task
        super().load_data(num_proc=num_proc, **kwargs)  # type: ignore[misc]


def guard_sts_mirrors(task_classes: dict[str, Any]) -> None:
    """Wrap ``load_data`` of mteb's STS task classes that the plugin can mirror (idempotent): on a
    loading error, a damaged mirror of the plugin's is repaired and the data loaded again
    (:func:`mteb_evalrank.data.mirrors.rebuild_mirror_if_damaged`); any other error is raised as it was."""
    from mteb_evalrank.data.registry import STS_MIRROR_SPECS

    for mirror in STS_MIRROR_SPECS:
        cls = task_classes.get(mirror.task)
        if cls is None or getattr(cls.load_data, "_mteb_evalrank_guard", False):
            continue
        cls.load_data = _guarded(cls.load_data)


def _guarded(load_data: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(load_data)
    def load(self: Any, *args: Any, **kwargs: Any) -> None:
        settings = Settings.from_environment()
        with nullcontext() if settings.offline is None else hub_switched_off():
            try:
                load_data(self, *args, **kwargs)
            except LOAD_ERRORS:
                if not rebuild_mirror_if_damaged(self.metadata.name, settings):
                    raise
                load_data(self, *args, **kwargs)

    load._mteb_evalrank_guard = True  # type: ignore[attr-defined]
    return load
