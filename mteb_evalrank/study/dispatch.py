"""Dispatch the chains of a study: in this process, on a local Dask cluster or a remote one (docs/study.md).

One Dask task per :class:`~.jobs.Chain`, run by a one-thread worker; per-job progress reaches the
client as worker events. Workers write to the study folder themselves (shared on a cluster).
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import time
import uuid
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .chain_execution import ChainReport, ChainSettings, JobOutcome, run_chain
from .jobs import Chain

if TYPE_CHECKING:
    from distributed import Client, Future, LocalCluster

#: environment variables handed to local workers (model/dataset caches, offline flags, imports)
FORWARDED_ENV = ("HF_", "TRANSFORMERS_", "SENTENCE_TRANSFORMERS_", "MTEB", "TOKENIZERS_", "PYTHONPATH")
#: seconds between two looks at the chains' futures (also the latency of Ctrl-C)
POLL_SECONDS = 0.2
#: seconds allowed to close the client and a local cluster
CLOSE_TIMEOUT = 10


def default_workers(n_chains: int) -> int:
    """Local default: one worker per chain, at most one per CPU core (1 = run in this process)."""
    return max(1, min(n_chains, os.cpu_count() or 1))


def multithreaded_workers(scheduler_info: dict[str, Any]) -> list[str]:
    """The workers of ``Client.scheduler_info()`` with more than one thread, as "address (n threads)"."""
    workers = scheduler_info.get("workers", {})
    return [
        f"{address} ({info['nthreads']} threads)"
        for address, info in sorted(workers.items())
        if int(info.get("nthreads", 1)) > 1
    ]


def run_chains(
    chains: Sequence[Chain],
    out: Path,
    *,
    workers: int,
    scheduler: str | None = None,
    settings: ChainSettings | None = None,
    on_outcome: Callable[[JobOutcome], None] | None = None,
) -> list[ChainReport]:
    """Run every chain; ``workers == 1`` without ``scheduler`` runs them here, one after the other.

    Raises:
        ValueError: a worker of the cluster has several threads (named).
    """
    if not chains:
        return []
    workers = min(workers, len(chains))
    if scheduler is None and workers <= 1:
        return [run_chain(c, str(out), settings, report=on_outcome) for c in chains]
    from distributed import Client, LocalCluster

    threads = None
    cluster = None
    if scheduler is None:  # one thread per worker process, ``threads`` for its numerical libraries
        threads = max(1, (os.cpu_count() or 1) // workers)
        env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)}
        env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="false")
        cluster = LocalCluster(
            n_workers=workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=logging.ERROR,
            env=env,
        )

    client = Client(cluster if cluster is not None else scheduler)
    try:
        several = multithreaded_workers(client.scheduler_info())
        if several:
            raise ValueError(
                "the study runs one chain per worker process, but these Dask workers have several "
                f"threads: {', '.join(several)}. Start them with one thread each: dask worker "
                "--nthreads 1 ADDRESS (--nworkers sets how many per machine)."
            )
        return _run_on_client(client, cluster, chains, out, threads, settings, on_outcome)
    finally:
        client.close(timeout=CLOSE_TIMEOUT)
        if cluster is not None:
            cluster.close(timeout=CLOSE_TIMEOUT)


def _run_on_client(
    client: Client,
    cluster: LocalCluster | None,
    chains: Sequence[Chain],
    out: Path,
    threads: int | None,
    settings: ChainSettings | None,
    on_outcome: Callable[[JobOutcome], None] | None,
) -> list[ChainReport]:
    """One Dask task per chain; on Ctrl-C the chains are cancelled and a local cluster's workers killed."""
    topic = f"mteb-evalrank-study-{uuid.uuid4().hex}"
    reported: dict[tuple[str, str], JobOutcome] = {}  # (model, task) -> the outcome a worker published

    def announce(outcome: JobOutcome) -> None:
        if on_outcome is not None:
            on_outcome(outcome)

    def on_event(event: tuple[float, dict[str, Any]]) -> None:
        fields = JobOutcome.__dataclass_fields__
        outcome = JobOutcome(**{k: v for k, v in event[1].items() if k in fields})  # Dask adds "worker"
        reported[outcome.model, outcome.task] = outcome
        announce(outcome)

    futures: dict[Future[ChainReport], Chain] = {}
    try:
        client.subscribe_topic(topic, on_event)
        for i, chain in enumerate(chains):
            future = client.submit(
                run_chain, chain, str(out), settings, topic=topic, threads=threads, pure=False,
                key=f"study-chain-{i}-{topic[-8:]}",
            )  # fmt: skip
            futures[future] = chain
        reports = _gather(futures, reported, announce)
        client.unsubscribe_topic(topic)
        return reports
    except KeyboardInterrupt:
        # Running chains cannot be cancelled inside a worker: SIGKILL their processes instead (the
        # nannies then shut down). Finished jobs are kept; an interrupted job left only its staging folder.
        client.cancel(list(futures), force=True)
        for nanny in list(cluster.workers.values()) if cluster is not None else []:
            nanny.auto_restart = False
            if nanny.pid:
                with contextlib.suppress(ProcessLookupError):  # already gone
                    os.kill(nanny.pid, signal.SIGKILL)
        raise


def _gather(
    futures: dict[Future[ChainReport], Chain],
    reported: dict[tuple[str, str], JobOutcome],
    announce: Callable[[JobOutcome], None],
) -> list[ChainReport]:
    """The chains' reports as they finish; a chain whose process died gets its unfinished jobs failed."""
    reports = []
    pending = dict(futures)
    while pending:
        finished = [future for future in pending if future.done()]
        if not finished:
            # a timed wait, not ``as_completed``: SIGINT delivered to a Dask thread never wakes a main
            # thread blocked in Condition.wait; after a sleep it runs the pending KeyboardInterrupt
            time.sleep(POLL_SECONDS)
        for future in finished:
            chain = pending.pop(future)
            try:
                reports.append(future.result())
            except Exception as error:  # the process running the chain died
                reports.append(_failed_chain(chain, reported, error, announce))
    return reports


def _failed_chain(
    chain: Chain,
    reported: dict[tuple[str, str], JobOutcome],
    error: BaseException,
    announce: Callable[[JobOutcome], None],
) -> ChainReport:
    """A chain whose task died: the outcomes published, jobs with a result file done, the others failed."""
    report = ChainReport(chain.family)
    for job in chain.jobs:
        outcome = reported.get((job.model, job.task))
        if outcome is None:
            if Path(job.result_path).is_file():
                outcome = JobOutcome(job.model, job.task, "done", result_path=job.result_path)
            else:
                message = f"the worker running family {chain.family} failed: {type(error).__name__}: {error}"
                outcome = JobOutcome(job.model, job.task, "failed", error=message)
            announce(outcome)
        report.outcomes.append(outcome)
    return report
