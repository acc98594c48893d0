"""Getting a plugin dataset ready to load, in one straight path: fetch, build, publish, check.

:func:`ready_dataset` (before a load: a task's ``load_data``, :func:`load_split`,
``datasets fetch``):

1. **fetch** the raw data: ``$MTEB_EVALRANK_SOURCE`` if set, else the family's raw files
   fetched into the raw cache (:mod:`.fetch`); offline (:func:`mteb_evalrank._network.offline_flag`)
   nothing is requested and a missing dataset is one :class:`DatasetNotAvailableError`;
2. **build**: the family's recipe, a pure function of the raw data;
3. **publish** atomically into the ``datasets`` cache (:func:`.hub.install_into_cache`), under
   the family's lock (:func:`mteb_evalrank._files.folder_lock`); a process that waited for the
   lock looks again and finds the family published, so concurrent first uses build it once.

:func:`rebuild_if_damaged` (after a load failed) **checks** the published copy under the same
lock (:func:`.repair.build_damage`): a damaged local build is replaced by a new one (fetch,
build, publish; the damaged folder moved aside to ``*.corrupt``,
:func:`mteb_evalrank._files.replace_damaged`, with one :class:`~.repair.DamagedDatasetWarning`)
or named in one :class:`~.repair.DatasetDamagedError`; a damaged Hub download is named
(:func:`.repair.check_hub_download`). :func:`rebuild_mirror_if_damaged` does the same for an
opt-in STS mirror.

Nothing this module calls calls back into it.
"""

from __future__ import annotations

import os
import warnings
from contextlib import nullcontext
from pathlib import Path
from typing import Any

import datasets

from .._files import folder_lock, replace_damaged
from .._mteb_adapter import hub_switched_off
from .._network import hub_allowed, offline_flag
from .fetch import fetch_family, say
from .hub import (
    cache_root,
    dataset_location,
    datasets_progress_bars,
    install_into_cache,
    read_card_configs,
)
from .mirrors import damaged_mirror, install_sts_mirrors
from .registry import SOURCE_ENV, STS_MIRRORS, DatasetSpec, build_command, fetch_command
from .releases import RAW_SOURCES, warn_source_mismatches
from .repair import (
    LOAD_ERRORS,
    DamagedDatasetWarning,
    DatasetDamagedError,
    build_damage,
    check_hub_download,
    damage_summary,
    missing_configs,
)


class DatasetNotAvailableError(RuntimeError):
    """A plugin dataset is not installed and cannot be built here (offline, no raw data)."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def not_available_message(spec: DatasetSpec, user: str) -> str:
    """The one paragraph a user sees when ``user`` (a task, a reader) cannot load ``spec``."""
    roots = sorted({name.split("/")[0] for name in spec.sources} & set(RAW_SOURCES))
    sources = "; ".join(
        f"{s.what}, {s.url} ({s.pinned}; {s.license}), as {s.folder}/"
        for s in (RAW_SOURCES[root] for root in roots)
    )
    flag = offline_flag()
    fetch = (
        f"{flag} is set, so nothing was downloaded: on a connected machine `{fetch_command(spec.family)}` "
        f"downloads the raw files and builds it (unset {flag} to do so on first use)"
        if flag
        else f"`{fetch_command(spec.family)}` downloads the raw files and builds it"
    )
    return (
        f"{user} needs the dataset {spec.hub_id}@{spec.revision}, which is neither in the local datasets "
        f"cache nor loadable from the Hugging Face Hub. {fetch[0].upper()}{fetch[1:]}. Or build it "
        f"from a local copy of the raw data with `{build_command(os.environ.get(SOURCE_ENV), spec.family)}`, "
        f"or set {SOURCE_ENV} to the raw data folder to build it on first use. Raw data: {sources}. "
        "`mteb-evalrank datasets status` lists everything the plugin needs."
    )


def raw_data(spec: DatasetSpec) -> Path | None:
    """The raw data folder to build ``spec`` from: ``$MTEB_EVALRANK_SOURCE``, else the raw cache
    with the family's files fetched (and verified); ``None`` offline (nothing requested)."""
    source = os.environ.get(SOURCE_ENV)
    if source:
        folder = Path(source).expanduser().resolve()
        if not folder.is_dir():
            raise DatasetNotAvailableError(
                f"{SOURCE_ENV}={source} is not a folder: point it at the raw data "
                "(holding evalrank/, wmt17-da/)."
            )
        return folder
    return None if offline_flag() else fetch_family(spec)


def build_and_publish(spec: DatasetSpec, raw: Path, why: str, *, displaced: Path | None = None) -> Path:
    """Build ``spec`` from the raw data folder ``raw`` and publish it; returns its cache folder.

    One line before and after on stderr; raw files that differ from the pinned release give one
    :class:`~.releases.SourceMismatchWarning` each.
    """
    say(f"building {spec.hub_id} from {raw} ({why}) ...")
    warn_source_mismatches(spec, raw)
    with datasets_progress_bars(False):
        root = install_into_cache(spec, spec.recipe().build(raw), displaced=displaced)
    say(f"installed {spec.hub_id} in {root}")
    return root


def ready_dataset(spec: DatasetSpec, user: str, *, raw: Path | None = None, why: str = "first use") -> str:
    """Make ``spec`` loadable; returns where it is (``"Hub download"`` or ``"local build"``).

    ``raw``: a raw data folder already at hand (``datasets fetch``), else :func:`raw_data`.

    Raises:
        DatasetNotAvailableError: not installed and offline (no request was sent).
    """
    if (location := dataset_location(spec)) is not None:
        if location == "local build" and missing_configs(
            cache_root(spec.hub_id), read_card_configs(spec.card_path)
        ):
            rebuild_if_damaged(spec, user)  # a config folder removed: damaged, not a failure of the load
        return location
    raw = raw or raw_data(spec)
    if raw is None:
        raise DatasetNotAvailableError(not_available_message(spec, user))
    with folder_lock(cache_root(spec.hub_id)):
        if (location := dataset_location(spec)) is None:  # else published while this one waited
            build_and_publish(spec, raw, why)
    return location or "local build"


def rebuild_if_damaged(spec: DatasetSpec, user: str) -> bool:
    """After loading ``spec`` failed: check the copy under the family's lock, replace it if damaged.

    Returns:
        ``True`` if a damaged local build was replaced by a new one (load again); ``False`` if
        no damaged copy explains the failure (re-raise it).

    Raises:
        DatasetDamagedError: a damaged Hub download (named, never touched), or a damaged local
            build (moved aside) without the raw data to build it again.
    """
    root, configs = cache_root(spec.hub_id), read_card_configs(spec.card_path)

    def rebuild(aside: Path) -> bool:
        if (raw := raw_data(spec)) is not None:
            build_and_publish(spec, raw, "damaged copy", displaced=aside)
        return raw is not None

    with folder_lock(root):
        location = dataset_location(spec)
        if location == "Hub download":
            check_hub_download(spec, user)
        if location != "local build" or not (
            found := replace_damaged(root, lambda: build_damage(root, configs), rebuild)
        ):
            return False
    problems, aside, rebuilt = found
    detail = damage_summary(problems)
    what = f"{user}: the local build of {spec.hub_id} is damaged: {detail}; moved aside to {aside}"
    warnings.warn(f"{what} and built again." if rebuilt else f"{what}.", DamagedDatasetWarning, stacklevel=3)
    if not rebuilt:
        raise DatasetDamagedError(
            f"{user}: the local build of {spec.hub_id} in the datasets cache was damaged ({detail}) "
            f"and has been moved aside to {aside}. Build it again: "
            f"`{build_command(os.environ.get(SOURCE_ENV), spec.family)}`, or set {SOURCE_ENV} to the "
            "raw data folder to rebuild it on first use."
        )
    return True


def load_split(spec: DatasetSpec, config: str | None, split: str, user: str) -> Any:
    """One split of a plugin dataset through ``datasets.load_dataset``, as a task loads it.

    For the readers outside a task (the post-processing fit corpus, ``diagnose``):
    :func:`ready_dataset`, the load (the Hub asked only for a Hub download online), and after a
    failed load :func:`rebuild_if_damaged` and one more load; ``user`` names the reader in the
    messages. Any other failure is raised as it was.
    """

    def load() -> Any:
        with nullcontext() if hub_allowed(dataset_location(spec)) else hub_switched_off():
            return datasets.load_dataset(spec.hub_id, config, revision=spec.revision, split=split)

    ready_dataset(spec, user)
    try:
        return load()
    except LOAD_ERRORS:
        if not rebuild_if_damaged(spec, user):
            raise
    return load()


def rebuild_mirror_if_damaged(task: str) -> bool:
    """After mteb's ``task`` failed to load: replace its STS mirror if it is ours and damaged.

    Returns:
        ``True`` if the mirror was damaged and installed again (load again); ``False`` if
        ``task`` has no mirror of ours or none of its files is damaged (re-raise).

    Raises:
        DatasetDamagedError: the mirror was damaged (and moved aside) but the raw data to
            build it again are not at hand; the message names the task, the dataset and the command.
    """
    if (mirror_found := damaged_mirror(task)) is None:
        return False
    mirror, root, _ = mirror_found

    def rebuild(aside: Path) -> bool:
        if (raw := raw_data(STS_MIRRORS)) is not None:
            install_sts_mirrors(raw, displaced={task: aside})
        return raw is not None

    if (found := replace_damaged(root, lambda: build_damage(root, [mirror.hub_config]), rebuild)) is None:
        return True  # another process installed it again while this one waited
    problems, aside, rebuilt = found
    detail, source = damage_summary(problems), os.environ.get(SOURCE_ENV)
    warnings.warn(
        f"{task}: the offline STS mirror of {mirror.hub_id} is damaged: {detail}; moved aside to {aside}.",
        DamagedDatasetWarning,
        stacklevel=3,
    )
    if rebuilt:
        return True
    raise DatasetDamagedError(
        f"{task}: the offline mirror of {mirror.hub_id} in the datasets cache that "
        f"`mteb-evalrank datasets build --sts-mirrors` installed was damaged ({detail}) and has "
        f"been moved aside to {aside}. Install it again: `{build_command(source, STS_MIRRORS.family)}` "
        f"(or, online, `{fetch_command(STS_MIRRORS.family)}`), or set {SOURCE_ENV} to the raw data folder "
        "to do so on first use."
    )
