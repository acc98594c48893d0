"""A damaged local build in the ``datasets`` cache: found, moved aside, rebuilt where possible (issue 26).

A local build (``datasets build``, or a first-use build) lives in
``$HF_DATASETS_CACHE/mteb-evalrank___<family>/<config>/0.0.0/<hash>/``: a ``dataset_info.json``
and one Arrow file per split. A disk filling up, a copy cut short or a build killed midway can
leave an Arrow file truncated, ``dataset_info.json`` missing or invalid, or a config of the
dataset card missing; ``datasets`` then fails with a bare ``OSError``, ``JSONDecodeError`` or
``FileNotFoundError`` naming no dataset.

When loading an installed local build fails, :func:`repair_local_build` checks every file of
the family's build (:func:`build_damage`). If one is damaged, the family's folder is moved aside
to ``mteb-evalrank___<family>.corrupt`` (``-1``, ``-2``, ... if taken; never deleted), one
:class:`DamagedDatasetWarning` names the damaged file, and the family is built again when the
raw data are at hand (``$MTEB_EVALRANK_SOURCE``, or the raw files fetched on first use, see
:func:`mteb_evalrank.data.status.ensure_dataset`); otherwise :class:`DatasetDamagedError` says
which dataset is damaged and the command that rebuilds it. See ``docs/faults.md``.

The same check covers the two other kinds of copies the plugin loads from the ``datasets``
cache:

* **a Hub download** of a plugin dataset (``datasets`` prepared it from the Hub's files): it
  is the user's download, so it is left as it is; :func:`check_hub_download` raises one
  :class:`DatasetDamagedError` naming the dataset, the damaged file, the folder to delete and
  the commands that get it again (a download online, or a local build).
* **an opt-in STS mirror** (``datasets build --sts-mirrors``, under the id of mteb's own task,
  marked by :data:`.mirrors.MARKER`): the plugin's own files. :func:`repair_sts_mirror` moves
  the id's folder aside to ``<folder>.corrupt`` with one :class:`DamagedDatasetWarning` and
  installs the mirrors again where the raw data are at hand (``$MTEB_EVALRANK_SOURCE``, or
  the raw files fetched unless an offline variable is set); otherwise one
  :class:`DatasetDamagedError` names the task, the dataset and the command. mteb's STS task
  classes call it when their loading fails (:func:`mteb_evalrank.tasks._loading.guard_sts_mirrors`).
  A real copy of the id (no marker) is never touched.
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from contextlib import nullcontext
from pathlib import Path
from typing import Any

from mteb_evalrank._files import aside_name

from .registry import DatasetSpec

LOAD_ERRORS = (ConnectionError, FileNotFoundError, OSError, ValueError)
"""What ``datasets`` raises on a missing or damaged copy in its cache (pyarrow's errors are
``OSError`` / ``ValueError``; ``JSONDecodeError`` is a ``ValueError``)."""

CORRUPT_SUFFIX = ".corrupt"


class DamagedDatasetWarning(UserWarning):
    """A local build in the datasets cache was damaged: moved aside (and rebuilt if possible)."""


class DatasetDamagedError(RuntimeError):
    """A local build is damaged and the raw data to rebuild it are not at hand."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def _arrow_problem(path: Path) -> str | None:
    """Why an Arrow stream file (as ``datasets`` writes them) cannot be read whole, or ``None``."""
    import pyarrow as pa

    try:
        with pa.memory_map(str(path)) as source:
            pa.ipc.open_stream(source).read_all()
    except (OSError, ValueError) as error:  # pyarrow.ArrowInvalid is a ValueError
        return f"unreadable Arrow file ({error})"
    return None


def _info_problem(path: Path) -> str | None:
    """Why a ``dataset_info.json`` is unusable, or ``None``."""
    if not path.is_file():
        return "missing"
    try:
        data = json.loads(path.read_bytes())
    except ValueError as error:  # JSONDecodeError, UnicodeDecodeError
        return f"not valid JSON ({error})"
    return None if isinstance(data, dict) else "not a JSON object"


def build_damage(root: Path, configs: Iterable[str] = ()) -> list[str]:
    """``"<file>: <problem>"`` for every damaged file of the local build under ``root``, and for
    each of ``configs`` (the card's) that has no folder, as a build killed midway leaves it
    (``[]``: sound)."""
    problems = [f"{root / config}: missing" for config in configs if not (root / config).is_dir()]
    for folder in sorted(p for p in root.glob("*/*/*") if p.is_dir()):  # <config>/<version>/<hash>
        info = folder / "dataset_info.json"
        if (problem := _info_problem(info)) is not None:
            problems.append(f"{info}: {problem}")
        arrows = sorted(folder.glob("*.arrow"))
        if not arrows:
            problems.append(f"{folder}: no Arrow file")
        problems += [
            f"{arrow}: {problem}" for arrow in arrows if (problem := _arrow_problem(arrow)) is not None
        ]
    return problems


def check_hub_download(spec: DatasetSpec, task: str) -> None:
    """After loading the Hub download of ``spec`` failed: name the damaged file, if any.

    Returns quietly when no file of the download's ``datasets``-cache folder is damaged (the
    failure is something else: re-raise it).

    Raises:
        DatasetDamagedError: a file is damaged; the message names the dataset, the file, the
            folder to delete and the commands (nothing is moved: the download is the user's).
    """
    from .hub import cache_root
    from .status import SOURCE_ENV, build_command

    root = cache_root(spec.hub_id)
    problems = build_damage(root)
    if not problems:
        return
    raise DatasetDamagedError(
        f"{task}: the Hub download of {spec.hub_id} in the datasets cache is damaged ({_detail(problems)}). "
        f"Delete {root} and run again online to download it again, or build it locally: "
        f"`{build_command(os.environ.get(SOURCE_ENV), spec.family)}`."
    )


def repair_sts_mirror(task: str) -> bool:
    """After mteb's ``task`` failed to load: repair its STS mirror if it is ours and damaged.

    Returns:
        ``True`` if the mirror was damaged, moved aside and installed again (load it again);
        ``False`` if ``task`` has no mirror of ours or none of its files is damaged (re-raise).

    Raises:
        DatasetDamagedError: the mirror was damaged (and moved aside) but the raw data to
            build it again are not at hand; the message names the task, the dataset and the command.
    """
    from .._network import offline_flag
    from .fetch import fetch_family
    from .hub import cache_root, hub_cache_copy
    from .mirrors import MARKER, install_sts_mirrors
    from .registry import STS_MIRROR_SPECS, STS_MIRRORS
    from .status import SOURCE_ENV, build_command, fetch_command

    mirror = next((m for m in STS_MIRROR_SPECS if m.task == task), None)
    if mirror is None or hub_cache_copy(mirror.hub_id) is not None:  # a real download: not ours
        return False
    root = cache_root(mirror.hub_id)
    config = root / mirror.hub_config
    ours = any(config.glob(f"*/*/{MARKER}"))
    if not ours or any(p.is_dir() and not any(p.glob(f"*/*/{MARKER}")) for p in root.iterdir()):
        return False  # not ours, or a real copy beside it: never touched
    problems = build_damage(root, [mirror.hub_config])
    if not problems:
        return False
    detail, where = _set_aside(root, problems, f"{task}: the offline STS mirror of {mirror.hub_id}")
    source = os.environ.get(SOURCE_ENV)
    if source or offline_flag() is None:
        install_sts_mirrors(Path(source) if source else fetch_family(STS_MIRRORS))
        return True
    raise DatasetDamagedError(
        f"{task}: the offline mirror of {mirror.hub_id} in the datasets cache that "
        f"`mteb-evalrank datasets build --sts-mirrors` installed was damaged ({detail}) and has "
        f"been {where}. Install it again: `{build_command(source, STS_MIRRORS.family)}` "
        f"(or, online, `{fetch_command(STS_MIRRORS.family)}`), or set {SOURCE_ENV} to the raw data folder "
        "to do so on first use."
    )


def load_split(spec: DatasetSpec, config: str | None, split: str, user: str) -> Any:
    """One split of a plugin dataset through ``datasets.load_dataset``, as a task loads it.

    For the readers outside a task (the post-processing fit corpus, ``diagnose``): the family
    is built on first use where the raw data are at hand
    (:func:`~mteb_evalrank.data.status.ensure_dataset`); if loading fails, a damaged local
    build is moved aside and built again (:func:`repair_local_build`, then loaded again) or
    named, and a damaged Hub download is named (:func:`check_hub_download`); ``user`` names the
    reader in the messages. Any other failure is raised as it was.

    Raises:
        DatasetDamagedError: a damaged copy that cannot be rebuilt here.
    """
    import datasets

    from .._mteb_adapter import hub_switched_off
    from .._network import hub_allowed
    from .status import DatasetNotAvailableError, dataset_location, ensure_dataset, not_available_message

    def load() -> Any:
        with nullcontext() if hub_allowed(location) else hub_switched_off():
            return datasets.load_dataset(spec.hub_id, config, revision=spec.revision, split=split)

    ensure_dataset(spec)
    if (location := dataset_location(spec)) is None:  # offline: nothing is requested
        raise DatasetNotAvailableError(not_available_message(spec, user))
    try:
        return load()
    except LOAD_ERRORS:
        if not recover_damaged_copy(spec, user):
            raise
    return load()


def recover_damaged_copy(spec: DatasetSpec, user: str) -> bool:
    """After loading ``spec`` failed: the one decision of the tasks and of :func:`load_split`.

    A damaged Hub download is named (:func:`check_hub_download`); a damaged local build is
    moved aside and built again (:func:`repair_local_build`) or named. ``user`` names the reader.

    Returns:
        ``True`` if a local build was rebuilt (load again); ``False`` if no damaged copy
        explains the failure (re-raise it).

    Raises:
        DatasetDamagedError: a damaged copy that cannot be rebuilt here.
    """
    from .status import dataset_location

    location = dataset_location(spec)
    if location == "Hub download":
        check_hub_download(spec, user)
    return location == "local build" and repair_local_build(spec, user)


def _detail(problems: list[str]) -> str:
    """The first problem, and how many more there are."""
    return problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")


def _set_aside(root: Path, problems: list[str], what: str) -> tuple[str, str]:
    """Move the damaged copy ``root`` aside, warn once (``what`` names the task and the copy).

    Returns:
        ``(detail, where)``: the problems (:func:`_detail`) and where the copy went, for the message.
    """
    aside = _move_aside(root)
    detail = _detail(problems)
    where = f"moved aside to {aside}" if aside is not None else "moved aside by another process"
    warnings.warn(f"{what} is damaged: {detail}; {where}.", DamagedDatasetWarning, stacklevel=4)
    return detail, where


def _move_aside(root: Path) -> Path | None:
    """Rename ``root`` to a free ``<name>.corrupt[-n]`` beside it; ``None`` if it vanished meanwhile."""
    target = aside_name(root, CORRUPT_SUFFIX)
    try:
        root.rename(target)
    except FileNotFoundError:  # another process moved it first
        return None
    return target


def repair_local_build(spec: DatasetSpec, task: str) -> bool:
    """After loading the installed local build of ``spec`` failed: repair it if it is damaged.

    Returns:
        ``True`` if the build was damaged, moved aside and built again (load it again);
        ``False`` if no file is damaged (the failure is something else: re-raise it).

    Raises:
        DatasetDamagedError: the build was damaged (and moved aside) but the raw data to build
            it again are not at hand; the message names the dataset, the file and the command.
    """
    from .hub import cache_root, read_card_configs
    from .status import SOURCE_ENV, build_command, ensure_dataset

    root = cache_root(spec.hub_id)
    try:
        configs = list(read_card_configs(spec.card_path))
    except (OSError, ValueError):  # no card to compare with: check the files present
        configs = []
    problems = build_damage(root, configs)
    if not problems:
        return False
    detail, where = _set_aside(root, problems, f"{task}: the local build of {spec.hub_id}")
    if ensure_dataset(spec):
        return True
    raise DatasetDamagedError(
        f"{task}: the local build of {spec.hub_id} in the datasets cache was damaged ({detail}) "
        f"and has been {where}. Build it again: `{build_command(os.environ.get(SOURCE_ENV), spec.family)}`, "
        f"or set {SOURCE_ENV} to the raw data folder to rebuild it on first use."
    )
