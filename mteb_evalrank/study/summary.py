"""The outcome of a study run (:class:`StudySummary`, written as ``<out>/study.json``) and the
study's report in ``<out>/report/``: the correlation of the intrinsic with the downstream tasks,
then the jobs of the run.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mteb_evalrank._files import write_text
from mteb_evalrank.correlation.table import intrinsic_columns

from .chain_execution import JobOutcome

REPORT = "report"
OUTCOMES = "study.json"


@dataclass
class StudySummary:
    """The outcome of :func:`~.api.run_study` (``workers``: local processes used; 1 with a ``scheduler``)."""

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
    write_text(report, head.rstrip("\n") + "\n\n" + _jobs_markdown(summary) + "\n")
    written["report"] = report
    return written, note
