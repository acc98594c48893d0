"""``run_study``: every (model, task) job into ``<out>``, then the correlation report.

Layout of ``<out>``::

    results/<org__model>/<revision>/<Task>.json   mteb's ResultCache (one file = one finished job)
    embeddings/<org__model>/<revision>/<context>/  the cross-task embedding cache
    study_timing.json                              wall time, encoding time and cache counters
    study.json                                     the outcome of every job of the last run
    report/                                        correlation report (report.md, CSV/JSON, figures)
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from .engine import default_workers, run_chains
from .jobs import balance, plan
from .runner import ChainReport, JobOutcome, clear_staging

REPORT = "report"
TIMING = "study_timing.json"
OUTCOMES = "study.json"


class StudyInputError(ValueError):
    """Unknown model or task names, or contradictory options: the message says which."""


@dataclass
class StudySummary:
    """The outcome of :func:`run_study` (``workers``: local processes used; 1 with a ``scheduler``)."""

    out: Path
    models: list[str]
    tasks: list[str]
    intrinsic: list[str]
    downstream: list[str]
    outcomes: list[JobOutcome]
    wall_seconds: float
    workers: int
    scheduler: str | None
    timing: dict[str, Any]
    report: dict[str, Path] = field(default_factory=dict)
    report_note: str | None = None

    def count(self, status: str) -> int:
        return sum(1 for o in self.outcomes if o.status == status)

    @property
    def failed(self) -> list[JobOutcome]:
        return [o for o in self.outcomes if o.status == "failed"]

    @property
    def ok(self) -> bool:
        return not self.failed

    def to_json(self) -> dict[str, Any]:
        return {
            "out": str(self.out),
            "models": self.models,
            "tasks": self.tasks,
            "intrinsic": self.intrinsic,
            "downstream": self.downstream,
            "counts": {s: self.count(s) for s in ("done", "skipped", "failed")},
            "wall_seconds": self.wall_seconds,
            "workers": self.workers,
            "scheduler": self.scheduler,
            "report": {k: str(v) for k, v in self.report.items()},
            "report_note": self.report_note,
            "jobs": [o.to_dict() for o in self.outcomes],
        }


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
    unknown = []
    for name in names:
        try:
            mteb.get_task(name)
        except KeyError:
            unknown.append(name)
    if unknown:
        raise StudyInputError(f"unknown task(s) {unknown}: see `mteb-evalrank available-tasks`")
    return list(dict.fromkeys(names))


def _check_models(models: Sequence[str]) -> None:
    import mteb

    unknown = []
    for name in models:
        try:
            mteb.get_model_meta(name)
        except (KeyError, ValueError):
            unknown.append(name)
    if unknown:
        raise StudyInputError(
            f"unknown model(s) {unknown}: give mteb model names (e.g. evalrank/glove.6B.50d)"
        )


def default_downstream(tasks: Sequence[str]) -> list[str]:
    """The downstream tasks of a study by default: those of mteb type Classification."""
    import mteb

    return [name for name in tasks if mteb.get_task(name).metadata.type == "Classification"]


def _read_json(path: Path) -> dict[str, Any] | None:
    """A JSON object from ``path``; None when the file is missing or unreadable (e.g. truncated)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data if isinstance(data, dict) else None


def _timing(
    reports: Sequence[ChainReport], outcomes: Sequence[JobOutcome], wall: float, workers: int
) -> dict[str, Any]:
    models: dict[str, dict[str, Any]] = {}
    for report in reports:
        for name, stats in report.encode.items():
            models[name] = {**stats, "load_seconds": report.load_seconds.get(name, 0.0), "host": report.host}
    for outcome in outcomes:
        entry = models.setdefault(outcome.model, {})
        entry["job_seconds"] = entry.get("job_seconds", 0.0) + outcome.seconds
    encode_sum = sum(m.get("encode_seconds", 0.0) for m in models.values())
    return {
        "wall_seconds": wall,
        "workers": workers,
        "sum_encode_seconds": encode_sum,
        "wall_over_encode": wall / encode_sum if encode_sum > 0 else None,
        "texts_encoded": sum(m.get("encoded", 0) for m in models.values()),
        "texts_from_cache": sum(m.get("cached", 0) for m in models.values()),
        "models": models,
        "jobs": [
            {"model": o.model, "task": o.task, "status": o.status, "seconds": o.seconds} for o in outcomes
        ],
    }


def _run_entry(timing: dict[str, Any], jobs: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """One run's line in ``runs``: when it ended, its wall and encoding time, the jobs it did or failed."""
    return {
        "finished": timing.get("finished"),
        "wall_seconds": timing.get("wall_seconds", 0.0),
        "workers": timing.get("workers"),
        "scheduler": timing.get("scheduler"),
        "sum_encode_seconds": timing.get("sum_encode_seconds", 0.0),
        **{status: sum(1 for j in jobs if j.get("status") == status) for status in ("done", "failed")},
    }


def with_history(timing: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """``timing`` of this run plus the runs of the same study folder before it (a resumed study).

    Adds ``runs`` (one entry per run, oldest first; a ``previous`` file without ``runs``, as
    written before this history existed, counts as one run) and ``total``:
    ``wall_seconds`` = sum of the runs' wall times; ``job_seconds`` = sum, over the jobs that
    finished, of the seconds of the run that did them (worker time); ``sum_encode_seconds`` =
    sum over runs. In ``jobs`` each entry gets ``run``, its index in ``runs``; a job skipped now
    because an earlier run finished it keeps that run's entry (seconds included).
    """
    previous = previous or {}
    if "runs" in previous:
        runs, earlier_jobs = list(previous["runs"]), previous.get("jobs", [])
    elif previous.get("jobs"):
        earlier_jobs = [{**j, "run": 0} for j in previous["jobs"]]
        runs = [_run_entry(previous, earlier_jobs)]
    else:
        runs, earlier_jobs = [], []
    earlier = {(j["model"], j["task"]): j for j in earlier_jobs if j.get("status") == "done"}
    this = len(runs)
    jobs = [
        earlier.get((j["model"], j["task"]), {**j, "run": this})
        if j["status"] == "skipped"
        else {**j, "run": this}
        for j in timing["jobs"]
    ]
    runs.append(_run_entry(timing, [j for j in jobs if j["run"] == this]))
    return {
        **timing,
        "jobs": jobs,
        "runs": runs,
        "total": {
            "runs": len(runs),
            "wall_seconds": sum(r.get("wall_seconds") or 0.0 for r in runs),
            "job_seconds": sum(j.get("seconds", 0.0) for j in jobs if j["status"] == "done"),
            "sum_encode_seconds": sum(r.get("sum_encode_seconds") or 0.0 for r in runs),
        },
    }


def _jobs_markdown(summary: StudySummary) -> str:
    where = summary.scheduler or f"{summary.workers} local worker(s)"
    lines = [
        "## Study jobs",
        "",
        f"{len(summary.models)} models × {len(summary.tasks)} tasks: {summary.count('done')} run, "
        f"{summary.count('skipped')} skipped (result existed), {summary.count('failed')} failed; "
        f"wall time {summary.wall_seconds:.1f} s on {where}.",
        "",
    ]
    if summary.failed:
        lines += ["| model | task | error |", "|---|---|---|"]
        for o in summary.failed:
            first = (o.error or "").splitlines()[0] if o.error else ""
            lines.append(f"| {o.model} | {o.task} | {first.replace('|', '/')} |")
        lines.append("")
    return "\n".join(lines)


def intrinsic_columns(tasks: Sequence[str]) -> list[str]:
    """Report rows: ``Task`` for a one-subset task, one ``Task:subset`` row per subset otherwise.

    The subsets of an intrinsic task are different evaluations (e.g. EvalRankSent's ``stsb``
    and ``str`` ablations), never averaged; downstream tasks stay whole (their subsets are
    cross-validation folds, averaged).
    """
    import mteb

    columns = []
    for name in tasks:
        try:
            subsets = mteb.get_task(name).metadata.hf_subsets
        except KeyError:  # a task mteb does not know: its main score, as the correlation module reads it
            subsets = []
        columns += [f"{name}:{subset}" for subset in subsets] if len(subsets) > 1 else [name]
    return columns


def write_report(
    summary: StudySummary, *, n_bootstrap: int, n_permutations: int, seed: int
) -> tuple[dict[str, Path], str | None]:
    """Correlate intrinsic with downstream tasks over the study's models into ``<out>/report``."""
    from mteb_evalrank.correlation import CorrelationInputError, correlate, load_results

    out = summary.out / REPORT
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    note = None
    with_results = {o.model for o in summary.outcomes if o.status != "failed"}
    scored = [m for m in summary.models if m in with_results]
    if not summary.intrinsic or not summary.downstream:
        note = (
            "no correlation: the study needs both intrinsic and downstream tasks "
            f"(intrinsic {summary.intrinsic}, downstream {summary.downstream})"
        )
    elif not scored:
        note = "no correlation: no model has results"
    else:
        try:
            loaded = load_results([summary.out], models=scored)
            result = correlate(
                loaded,
                intrinsic_columns(summary.intrinsic),
                summary.downstream,
                n_bootstrap=n_bootstrap,
                n_permutations=n_permutations,
                seed=seed,
            )
            written = result.write(out)
        except CorrelationInputError as error:
            note = f"no correlation: {error}"
    report = out / "report.md"
    head = report.read_text(encoding="utf-8") if written else f"# Study report\n\n{note}\n"
    report.write_text(head.rstrip("\n") + "\n\n" + _jobs_markdown(summary) + "\n", encoding="utf-8")
    written["report"] = report
    return written, note


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
) -> StudySummary:
    """Run every (model, task) job not finished yet, then write timing and the report.

    Args:
        models: mteb model names (``evalrank/...`` or registry names resolvable offline).
        tasks: mteb task names (added to those of ``benchmark``).
        out: the study folder (see the module docstring); a rerun skips finished jobs.
        workers: local worker processes; ``None`` = :func:`~.engine.default_workers`, 1 = run
            in this process. Ignored with ``scheduler``.
        scheduler: a Dask scheduler address (``tcp://host:8786``); ``out`` must then be on a file
            system shared by the workers.
        downstream: the downstream (column) tasks; default: the selected Classification tasks.
            The other tasks are the intrinsic (row) tasks.
        progress: a progress bar on stderr (True), none (False) or a callback per job outcome.
        senteval_classifiers: the classifiers of the SentEval-protocol tasks (``lr``, ``mlp``);
            default both. ``["lr"]`` is the EvalRank paper's setting and ~5x cheaper; the
            ``lr_*`` scores do not depend on it. A finished job is not rerun when it changes.

    Returns:
        The summary; ``summary.ok`` is False when a job failed (the others still ran).
    """
    out = Path(out).resolve()
    task_names = resolve_tasks(tasks, benchmark)
    models = list(dict.fromkeys(models))
    if not models:
        raise StudyInputError("give at least one model")
    _check_models(models)
    down = list(downstream) if downstream is not None else default_downstream(task_names)
    stray = [t for t in down if t not in task_names]
    if stray:
        raise StudyInputError(f"--downstream {stray} are not among the study's tasks {task_names}")
    intrinsic = [t for t in task_names if t not in down]
    if senteval_classifiers is not None:
        unknown = sorted(set(senteval_classifiers) - {"lr", "mlp"})
        if unknown or not senteval_classifiers:
            given = list(senteval_classifiers)
            raise StudyInputError(f"--senteval-classifiers takes lr and/or mlp, got {given}")
    if workers is not None and workers < 1:
        raise StudyInputError(f"--workers must be at least 1, got {workers}")
    out.mkdir(parents=True, exist_ok=True)
    clear_staging(out)
    chains, skipped = plan(out, models, task_names)
    if scheduler is None:
        chains = balance(chains, workers or default_workers(sum(len(c.jobs) for c in chains)))
    n_workers = (
        1 if scheduler is not None else min(workers or default_workers(len(chains)), max(1, len(chains)))
    )
    skipped_outcomes = [JobOutcome(j.model, j.task, "skipped", result_path=j.result_path) for j in skipped]
    total = len(skipped) + sum(len(c.jobs) for c in chains)

    from .progress import StudyProgress

    start = time.perf_counter()
    with StudyProgress(total, enabled=progress is True) as bar:
        for outcome in skipped_outcomes:
            bar.update(outcome)
        callback = progress if callable(progress) else None

        def on_outcome(outcome: JobOutcome) -> None:
            bar.update(outcome)
            if callback is not None:
                callback(outcome)

        reports = run_chains(
            chains,
            out,
            workers=n_workers,
            scheduler=scheduler,
            encode_kwargs={"batch_size": batch_size},
            on_outcome=on_outcome,
            senteval_classifiers=senteval_classifiers,
        )
    wall = time.perf_counter() - start
    ran = [o for report in reports for o in report.outcomes]
    order = {(m, t): i for i, (t, m) in enumerate((t, m) for t in task_names for m in models)}
    outcomes = sorted([*skipped_outcomes, *ran], key=lambda o: order.get((o.model, o.task), 0))
    timing = _timing(reports, outcomes, wall, n_workers)
    timing["scheduler"] = scheduler
    timing["senteval_classifiers"] = list(senteval_classifiers) if senteval_classifiers else ["lr", "mlp"]
    timing["finished"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    timing = with_history(timing, _read_json(out / TIMING))
    (out / TIMING).write_text(json.dumps(timing, indent=1) + "\n", encoding="utf-8")
    summary = StudySummary(
        out, models, task_names, intrinsic, down, outcomes, wall, n_workers, scheduler, timing
    )
    summary.report, summary.report_note = write_report(
        summary, n_bootstrap=n_bootstrap, n_permutations=n_permutations, seed=seed
    )
    (out / OUTCOMES).write_text(json.dumps(summary.to_json(), indent=1) + "\n", encoding="utf-8")
    return summary


__all__ = ["StudyInputError", "StudySummary", "default_downstream", "run_study"]
