"""What the plugin needs on this machine, where each piece comes from, and how to get what is missing.

Used by ``mteb-evalrank datasets status`` and by the tasks' first-run message
(:class:`DatasetNotAvailableError`); :func:`ensure_dataset` builds a missing family from the
raw data named by ``MTEB_EVALRANK_SOURCE`` on first use.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass
from pathlib import Path

from .registry import DATASETS, DatasetSpec

#: environment variable naming the raw data folder (``evalrank/``, ``wmt17-da/``)
SOURCE_ENV = "MTEB_EVALRANK_SOURCE"


@dataclass(frozen=True)
class RawSource:
    """A raw-data release the recipes read, as a top-level folder of the source directory."""

    folder: str
    what: str
    url: str
    license: str


RAW_SOURCES: dict[str, RawSource] = {
    "evalrank": RawSource(
        "evalrank",
        "the EvalRank release (Wang et al., ACL 2022): its data folder",
        "https://github.com/BinWang28/EvalRank",
        "BSD-3-Clause (each bundled set keeps its authors' terms)",
    ),
    "wmt17-da": RawSource(
        "wmt17-da",
        "WMT17 metrics task, segment-level direct assessment into English",
        "https://github.com/AIPHES/ACL20-Reference-Free-MT-Evaluation",
        "Apache-2.0 repository; WMT17 data for research use",
    ),
}


class DatasetNotAvailableError(RuntimeError):
    """A plugin dataset is neither cached locally nor loadable from the Hub."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def raw_sources(spec: DatasetSpec) -> list[RawSource]:
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


def not_available_message(spec: DatasetSpec, task: str, cause: BaseException | None = None) -> str:
    """The one paragraph a user sees when ``task`` cannot load ``spec``."""
    sources = "; ".join(f"{s.what}, {s.url} ({s.license}), as {s.folder}/" for s in raw_sources(spec))
    reason = f" ({type(cause).__name__})" if cause is not None else ""
    return (
        f"{task} needs the dataset {spec.hub_id}@{spec.revision}, which is neither in the local datasets "
        f"cache nor loadable from the Hugging Face Hub{reason}. Build it from the raw data with "
        f"`{build_command(os.environ.get(SOURCE_ENV), spec.family)}`, or set {SOURCE_ENV} to the raw data "
        f"folder to build it on first use. Raw data: {sources}. "
        "`mteb-evalrank datasets status` lists everything the plugin needs."
    )


def ensure_dataset(spec: DatasetSpec) -> bool:
    """Build and install ``spec`` from ``$MTEB_EVALRANK_SOURCE`` when it is not installed; True if built."""
    source = os.environ.get(SOURCE_ENV)
    if not source or dataset_location(spec) is not None:
        return False
    from .hub import install_into_cache

    folder = Path(source).expanduser().resolve()
    if not folder.is_dir():
        raise DatasetNotAvailableError(
            f"{SOURCE_ENV}={source} is not a folder: point it at the raw data (holding evalrank/, wmt17-da/)."
        )
    print(f"mteb-evalrank: building {spec.hub_id} from {folder} (first use) ...", file=sys.stderr, flush=True)
    built = spec.recipe().build(folder)
    root = install_into_cache(spec, built)
    print(f"mteb-evalrank: installed {spec.hub_id} in {root}", file=sys.stderr, flush=True)
    return True


def status_report(source: str | Path | None = None) -> str:
    """A plain-text table of every dataset, mirror and bundled model, with what to run for the missing."""
    from ..models.offline import model_states
    from .mirrors import mirror_states

    source = source or os.environ.get(SOURCE_ENV)
    lines = ["Datasets (the plugin's tasks):"]
    missing = False
    for spec in DATASETS.values():
        where = dataset_location(spec)
        missing |= where is None
        lines.append(f"  {spec.hub_id + '@' + spec.revision:<40} {where or 'MISSING'}")
    if missing:
        lines.append(f"  -> run: {build_command(source)}")
        for raw in RAW_SOURCES.values():
            lines.append(f"     raw data {raw.folder}/: {raw.what}, {raw.url} ({raw.license})")
    lines.append("mteb's STS sets (optional offline mirrors):")
    mirrors = mirror_states()
    for state in mirrors:
        lines.append(f"  {state.task:<14} {state.hub_id:<24} {state.state}")
    if any(state.state == "missing" for state in mirrors):
        lines.append(f"  -> optional: {build_command(source)} --sts-mirrors")
    lines.append("Bundled models:")
    for model in model_states():
        lines.append(f"  {model.name:<40} {model.state}")
        if model.fix:
            lines.append(f"  -> run: {model.fix}")
    return "\n".join(lines)
