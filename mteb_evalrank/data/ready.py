"""A plugin dataset, from its spec to a load: one pipeline, each step once, in order.

:func:`load_ready` is the entry (a task's ``load_data``, :func:`load_split`); the steps and the
faults each one handles are drawn in docs/architecture.md ("Loading a dataset") and listed in
docs/faults.md ("Built datasets").
"""

from __future__ import annotations

import json
import warnings
from collections.abc import Callable, Iterable
from contextlib import nullcontext
from functools import partial
from json import JSONDecodeError
from pathlib import Path
from typing import Any, Literal, TypeVar

import datasets
import pyarrow as pa
from huggingface_hub import constants
from pyarrow import ArrowInvalid

from .._files import publishing, read_json_object, renew
from .._mteb_adapter import hub_switched_off
from ..settings import SOURCE_ENV, Settings
from .fetch import RAW_SOURCES, raw_folder, say
from .hub import BUILD_FORMAT, BUILD_RECORD, datasets_progress_bars, write_build
from .registry import DatasetSpec

T = TypeVar("T")
Location = Literal["Hub download", "local build"]
LOAD_ERRORS = (OSError, ArrowInvalid, JSONDecodeError, UnicodeDecodeError)
"""What ``datasets`` raises on a damaged copy in its cache (a missing or cut file, a garbled
``dataset_info.json``); only these trigger the check of the copy (docs/faults.md)."""


class DatasetNotAvailableError(RuntimeError):
    """A plugin dataset is not installed and cannot be built here (offline, no raw data)."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


class DamagedDatasetWarning(UserWarning):
    """A local build in the datasets cache was damaged: moved aside (and rebuilt if possible)."""


class DatasetDamagedError(RuntimeError):
    """A local build is damaged and the raw data to rebuild it are not at hand."""

    user_facing = True


def build_command(source: str | Path | None = None, family: str | None = None) -> str:
    """The command that builds ``family`` (default every one) from a local copy of the raw data."""
    where = str(source) if source else "/path/to/raw-data"
    only = f" --only {family}" if family else ""
    return f"mteb-evalrank datasets build --source {where}{only}"


def fetch_command(family: str | None = None) -> str:
    """The command that fetches the raw files of ``family`` (default every one) and builds it."""
    only = f" --only {family}" if family else ""
    return f"mteb-evalrank datasets fetch{only}"


# --- 1. which dataset, 2. where it lives ---------------------------------------------------------


def hub_cache_copy(hub_id: str) -> Path | None:
    """The hub-cache folder of dataset ``hub_id`` if one exists (a real download)."""
    folder = Path(constants.HF_HUB_CACHE) / f"datasets--{hub_id.replace('/', '--')}"
    return folder if folder.exists() else None


def dataset_location(spec: DatasetSpec) -> Location | None:
    """``"Hub download"``, ``"local build"`` (a published build holds a ``dataset_info.json``) or ``None``."""
    if hub_cache_copy(spec.hub_id) is not None:
        return "Hub download"
    return "local build" if any(spec.cache_root.glob("*/*/*/dataset_info.json")) else None


# --- 3. is it there, and of this format ----------------------------------------------------------


def build_record(root: Path) -> tuple[int | None, str | None]:
    """The format (:data:`.hub.BUILD_FORMAT`) and revision the build under ``root`` records (or ``None``)."""
    record = read_json_object(root / BUILD_RECORD) or {}
    found, revision = record.get("format"), record.get("revision")
    return found if isinstance(found, int) else None, revision if isinstance(revision, str) else None


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


def build_damage(root: Path, configs: Iterable[str] = (), *, files: bool = True) -> list[str]:
    """``"<path>: <problem>"`` for each of ``configs`` (the card's) without a folder under ``root`` and,
    with ``files``, for every damaged file of the build (``[]``: sound)."""
    problems = [f"{root / config}: missing" for config in configs if not (root / config).is_dir()]
    for folder in sorted(p for p in root.glob("*/*/*") if files and p.is_dir()):  # <config>/<version>/<hash>
        info = folder / "dataset_info.json"
        problems += [f"{info}: {problem}"] if (problem := _info_problem(info)) else []
        arrows = sorted(folder.glob("*.arrow"))
        problems += [f"{arrow}: {problem}" for arrow in arrows if (problem := _arrow_problem(arrow))]
        problems += [] if arrows else [f"{folder}: no Arrow file"]
    return problems


def damage_summary(problems: list[str]) -> str:
    """The first problem, and how many more there are."""
    return problems[0] + (f" (and {len(problems) - 1} more)" if len(problems) > 1 else "")


# --- 4. the raw files, 5. build, 6. publish ------------------------------------------------------


def not_available_message(spec: DatasetSpec, user: str, settings: Settings, why: str = "") -> str:
    """The one paragraph a user sees when ``user`` (a task, a reader) cannot load ``spec``."""
    roots = sorted({name.split("/")[0] for name in spec.sources} & set(RAW_SOURCES))
    sources = "; ".join(
        f"{s.what}, {s.url} ({s.pinned}; {s.license}), as {s.folder}/"
        for s in (RAW_SOURCES[root] for root in roots)
    )
    flag, command = settings.offline, fetch_command(spec.family)
    fetch = (
        f"{flag} is set, so nothing was downloaded: on a connected machine `{command}` downloads the raw "
        f"files and builds it (unset {flag} to do so on first use)"
        if flag
        else f"`{command}` downloads the raw files and builds it"
    )
    where = (
        f"in the local datasets cache only as an older build ({why}) and not loadable from"
        if why
        else "neither in the local datasets cache nor loadable from"
    )
    return (
        f"{user} needs the dataset {spec.hub_id}@{spec.revision}, which is {where} the Hugging Face "
        f"Hub. {fetch[0].upper()}{fetch[1:]}. Or build it from a local copy of the raw data "
        f"with `{build_command(settings.source, spec.family)}`, or set {SOURCE_ENV} to the raw data folder "
        f"to build it on first use. Raw data: {sources}. `mteb-evalrank datasets status` lists everything "
        "the plugin needs."
    )


def build_and_publish(
    spec: DatasetSpec, root: Path, raw: Path | None, why: str, displaced: Path | None = None
) -> bool:
    """Steps 5-6: build ``spec`` from ``raw`` and publish it in ``root``, the former folder moved to
    ``displaced`` if given (:func:`mteb_evalrank._files.publishing`; the caller holds the family's lock);
    one line before and after on stderr. ``False`` (nothing done) without ``raw``."""
    if raw is None:
        return False
    say(f"building {spec.hub_id} from {raw} ({why}) ...")
    with datasets_progress_bars(False), publishing(root, displaced=displaced) as folder:
        write_build(folder, spec, spec.recipe.build(raw))
    say(f"installed {spec.hub_id} in {root}")
    return True


def build_state(
    root: Path, configs: Iterable[str], revision: str, *, files: bool = False
) -> tuple[str, list[str]] | None:
    """``None`` for a build of this :data:`.hub.BUILD_FORMAT` and the spec's ``revision`` under ``root``
    with every one of ``configs`` (and, with ``files``, every file sound); else why to build it and
    what is damaged."""
    found, built = build_record(root)
    if found != BUILD_FORMAT:
        done = f"built in format {found}" if found else "built without a recorded format"
        return (f"{done}, this version reads {BUILD_FORMAT}" if root.is_dir() else "", [])
    if built != revision:  # a record of this format: the folder is there
        done = f"built from revision {built}" if built else "built without a recorded revision"
        return (f"{done}, this version reads {revision}", [])
    damage = build_damage(root, configs, files=files)  # an outdated build is not read
    return ("damaged copy", damage) if damage else None


def stale_damage(root: Path, configs: Iterable[str], revision: str, files: bool) -> list[str] | None:
    """:func:`build_state`'s damaged files (``[]``: missing or outdated), ``None`` if current."""
    return None if (state := build_state(root, configs, revision, files=files)) is None else state[1]


def ready_dataset(
    spec: DatasetSpec,
    root: Path,
    user: str,
    settings: Settings,
    *,
    raw: Path | None = None,
    why: str = "first use",
    files: bool = False,
) -> bool:
    """Steps 3-6 (docs/architecture.md): unless the local build of ``spec`` in ``root`` is there, of this
    format, with every config of its card (with ``files``: every file sound), build and publish it under
    the family's lock; whether it was built. A Hub download is never built over, named if damaged."""
    if hub_cache_copy(spec.hub_id) is not None:  # the user's download: named if damaged, never touched
        if files and (damage := build_damage(root)):
            raise DatasetDamagedError(
                f"{user}: the Hub download of {spec.hub_id} in the datasets cache is damaged "
                f"({damage_summary(damage)}). Delete {root} and run again online to download it again, or "
                f"build it locally: `{build_command(settings.source, spec.family)}`."
            )
        return False
    configs = () if files else spec.card_configs
    if (state := build_state(root, configs, spec.revision, files=files)) is None:
        return False
    raw = raw or raw_folder(spec, settings)
    build = partial(build_and_publish, spec, root, raw, state[0] or why)
    if (found := renew(root, partial(stale_damage, root, configs, spec.revision, files), build)) is None:
        return False  # published by another process while this one waited
    damage, aside, built = found
    if not (built or damage):
        raise DatasetNotAvailableError(not_available_message(spec, user, settings, state[0]))
    if damage:
        detail = damage_summary(damage)
        what = f"{user}: the local build of {spec.hub_id} is damaged: {detail}; moved aside to {aside}"
        warnings.warn(f"{what}{' and built again' * built}.", DamagedDatasetWarning, stacklevel=3)
    if damage and not built:
        raise DatasetDamagedError(
            f"{user}: the local build of {spec.hub_id} in the datasets cache was damaged ({detail}) "
            f"and has been moved aside to {aside}. Build it again: "
            f"`{build_command(settings.source, spec.family)}`, or set {SOURCE_ENV} to the raw data "
            "folder to rebuild it on first use."
        )
    return True


# --- 7. load -------------------------------------------------------------------------------------


def load_ready(spec: DatasetSpec, user: str, settings: Settings, load: Callable[[], T]) -> T:
    """The pipeline (docs/architecture.md, "Loading a dataset"): ready ``spec``, ``load()``; after one of
    :data:`LOAD_ERRORS` every file is checked, a damaged local build built again and loaded once more."""
    root, hub = spec.cache_root, hub_cache_copy(spec.hub_id) is not None
    ready_dataset(spec, root, user, settings)
    try:
        with nullcontext() if hub and not settings.offline else hub_switched_off():
            return load()
    except LOAD_ERRORS:  # a damaged copy? every file checked
        if not ready_dataset(spec, root, user, settings, why="damaged copy", files=True):
            raise
    with hub_switched_off():  # built again from the raw data
        return load()


def load_split(spec: DatasetSpec, config: str | None, split: str, user: str, settings: Settings) -> Any:
    """One split of a plugin dataset as a task loads it (:func:`load_ready`), for the readers outside a
    task (the post-processing fit corpus, ``diagnose``); ``user`` names the reader in the messages."""
    return load_ready(
        spec,
        user,
        settings,
        lambda: datasets.load_dataset(spec.hub_id, config, revision=spec.revision, split=split),
    )
