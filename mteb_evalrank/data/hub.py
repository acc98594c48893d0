"""Turn a built dataset into (a) a Hub-ready folder and (b) a local ``datasets`` cache entry.

(a) ``<out>/<family>/``: ``README.md`` (the dataset card from ``tasks/<family>/``),
``<config>/<split>-00000-of-00001.parquet`` per config and split, ``LICENSE`` and
``build_info.json`` (revision, sources with SHA-256, build statistics). ``push`` uploads
that folder with ``huggingface_hub`` and tags the revision.

(b) ``datasets.load_dataset(hub_id, config, revision=...)`` with ``HF_DATASETS_OFFLINE=1``
falls back to the datasets cache of an earlier load:
``$HF_DATASETS_CACHE/<org>___<name>/<config>/0.0.0/<hash>/`` holding
``dataset_info.json`` and ``<name>-<split>.arrow``. ``install_into_cache`` writes exactly
that, so the unmodified Hub loading code (mteb's and ours) works offline. ``datasets``
has no public API to seed this cache from local data, hence this writer.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import datasets
import yaml
from datasets import DatasetDict, DatasetInfo, SplitDict, SplitInfo
from datasets.arrow_writer import ArrowWriter
from datasets.naming import camelcase_to_snakecase, filename_prefix_for_split

from .._files import sha256_file
from .layout import BuiltDataset
from .registry import DatasetSpec

CACHE_VERSION = "0.0.0"


def parquet_path(config: str, split: str) -> str:
    """Path of a config's split inside the Hub folder (the card's ``data_files``)."""
    return f"{config}/{split}-00000-of-00001.parquet"


def read_card_configs(card_path: Path) -> dict[str, dict[str, str]]:
    """``{config_name: {split: path}}`` from the YAML header of a dataset card."""
    text = card_path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ValueError(f"{card_path}: a dataset card starts with a '---' YAML header.")
    header = yaml.safe_load(text.split("---\n", 2)[1]) or {}
    configs = {}
    for entry in header.get("configs", []):
        files = entry.get("data_files", [])
        configs[entry["config_name"]] = {item["split"]: item["path"] for item in files}
    return configs


def check_card(spec: DatasetSpec, built: BuiltDataset) -> None:
    """The card must declare exactly the configs, splits and paths the build writes."""
    declared = read_card_configs(spec.card_path)
    produced = {
        name: {split: parquet_path(name, split) for split in data} for name, data in built.configs.items()
    }
    if declared != produced:
        raise ValueError(
            f"{spec.card_path}: the YAML 'configs' do not match what the recipe builds.\n"
            f"declared: {json.dumps(declared, sort_keys=True)}\n"
            f"built:    {json.dumps(produced, sort_keys=True)}\n"
            "Update the card (or the recipe) so they agree."
        )


def build_info(spec: DatasetSpec, built: BuiltDataset, source: Path) -> dict[str, Any]:
    """Provenance record: revision, licence, every source file with its SHA-256, stats."""
    sources = getattr(spec.recipe(), "SOURCES", ())
    return {
        "dataset": spec.hub_id,
        "revision": spec.revision,
        "license": spec.license,
        "sources": {name: sha256_file(source / name) for name in sources},
        "configs": {name: {s: len(d) for s, d in data.items()} for name, data in built.configs.items()},
        "stats": built.stats,
    }


def write_hub_folder(spec: DatasetSpec, built: BuiltDataset, source: Path, out_dir: Path) -> Path:
    """Write the Hub-ready folder of ``spec`` under ``out_dir`` and return its path."""
    check_card(spec, built)
    folder = out_dir / spec.family
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    shutil.copyfile(spec.card_path, folder / "README.md")
    # A recipe may name its licence file (LICENSE_FILE), or state the terms (LICENSE_TEXT) where its
    # source ships no licence file; the default is the EvalRank release's.
    recipe = spec.recipe()
    licence = source / getattr(recipe, "LICENSE_FILE", "evalrank/LICENSE")
    if isinstance(terms := getattr(recipe, "LICENSE_TEXT", None), str):
        (folder / "LICENSE").write_text(terms, encoding="utf-8")
    elif licence.is_file():
        shutil.copyfile(licence, folder / "LICENSE")
    for name, data in built.configs.items():
        for split, table in data.items():
            target = folder / parquet_path(name, split)
            target.parent.mkdir(parents=True, exist_ok=True)
            table.to_parquet(str(target))
    info = build_info(spec, built, source)
    (folder / "build_info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return folder


def cache_root(hub_id: str, cache_dir: Path | None = None) -> Path:
    """``$HF_DATASETS_CACHE/<org>___<name>`` as ``datasets`` names it."""
    namespace, name = hub_id.split("/")
    base = Path(cache_dir or datasets.config.HF_DATASETS_CACHE)
    return base / f"{namespace}___{camelcase_to_snakecase(name)}"


def hub_cache_copy(hub_id: str) -> Path | None:
    """The hub-cache folder of dataset ``hub_id`` if one exists (a real download)."""
    from huggingface_hub import constants

    folder = Path(constants.HF_HUB_CACHE) / f"datasets--{hub_id.replace('/', '--')}"
    return folder if folder.exists() else None


def _fingerprint(data: DatasetDict) -> str:
    digest = hashlib.sha256()
    for split, table in sorted(data.items()):
        digest.update(split.encode())
        digest.update(table._fingerprint.encode())
    return digest.hexdigest()[:16]


def install_config(hub_id: str, config: str, data: DatasetDict, cache_dir: Path | None = None) -> Path:
    """Write one config into the datasets cache (replacing an earlier install) and return its dir."""
    name = hub_id.split("/")[1]
    config_dir = cache_root(hub_id, cache_dir) / config
    if config_dir.exists():
        shutil.rmtree(config_dir)
    target = config_dir / CACHE_VERSION / _fingerprint(data)
    target.mkdir(parents=True)
    splits = SplitDict(dataset_name=name)
    for split, table in data.items():
        arrow = target / f"{filename_prefix_for_split(name, split)}.arrow"
        writer = ArrowWriter(path=str(arrow), features=table.features)
        try:
            writer.write_table(table.data.table)
            n_rows, n_bytes = writer.finalize()
        finally:
            writer.close()
        splits.add(SplitInfo(name=split, num_bytes=n_bytes, num_examples=n_rows, dataset_name=name))
    features = next(iter(data.values())).features
    DatasetInfo(
        config_name=config,
        dataset_name=name,
        builder_name="parquet",
        version=CACHE_VERSION,
        features=features,
        splits=splits,
    ).write_to_directory(str(target))
    return target


def install_into_cache(spec: DatasetSpec, built: BuiltDataset, cache_dir: Path | None = None) -> Path:
    """Install every config of ``built``; stale configs of the dataset are removed."""
    root = cache_root(spec.hub_id, cache_dir)
    if root.exists():
        for stale in root.iterdir():
            if stale.name not in built.configs:
                shutil.rmtree(stale) if stale.is_dir() else stale.unlink()
    for config, data in built.configs.items():
        install_config(spec.hub_id, config, data, cache_dir)
    return root


@dataclass(frozen=True)
class PushPlan:
    """What ``push`` uploads: the target repo, the revision tag and the files."""

    repo_id: str
    revision: str
    files: Mapping[str, Path]
    """``path_in_repo -> local file``."""


def push_plan(spec: DatasetSpec, folder: Path, org: str) -> PushPlan:
    """The upload a push of ``folder`` to ``<org>/<family>`` would make (no network)."""
    files = {
        path.relative_to(folder).as_posix(): path for path in sorted(folder.rglob("*")) if path.is_file()
    }
    if "README.md" not in files:
        raise FileNotFoundError(f"{folder} has no README.md dataset card; run the build first.")
    return PushPlan(repo_id=f"{org}/{spec.family}", revision=spec.revision, files=files)


def push(plan: PushPlan, *, token: str | None = None) -> str:
    """Upload ``plan`` with ``huggingface_hub`` and tag the commit with the revision."""
    from huggingface_hub import CommitOperationAdd, HfApi

    api = HfApi(token=token)
    api.create_repo(plan.repo_id, repo_type="dataset", exist_ok=True)
    operations = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(path)) for name, path in plan.files.items()
    ]
    commit = api.create_commit(
        plan.repo_id,
        operations=operations,
        commit_message=f"mteb-evalrank dataset build {plan.revision}",
        repo_type="dataset",
    )
    api.create_tag(plan.repo_id, tag=plan.revision, revision=commit.oid, repo_type="dataset", exist_ok=True)
    return commit.commit_url
