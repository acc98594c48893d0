"""Execute one chain of jobs in this process (the calling one or a Dask worker), results atomically.

Each job evaluates into a staging ``ResultCache`` (``<out>/.staging/<id>/``), then its file is
moved into ``<out>/results/``; a failing job is recorded and the chain goes on. One chain per
process at a time (:func:`one_chain_per_process`: process-wide thread limits and Hub flags).
"""

from __future__ import annotations

import json
import shutil
import threading
import time
import traceback
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import mteb_evalrank  # noqa: F401  (registers the plugin in worker processes once they import mteb)
from mteb_evalrank._files import folder_lock, move_into_place, replacing
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
    """What every job of a study shares: ``encode_kwargs``, the SentEval-protocol classifiers (``None``:
    the tasks' own) and the model populations each process registers first.
    """

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


def _merge_run_settings(staged: Path, final: Path) -> None:
    """Merge the job's ``run_settings.jsonl`` into the results' one, as mteb's ``ResultCache`` does,
    under the folder's lock (mteb's saves take it too) into a copy renamed into place: a reader
    sees the former file or the merged one."""
    if not staged.is_file():
        return
    text = staged.read_text(encoding="utf-8")
    with folder_lock(final), replacing(final) as merged:
        if final.is_file():
            shutil.copyfile(final, merged)
        try:
            merge_run_settings(merged, [json.loads(line) for line in text.splitlines() if line.strip()])
        except MtebInternalsChanged:  # mteb moved its helper: keep the settings of this run beside the result
            with merged.open("a", encoding="utf-8") as handle:
                handle.write(text)


def run_job(model: Any, job: Job, out: Path, settings: ChainSettings) -> Path:
    """Evaluate ``model`` on ``job.task`` into a staging cache, then move the result into place.

    ``settings.senteval_classifiers`` (e.g. ``("lr",)``) sets the classifiers of SentEval-protocol
    tasks (``AbsTaskSentEval.classifiers``); other tasks ignore it.
    """
    import mteb
    from mteb.cache import ResultCache

    from mteb_evalrank.tasks.senteval._base import AbsTaskSentEval

    task = mteb.get_task(job.task)
    if settings.senteval_classifiers is not None and isinstance(task, AbsTaskSentEval):
        # the names were checked against ("lr", "mlp") by run_study
        task.classifiers = cast("tuple[Kind, ...]", settings.senteval_classifiers)
    staging = out / STAGING / uuid.uuid4().hex
    try:
        mteb.evaluate(
            model,
            task,
            cache=ResultCache(staging),
            overwrite_strategy="always",
            encode_kwargs=cast("EncodeKwargs", dict(settings.encode_kwargs)),
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
            move_into_place(staged.parent / "model_meta.json", final.parent / "model_meta.json")
        _merge_run_settings(staged.parent / "run_settings.jsonl", final.parent / "run_settings.jsonl")
        move_into_place(staged, final)  # the commit point of the job
        return final
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def run_chain(
    chain: Chain,
    out: str,
    settings: ChainSettings | None = None,
    *,
    report: Callable[[JobOutcome], None] | None = None,
    topic: str | None = None,
    threads: int | None = None,
) -> ChainReport:
    """Run the jobs of ``chain`` in order in this process (never raises for a failing job).

    Embedding cache ``<out>/embeddings``; a job whose result appeared meanwhile is skipped; ``report``
    per outcome, also published as a Dask worker event with ``topic``. Raises ChainAlreadyRunning.
    """
    import socket

    from mteb_evalrank.models.hf_variants import population_metas, register_population_metas
    from mteb_evalrank.settings import Settings

    settings = settings or ChainSettings()
    encoders = Settings.from_environment().encoders  # a worker process starts here: an edge
    for name in settings.populations:  # checked by the study before
        register_population_metas(population_metas(name, encoders))
    with one_chain_per_process(chain.family):
        if threads:
            import torch
            from threadpoolctl import threadpool_limits

            torch.set_num_threads(threads)
            threadpool_limits(limits=threads)
        publish = report
        if topic is not None:
            from distributed import get_worker

            worker = get_worker()

            def publish(outcome: JobOutcome) -> None:
                worker.log_event(topic, outcome.to_dict())
                if report is not None:
                    report(outcome)

        result = ChainReport(chain.family, host=socket.gethostname())
        root = Path(out)
        with using_process_cache(EmbeddingCache(root / EMBEDDINGS, max_bytes=process_cache().max_bytes)):
            models = _run_jobs(chain, root, result, settings, publish)
    for job in chain.jobs:
        stats = models[job.model].stats if job.model in models else EncodeStats()
        result.encode[job.model] = stats.to_dict()
    return result


def _run_jobs(
    chain: Chain,
    root: Path,
    result: ChainReport,
    settings: ChainSettings,
    publish: Callable[[JobOutcome], None] | None,
) -> dict[str, CachedEncoder]:
    """The jobs of ``chain`` in order, outcomes and load times into ``result``; models in a CachedEncoder."""
    import mteb

    from mteb_evalrank.models.zoo import ZOO_MODELS

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
                    try:
                        models[job.model] = CachedEncoder(
                            mteb.get_model(job.model), by_instance=job.model in ZOO_MODELS
                        )
                    except Exception as error:
                        load_errors[job.model] = f"loading the model: {type(error).__name__}: {error}"
                        raise
                    result.load_seconds[job.model] = time.perf_counter() - start
                final = run_job(models[job.model], job, root, settings)
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
