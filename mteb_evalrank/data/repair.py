"""A damaged copy of a dataset in the ``datasets`` cache: found and named.

A local build (``datasets build``, or a first-use build) lives in
``$HF_DATASETS_CACHE/mteb-evalrank___<family>/<config>/0.0.0/<hash>/``: a ``dataset_info.json``
and one Arrow file per split. A disk filling up or a copy cut short can leave an Arrow file
truncated, ``dataset_info.json`` missing or invalid, or a config missing; ``datasets`` then
fails with a bare ``OSError``, ``JSONDecodeError`` or ``ValueError`` naming no dataset.
:func:`build_damage` lists the damaged files of such a folder; :mod:`.ready` replaces a damaged
local build or mirror (under the family's lock) and :func:`check_hub_download` names a damaged
Hub download of a plugin dataset, which is the user's download and is left as it is.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from json import JSONDecodeError
from pathlib import Path

import pyarrow as pa
from pyarrow import ArrowInvalid

from .hub import cache_root
from .registry import SOURCE_ENV, DatasetSpec, build_command

LOAD_ERRORS = (OSError, ArrowInvalid, JSONDecodeError, UnicodeDecodeError)
"""What ``datasets`` raises on a damaged copy in its cache: ``OSError`` (a missing file, an Arrow
file cut in its body), ``ArrowInvalid`` (an Arrow file cut in its header, or empty),
``JSONDecodeError`` / ``UnicodeDecodeError`` (a ``dataset_info.json`` garbled). Any other
``ValueError`` (a task's own processing) is raised as it was, without a check of the copy. A config
missing from the cache (a plain ``ValueError`` of ``datasets``) is found before the load
(:func:`missing_configs`)."""


class DamagedDatasetWarning(UserWarning):
    """A local build in the datasets cache was damaged: moved aside (and rebuilt if possible)."""


class DatasetDamagedError(RuntimeError):
    """A local build is damaged and the raw data to rebuild it are not at hand."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def _arrow_problem(path: Path) -> str | None:
    """Why an Arrow stream file (as ``datasets`` writes them) cannot be read whole, or ``None``."""
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


def missing_configs(root: Path, configs: Iterable[str]) -> list[str]:
    """``"<folder>: missing"`` for each of ``configs`` (the card's) without a folder under ``root``."""
    return [f"{root / config}: missing" for config in configs if not (root / config).is_dir()]


def build_damage(root: Path, configs: Iterable[str] = ()) -> list[str]:
    """``"<file>: <problem>"`` for every damaged file of the local build under ``root``, and for
    each of ``configs`` (the card's) that has no folder (``[]``: sound)."""
    problems = missing_configs(root, configs)
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
    root = cache_root(spec.hub_id)
    problems = build_damage(root)
    if not problems:
        return
    raise DatasetDamagedError(
        f"{task}: the Hub download of {spec.hub_id} in the datasets cache is damaged "
        f"({damage_summary(problems)}). "
        f"Delete {root} and run again online to download it again, or build it locally: "
        f"`{build_command(os.environ.get(SOURCE_ENV), spec.family)}`."
    )


def damage_summary(problems: list[str]) -> str:
    """The first problem, and how many more there are."""
    return problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")
