"""State of a process that a run sets for a while: the embedding cache of a study's chain and the
descriptive statistics folder are context variables (a thread sees only its own), and a process
runs one chain of the study at a time, wherever the study runs (issue 28). docs/architecture.md's
"Module state" lists the rest; ``tests/test_architecture.py`` holds that list to the code.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from mteb_evalrank.embedding_cache import (
    EmbeddingCache,
    StoreKey,
    process_cache,
    text_digest,
    using_process_cache,
)
from mteb_evalrank.study.chain_execution import ChainAlreadyRunning, one_chain_per_process, run_chain
from mteb_evalrank.study.dispatch import multithreaded_workers
from mteb_evalrank.study.jobs import Chain
from mteb_evalrank.tasks._metadata import DESCRIPTIVE_STATS_DIR, descriptive_stats_dir


def _in_threads(*bodies: Callable[[], Any]) -> list[Any]:
    """Run each body in a thread of its own; their results, or the first error raised."""
    results: list[Any] = [None] * len(bodies)
    errors: list[BaseException] = []

    def run(i: int) -> None:
        try:
            results[i] = bodies[i]()
        except BaseException as error:  # re-raised in the calling thread
            errors.append(error)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(bodies))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    if errors:
        raise errors[0]
    return results


def test_two_threads_using_different_caches_do_not_interfere() -> None:
    """Each thread's ``using_process_cache`` block sees its own cache while the other's is open
    (both blocks are open at once), rows land in the thread's own cache, and the process default
    is untouched, in those threads and here."""
    default = process_cache()
    both_open = threading.Barrier(2, timeout=30)
    key = StoreKey("test_module_state/two-threads", "r", "c")

    def chain(cache: EmbeddingCache, text: str) -> tuple[bool, bool]:
        with using_process_cache(cache):
            both_open.wait()  # the other thread's block is open too
            process_cache().embed(key, [text], lambda texts: [[1.0, 2.0]] * len(texts))
            mine = process_cache() is cache
            both_open.wait()
        return mine, process_cache() is default

    first, second = EmbeddingCache(), EmbeddingCache()
    assert _in_threads(lambda: chain(first, "a"), lambda: chain(second, "b")) == [(True, True)] * 2
    assert set(first.store(key).index) == {text_digest("a")} and set(second.store(key).index) == {
        text_digest("b")
    }
    assert process_cache() is default and len(default.store(key)) == 0


def test_nested_cache_blocks_restore_the_outer_one() -> None:
    outer, inner = EmbeddingCache(), EmbeddingCache()
    with using_process_cache(outer):
        with using_process_cache(inner):
            assert process_cache() is inner
        assert process_cache() is outer


def test_the_statistics_folder_is_per_thread(tmp_path: Path) -> None:
    from mteb_evalrank.tasks import EvalRankWord

    shipped = EvalRankWord.metadata.descriptive_stat_path
    assert shipped.is_relative_to(DESCRIPTIVE_STATS_DIR)
    inside = threading.Event()
    leave = threading.Event()

    def describe() -> Path:
        with descriptive_stats_dir(tmp_path):
            inside.set()
            leave.wait(timeout=30)
            return EvalRankWord.metadata.descriptive_stat_path

    def read_meanwhile() -> Path:
        inside.wait(timeout=30)
        try:
            return EvalRankWord.metadata.descriptive_stat_path
        finally:
            leave.set()

    assert _in_threads(describe, read_meanwhile) == [
        tmp_path / shipped.relative_to(DESCRIPTIVE_STATS_DIR),
        shipped,
    ]


def test_a_second_chain_in_a_busy_process_fails_naming_the_fix(tmp_path: Path) -> None:
    busy = pytest.raises(ChainAlreadyRunning, match=r"second.*dask worker --nthreads 1")
    with one_chain_per_process("first"), busy:
        _in_threads(lambda: run_chain(Chain("second"), str(tmp_path)))
    assert run_chain(Chain("second"), str(tmp_path)).outcomes == []  # free again


def test_multithreaded_workers_are_named() -> None:
    info = {
        "workers": {"tcp://b:2": {"nthreads": 4}, "tcp://a:1": {"nthreads": 1}, "tcp://c:3": {"nthreads": 2}}
    }
    assert multithreaded_workers(info) == ["tcp://b:2 (4 threads)", "tcp://c:3 (2 threads)"]
    assert multithreaded_workers({"workers": {}}) == []


def test_a_cluster_of_multithreaded_workers_is_refused_before_any_chain_runs(tmp_path: Path) -> None:
    from distributed import LocalCluster

    from mteb_evalrank.study.dispatch import run_chains

    refused = pytest.raises(ValueError, match=r"\(2 threads\).*--nthreads 1")
    with (
        LocalCluster(n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None) as cluster,
        refused,
    ):
        run_chains([Chain("f")], tmp_path, workers=1, scheduler=cluster.scheduler_address)
    assert not (tmp_path / "embeddings").exists()
