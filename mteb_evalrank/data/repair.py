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
"""

from __future__ import annotations

import json
import os
import warnings
from collections.abc import Iterable
from pathlib import Path

from mteb_evalrank._files import aside_name

from .registry import DatasetSpec

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
    aside = _move_aside(root)
    more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
    where = f"moved aside to {aside}" if aside is not None else "moved aside by another process"
    warnings.warn(
        f"{task}: the local build of {spec.hub_id} is damaged: {problems[0]}{more}; {where}.",
        DamagedDatasetWarning,
        stacklevel=3,
    )
    if ensure_dataset(spec):
        return True
    raise DatasetDamagedError(
        f"{task}: the local build of {spec.hub_id} in the datasets cache was damaged ({problems[0]}{more}) "
        f"and has been {where}. Build it again: `{build_command(os.environ.get(SOURCE_ENV), spec.family)}`, "
        f"or set {SOURCE_ENV} to the raw data folder to rebuild it on first use."
    )
