"""The outcome of a study run (``<out>/study.json``) and its report in ``<out>/report/``."""

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
    """Correlate intrinsic with downstream tasks over the study's models into ``<out>/report``: one
    correlation per downstream protocol (``correlation.table.by_protocol``; downstream tasks of none,
    given with ``--downstream``, are one more group, ``other``), in ``report/<protocol>/`` when there
    are several, else in ``report/`` itself."""
    from mteb_evalrank.correlation import CorrelationInputError, load_results

    out = summary.out / REPORT
    out.mkdir(parents=True, exist_ok=True)
    written: dict[str, Path] = {}
    notes: list[str] = []
    with_results = {o.model for o in summary.outcomes if o.status != "failed"}
    scored = [m for m in summary.models if m in with_results]
    groups = protocol_groups(summary.downstream)
    if not summary.intrinsic or not summary.downstream:
        notes.append(
            "no correlation: the study needs both intrinsic and downstream tasks "
            f"(intrinsic {summary.intrinsic}, downstream {summary.downstream})"
        )
    elif not scored:
        notes.append("no correlation: no model has results")
    several = len(groups) > 1
    if not notes:
        try:
            loaded = load_results([summary.out], models=scored)  # read once, for every protocol
        except CorrelationInputError as error:
            notes.append(f"no correlation: {error}")
        else:
            written, failed = _correlate_protocols(
                loaded,
                summary,
                groups,
                out,
                n_bootstrap=n_bootstrap,
                n_permutations=n_permutations,
                seed=seed,
            )
            notes += failed
    report = out / "report.md"
    if written and not several:
        head = report.read_text(encoding="utf-8")
    else:
        links = [f"- [{p}]({p}/report.md): {', '.join(tasks)}\n" for p, tasks in groups.items()]
        listed = ["One correlation per downstream protocol (docs/correlation.md):\n\n", *links, "\n"]
        head = "".join(["# Study report\n\n", *(listed if several else []), *(f"{n}\n\n" for n in notes)])
    write_text(report, head.rstrip("\n") + "\n\n" + _jobs_markdown(summary) + "\n")
    written["report"] = report
    return written, "; ".join(notes) or None


def _correlate_protocols(
    loaded: Any, summary: StudySummary, groups: dict[str, list[str]], out: Path,
    *, n_bootstrap: int, n_permutations: int, seed: int,
) -> tuple[dict[str, Path], list[str]]:  # fmt: skip
    """One correlation per protocol of ``groups`` over ``loaded`` into ``out`` (``out/<protocol>`` when
    there are several); the files written and a note per protocol that could not be correlated."""
    from mteb_evalrank.correlation import CorrelationInputError, correlate

    written: dict[str, Path] = {}
    notes: list[str] = []
    several = len(groups) > 1
    for protocol, downstream in groups.items():
        try:
            result = correlate(
                loaded, intrinsic_columns(summary.intrinsic), downstream,
                n_bootstrap=n_bootstrap, n_permutations=n_permutations, seed=seed,
            )  # fmt: skip
            files = result.write(out / protocol if several else out)
            written.update({f"{protocol}/{k}" if several else k: v for k, v in files.items()})
        except CorrelationInputError as error:
            notes.append(f"no correlation{f' ({protocol})' if several else ''}: {error}")
    return written, notes


def protocol_groups(downstream: list[str]) -> dict[str, list[str]]:
    """The downstream tasks per protocol; those of none (``--downstream`` names any task) as ``other``."""
    from mteb_evalrank.correlation.table import by_protocol

    groups = by_protocol(downstream)
    grouped = {task for tasks in groups.values() for task in tasks}
    rest = [task for task in downstream if task not in grouped]
    return groups | ({"other": rest} if rest else {})
