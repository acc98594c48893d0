"""Dispatch the chains of a study: in this process, on a local Dask cluster, or on a remote one.

Why Dask ``distributed`` rather than Ray: the jobs are a handful of coarse, independent Python
calls whose results are written to files, so no object store, actor model or GPU scheduling is
needed. ``distributed`` is a small pure-Python dependency (no daemon, no compiled wheels tied to
a Python version); ``LocalCluster`` on one machine and ``dask scheduler`` / ``dask worker`` on
many give the *same* client API (``Client(address)``), so ``--scheduler tcp://host:8786`` runs
the identical study on a cluster. Ray would bring a ~100 MB binary wheel, a raylet/GCS daemon
and its own object store for no gain here.

Execution model: one Dask task per :class:`~.jobs.Chain` (a model family); a worker with one
thread runs it job after job (:func:`~.chain_execution.run_chain`): one chain per process at a
time, enforced wherever the study runs (here: one after the other; a local cluster: one thread
per worker; a remote one: checked before the chains are submitted, :func:`multithreaded_workers`,
and by the chain's lock in the worker). Per-job progress reaches the
client as worker events on a per-study topic. Workers write results and embeddings to the
study folder themselves, so on a cluster ``--out`` must be on a file system all workers and
the client share (NFS, Lustre, ...) and every worker needs the plugin, the models and the
datasets (offline caches) installed.
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


def _kill_workers(cluster: Any) -> None:
    """SIGKILL the worker processes of a local cluster (their nannies then shut down)."""
    for nanny in list(cluster.workers.values()):
        nanny.auto_restart = False
        pid = getattr(nanny, "pid", None)
        if pid:
            with contextlib.suppress(ProcessLookupError):  # already gone
                os.kill(pid, signal.SIGKILL)


def default_workers(n_chains: int) -> int:
    """Local default: one worker per chain, at most one per CPU core (1 = run in this process)."""
    return max(1, min(n_chains, os.cpu_count() or 1))


def worker_env(threads: int) -> dict[str, str]:
    """The environment of local worker processes: ours (filtered) plus thread limits."""
    env = {k: v for k, v in os.environ.items() if k.startswith(FORWARDED_ENV)}
    env.update(OMP_NUM_THREADS=str(threads), MKL_NUM_THREADS=str(threads), TOKENIZERS_PARALLELISM="false")
    return env


def multithreaded_workers(scheduler_info: dict[str, Any]) -> list[str]:
    """The workers of a Dask ``Client.scheduler_info()`` that have more than one thread, each as
    "address (n threads)"."""
    workers = scheduler_info.get("workers", {})
    return [
        f"{address} ({info['nthreads']} threads)"
        for address, info in sorted(workers.items())
        if int(info.get("nthreads", 1)) > 1
    ]


def check_one_thread_per_worker(client: Client) -> None:
    """Raise ``ValueError`` naming the cluster's workers that have several threads (one chain per
    process: see the module docstring)."""
    several = multithreaded_workers(client.scheduler_info())
    if several:
        raise ValueError(
            f"the study runs one chain per worker process, but these Dask workers have several threads: "
            f"{', '.join(several)}. Start them with one thread each: dask worker --nthreads 1 ADDRESS "
            "(--nworkers sets how many per machine)."
        )


def _failed_chain(
    chain: Chain, reported: dict[tuple[str, str], JobOutcome], error: BaseException
) -> tuple[ChainReport, list[JobOutcome]]:
    """A chain whose task died (worker killed, ...): its unreported, unfinished jobs failed.

    Returns the report and the outcomes not reported yet.
    """
    report = ChainReport(chain.family)
    for job in chain.jobs:
        if (job.model, job.task) in reported:
            report.outcomes.append(reported[job.model, job.task])
        elif Path(job.result_path).is_file():
            report.outcomes.append(JobOutcome(job.model, job.task, "done", result_path=job.result_path))
        else:
            message = f"the worker running family {chain.family} failed: {type(error).__name__}: {error}"
            report.outcomes.append(JobOutcome(job.model, job.task, "failed", error=message))
    return report, [o for o in report.outcomes if (o.model, o.task) not in reported]


def run_chains(
    chains: Sequence[Chain],
    out: Path,
    *,
    workers: int,
    scheduler: str | None = None,
    settings: ChainSettings | None = None,
    on_outcome: Callable[[JobOutcome], None] | None = None,
) -> list[ChainReport]:
    """Run every chain with ``settings``; ``workers == 1`` without ``scheduler`` runs them here, one
    after the other. A local cluster never gets more workers than there are chains."""
    if not chains:
        return []
    workers = min(workers, len(chains))
    if scheduler is None and workers <= 1:
        return [run_chain(c, str(out), settings, report=on_outcome) for c in chains]
    from distributed import Client

    threads = None
    cluster = None
    if scheduler is None:
        threads = max(1, (os.cpu_count() or 1) // workers)
        cluster = _local_cluster(workers, threads)

    client = Client(cluster if cluster is not None else scheduler)
    try:
        check_one_thread_per_worker(client)
        return _run_on_client(client, cluster, chains, out, threads, settings, on_outcome)
    finally:
        client.close(timeout=CLOSE_TIMEOUT)
        if cluster is not None:
            cluster.close(timeout=CLOSE_TIMEOUT)


def _local_cluster(workers: int, threads: int) -> LocalCluster:
    """``workers`` local worker processes of one thread each, ``threads`` for their numerical libraries."""
    from distributed import LocalCluster

    return LocalCluster(
        n_workers=workers,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
        env=worker_env(threads),
    )


class _Outcomes:
    """The outcomes the workers publish as events on ``topic``, by chain family, passed on as they come."""

    def __init__(self, chains: Sequence[Chain], on_outcome: Callable[[JobOutcome], None] | None) -> None:
        self.topic = f"mteb-evalrank-study-{uuid.uuid4().hex}"
        self.on_outcome = on_outcome
        self.family_of_job = {(j.model, j.task): chain.family for chain in chains for j in chain.jobs}
        self.reported: dict[str, dict[tuple[str, str], JobOutcome]] = {chain.family: {} for chain in chains}

    def on_event(self, event: tuple[float, dict[str, Any]]) -> None:
        fields = JobOutcome.__dataclass_fields__
        outcome = JobOutcome(**{k: v for k, v in event[1].items() if k in fields})  # Dask adds "worker"
        family = self.family_of_job.get((outcome.model, outcome.task))
        if family is not None:
            self.reported[family][outcome.model, outcome.task] = outcome
        self.announce(outcome)

    def announce(self, outcome: JobOutcome) -> None:
        if self.on_outcome is not None:
            self.on_outcome(outcome)


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
    outcomes = _Outcomes(chains, on_outcome)
    futures: dict[Future[ChainReport], Chain] = {}
    try:
        client.subscribe_topic(outcomes.topic, outcomes.on_event)
        for i, chain in enumerate(chains):
            future = client.submit(
                run_chain,
                chain,
                str(out),
                settings,
                topic=outcomes.topic,
                threads=threads,
                pure=False,
                key=f"study-chain-{i}-{outcomes.topic[-8:]}",
            )
            futures[future] = chain
        reports = _gather(futures, outcomes)
        client.unsubscribe_topic(outcomes.topic)
        return reports
    except KeyboardInterrupt:
        # Running chains cannot be cancelled inside a worker: stop their processes instead.
        # Finished jobs are kept; an interrupted job left only its staging folder behind.
        client.cancel(list(futures), force=True)
        if cluster is not None:
            _kill_workers(cluster)
        raise


def _gather(futures: dict[Future[ChainReport], Chain], outcomes: _Outcomes) -> list[ChainReport]:
    """The chains' reports as they finish; a chain whose process died gets its unfinished jobs failed."""
    reports = []
    pending = dict(futures)
    while pending:
        finished = [future for future in pending if future.done()]
        if not finished:
            # A timed wait rather than ``as_completed``: SIGINT may be delivered to one of
            # Dask's threads, and then never wakes a main thread blocked in Condition.wait,
            # so Ctrl-C went unnoticed until the whole study ended. After a sleep the main
            # thread runs the pending KeyboardInterrupt.
            time.sleep(POLL_SECONDS)
            continue
        for future in finished:
            chain = pending.pop(future)
            try:
                reports.append(future.result())
            except Exception as error:  # the process running the chain died
                report, unreported = _failed_chain(chain, outcomes.reported[chain.family], error)
                for outcome in unreported:
                    outcomes.announce(outcome)
                reports.append(report)
    return reports
