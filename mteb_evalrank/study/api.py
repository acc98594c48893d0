"""``run_study``: check what was asked, plan the jobs, dispatch them, then write the timing, the
report and the outcomes. The layout of ``<out>``: docs/study.md.
"""

from __future__ import annotations

import json
import shutil
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from mteb_evalrank._files import write_text
from mteb_evalrank.correlation.table import default_downstream
from mteb_evalrank.settings import Settings

from .chain_execution import STAGING, ChainReport, ChainSettings, JobOutcome
from .dispatch import default_workers, run_chains
from .jobs import Chain, balance, plan
from .summary import OUTCOMES, StudySummary, write_report
from .timing import record_run

#: the classifiers of the SentEval-protocol tasks
SENTEVAL_CLASSIFIERS = ("lr", "mlp")


class StudyInputError(ValueError):
    """Unknown model or task names, or contradictory options: the message says which."""


@dataclass(frozen=True)
class Selection:
    """The models and tasks of a study, its tasks split into intrinsic (rows) and downstream (columns)."""

    models: list[str]
    tasks: list[str]
    intrinsic: list[str]
    downstream: list[str]


@dataclass
class Work:
    """The chains still to run, the outcomes of the jobs skipped (result existed), the local workers."""

    chains: list[Chain]
    skipped: list[JobOutcome]
    workers: int


def resolve_tasks(tasks: Sequence[str] | None, benchmark: str | None) -> list[str]:
    """Task names from ``tasks`` and/or a benchmark; unknown names raise :class:`StudyInputError`."""
    import mteb

    import mteb_evalrank

    mteb_evalrank.register()
    names = list(tasks or [])
    if benchmark is not None:
        try:
            names += [task.metadata.name for task in mteb.get_benchmark(benchmark).tasks]
        except (KeyError, ValueError) as error:
            raise StudyInputError(f"unknown benchmark {benchmark!r}: {error}") from None
    if not names:
        raise StudyInputError("give --tasks and/or --benchmark")
    if unknown := _unknown(names, mteb.get_task):
        raise StudyInputError(f"unknown task(s) {unknown}: see `mteb-evalrank available-tasks`")
    return list(dict.fromkeys(names))


def _unknown(names: Sequence[str], lookup: Callable[[str], object]) -> list[str]:
    """The ``names`` that ``lookup`` (``mteb.get_task``, ``mteb.get_model_meta``) does not know."""
    unknown = []
    for name in names:
        try:
            lookup(name)
        except (KeyError, ValueError):
            unknown.append(name)
    return unknown


def run_study(
    models: Sequence[str],
    tasks: Sequence[str] | None = None,
    *,
    out: str | Path,
    benchmark: str | None = None,
    workers: int | None = None,
    scheduler: str | None = None,
    downstream: Sequence[str] | None = None,
    batch_size: int = 32,
    n_bootstrap: int = 2000,
    n_permutations: int = 10000,
    seed: int = 0,
    progress: bool | Callable[[JobOutcome], None] = True,
    senteval_classifiers: Sequence[str] | None = None,
    populations: Sequence[str] = (),
) -> StudySummary:
    """Run every (model, task) job not finished yet, then write timing and the report (docs/study.md).

    ``workers``: local processes (``None``: :func:`~.dispatch.default_workers`; 1: this one), ignored
    with ``scheduler`` (a Dask address; ``out`` shared). ``downstream``: default the Classification
    tasks. ``progress``: a bar (True), none, or a callback per outcome. ``senteval_classifiers``: ``lr``
    and/or ``mlp`` (default both; a result lacking one runs again). ``populations``: registered first.
    Returns the summary; ``summary.ok`` is False when a job failed (the others still ran).
    """
    out = Path(out).resolve()
    enable_populations(populations, Settings.from_environment())  # a script or the CLI: an edge
    selection = select(models, tasks, benchmark, downstream)
    check_options(workers, senteval_classifiers)
    out.mkdir(parents=True, exist_ok=True)
    shutil.rmtree(out / STAGING, ignore_errors=True)  # what interrupted jobs left behind
    chosen = tuple(senteval_classifiers) if senteval_classifiers else None
    work = plan_work(out, selection, workers, scheduler, chosen or SENTEVAL_CLASSIFIERS)
    start = time.perf_counter()
    settings = ChainSettings({"batch_size": batch_size}, chosen, tuple(populations))
    reports = _run_with_progress(work, out, scheduler=scheduler, settings=settings, progress=progress)
    wall = time.perf_counter() - start
    outcomes = _in_study_order(
        [*work.skipped, *(o for report in reports for o in report.outcomes)], selection
    )
    classifiers = chosen or SENTEVAL_CLASSIFIERS
    timing = record_run(out, reports, outcomes, wall, work.workers, scheduler, classifiers)
    summary = StudySummary(
        out, selection.models, selection.tasks, selection.intrinsic, selection.downstream, outcomes, wall,
        work.workers, scheduler, timing,
    )  # fmt: skip
    summary.report, summary.report_note = write_report(
        summary, n_bootstrap=n_bootstrap, n_permutations=n_permutations, seed=seed
    )
    write_text(out / OUTCOMES, json.dumps(summary.to_json(), indent=1) + "\n")
    return summary


def enable_populations(populations: Sequence[str], settings: Settings) -> None:
    """Register the models of ``populations`` once every checkpoint is found loadable here.

    Raises:
        StudyInputError: an unknown population, a checkpoint not loadable here, or a name mteb uses.
    """
    from mteb_evalrank.models.hf_variants import PopulationUnavailable, enable_population

    try:
        for name in populations:
            enable_population(name, settings)
    except (KeyError, ValueError, PopulationUnavailable) as error:
        raise StudyInputError(f"--population: {error.args[0]}") from None


def select(
    models: Sequence[str],
    tasks: Sequence[str] | None,
    benchmark: str | None,
    downstream: Sequence[str] | None,
) -> Selection:
    """The study's models and tasks (duplicates dropped, order kept).

    Raises:
        StudyInputError: no model, an unknown model or task, or a downstream task not among the tasks.
    """
    import mteb

    task_names = resolve_tasks(tasks, benchmark)
    models = list(dict.fromkeys(models))
    if not models:
        raise StudyInputError("give at least one model")
    if unknown := _unknown(models, mteb.get_model_meta):
        raise StudyInputError(
            f"unknown model(s) {unknown}: give mteb model names (e.g. evalrank/glove.6B.50d)"
        )
    down = list(downstream) if downstream is not None else default_downstream(task_names)
    stray = [t for t in down if t not in task_names]
    if stray:
        raise StudyInputError(f"--downstream {stray} are not among the study's tasks {task_names}")
    return Selection(models, task_names, [t for t in task_names if t not in down], down)


def check_options(workers: int | None, senteval_classifiers: Sequence[str] | None) -> None:
    """Raise :class:`StudyInputError` for ``workers < 1`` or classifiers other than ``lr`` / ``mlp``."""
    if senteval_classifiers is not None and (
        not senteval_classifiers or not set(senteval_classifiers) <= set(SENTEVAL_CLASSIFIERS)
    ):
        raise StudyInputError(f"--senteval-classifiers takes lr and/or mlp, got {list(senteval_classifiers)}")
    if workers is not None and workers < 1:
        raise StudyInputError(f"--workers must be at least 1, got {workers}")


def plan_work(
    out: Path,
    selection: Selection,
    workers: int | None,
    scheduler: str | None,
    classifiers: Sequence[str] = SENTEVAL_CLASSIFIERS,
) -> Work:
    """The jobs without a result, in chains balanced over the local workers, and the skipped ones."""
    chains, skipped = plan(out, selection.models, selection.tasks, classifiers)
    if scheduler is None:
        chains = balance(chains, workers or default_workers(sum(len(c.jobs) for c in chains)))
    n_workers = (
        1 if scheduler is not None else min(workers or default_workers(len(chains)), max(1, len(chains)))
    )
    skipped_outcomes = [JobOutcome(j.model, j.task, "skipped", result_path=j.result_path) for j in skipped]
    return Work(chains, skipped_outcomes, n_workers)


def _run_with_progress(
    work: Work,
    out: Path,
    *,
    scheduler: str | None,
    settings: ChainSettings,
    progress: bool | Callable[[JobOutcome], None],
) -> list[ChainReport]:
    """Dispatch the chains; every outcome (skipped first) advances a progress bar on stderr.

    The bar is shown with ``progress=True``, failures printed as they come; the outcomes of the jobs
    run also go to a ``progress`` callback.
    """
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    counts = {"done": 0, "skipped": 0, "failed": 0}

    def description() -> str:
        return f"study: {counts['done']} done, {counts['skipped']} skipped, {counts['failed']} failed"

    columns = (TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn())
    with Progress(*columns, console=Console(file=sys.stderr), disable=progress is not True) as bar:
        task = bar.add_task(description(), total=len(work.skipped) + sum(len(c.jobs) for c in work.chains))

        def update(outcome: JobOutcome) -> None:
            counts[outcome.status] = counts.get(outcome.status, 0) + 1
            if progress is True and outcome.status == "failed":
                first = (outcome.error or "").splitlines()[0] if outcome.error else ""
                bar.console.print(f"[red]failed[/red] {outcome.model} × {outcome.task}: {first}")
            bar.update(task, advance=1, description=description())

        def on_outcome(outcome: JobOutcome) -> None:
            update(outcome)
            if callable(progress):
                progress(outcome)

        for outcome in work.skipped:
            update(outcome)
        return run_chains(
            work.chains,
            out,
            workers=work.workers,
            scheduler=scheduler,
            settings=settings,
            on_outcome=on_outcome,
        )


def _in_study_order(outcomes: Sequence[JobOutcome], selection: Selection) -> list[JobOutcome]:
    """Task-major, models in the given order within a task."""
    order = {(m, t): i for i, (t, m) in enumerate((t, m) for t in selection.tasks for m in selection.models)}
    return sorted(outcomes, key=lambda o: order.get((o.model, o.task), 0))


__all__ = ["StudyInputError", "StudySummary", "default_downstream", "run_study"]
