"""Opt-in local mirrors of mteb's English STS test sets, recognisable and removable.

mteb's own ``STS12``-``STS16``, ``STSBenchmark`` and ``SICK-R`` load ``mteb/<name>-sts`` from
the Hub. Offline, ``mteb-evalrank datasets build --sts-mirrors`` rebuilds them from the
EvalRank release (``tasks/sts-mirrors``) and writes them into the ``datasets`` cache under
mteb's ids, so that those unmodified tasks run without the network.

Rules, because this writes under ids that belong to someone else:

* opt-in only (the build never installs them unless asked);
* never over a real copy: if the ``datasets`` cache or the hub cache already holds the id
  (a real Hub download, or anything not written by this module), that task is skipped and
  reported;
* recognisable: each mirror carries :data:`MARKER` (a JSON file naming this plugin, the
  source and the date) next to its ``dataset_info.json``; :func:`mirror_states` lists them and
  :func:`remove_sts_mirrors` removes exactly those.

The mirrors' texts are EvalRank's (lower-cased and tokenised for STS-B and SICK-R), so scores
differ slightly from the Hub copies'; the dataset card ``tasks/sts-mirrors/README.md`` says by
how much.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Literal

from .._files import folder_lock, publishing
from .hub import cache_root, check_card, hub_cache_copy, write_config
from .layout import BuiltDataset
from .registry import STS_MIRROR_SPECS, STS_MIRRORS, MirrorSpec
from .repair import build_damage

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
    if (
        entries
        and all((entry / MARKER).is_file() for entry in entries)
        and hub_cache_copy(mirror.hub_id) is None
    ):
        state: State = "mirror"
    elif entries or (root.exists() and any(root.iterdir())) or hub_cache_copy(mirror.hub_id) is not None:
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
    """Build ``tasks/sts-mirrors`` from ``source`` and install a mirror for every id that holds no real copy.

    ``displaced``: ``{task: folder}`` for a damaged mirror of ours (:func:`damaged_mirror`),
    replaced whatever its state and moved to ``folder`` (kept), not removed.

    Returns ``{task: state}`` after the install: ``mirror`` where installed (or refreshed),
    ``real copy`` where an existing copy was left untouched.
    """
    displaced = displaced or {}
    if built is None:
        built = STS_MIRRORS.recipe().build(Path(source))
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
