"""``<out>/study_timing.json``: per model the cache counters, load and job seconds, host; per job;
``wall_over_encode`` = wall seconds / the models' encoding seconds; the history of resumed runs.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from .._files import read_json_object, write_text
from .chain_execution import ChainReport, JobOutcome

TIMING = "study_timing.json"


def timing_record(
    reports: Sequence[ChainReport], outcomes: Sequence[JobOutcome], wall: float, workers: int
) -> dict[str, Any]:
    """One run's timing: per model (cache counters, load and job seconds, host), per job, and in total."""
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


def with_history(timing: dict[str, Any], previous: dict[str, Any] | None) -> dict[str, Any]:
    """``timing`` plus the earlier runs of the folder: ``runs`` (oldest first), ``total`` (wall and encoding
    seconds of the runs, ``job_seconds`` of the finished jobs), each job's ``run`` (a job skipped now
    keeps the entry of the run that did it; earlier jobs not listed now are kept).
    """
    previous = previous if previous and "runs" in previous else {}
    runs, earlier_jobs = list(previous.get("runs", [])), previous.get("jobs", [])
    earlier = {(j["model"], j["task"]): j for j in earlier_jobs if j.get("status") == "done"}
    this = len(runs)
    jobs = [
        earlier.get((j["model"], j["task"]), {**j, "run": this})
        if j["status"] == "skipped"
        else {**j, "run": this}
        for j in timing["jobs"]
    ]
    runs.append(
        {
            "finished": timing.get("finished"),
            "wall_seconds": timing.get("wall_seconds", 0.0),
            "workers": timing.get("workers"),
            "scheduler": timing.get("scheduler"),
            "sum_encode_seconds": timing.get("sum_encode_seconds", 0.0),
            **{s: sum(1 for j in jobs if j["run"] == this and j["status"] == s) for s in ("done", "failed")},
        }
    )
    listed = {(j["model"], j["task"]) for j in jobs}
    jobs = [j for j in earlier_jobs if (j["model"], j["task"]) not in listed] + jobs
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


def record_run(
    out: Path,
    reports: Sequence[ChainReport],
    outcomes: Sequence[JobOutcome],
    wall: float,
    workers: int,
    scheduler: str | None,
    senteval_classifiers: Sequence[str],
) -> dict[str, Any]:
    """Write ``<out>/study_timing.json``: this run's timing with the history of the runs before it."""
    timing = timing_record(reports, outcomes, wall, workers)
    timing["scheduler"] = scheduler
    timing["senteval_classifiers"] = list(senteval_classifiers)
    timing["finished"] = datetime.now(UTC).isoformat(timespec="seconds")
    timing = with_history(timing, read_json_object(out / TIMING))
    write_text(out / TIMING, json.dumps(timing, indent=1) + "\n")
    return timing
