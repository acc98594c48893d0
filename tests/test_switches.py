"""Every environment switch of README.md and docs/usage.md, exercised by the real CLI in a second process.

``docs/usage.md#switches`` has one row per switch naming the tests that run ``mteb`` or
``mteb-evalrank`` as a child process with that variable set, from empty caches (a ``tmp_path``
Hugging Face home and plugin home). The slow tests here cover the switches that had no such test;
the fast one keeps the table, the documents and the tests in sync.

Each child gets the environment its test intends: every ``MTEB_EVALRANK_*`` and ``HF_*`` variable of
this process (conftest sets ``HF_HOME`` and the offline flags) is dropped, then set explicitly, and
``PYTHONPATH`` points at this checkout.
"""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from test_fetch import BIN, RawServer, cached_files, fresh_online_env, mteb_run, serving, upstream_layout

REPO = Path(__file__).resolve().parents[1]
TESTS = REPO / "tests"
DOCUMENTS = (REPO / "README.md", REPO / "docs" / "usage.md")
SWITCH = re.compile(r"\b(?:MTEB_EVALRANK|HF)_[A-Z][A-Z0-9_]*[A-Z0-9]\b")
TEST_NAME = re.compile(r"`(\w+\.py)::(test_\w+)(?:\[[^\]`]*\])?`")

#: two word-similarity sets of one family: WS353-Sim's pairs are a subset of WS353-All's
WS353 = ("WordSimWS353All", "WordSimWS353Sim")
WS353_FILES = ("EN-WS-353-ALL.txt", "EN-WS-353-SIM.txt")
#: where docs/usage.md keeps the rows of evalrank/glove.6B.50d (revision 1.0.0, any context)
GLOVE_STORES = "format-1/evalrank__glove.6B.50d/1.0.0/*"
#: the raw files of the str-2021 family (the smallest to fetch), as the release lays them out
STR_2021_FILES = ("evalrank/LICENSE", "evalrank/sent_similarity/STR/sem_text_rel_ranked.csv")

#: a ``sitecustomize`` for a child process: records every file it opens whose name holds ``shard-``
#: (the embedding cache's shards: written as ``.shard-*.npz.*.tmp`` and renamed, so an open of a
#: ``shard-*`` file is a read), one ``path<TAB>mode`` line each, in ``$TEST_OPEN_LOG``
OPEN_RECORDER = """
import os
import sys

_log = os.environ.get("TEST_OPEN_LOG")


def _record(event, args):
    if event == "open" and isinstance(args[0], (str, bytes, os.PathLike)):
        path = os.fsdecode(args[0])
        if "shard-" in os.path.basename(path):
            with open(_log, "a", encoding="utf-8") as out:
                out.write(f"{path}\\t{args[1]}\\n")


if _log:
    sys.addaudithook(_record)
"""


def cold_env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """A new user's offline machine: none of this process's plugin or Hugging Face variables, an
    empty Hugging Face home and plugin home under ``tmp_path``, this checkout's code, then ``extra``."""
    env = {k: v for k, v in os.environ.items() if not SWITCH.fullmatch(k) and k != "XDG_CACHE_HOME"}
    return {
        **env,
        "HF_HOME": str(tmp_path / "hf"),
        "MTEB_EVALRANK_HOME": str(tmp_path / "home"),
        "HF_HUB_OFFLINE": "1",
        "HF_DATASETS_OFFLINE": "1",
        "PYTHONPATH": str(REPO),
        **extra,
    }


def cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """``mteb-evalrank ARGS`` as a child process."""
    command = [str(BIN / "mteb-evalrank"), *args]
    return subprocess.run(command, capture_output=True, text=True, env=env, cwd=cwd, timeout=600)


def ran(result: subprocess.CompletedProcess[str]) -> subprocess.CompletedProcess[str]:
    """``result``, after checking that the process ended well."""
    assert result.returncode == 0 and "Traceback" not in result.stderr, result.stderr[-3000:]
    return result


def scores(out: Path, task: str) -> Any:
    """The test split's scores in ``task``'s result file under ``out`` (every metric)."""
    (path,) = out.rglob(f"{task}.json")
    return json.loads(path.read_text(encoding="utf-8"))["scores"]["test"]


def ws353_words(source: Path) -> set[str]:
    """The distinct texts WS353-All and WS353-Sim encode: their words, lower-cased, from the raw files."""
    words = set()
    for name in WS353_FILES:
        for line in (source / "evalrank" / "word_similarity" / name).read_text(encoding="utf-8").splitlines():
            first, second, _ = line.split("\t")
            words |= {first.lower(), second.lower()}
    return words


def shard_rows(root: Path) -> list[bytes]:
    """The keys of every row stored in the shards under ``root``."""
    rows: list[bytes] = []
    for shard in sorted(root.rglob("shard-*.npz")):
        with np.load(shard) as data:
            rows += [bytes(key) for key in data["keys"]]
    return rows


@pytest.fixture
def raw_server(source: Path) -> Iterator[RawServer]:
    """``test_fetch``'s server of the raw files, counting requests (a fixture of this module's own)."""
    with serving(upstream_layout(source)) as raw:
        yield raw


# --- the switches' tests ----------------------------------------------------------------------------


@pytest.mark.slow  # three mteb-evalrank processes
def test_the_home_variable_holds_the_raw_cache(tmp_path: Path, raw_server: RawServer, source: Path) -> None:
    # HOME is this test's own: without the variable the raw files would go to <HOME>/.cache/mteb-evalrank
    user = tmp_path / "user"
    env = fresh_online_env(tmp_path, raw_server, HOME=str(user))
    env.pop("XDG_CACHE_HOME", None)
    ran(cli(["datasets", "fetch", "--only", "str-2021"], env, tmp_path))
    raw = tmp_path / "home" / "raw"
    assert cached_files(raw) == sorted(STR_2021_FILES)
    for name in STR_2021_FILES:
        assert (raw / name).read_bytes() == (source / name).read_bytes(), name
    provenance = json.loads((raw / "provenance.json").read_text(encoding="utf-8"))
    assert sorted(provenance) == sorted(STR_2021_FILES)
    assert all(entry["url"].startswith(raw_server.url + "/") for entry in provenance.values())
    assert not (user / ".cache" / "mteb-evalrank").exists()
    assert raw_server.raw_requests() == len(STR_2021_FILES)
    # the dataset built again (a new Hugging Face home) from the same plugin home: no raw request
    again = {**env, "HF_HOME": str(tmp_path / "hf-again")}
    ran(cli(["datasets", "fetch", "--only", "str-2021"], again, tmp_path))
    assert raw_server.raw_requests() == len(STR_2021_FILES)
    # another plugin home holds nothing: the files are fetched again, into it
    other = {**again, "HF_HOME": str(tmp_path / "hf-other"), "MTEB_EVALRANK_HOME": str(tmp_path / "other")}
    ran(cli(["datasets", "fetch", "--only", "str-2021"], other, tmp_path))
    assert raw_server.raw_requests() == 2 * len(STR_2021_FILES)
    assert cached_files(tmp_path / "other" / "raw") == sorted(STR_2021_FILES)


@pytest.mark.slow  # an mteb-evalrank process against a stalling server
def test_the_fetch_timeout_variable_bounds_the_wait_for_a_stalled_server(
    tmp_path: Path, raw_server: RawServer
) -> None:
    raw_server.faults["*"] = "stall"  # every raw file: no answer for 30 s, then the file
    raw_server.delay = 30.0
    env = fresh_online_env(tmp_path, raw_server, MTEB_EVALRANK_FETCH_TIMEOUT="1.5")
    start = time.monotonic()
    result = cli(["datasets", "fetch", "--only", "str-2021"], env, tmp_path)
    elapsed = time.monotonic() - start
    assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr[-3000:]
    (message,) = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert "no answer within 1.5 s" in message and raw_server.url in message and "Nothing was kept" in message
    assert elapsed < raw_server.delay  # given up before the server answered (the default is 30 s)
    assert cached_files(tmp_path / "home" / "raw") == []


@pytest.mark.slow  # three mteb processes
def test_the_embedding_cache_variable_keeps_each_text_once_and_a_later_run_reads_it(
    tmp_path: Path, source: Path
) -> None:
    cache = tmp_path / "embeddings"
    env = cold_env(tmp_path, MTEB_EVALRANK_SOURCE=str(source), MTEB_EVALRANK_EMBEDDING_CACHE=str(cache))
    ran(mteb_run(tmp_path / "out-1", env, WS353))
    shards = sorted(cache.rglob("shard-*.npz"))
    assert shards and shards == sorted(cache.glob(f"{GLOVE_STORES}/shard-*.npz"))  # the documented layout
    rows = shard_rows(cache)
    assert len(rows) == len(set(rows)) == len(ws353_words(source))  # each distinct text, once
    before = {shard: shard.read_bytes() for shard in shards}
    second = ran(mteb_run(tmp_path / "out-2", env, WS353))
    # read, not encoded: the shards are append-only, and a text encoded again would add one
    assert {shard: shard.read_bytes() for shard in sorted(cache.rglob("shard-*.npz"))} == before
    assert "CorruptShardWarning" not in second.stderr and "CacheFolderWarning" not in second.stderr
    for task in WS353:
        assert scores(tmp_path / "out-2", task) == scores(tmp_path / "out-1", task), task
    # without the variable nothing is kept: not in that folder, nor under the Hugging Face or plugin home
    ran(mteb_run(tmp_path / "out-3", cold_env(tmp_path), WS353))
    assert sorted(cache.rglob("shard-*.npz")) == shards
    assert not [*(tmp_path / "hf").rglob("shard-*.npz"), *(tmp_path / "home").rglob("shard-*.npz")]
    for task in WS353:
        assert scores(tmp_path / "out-3", task) == scores(tmp_path / "out-1", task), task


@pytest.mark.slow  # two mteb processes
def test_the_reuse_variable_set_to_0_makes_each_task_encode_on_its_own(tmp_path: Path, source: Path) -> None:
    # The run's reuse goes through the process cache, kept on disk when the cache variable names a
    # folder: with reuse on the run's rows land there; with MTEB_EVALRANK_REUSE_EMBEDDINGS=0 no task
    # goes through that cache (each encodes with its own, in memory): nothing lands there, and the
    # scores are the same.
    def run(name: str, **extra: str) -> Path:
        cache = tmp_path / f"embeddings-{name}"
        env = cold_env(tmp_path, MTEB_EVALRANK_SOURCE=str(source), MTEB_EVALRANK_EMBEDDING_CACHE=str(cache))
        ran(mteb_run(tmp_path / f"out-{name}", {**env, **extra}, WS353))
        return cache

    reused = run("reuse")
    assert len(shard_rows(reused)) == len(ws353_words(source))
    alone = run("alone", MTEB_EVALRANK_REUSE_EMBEDDINGS="0")
    assert not list(alone.rglob("shard-*.npz"))
    for task in WS353:  # a static model's rows do not depend on their batch: identical scores
        assert scores(tmp_path / "out-alone", task) == scores(tmp_path / "out-reuse", task), task


@pytest.mark.slow  # two mteb processes
def test_the_memory_bound_variable_drops_rows_that_are_read_again_from_disk(
    tmp_path: Path, source: Path
) -> None:
    # WS353-Sim's words are all WS353-All's: the second task finds every row in the cache. Within
    # 1 MiB (437 float32 rows of 50: 87 KB) they are still in memory and no shard is read; with a bound of
    # 0 MiB every row is dropped after each call and read again from its shard, not encoded again.
    hook = tmp_path / "hook"
    hook.mkdir()
    (hook / "sitecustomize.py").write_text(OPEN_RECORDER, encoding="utf-8")

    def run(mib: str) -> tuple[list[Path], list[Path]]:
        """The shards a run with the bound ``mib`` wrote, and those it read."""
        cache, log = tmp_path / f"embeddings-{mib}", tmp_path / f"opened-{mib}.log"
        env = cold_env(
            tmp_path,
            MTEB_EVALRANK_SOURCE=str(source),
            MTEB_EVALRANK_EMBEDDING_CACHE=str(cache),
            MTEB_EVALRANK_CACHE_MIB=mib,
            PYTHONPATH=f"{hook}{os.pathsep}{REPO}",
            TEST_OPEN_LOG=str(log),
        )
        ran(mteb_run(tmp_path / f"out-{mib}", env, WS353))
        opened = [line.split("\t") for line in log.read_text(encoding="utf-8").splitlines()]
        assert opened, "the recorder saw no shard"  # the run's writes, at least
        read = [
            Path(path) for path, mode in opened if "w" not in mode and Path(path).name.startswith("shard-")
        ]
        return sorted(cache.rglob("shard-*.npz")), read

    kept, kept_read = run("1")
    assert kept and kept_read == []
    dropped, dropped_read = run("0")
    assert dropped_read and set(dropped_read) <= set(dropped)
    assert len(shard_rows(tmp_path / "embeddings-0")) == len(shard_rows(tmp_path / "embeddings-1"))
    assert len(shard_rows(tmp_path / "embeddings-0")) == len(ws353_words(source))  # nothing encoded twice
    for task in WS353:
        assert scores(tmp_path / "out-0", task) == scores(tmp_path / "out-1", task), task


@pytest.mark.slow  # three mteb-evalrank/mteb processes
def test_the_hf_home_variable_is_where_datasets_are_installed_and_read(tmp_path: Path, source: Path) -> None:
    home = tmp_path / "hf"
    env = cold_env(tmp_path)
    build = ["datasets", "build", "--source", str(source), "--only", "word-similarity"]
    ran(cli([*build, "--out", str(tmp_path / "hub")], env, tmp_path))
    assert (home / "datasets" / "mteb-evalrank___word-similarity").is_dir()
    ran(mteb_run(tmp_path / "out", env, WS353[:1]))  # offline, no raw data: read from that home
    assert scores(tmp_path / "out", WS353[0])
    elsewhere = mteb_run(
        tmp_path / "out-elsewhere", {**env, "HF_HOME": str(tmp_path / "hf-empty")}, WS353[:1]
    )
    assert elsewhere.returncode == 1 and "Traceback" not in elsewhere.stderr, elsewhere.stderr[-3000:]
    (message,) = [line for line in elsewhere.stderr.splitlines() if line.startswith("error: ")]
    assert "WordSimWS353All needs the dataset mteb-evalrank/word-similarity@" in message


# --- the table in docs/usage.md -----------------------------------------------------------------------


def switches_section(text: str) -> tuple[str, str]:
    """docs/usage.md's ``## Switches`` section, and the rest of the page."""
    before, found, after = text.partition("\n## Switches\n")
    assert found, "docs/usage.md has no '## Switches' section"
    section, heading, rest = after.partition("\n## ")
    return section, before + heading + rest


def documented_switches() -> set[str]:
    """The variables README.md and docs/usage.md name, the table of switches aside."""
    texts = [path.read_text(encoding="utf-8") for path in DOCUMENTS]
    texts[1] = switches_section(texts[1])[1]
    return {name for text in texts for name in SWITCH.findall(text)}


def switch_table() -> dict[str, list[tuple[str, str]]]:
    """``variable -> [(file, test)]`` of the table under ``## Switches`` in docs/usage.md."""
    body = switches_section((REPO / "docs" / "usage.md").read_text(encoding="utf-8"))[0]
    rows = [line for line in body.splitlines() if line.startswith("|")]
    assert rows[0].replace(" ", "") == "|variable|whatitdoes|test(asecondprocess)|", rows[0]
    table: dict[str, list[tuple[str, str]]] = {}
    for row in rows[2:]:
        cells = [cell.strip() for cell in row.strip("|").split("|")]
        assert len(cells) == 3, row
        (variable,) = re.findall(r"^`([A-Z_0-9]+)`$", cells[0]) or [cells[0]]
        assert variable not in table, f"two rows for {variable}"
        table[variable] = TEST_NAME.findall(cells[2])
        assert table[variable], f"the row of {variable} names no test"
    return table


def module_functions(path: Path) -> tuple[dict[str, ast.FunctionDef], dict[str, Path]]:
    """A test module's top-level functions, and the names it imports from sibling modules."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = {node.name: node for node in tree.body if isinstance(node, ast.FunctionDef)}
    imported = {
        alias.asname or alias.name: TESTS / f"{node.module}.py"
        for node in tree.body
        if isinstance(node, ast.ImportFrom) and node.module and (TESTS / f"{node.module}.py").is_file()
        for alias in node.names
    }
    return functions, imported


def spawns(path: Path, name: str, depth: int = 1) -> bool:
    """Whether function ``name`` of ``path`` starts a process: it uses the ``subprocess`` module
    (``subprocess.run``, ``subprocess.Popen``), or calls a helper that does (``depth`` levels
    down), defined in its module or imported from a sibling test module."""
    functions, imported = module_functions(path)
    function = functions[name]
    if any(
        isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "subprocess"
        for node in ast.walk(function)
    ):
        return True
    if depth == 0:
        return False
    called = {
        node.func.id
        for node in ast.walk(function)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    }
    return any(
        (callee in functions and callee != name and spawns(path, callee, depth - 1))
        or (
            callee in imported
            and callee in module_functions(imported[callee])[0]
            and spawns(imported[callee], callee, depth - 1)
        )
        for callee in called
    )


def test_every_documented_switch_has_a_row_naming_tests_that_spawn_the_cli() -> None:
    table = switch_table()
    documented = documented_switches()
    assert documented >= {"HF_HOME", "MTEB_EVALRANK_HOME", "MTEB_EVALRANK_CACHE_MIB"}  # the parse works
    missing = sorted(documented - set(table))
    assert not missing, f"switches named in README.md or docs/usage.md without a row in its table: {missing}"
    unknown = sorted(set(table) - documented)
    assert not unknown, f"rows for variables that README.md and docs/usage.md do not document: {unknown}"
    for variable, tests in table.items():
        for file, test in tests:
            path = TESTS / file
            assert path.is_file(), f"{variable}: {file} does not exist"
            functions = module_functions(path)[0]
            assert test in functions, f"{variable}: {file}::{test} does not exist"
            assert spawns(path, test), f"{variable}: {file}::{test} starts no process"


def test_every_process_test_of_this_module_is_in_the_table() -> None:
    named = {test for tests in switch_table().values() for file, test in tests if file == Path(__file__).name}
    functions = module_functions(Path(__file__))[0]
    spawning = {name for name in functions if name.startswith("test_") and spawns(Path(__file__), name)}
    assert spawning and spawning <= named, sorted(spawning - named)
