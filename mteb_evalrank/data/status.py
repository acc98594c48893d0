"""``mteb-evalrank datasets status``: what the plugin needs on this machine, where each piece
comes from, and what to run for what is missing (the bundled models are added by ``cli.py``)."""

from __future__ import annotations

from pathlib import Path

from ..settings import Settings
from .fetch import RAW_SOURCES, file_states, recipe_files, release_of
from .mirrors import mirror_states
from .ready import build_command, dataset_location, fetch_command
from .registry import DATASETS


def raw_cache_report(root: Path) -> list[str]:
    """The raw cache ``root``: per release, how many files are verified, damaged or missing, and whence."""
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


def status_report(settings: Settings, source: str | Path | None = None) -> str:
    """A plain-text table of every dataset, raw file and mirror, with what to run for the missing (the
    command adds the bundled models: ``data`` never imports ``models``)."""
    source = source or settings.source
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
    lines.extend(raw_cache_report(settings.home / "raw"))
    lines.append("mteb's STS sets (optional offline mirrors):")
    mirrors = mirror_states()
    for state in mirrors:
        lines.append(f"  {state.task:<14} {state.hub_id:<24} {state.state}")
    if any(state.state == "missing" for state in mirrors):
        lines.append(f"  -> optional: {build_command(source)} --sts-mirrors")
    return "\n".join(lines)
