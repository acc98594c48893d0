"""Execute one chain of jobs in this process (the calling one or a Dask worker), results atomically.

mteb's ``evaluate`` saves an intermediate result file after *every* hf_subset (so that a rerun
with ``overwrite_strategy="only-missing"`` resumes) and writes it in place. A study treats an
existing result file as a finished job, so an interrupted run would leave a file that looks
finished but lacks subsets (or is truncated mid-write). Each job therefore evaluates into its
own staging ``ResultCache`` (``<out>/.staging/<job-id>/``, on the same file system as the
results) and, only once ``mteb.evaluate`` returned, moves the file into
``<out>/results/...`` with ``os.replace`` — atomic on POSIX: the final path holds either
nothing or the complete result. Staging folders left by a killed process are removed by the
next study (:func:`clear_staging`).

A failing job is recorded (model, task, error) and the chain goes on with the next job.

One chain per process at a time (:func:`one_chain_per_process`): the embedding cache a chain
uses is its own (a context variable), but a chain also sets process-wide state: the thread
limits of torch and the BLAS libraries, and, while a task loads a local build, the Hub's
offline flags (``_mteb_adapter.hub_switched_off``). So a worker runs chains with one thread: a
local cluster's workers have one thread each, a remote cluster's are checked
(``dispatch.multithreaded_workers``), and a second chain started in a busy process fails with
:class:`ChainAlreadyRunning` instead of sharing that state.
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mteb_evalrank  # noqa: F401  (registers the plugin in worker processes once they import mteb)
from mteb_evalrank._mteb_adapter import MtebInternalsChanged, merge_run_settings
from mteb_evalrank.embedding_cache import EmbeddingCache, EncodeStats, process_cache, using_process_cache
from mteb_evalrank.tasks._encoding import CachedEncoder

from .jobs import Chain, Job

if TYPE_CHECKING:
    from mteb.types import EncodeKwargs

    from mteb_evalrank.evaluation.classifiers import Kind

STAGING = ".staging"
EMBEDDINGS = "embeddings"

#: held while a chain runs in this process (see the module docstring)
_CHAIN_RUNNING = threading.Lock()


class ChainAlreadyRunning(RuntimeError):
    """A chain was started in a process that already runs one (a Dask worker with several threads)."""


@contextmanager
def one_chain_per_process(family: str) -> Iterator[None]:
    """Hold this process's chain lock for the block; :class:`ChainAlreadyRunning` if it is taken."""
    if not _CHAIN_RUNNING.acquire(blocking=False):
        raise ChainAlreadyRunning(
            f"the chain of {family} was started in a process that already runs a chain of the study: "
            "a chain sets process-wide state (thread limits, the Hub's offline flags), so a worker runs "
            "one chain at a time. Start the Dask workers with one thread each (dask worker --nthreads 1)."
        )
    try:
        yield
    finally:
        _CHAIN_RUNNING.release()


@dataclass(frozen=True)
class ChainSettings:
    """What every job of a study shares: mteb's ``encode_kwargs``, the classifiers of the
    SentEval-protocol tasks (``None``: the tasks' own) and the model populations that each process
    running a chain registers first (:func:`~mteb_evalrank.models.hf_variants.enable_population`;
    the client checked them)."""

    encode_kwargs: dict[str, Any] = field(default_factory=dict)
    senteval_classifiers: tuple[str, ...] | None = None
    populations: tuple[str, ...] = ()


@dataclass
class JobOutcome:
    """What happened to one job: ``done``, ``skipped`` (result existed) or ``failed``."""

    model: str
    task: str
    status: str
    seconds: float = 0.0
    error: str | None = None
    result_path: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class ChainReport:
    """The outcomes of a chain and, per model, the embedding cache counters and load time."""

    family: str
    outcomes: list[JobOutcome] = field(default_factory=list)
    encode: dict[str, dict[str, Any]] = field(default_factory=dict)
    load_seconds: dict[str, float] = field(default_factory=dict)
    host: str = ""


def clear_staging(out: Path) -> None:
    """Remove what interrupted jobs left behind (call when no study is running on ``out``)."""
    shutil.rmtree(out / STAGING, ignore_errors=True)


def _merge_run_settings(staged: Path, final: Path) -> None:
    """Merge the job's ``run_settings.jsonl`` into the results' one, as mteb's ``ResultCache`` does."""
    if not staged.is_file():
        return
    try:
        rows = [json.loads(line) for line in staged.read_text(encoding="utf-8").splitlines() if line.strip()]
        merge_run_settings(final, rows)
    except MtebInternalsChanged:  # mteb moved its helper: keep the settings of this run beside the result
        with final.open("a", encoding="utf-8") as handle:
            handle.write(staged.read_text(encoding="utf-8"))


def run_job(
    model: Any,
    job: Job,
    out: Path,
    encode_kwargs: dict[str, Any],
    senteval_classifiers: Sequence[str] | None = None,
) -> Path:
    """Evaluate ``model`` on ``job.task`` into a staging cache, then move the result into place.

    ``senteval_classifiers`` (e.g. ``("lr",)``) sets the classifiers of SentEval-protocol tasks
    (``AbsTaskSentEval.classifiers``); other tasks ignore it.
    """
    import mteb
    from mteb.cache import ResultCache

    from mteb_evalrank.tasks.senteval._base import AbsTaskSentEval

    task = mteb.get_task(job.task)
    if senteval_classifiers is not None and isinstance(task, AbsTaskSentEval):
        # the names were checked against ("lr", "mlp") by run_study
        task.classifiers = cast("tuple[Kind, ...]", tuple(senteval_classifiers))
    staging = out / STAGING / uuid.uuid4().hex
    try:
        mteb.evaluate(
            model,
            task,
            cache=ResultCache(staging),
            overwrite_strategy="always",
            encode_kwargs=cast("EncodeKwargs", dict(encode_kwargs)),
            co2_tracker=False,
            show_progress_bar=False,
            raise_error=True,
        )
        meta = model.mteb_model_meta
        staged = ResultCache(staging).get_task_result_path(job.task, meta)
        final = ResultCache(out).get_task_result_path(job.task, meta)
        if not staged.is_file():
            raise RuntimeError(f"mteb.evaluate wrote no result for {job.label} (expected {staged})")
        final.parent.mkdir(parents=True, exist_ok=True)
        if (staged.parent / "model_meta.json").is_file():
            (staged.parent / "model_meta.json").replace(final.parent / "model_meta.json")
        _merge_run_settings(staged.parent / "run_settings.jsonl", final.parent / "run_settings.jsonl")
        staged.replace(final)  # os.replace, atomic on POSIX: the commit point of the job
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _limit_threads(threads: int | None) -> None:
    if not threads:
        return
    import torch
    from threadpoolctl import threadpool_limits

    torch.set_num_threads(threads)
    threadpool_limits(limits=threads)


def run_chain(
    chain: Chain,
    out: str,
    settings: ChainSettings | None = None,
    *,
    report: Callable[[JobOutcome], None] | None = None,
    topic: str | None = None,
    threads: int | None = None,
) -> ChainReport:
    """Run the jobs of ``chain`` in order in this process, with ``settings``; never raises for a
    failing job.

    The process's embedding cache is ``<out>/embeddings`` on disk for the whole chain (so the
    zoo's family encoders persist their base output there, one forward pass per text and
    family across workers). Models are loaded on first use and wrapped in a
    :class:`~mteb_evalrank.tasks._encoding.CachedEncoder`: a zoo model in memory only (its
    embeddings are a cheap function of its family's cached base), any other model on disk.
    A job whose result file appeared meanwhile (e.g. a retried chain) is skipped. ``report``
    is called after each job; with ``topic`` (Dask) each outcome is also published as a
    worker event, which the client turns into progress.

    Raises:
        ChainAlreadyRunning: another chain runs in this process (see the module docstring).
    """
    from mteb_evalrank.models.hf_variants import enable_population

    settings = settings or ChainSettings()
    for name in settings.populations:
        enable_population(name, check=False)
    with one_chain_per_process(chain.family):
        return _run_chain(chain, Path(out), settings, report, topic, threads)


def _run_chain(
    chain: Chain,
    root: Path,
    settings: ChainSettings,
    report: Callable[[JobOutcome], None] | None,
    topic: str | None,
    threads: int | None,
) -> ChainReport:
    """:func:`run_chain`'s work, once this process's chain lock is held."""
    import socket

    _limit_threads(threads)
    publish = report
    if topic is not None:
        from distributed import get_worker

        worker = get_worker()

        def publish(outcome: JobOutcome) -> None:
            worker.log_event(topic, outcome.to_dict())
            if report is not None:
                report(outcome)

    result = ChainReport(chain.family, host=socket.gethostname())
    with using_process_cache(EmbeddingCache(root / EMBEDDINGS, max_bytes=process_cache().max_bytes)):
        models = _run_jobs(
            chain, root, result, settings.encode_kwargs, settings.senteval_classifiers, publish
        )
    for name, model in models.items():
        result.encode[name] = model.stats.to_dict()
    for name in {job.model for job in chain.jobs} - set(models):
        result.encode.setdefault(name, EncodeStats().to_dict())
    return result


def load_cached(name: str) -> CachedEncoder:
    """``mteb.get_model(name)`` in a :class:`CachedEncoder` of the process cache (zoo models: memory only)."""
    import mteb

    from mteb_evalrank.models.zoo import ZOO_MODELS

    return CachedEncoder(mteb.get_model(name), by_instance=name in ZOO_MODELS)


def _run_jobs(
    chain: Chain,
    root: Path,
    result: ChainReport,
    encode_kwargs: dict[str, Any],
    senteval_classifiers: Sequence[str] | None,
    publish: Callable[[JobOutcome], None] | None,
) -> dict[str, CachedEncoder]:
    """The jobs of ``chain`` in order; outcomes and load times go into ``result``."""
    models: dict[str, CachedEncoder] = {}
    load_errors: dict[str, str] = {}
    for job in chain.jobs:
        start = time.perf_counter()
        if Path(job.result_path).is_file():
            outcome = JobOutcome(job.model, job.task, "skipped", result_path=job.result_path)
        elif job.model in load_errors:
            outcome = JobOutcome(job.model, job.task, "failed", error=load_errors[job.model])
        else:
            try:
                if job.model not in models:
                    tick = time.perf_counter()
                    try:
                        models[job.model] = load_cached(job.model)
                    except Exception as error:
                        load_errors[job.model] = f"loading the model: {type(error).__name__}: {error}"
                        raise
                    result.load_seconds[job.model] = time.perf_counter() - tick
                final = run_job(models[job.model], job, root, encode_kwargs, senteval_classifiers)
                outcome = JobOutcome(
                    job.model, job.task, "done", time.perf_counter() - start, result_path=str(final)
                )
            except Exception as error:
                message = load_errors.get(job.model) or f"{type(error).__name__}: {error}"
                outcome = JobOutcome(job.model, job.task, "failed", time.perf_counter() - start, message)
                outcome.error = f"{message}\n{traceback.format_exc(limit=-3)}".strip()
        result.outcomes.append(outcome)
        if publish is not None:
            publish(outcome)
    return models
