"""What the plugin needs on this machine, where each piece comes from, and how to get what is missing.

Used by ``mteb-evalrank datasets status`` and by the tasks' first-run message
(:class:`DatasetNotAvailableError`); :func:`ensure_dataset` builds a missing family on first
use: from the raw data named by ``MTEB_EVALRANK_SOURCE`` if set, else from the raw files
fetched into the raw cache (:mod:`.fetch`), unless an offline variable is set.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from filelock import FileLock

from .._network import offline_flag
from .fetch import fetch_family, file_states, raw_dir
from .registry import DATASETS, DatasetSpec
from .releases import RAW_SOURCES, Release, recipe_files, release_of, warn_source_mismatches

#: environment variable naming the raw data folder (``evalrank/``, ``wmt17-da/``)
SOURCE_ENV = "MTEB_EVALRANK_SOURCE"


class DatasetNotAvailableError(RuntimeError):
    """A plugin dataset is neither cached locally nor loadable from the Hub."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def raw_sources(spec: DatasetSpec) -> list[Release]:
    """The raw releases a family's recipe reads (from its ``SOURCES``; the EvalRank release by default)."""
    roots = {name.split("/")[0] for name in getattr(spec.recipe(), "SOURCES", ())} or {"evalrank"}
    return [RAW_SOURCES[root] for root in sorted(roots) if root in RAW_SOURCES]


def dataset_location(spec: DatasetSpec) -> str | None:
    """``"Hub download"``, ``"local build"`` or ``None`` (not installed)."""
    from .hub import cache_root, hub_cache_copy

    if hub_cache_copy(spec.hub_id) is not None:
        return "Hub download"
    if any(cache_root(spec.hub_id).glob("*/*/*/dataset_info.json")):
        return "local build"
    return None


def build_command(source: str | Path | None = None, family: str | None = None) -> str:
    where = str(source) if source else "/path/to/raw-data"
    only = f" --only {family}" if family else ""
    return f"mteb-evalrank datasets build --source {where}{only}"


def fetch_command(family: str | None = None) -> str:
    only = f" --only {family}" if family else ""
    return f"mteb-evalrank datasets fetch{only}"


def not_available_message(spec: DatasetSpec, task: str, cause: BaseException | None = None) -> str:
    """The one paragraph a user sees when ``task`` cannot load ``spec``."""
    sources = "; ".join(
        f"{s.what}, {s.url} ({s.pinned}; {s.license}), as {s.folder}/" for s in raw_sources(spec)
    )
    reason = f" ({type(cause).__name__})" if cause is not None else ""
    flag = offline_flag()
    fetch = (
        f"{flag} is set, so nothing was downloaded: on a connected machine `{fetch_command(spec.family)}` "
        f"downloads the raw files and builds it (unset {flag} to do so on first use)"
        if flag
        else f"`{fetch_command(spec.family)}` downloads the raw files and builds it"
    )
    return (
        f"{task} needs the dataset {spec.hub_id}@{spec.revision}, which is neither in the local datasets "
        f"cache nor loadable from the Hugging Face Hub{reason}. {fetch[0].upper()}{fetch[1:]}. Or build it "
        f"from a local copy of the raw data with `{build_command(os.environ.get(SOURCE_ENV), spec.family)}`, "
        f"or set {SOURCE_ENV} to the raw data folder to build it on first use. Raw data: {sources}. "
        "`mteb-evalrank datasets status` lists everything the plugin needs."
    )


def ensure_dataset(spec: DatasetSpec) -> bool:
    """Build and install ``spec`` when it is not installed; True if built.

    The raw data: ``$MTEB_EVALRANK_SOURCE`` if set; else, unless an offline variable is set
    (then nothing happens and the task's loader reports the dataset missing), the family's raw
    files fetched into the raw cache (files already there and verified are reused). One process
    at a time builds a family (a lock file beside its ``datasets`` cache folder); a process that
    waited finds it installed.
    """
    if dataset_location(spec) is not None:
        return False
    source = os.environ.get(SOURCE_ENV)
    if source:
        folder = Path(source).expanduser().resolve()
        if not folder.is_dir():
            raise DatasetNotAvailableError(
                f"{SOURCE_ENV}={source} is not a folder: point it at the raw data "
                "(holding evalrank/, wmt17-da/)."
            )
    elif offline_flag() is None:
        folder = fetch_family(spec)
    else:
        return False
    with _build_lock(spec):
        if dataset_location(spec) is not None:
            return False  # another process built it while this one waited
        build_and_install(spec, folder)
    return True


def _build_lock(spec: DatasetSpec) -> FileLock:
    """``<datasets cache>/<org>___<name>.mteb-evalrank.lock``: one builder of ``spec`` at a time."""
    from .hub import cache_root

    root = cache_root(spec.hub_id)
    root.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(root.with_name(root.name + ".mteb-evalrank.lock"))


@contextmanager
def datasets_progress_bars(enabled: bool) -> Iterator[None]:
    """``datasets``' progress bars (``Creating parquet``, ``Casting the dataset``) on or off for the block."""
    import datasets

    was_disabled = datasets.are_progress_bars_disabled()
    if not enabled:
        datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def build_and_install(spec: DatasetSpec, folder: Path, why: str = "first use") -> Path:
    """Build ``spec`` from the raw data folder ``folder`` into the datasets cache; returns its folder.

    Raw files that differ from the pinned release give one :class:`SourceMismatchWarning` each.
    """
    from .hub import install_into_cache

    print(f"mteb-evalrank: building {spec.hub_id} from {folder} ({why}) ...", file=sys.stderr, flush=True)
    warn_source_mismatches(spec, folder)
    with datasets_progress_bars(False):
        built = spec.recipe().build(folder)
        root = install_into_cache(spec, built)
    print(f"mteb-evalrank: installed {spec.hub_id} in {root}", file=sys.stderr, flush=True)
    return root


def raw_cache_report(root: Path | None = None) -> list[str]:
    """The raw cache: per release, how many files are verified, damaged or missing, and their origin."""
    root = raw_dir() if root is None else root
    lines = [f"Raw data fetched on first use (raw cache {root}):"]
    states = file_states(recipe_files(), root)
    for raw in RAW_SOURCES.values():
        mine = [state for state in states if release_of(state.path) is raw]
        counts = {kind: [s for s in mine if s.state == kind] for kind in ("verified", "damaged", "missing")}
        origins = sorted({raw.mirror_of(s.origin) for s in mine if s.origin})
        came = f"; fetched from {', '.join(origins)}" if origins else ""
        lines.append(
            f"  {raw.folder + '/':<10} {raw.pinned}: {len(counts['verified'])} of {len(mine)} files present "
            f"and verified, {len(counts['damaged'])} damaged, {len(counts['missing'])} not fetched{came}"
        )
        for state in counts["damaged"]:
            lines.append(f"     damaged (fetched again on next use): {state.path}")
    if any(state.state != "verified" for state in states):
        lines.append(f"  -> files are fetched when a dataset needs them; all at once: {fetch_command()}")
    return lines


def status_report(source: str | Path | None = None) -> str:
    """A plain-text table of every dataset, raw file and mirror, with what to run for the missing.

    ``mteb-evalrank datasets status`` adds the bundled models itself (from ``models.offline``,
    which ``data`` never imports).
    """
    from .mirrors import mirror_states

    source = source or os.environ.get(SOURCE_ENV)
    lines = ["Datasets (the plugin's tasks):"]
    missing = False
    for spec in DATASETS.values():
        where = dataset_location(spec)
        missing |= where is None
        lines.append(f"  {spec.hub_id + '@' + spec.revision:<40} {where or 'MISSING'}")
    if missing:
        lines.append(f"  -> run: {fetch_command()}  (or, from a local copy: {build_command(source)})")
        for raw in RAW_SOURCES.values():
            lines.append(f"     raw data {raw.folder}/: {raw.what}, {raw.url} ({raw.license})")
    lines.extend(raw_cache_report())
    lines.append("mteb's STS sets (optional offline mirrors):")
    mirrors = mirror_states()
    for state in mirrors:
        lines.append(f"  {state.task:<14} {state.hub_id:<24} {state.state}")
    if any(state.state == "missing" for state in mirrors):
        lines.append(f"  -> optional: {build_command(source)} --sts-mirrors")
    return "\n".join(lines)
