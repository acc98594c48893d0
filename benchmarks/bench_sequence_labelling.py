"""Cost of the sequence-labelling tasks (Chiu et al., 2016) for one model: time, CPU and peak memory.

For each task, in a fresh process of its own (``--task`` runs one; without it the script starts
one child per task, so that each peak memory is that task's alone): ``mteb.evaluate`` of the task
(data loading, encoding of the lower-cased word forms, three seeds of training and scoring) with
its phase timings (``TaskResult.evaluation_phases``: ``Encoding``, ``Scoring`` = the three
taggers), wall and CPU seconds, and the process's peak resident memory
(``resource.getrusage(RUSAGE_SELF).ru_maxrss``). Targets (issue): encoding + 3 seeds of training
at most 3 min, peak memory at most 1.5 GB, for ``evalrank/glove.6B.50d`` on the project's 2-core
machine. Writes ``<out>/sequence_labelling.json`` and prints a Markdown table.

    python benchmarks/bench_sequence_labelling.py [--model evalrank/glove.6B.50d] [--out benchmarks/out]

The datasets are built on first use (set ``MTEB_EVALRANK_SOURCE`` offline); run on an idle
machine, or report the load next to the figures (``os.getloadavg``, recorded).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

TASKS = ("CoNLL2000Chunking", "CoNLL2003NER", "EWTPOSTagging")
TARGET_SECONDS = 180.0
TARGET_PEAK_MB = 1500.0


def run_task(task_name: str, model_name: str) -> dict[str, Any]:
    """One task through ``mteb.evaluate`` in this process: timings, phases, peak memory, scores."""
    import mteb

    import mteb_evalrank

    mteb_evalrank.register()
    load_before = os.getloadavg()[0]
    cpu_start, start = time.process_time(), time.perf_counter()
    result = mteb.evaluate(
        mteb.get_model(model_name), mteb.get_task(task_name), overwrite_strategy="always", cache=None
    )
    seconds, cpu_seconds = time.perf_counter() - start, time.process_time() - cpu_start
    if result.exceptions:
        raise RuntimeError(f"mteb.evaluate failed: {result.exceptions}")
    task_result = result.task_results[0]
    phases: dict[str, float] = defaultdict(float)
    for phase in task_result.evaluation_phases or []:
        phases[phase["name"]] += phase["end"] - phase["start"]
    (scores,) = task_result.scores["test"]
    return {
        "task": task_name,
        "model": model_name,
        "seconds": seconds,
        "cpu_seconds": cpu_seconds,
        "encoding_seconds": phases.get("Encoding", 0.0),
        "training_and_scoring_seconds": phases.get("Scoring", 0.0),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "load_average_before": load_before,
        "load_average_after": os.getloadavg()[0],
        "main_score": scores["main_score"],
        "main_score_name": mteb.get_task(task_name).metadata.main_score,
        "per_seed": {key: value for key, value in scores.items() if "[seed=" in key},
        "n_test_tokens": scores["n_test_tokens"],
        "coverage": scores["coverage"],
    }


def table(rows: list[dict[str, Any]]) -> str:
    """The report's Markdown table."""
    lines = [
        "| task | main score | encoding (s) | 3 seeds: training + scoring (s) | whole task wall (s) | "
        "CPU (s) | peak RSS (MB) | load average (before / after) |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| `{row['task']}` | {row['main_score']:.4f} | {row['encoding_seconds']:.1f} | "
            f"{row['training_and_scoring_seconds']:.1f} | {row['seconds']:.1f} | {row['cpu_seconds']:.1f} | "
            f"{row['peak_rss_mb']:.0f} | {row['load_average_before']:.1f} / {row['load_average_after']:.1f} |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--model", default="evalrank/glove.6B.50d")
    parser.add_argument("--task", choices=TASKS, help="run this task in this process and print its JSON")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/out"))
    args = parser.parse_args(argv)
    if args.task:
        print(json.dumps(run_task(args.task, args.model)))
        return
    rows = []
    for task in TASKS:
        command = [sys.executable, __file__, "--task", task, "--model", args.model]
        done = subprocess.run(command, capture_output=True, text=True, check=True)
        rows.append(json.loads(done.stdout.strip().splitlines()[-1]))
        print(f"{task}: {rows[-1]['seconds']:.1f} s, peak {rows[-1]['peak_rss_mb']:.0f} MB", file=sys.stderr)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "sequence_labelling.json").write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    print(table(rows))


if __name__ == "__main__":
    main()
