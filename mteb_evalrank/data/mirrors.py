"""Opt-in local mirrors of mteb's English STS test sets (``datasets build --sts-mirrors``):
recognisable (:data:`MARKER`), removable, never written over a real copy (docs/tasks.md)."""

from __future__ import annotations

import json
import shutil
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from .._files import folder_lock, publishing, renew
from ..settings import SOURCE_ENV, Settings
from .fetch import raw_folder
from .hub import check_card, write_config
from .layout import BuiltDataset
from .ready import (
    DamagedDatasetWarning,
    DatasetDamagedError,
    build_command,
    build_damage,
    damage_summary,
    fetch_command,
    hub_cache_copy,
)
from .registry import STS_MIRROR_SPECS, STS_MIRRORS, MirrorSpec, cache_root

#: file that marks a datasets-cache entry as written by this module
MARKER = "mteb_evalrank_mirror.json"

State = Literal["mirror", "real copy", "missing"]


@dataclass(frozen=True)
class MirrorState:
    """Where one of mteb's STS ids stands in the local caches."""

    task: str
    hub_id: str
    state: State
    path: Path
    """The ``datasets`` cache folder of the id (may not exist)."""


def _state(mirror: MirrorSpec, cache_dir: Path | None) -> MirrorState:
    root = cache_root(mirror.hub_id, cache_dir)
    config_dir = root / mirror.hub_config
    entries = [p.parent for p in config_dir.glob("*/*/dataset_info.json")]
    downloaded = hub_cache_copy(mirror.hub_id) is not None
    if entries and not downloaded and all((entry / MARKER).is_file() for entry in entries):
        state: State = "mirror"
    elif entries or downloaded or (root.exists() and any(root.iterdir())):
        state = "real copy"
    else:
        state = "missing"
    return MirrorState(mirror.task, mirror.hub_id, state, root)


def mirror_states(cache_dir: Path | None = None) -> list[MirrorState]:
    """Every STS id's state: ``mirror`` (ours), ``real copy`` (not ours: never touched) or ``missing``."""
    return [_state(mirror, cache_dir) for mirror in STS_MIRROR_SPECS]


def install_sts_mirrors(
    source: Path | str,
    cache_dir: Path | None = None,
    *,
    built: BuiltDataset | None = None,
    displaced: Mapping[str, Path] | None = None,
) -> dict[str, MirrorState]:
    """Build ``tasks/sts-mirrors`` from ``source`` and install a mirror for every id that holds no real copy
    (``displaced``: ``{task: folder}``, a damaged mirror of ours replaced anyway, moved to ``folder``);
    ``{task: state}``: ``mirror`` (installed or refreshed) or ``real copy`` (left untouched)."""
    displaced = displaced or {}
    if built is None:
        built = STS_MIRRORS.recipe.build(Path(source))
    check_card(STS_MIRRORS, built)
    stamp = {
        "written_by": "mteb-evalrank datasets build --sts-mirrors",
        "source": str(Path(source).resolve()),
        "recipe": "tasks/sts-mirrors",
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "remove_with": "mteb-evalrank datasets remove-sts-mirrors",
    }
    result = {}
    for mirror in STS_MIRROR_SPECS:
        root = cache_root(mirror.hub_id, cache_dir)
        with folder_lock(root):
            state = _state(mirror, cache_dir)
            if state.state != "real copy" or mirror.task in displaced:
                with publishing(root, displaced=displaced.get(mirror.task)) as folder:
                    config = built.configs[mirror.task]
                    target = write_config(folder, mirror.hub_id, mirror.hub_config, config)
                    (target / MARKER).write_text(json.dumps({**stamp, "task": mirror.task}, indent=2) + "\n")
                state = _state(mirror, cache_dir)
        result[mirror.task] = state
    return result


def damaged_mirror(task: str) -> tuple[MirrorSpec, Path, list[str]] | None:
    """``(mirror, its folder, the damaged files)`` if mteb's ``task`` has a damaged mirror of
    ours; ``None`` if it has no mirror of ours (a real copy is never touched) or a sound one."""
    mirror = next((m for m in STS_MIRROR_SPECS if m.task == task), None)
    if mirror is None or hub_cache_copy(mirror.hub_id) is not None:  # a real download: not ours
        return None
    root = cache_root(mirror.hub_id)
    folders = [p for p in root.iterdir() if p.is_dir()] if root.is_dir() else []
    if not any((root / mirror.hub_config).glob(f"*/*/{MARKER}")) or any(
        not any(p.glob(f"*/*/{MARKER}")) for p in folders
    ):
        return None  # not ours, or a real copy beside it: never touched
    problems = build_damage(root, [mirror.hub_config])
    return (mirror, root, problems) if problems else None


def remove_sts_mirrors(cache_dir: Path | None = None) -> list[MirrorState]:
    """Remove every mirror this module installed (never a real copy); returns what was removed."""
    removed = []
    for state in mirror_states(cache_dir):
        if state.state == "mirror":
            shutil.rmtree(state.path)
            removed.append(state)
    return removed


def rebuild_mirror_if_damaged(task: str, settings: Settings) -> bool:
    """After mteb's ``task`` failed to load: whether its STS mirror was ours, damaged and installed again
    (load again); a ``DatasetDamagedError`` if damaged (moved aside) and no raw data are at hand."""
    if (mirror_found := damaged_mirror(task)) is None:
        return False
    mirror, root, _ = mirror_found

    def rebuild(aside: Path | None) -> bool:
        if (raw := raw_folder(STS_MIRRORS, settings)) is not None:
            install_sts_mirrors(raw, displaced={task: aside} if aside else {})
        return raw is not None

    if (found := renew(root, lambda: build_damage(root, [mirror.hub_config]) or None, rebuild)) is None:
        return True  # another process installed it again while this one waited
    problems, aside, rebuilt = found
    detail = damage_summary(problems)
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
        f"been moved aside to {aside}. Install it again: "
        f"`{build_command(settings.source, STS_MIRRORS.family)}` "
        f"(or, online, `{fetch_command(STS_MIRRORS.family)}`), or set {SOURCE_ENV} to the raw data folder "
        "to do so on first use."
    )
