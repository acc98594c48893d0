"""Loading a plugin dataset: build it on first use, or fail with one clear paragraph; quietly.

Every plugin task class puts :class:`PluginDatasetLoading` before its mteb base class. Its
``load_data``

1. builds and installs the task's dataset family when it is not installed yet
   (:func:`mteb_evalrank.data.status.ensure_dataset`: from ``$MTEB_EVALRANK_SOURCE``, else
   from the raw files it fetches, unless an offline variable is set);
2. runs mteb's own ``load_data`` with the ``datasets`` logger lowered to errors for the call,
   unless the user set it more verbose (offline, ``datasets`` warns "Using the latest cached
   version of the dataset" once per config: 70 lines for the main job), and, for a local
   build, with the Hugging Face Hub switched off
   (:func:`mteb_evalrank._mteb_adapter.hub_switched_off`);
3. turns a failure to find the dataset (offline, or not published) into
   :class:`~mteb_evalrank.data.status.DatasetNotAvailableError`, whose message says what is
   missing, the command that builds it and where the raw data come from;
4. on a failure to read an installed local build, checks its files
   (:func:`mteb_evalrank.data.repair.repair_local_build`): a damaged build is moved aside with
   one warning and built again where the raw data are at hand (then loaded again), else one
   paragraph names the dataset and the command that rebuilds it (issue 26); a damaged Hub
   download is named with the folder to delete and the commands
   (:func:`mteb_evalrank.data.repair.check_hub_download`).

:func:`guard_sts_mirrors` gives mteb's own STS task classes, whose datasets the plugin may
mirror (``datasets build --sts-mirrors``), the same check of a damaged mirror
(:func:`mteb_evalrank.data.repair.repair_sts_mirror`): only when their loading fails, and only
for a mirror the plugin wrote; their loading is otherwise unchanged.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterator
from contextlib import contextmanager, nullcontext
from typing import Any

import datasets

from mteb_evalrank._mteb_adapter import hub_switched_off
from mteb_evalrank._network import hub_allowed, offline_flag
from mteb_evalrank.data.registry import spec_for_hub_id
from mteb_evalrank.data.repair import LOAD_ERRORS, recover_damaged_copy, repair_sts_mirror
from mteb_evalrank.data.status import (
    DatasetNotAvailableError,
    dataset_location,
    ensure_dataset,
    not_available_message,
)


@contextmanager
def quiet_datasets() -> Iterator[None]:
    """Lower ``datasets``' logger to errors for the block, if it is at its default (warnings)."""
    logging = datasets.utils.logging
    before = logging.get_verbosity()
    if before == logging.WARNING:
        logging.set_verbosity_error()
    try:
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
        location = None
        if spec is not None:
            ensure_dataset(spec)
            if (location := dataset_location(spec)) is None:  # offline: nothing is requested
                raise DatasetNotAvailableError(not_available_message(spec, self.metadata.name))
        try:
            with (
                quiet_datasets(),
                nullcontext() if spec is None or hub_allowed(location) else hub_switched_off(),
            ):
                self._load_plugin_data(num_proc=num_proc, **kwargs)
        except LOAD_ERRORS as error:
            if spec is None:
                raise
            if dataset_location(spec) is None:
                raise DatasetNotAvailableError(
                    not_available_message(spec, self.metadata.name, error)
                ) from None
            if not recover_damaged_copy(spec, self.metadata.name):
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
    (:func:`~mteb_evalrank.data.repair.repair_sts_mirror`); any other error is raised as it was.
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
                if not repair_sts_mirror(self.metadata.name):
                    raise
                load_data(self, *args, **kwargs)

    load._mteb_evalrank_guard = True  # type: ignore[attr-defined]
    return load
