"""The ten-family study's compute, from what the study folder records (no run needed).

Reads ``<run>/study_timing.json`` (every run's wall time and encoding time) and the mteb
result files of ``<run>/results`` (each job's ``evaluation_time``; the SentEval-protocol
tasks also record ``lr_seconds`` and ``mlp_seconds`` per fold since 2026-11-25) and prints,
per model family: the jobs done, their time (intrinsic tasks, SentEval-protocol tasks), and
the logistic regression's and the MLP's share of the SentEval time where it was recorded;
then the runs' wall time against their encoding time::

    python benchmarks/study_compute.py [docs/study/run]
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

DEFAULT_RUN = Path(__file__).resolve().parents[1] / "docs" / "study" / "run"


def job_rows(results: Path) -> list[dict[str, Any]]:
    """One row per result file: model, task, seconds and, for SentEval tasks, LR/MLP seconds."""
    rows = []
    for path in sorted(results.glob("*/*/*.json")):
        if path.name == "model_meta.json":
            continue
        data = json.loads(path.read_text(encoding="utf-8"))
        folds = [row for split in data.get("scores", {}).values() for row in split]
        timed = [row for row in folds if "lr_seconds" in row]
        rows.append(
            {
                "model": path.parents[1].name.replace("__", "/", 1),
                "task": data.get("task_name", path.stem),
                "seconds": float(data.get("evaluation_time") or 0.0),
                "lr_seconds": sum(row["lr_seconds"] for row in timed) if timed else None,
                "mlp_seconds": sum(row.get("mlp_seconds", 0.0) for row in timed) if timed else None,
            }
        )
    return rows


def family_table(rows: list[dict[str, Any]]) -> list[str]:
    """Markdown lines: per family and in all, jobs and hours, intrinsic and SentEval, and the
    logistic regression's and the MLP's share of the SentEval jobs that recorded them; then
    their share of the whole study's job time (sum of every job's ``evaluation_time``)."""
    from mteb_evalrank.models.zoo import model_family

    totals: dict[str, dict[str, float]] = defaultdict(lambda: defaultdict(float))
    for row in rows:
        kind = "senteval" if row["task"].startswith("SentEval") else "intrinsic"
        entry = totals[model_family(row["model"])]
        entry[f"{kind}_jobs"] += 1
        entry[f"{kind}_seconds"] += row["seconds"]
        if row["lr_seconds"] is not None:
            entry["timed_seconds"] += row["seconds"]
            entry["lr_seconds"] += row["lr_seconds"]
            entry["mlp_seconds"] += row["mlp_seconds"]
    lines = [
        "| family | intrinsic jobs | hours | SentEval jobs | hours | LR / MLP share of timed SentEval jobs |",
        "|---|---:|---:|---:|---:|---|",
    ]
    everything: dict[str, float] = defaultdict(float)
    for entry in totals.values():
        for key, value in entry.items():
            everything[key] += value
    for family, entry in [*sorted(totals.items()), ("**all families**", everything)]:
        share = "—"
        if entry["timed_seconds"] > 0:
            t = entry["timed_seconds"]
            share = f"{100 * entry['lr_seconds'] / t:.0f} % / {100 * entry['mlp_seconds'] / t:.0f} %"
        lines.append(
            f"| {family} | {entry['intrinsic_jobs']:.0f} | {entry['intrinsic_seconds'] / 3600:.2f} | "
            f"{entry['senteval_jobs']:.0f} | {entry['senteval_seconds'] / 3600:.2f} | {share} |"
        )
    study_seconds = everything["intrinsic_seconds"] + everything["senteval_seconds"]
    if study_seconds:
        lines += [
            "",
            f"Logistic regression: {everything['lr_seconds'] / 3600:.2f} h, "
            f"{100 * everything['lr_seconds'] / study_seconds:.1f} % of the study's job time "
            f"({study_seconds / 3600:.2f} h); MLP: {everything['mlp_seconds'] / 3600:.2f} h, "
            f"{100 * everything['mlp_seconds'] / study_seconds:.1f} % (where recorded).",
        ]
    return lines


def run_table(timing: dict[str, Any]) -> list[str]:
    """Markdown lines: the runs' wall and encoding hours (``study_timing.json``'s history)."""
    runs = timing.get("runs", [])
    wall = sum(run.get("wall_seconds", 0.0) for run in runs)
    encode = sum(run.get("sum_encode_seconds", 0.0) for run in runs)
    jobs = sum(run.get("done", 0) for run in runs)
    return [
        f"{len(runs)} runs, {jobs} jobs: wall {wall / 3600:.2f} h, of which the models encoded for "
        f"{encode / 3600:.2f} h (wall / encoding = {wall / encode:.2f})."
        if encode
        else f"{len(runs)} runs: no encoding time recorded."
    ]


def main() -> None:
    run = Path(sys.argv[1]) if len(sys.argv) > 1 else DEFAULT_RUN
    rows = job_rows(run / "results")
    timing = json.loads((run / "study_timing.json").read_text(encoding="utf-8"))
    print("\n".join([*family_table(rows), "", *run_table(timing)]))


if __name__ == "__main__":
    main()
