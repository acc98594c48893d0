"""Loading a plugin dataset: ready on first use, or one clear paragraph; quietly.

Every plugin task class puts :class:`PluginDatasetLoading` before its mteb base class. Its
``load_data``

1. gets the task's dataset family ready (:func:`mteb_evalrank.data.ready.ready_dataset`:
   fetched, built and published on first use; offline and missing, one
   :class:`~mteb_evalrank.data.ready.DatasetNotAvailableError` naming what to run);
2. runs mteb's own ``load_data`` with the ``datasets`` logger lowered to errors for the call,
   unless the user set it more verbose (offline, ``datasets`` warns "Using the latest cached
   version of the dataset" once per config: 70 lines for the main job), with the Hugging Face
   Hub switched off unless the copy is a Hub download and the process is online
   (:func:`mteb_evalrank._network.hub_allowed`);
3. after a failed load, has the copy checked (:func:`mteb_evalrank.data.ready.rebuild_if_damaged`):
   a damaged local build is replaced and loaded again, or named; anything else is raised as it was.

:func:`guard_sts_mirrors` gives mteb's own STS task classes, whose datasets the plugin may
mirror (``datasets build --sts-mirrors``), the same check of a damaged mirror
(:func:`mteb_evalrank.data.ready.rebuild_mirror_if_damaged`): only when their loading fails, and
only for a mirror the plugin wrote; their loading is otherwise unchanged (offline, without the Hub).
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import datasets

from mteb_evalrank._mteb_adapter import hub_switched_off
from mteb_evalrank._network import hub_allowed, offline_flag
from mteb_evalrank.data.hub import datasets_progress_bars
from mteb_evalrank.data.ready import ready_dataset, rebuild_if_damaged, rebuild_mirror_if_damaged
from mteb_evalrank.data.registry import spec_for_hub_id
from mteb_evalrank.data.repair import LOAD_ERRORS


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
        spec = spec_for_hub_id(self.metadata.dataset["path"])
        if spec is None:  # a task over the user's own files
            with quiet_datasets():
                self._load_plugin_data(num_proc=num_proc, **kwargs)
            return
        location = ready_dataset(spec, self.metadata.name)
        try:
            with quiet_datasets(), nullcontext() if hub_allowed(location) else hub_switched_off():
                self._load_plugin_data(num_proc=num_proc, **kwargs)
        except LOAD_ERRORS:
            if not rebuild_if_damaged(spec, self.metadata.name):
                raise
            with quiet_datasets(), hub_switched_off():  # built again from the raw data
                self._load_plugin_data(num_proc=num_proc, **kwargs)

    def _load_plugin_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """The loading itself: mteb's ``load_data`` unless a task class overrides this."""
        # a mixin: mypy sees only ``object`` above it; at run time the next class in the MRO is mteb's task
        super().load_data(num_proc=num_proc, **kwargs)  # type: ignore[misc]


def guard_sts_mirrors(task_classes: dict[str, Any]) -> None:
    """Wrap ``load_data`` of mteb's STS task classes that the plugin can mirror (idempotent).

    On a loading error, a damaged mirror of the plugin's is repaired and the data loaded again,
    or one :class:`~mteb_evalrank.data.repair.DatasetDamagedError` names it
    (:func:`~mteb_evalrank.data.ready.rebuild_mirror_if_damaged`); any other error is raised as it was.
    """
    from mteb_evalrank.data.registry import STS_MIRROR_SPECS

    for mirror in STS_MIRROR_SPECS:
        cls = task_classes.get(mirror.task)
        if cls is None or getattr(cls.load_data, "_mteb_evalrank_guard", False):
            continue
        cls.load_data = _guarded(cls.load_data)


def _guarded(load_data: Callable[..., None]) -> Callable[..., None]:
    @functools.wraps(load_data)
    def load(self: Any, *args: Any, **kwargs: Any) -> None:
        with nullcontext() if offline_flag() is None else hub_switched_off():
            try:
                load_data(self, *args, **kwargs)
            except LOAD_ERRORS:
                if not rebuild_mirror_if_damaged(self.metadata.name):
                    raise
                load_data(self, *args, **kwargs)

    load._mteb_evalrank_guard = True  # type: ignore[attr-defined]
    return load
