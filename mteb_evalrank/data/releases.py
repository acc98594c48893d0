"""The raw-data releases the recipes read: what they are, where they are published, their files' hashes.

The one declaration of the raw data (used by ``datasets status``, the not-available message
and :mod:`mteb_evalrank.data.fetch`):

* :data:`RAW_SOURCES`: one :class:`RawSource` per top-level folder of a raw data folder
  (``evalrank/``, ``wmt17-da/``), with the public repository and the commit it is pinned to;
* the path convention: a file ``<folder>/<rest>`` of the raw data folder is the repository's
  file :meth:`RawSource.upstream_path` (``prefix + rest`` unless ``rest`` is in ``renamed``),
  requested as ``<base>/<owner>/<repo>/<commit>/<upstream path>``; ``<base>`` is
  ``$MTEB_EVALRANK_RAW_URL`` or ``https://raw.githubusercontent.com``;
* the manifest ``raw_manifest.json`` shipped beside this module: ``{local path: {"sha256",
  "size"}}`` for exactly the files the recipes' ``SOURCES`` name (every family of
  ``registry.DATASETS`` and ``registry.STS_MIRRORS``). Regenerate it from a raw data folder
  with ``python -m mteb_evalrank.data.releases DIR`` (the test suite checks it against
  ``../shared/data``).

A dataset built from a raw data folder the user names (``--source``, ``$MTEB_EVALRANK_SOURCE``)
is checked against the manifest first (:func:`warn_source_mismatches`): one
:class:`SourceMismatchWarning` per file of another size or SHA-256 (e.g. a copy cut exactly at a
line end, which still reads as a well-formed, shorter file). The build goes on: a user may build
from a deliberately different copy, but its scores are not comparable with the published release.
"""

from __future__ import annotations

import json
import os
import sys
import warnings
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .._files import sha256_file
from .registry import DATASETS, STS_MIRRORS, DatasetSpec

#: environment variable replacing the base of every raw-file URL (mirrors, air-gapped copies, tests)
RAW_URL_ENV = "MTEB_EVALRANK_RAW_URL"
DEFAULT_RAW_URL = "https://raw.githubusercontent.com"
MANIFEST_PATH = Path(__file__).with_name("raw_manifest.json")


@dataclass(frozen=True)
class RawSource:
    """A raw-data release the recipes read: a top-level folder of the raw data folder."""

    folder: str
    what: str
    owner: str
    repo: str
    commit: str
    """The commit every file is fetched at (the manifest's hashes are of that commit's files)."""
    license: str
    prefix: str
    """Folder of the repository holding ``<folder>/<rest>`` as ``prefix + rest``."""
    renamed: Mapping[str, str] = field(default_factory=dict)
    """``rest -> upstream path`` for the files kept elsewhere in the repository."""

    @property
    def url(self) -> str:
        """The repository's page."""
        return f"https://github.com/{self.owner}/{self.repo}"

    @property
    def pinned(self) -> str:
        """``owner/repo@commit`` (short commit), for messages."""
        return f"{self.owner}/{self.repo}@{self.commit[:7]}"

    def upstream_path(self, local: str) -> str:
        """The repository path of the raw data folder's file ``local`` (``<folder>/<rest>``)."""
        folder, _, rest = local.partition("/")
        if folder != self.folder or not rest:
            raise ValueError(f"{local!r} is not a file of the {self.folder}/ release")
        return self.renamed.get(rest, self.prefix + rest)

    def raw_url(self, local: str, base: str | None = None) -> str:
        """``<base>/<owner>/<repo>/<commit>/<upstream path>`` of the file ``local``."""
        return f"{raw_url_base(base)}/{self.owner}/{self.repo}/{self.commit}/{self.upstream_path(local)}"


RAW_SOURCES: dict[str, RawSource] = {
    "evalrank": RawSource(
        folder="evalrank",
        what="the EvalRank release (Wang et al., ACL 2022): its data folder",
        owner="BinWang28",
        repo="EvalRank-Embedding-Evaluation",
        commit="c6422dbf8a357b206234ab81639b24bd3428914f",
        license="BSD-3-Clause (each bundled set keeps its authors' terms)",
        prefix="data/",
        renamed={"LICENSE": "LICENSE"},
    ),
    "wmt17-da": RawSource(
        folder="wmt17-da",
        what="WMT17 metrics task, segment-level direct assessment into English",
        owner="AIPHES",
        repo="ACL20-Reference-Free-MT-Evaluation",
        commit="2026e18c8874e5659ea6c03f82ec3e600d0feac1",
        license="Apache-2.0 repository; WMT17 data for research use",
        prefix="WMT17/testset/",
        renamed={"LICENSE-source-repo": "LICENSE", "DA-seglevel.csv": "WMT17/DA-seglevel.csv"},
    ),
}


def raw_url_base(base: str | None = None) -> str:
    """``base``, else ``$MTEB_EVALRANK_RAW_URL``, else the default; without a trailing slash."""
    return (base or os.environ.get(RAW_URL_ENV) or DEFAULT_RAW_URL).rstrip("/")


def release_of(local: str) -> RawSource:
    """The release holding the raw data folder's file ``local``."""
    folder = local.partition("/")[0]
    try:
        return RAW_SOURCES[folder]
    except KeyError:
        raise ValueError(f"{local!r} is in no known release (folders: {', '.join(RAW_SOURCES)})") from None


@dataclass(frozen=True)
class ManifestEntry:
    """What a raw file must be: its SHA-256 (hex) and size in bytes."""

    sha256: str
    size: int


@cache
def manifest() -> dict[str, ManifestEntry]:
    """The shipped manifest: ``{local path: ManifestEntry}``."""
    data = json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))
    return {path: ManifestEntry(entry["sha256"], entry["size"]) for path, entry in data["files"].items()}


def family_files(spec: DatasetSpec) -> tuple[str, ...]:
    """The raw files a family's recipe reads (its ``SOURCES``)."""
    return tuple(getattr(spec.recipe(), "SOURCES", ()))


def recipe_files() -> list[str]:
    """Every raw file a recipe reads (``DATASETS`` and ``STS_MIRRORS``), sorted."""
    return sorted({name for spec in (*DATASETS.values(), STS_MIRRORS) for name in family_files(spec)})


def compute_manifest(source: Path, files: Iterable[str] | None = None) -> dict[str, dict[str, str | int]]:
    """``{local path: {"sha256", "size"}}`` of ``files`` (default: :func:`recipe_files`) under ``source``."""
    return {
        name: {"sha256": sha256_file(source / name), "size": (source / name).stat().st_size}
        for name in (recipe_files() if files is None else sorted(files))
    }


def write_manifest(source: Path, path: Path = MANIFEST_PATH) -> Path:
    """Write the manifest of the raw data folder ``source`` to ``path``."""
    files = compute_manifest(source)
    releases = {
        raw.folder: {"repository": f"{raw.owner}/{raw.repo}", "commit": raw.commit}
        for raw in RAW_SOURCES.values()
    }
    document = {"releases": releases, "files": files}
    path.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    manifest.cache_clear()
    return path


class SourceMismatchWarning(UserWarning):
    """A raw source file differs from the pinned release's (size or SHA-256): scores are not comparable."""


def source_mismatches(files: Iterable[str], folder: Path) -> list[str]:
    """One message per file of ``files`` under ``folder`` whose size or SHA-256 is not the manifest's.

    Files absent from ``folder`` or from the manifest are left to the recipe (which names a
    missing file itself).
    """
    known = manifest()
    messages = []
    for name in files:
        path, entry = folder / name, known.get(name)
        if entry is None or not path.is_file():
            continue
        size = path.stat().st_size
        digest = sha256_file(path)
        if size != entry.size or digest != entry.sha256:
            messages.append(
                f"raw source file {path} differs from the pinned release {release_of(name).pinned}: "
                f"expected {entry.size:,} bytes with SHA-256 {entry.sha256}, found {size:,} bytes with "
                f"SHA-256 {digest}. The dataset is built from it anyway, but its scores will not be "
                "comparable with the published release (`mteb-evalrank datasets fetch` gets the pinned "
                "files)."
            )
    return messages


def warn_source_mismatches(spec: DatasetSpec, folder: Path) -> int:
    """Warn once (:class:`SourceMismatchWarning`) per raw file of ``spec`` in ``folder`` that differs
    from the pinned release; returns how many differ. Called before every build from a raw folder."""
    messages = source_mismatches(family_files(spec), folder)
    for message in messages:
        warnings.warn(message, SourceMismatchWarning, stacklevel=2)
    return len(messages)


if __name__ == "__main__":  # python -m mteb_evalrank.data.releases DIR
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m mteb_evalrank.data.releases RAW_DATA_DIR")
    print(f"wrote {write_manifest(Path(sys.argv[1]).resolve())}")
