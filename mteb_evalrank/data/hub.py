"""A built dataset written as a Hub-ready folder (and pushed), or published in the ``datasets`` cache
as ``datasets`` lays out an earlier download (which has no public API to seed it); the layouts:
docs/architecture.md ("Data")."""

from __future__ import annotations

import hashlib
import json
import shutil
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import datasets
from datasets import DatasetDict, DatasetInfo, SplitDict, SplitInfo
from datasets.arrow_writer import ArrowWriter
from datasets.naming import filename_prefix_for_split
from huggingface_hub import CommitOperationAdd, HfApi

from .._files import folder_lock, publishing, sha256_file
from .layout import BuiltDataset
from .registry import DatasetSpec, cache_root

CACHE_VERSION = "0.0.0"


def parquet_path(config: str, split: str) -> str:
    """Path of a config's split inside the Hub folder (the card's ``data_files``)."""
    return f"{config}/{split}-00000-of-00001.parquet"


def check_card(spec: DatasetSpec, built: BuiltDataset) -> None:
    """The card must declare exactly the configs, splits and paths the build writes."""
    declared = spec.card_configs
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
    recipe = spec.recipe
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
    info = {  # provenance: revision, licence, every source file with its SHA-256, statistics
        "dataset": spec.hub_id,
        "revision": spec.revision,
        "license": spec.license,
        "sources": {name: sha256_file(source / name) for name in spec.sources},
        "configs": {name: {s: len(d) for s, d in data.items()} for name, data in built.configs.items()},
        "stats": built.stats,
    }
    (folder / "build_info.json").write_text(json.dumps(info, indent=2) + "\n", encoding="utf-8")
    return folder


BUILD_FORMAT = 3
"""The layout of the plugin's builds in the ``datasets`` cache, recorded in :data:`BUILD_RECORD` and in
each build's fingerprint (the ``<hash>`` folder); a build of another format is built again.
2: the fingerprint carries it; 3: recorded beside the configs."""
BUILD_RECORD = "mteb_evalrank_build.json"


@contextmanager
def datasets_progress_bars(enabled: bool) -> Iterator[None]:
    """``datasets``' progress bars (``Creating parquet``, ``Casting the dataset``) on or off for the block."""
    was_disabled = datasets.are_progress_bars_disabled()
    if not enabled:
        datasets.disable_progress_bars()
    try:
        yield
    finally:
        if not was_disabled:
            datasets.enable_progress_bars()


def _fingerprint(data: DatasetDict) -> str:
    """The ``<hash>`` folder: SHA-256 of :data:`BUILD_FORMAT` and each split's ``datasets`` fingerprint."""
    digest = hashlib.sha256(f"mteb-evalrank build format {BUILD_FORMAT}".encode())
    for split, table in sorted(data.items()):
        digest.update(split.encode())
        digest.update(table._fingerprint.encode())
    return digest.hexdigest()[:16]


def write_config(folder: Path, hub_id: str, config: str, data: DatasetDict) -> Path:
    """Write one config under ``folder`` (a dataset's ``datasets``-cache folder being built) as
    ``datasets`` lays it out, ``<config>/0.0.0/<hash>/``, and return that folder."""
    name = hub_id.split("/")[1]
    target = folder / config / CACHE_VERSION / _fingerprint(data)
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


def install_into_cache(spec: DatasetSpec, built: BuiltDataset) -> Path:
    """Publish ``built`` as ``spec``'s ``datasets``-cache folder under the family's lock (``datasets
    build``; :func:`mteb_evalrank._files.publishing`); returns the folder."""
    root = cache_root(spec.hub_id)
    with folder_lock(root), publishing(root) as folder:
        write_build(folder, spec, built)
    return root


def write_build(folder: Path, spec: DatasetSpec, built: BuiltDataset) -> None:
    """Write every config of ``built`` (:func:`write_config`) and the :data:`BUILD_RECORD` (the format and
    ``spec``'s revision) into ``folder`` (a ``datasets``-cache folder being published)."""
    for config, data in built.configs.items():
        write_config(folder, spec.hub_id, config, data)
    record = {"format": BUILD_FORMAT, "revision": spec.revision}
    (folder / BUILD_RECORD).write_text(json.dumps(record) + "\n", encoding="utf-8")


@dataclass(frozen=True)
class PushPlan:
    """What ``push`` uploads: the target repo, the revision tag, the files (``path_in_repo -> file``)."""

    repo_id: str
    revision: str
    files: Mapping[str, Path]


def push_plan(spec: DatasetSpec, folder: Path, org: str) -> PushPlan:
    """The upload a push of ``folder`` to ``<org>/<family>`` would make (no network)."""
    files = {
        path.relative_to(folder).as_posix(): path for path in sorted(folder.rglob("*")) if path.is_file()
    }
    if "README.md" not in files:
        raise FileNotFoundError(f"{folder} has no README.md dataset card; run the build first.")
    return PushPlan(repo_id=f"{org}/{spec.family}", revision=spec.revision, files=files)


def push(plan: PushPlan) -> str:
    """Upload ``plan`` with ``huggingface_hub`` and tag the commit with the revision."""
    api = HfApi()
    api.create_repo(plan.repo_id, repo_type="dataset", exist_ok=True)
    operations = [
        CommitOperationAdd(path_in_repo=name, path_or_fileobj=str(path)) for name, path in plan.files.items()
    ]
    message = f"mteb-evalrank dataset build {plan.revision}"
    commit = api.create_commit(
        plan.repo_id, operations=operations, commit_message=message, repo_type="dataset"
    )
    api.create_tag(plan.repo_id, tag=plan.revision, revision=commit.oid, repo_type="dataset", exist_ok=True)
    return commit.commit_url
