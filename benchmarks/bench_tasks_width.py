"""The plugin's own compute by embedding width: whole tasks through ``mteb.evaluate`` against their floor.

For each task and width, a zero-cost encoder (:class:`bench_encode_once.HashCounter` at that width:
each text's vector drawn from its BLAKE2b digest) runs the task through one ``mteb.evaluate``
(``cache=None, overwrite_strategy="always"``; the data loaded beforehand), with the task's
``device`` set where it has one (SentEval-protocol and sequence-labelling tasks). Reported: the
wall seconds, mteb's ``evaluation_time`` and, where the task trains something, the **floor**: the
forward/backward matrix products of the fits it ran at the throughput ``torch.matmul`` reaches in
the same process at the same shapes. The SentEval-protocol classifiers' products are counted while
they run (``bench_classifiers_width.counting``), the tagger's per training
(``bench_tagger_device.training_flops`` at ``gemm_flops_per_second``). A second floor adds the
optimiser: one update of the trained parameters per step by torch's fused Adam kernel (the MLP's
and the tagger's; memory-bound; ``bench_classifiers_width.adam_seconds``: the kernel alone, since
0700a9e), each at the cost measured in the same process. Targets: time / floor at most
2; SentEvalMR's 4,096-d time at most 5 x its 1,024-d time (the products grow 4x)::

    PYTHONPATH=$PWD python benchmarks/bench_tasks_width.py --device cuda \\
        [--widths 64 768 1024 4096] [--tasks EvalRankSent ...] [--max-seconds 1800]

The raw data folder is ``MTEB_EVALRANK_SOURCE`` (default ``../shared/data``). A width taking over
``--max-seconds`` skips the task's larger widths. Prints a markdown table, writes ``<out>.json``.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import time
from pathlib import Path
from typing import Any

from bench_classifiers_width import COUNTS, STEPS, adam_floor, adam_seconds, counted_floor, counting
from bench_encode_once import HashCounter
from bench_evalrank import DEFAULT_SOURCE, load_average, machine_info
from bench_tagger_device import gemm_flops_per_second, training_flops

from mteb_evalrank.evaluation.tagging import N_CAPS, WINDOW, TaggerConfig, training_threads

TASKS = ["EvalRankSent", "EvalRankWord", "SentEvalMR", "CoNLL2000Chunking"]
FLOOR_TARGET, SCALING_TARGET = 2.0, 5.0
#: the tagger trainings of the current run: (tokens, input width, tags, config)
FITS: list[tuple[int, int, int, TaggerConfig]] = []


def counting_tagger() -> None:
    """Record every tagger training the sequence-labelling tasks run."""
    from mteb_evalrank.tasks import _sequence_labelling

    train = _sequence_labelling.train_and_select

    def counted(vectors: Any, inputs: Any, labels: Any, test: Any, n_labels: int, **kwargs: Any) -> Any:
        config = kwargs.get("config", TaggerConfig())
        for _ in kwargs["seeds"]:  # one tagger per seed, trained side by side
            FITS.append((len(labels), WINDOW * (vectors.shape[1] + N_CAPS), n_labels, config))
        return train(vectors, inputs, labels, test, n_labels, **kwargs)

    _sequence_labelling.train_and_select = counted  # type: ignore[assignment]


@functools.cache
def tagger_rate(device: str, width: int, hidden: int, threads: int | None) -> float:
    return gemm_flops_per_second(device, width, hidden, threads)


def floor(device: str) -> tuple[float, float, float]:
    """FLOPs, GEMM floor seconds and Adam floor seconds of the fits of the current run (classifiers
    and taggers); the Adam floor: one fused update of the parameters per step, at its measured cost."""
    flops, seconds = counted_floor(device)
    updates = adam_floor(device)
    for tokens, width, n_tags, config in FITS:
        work = training_flops(tokens, width, n_tags, config)
        threads = training_threads(width, config) if config.device == "cpu" else None
        flops += work
        seconds += work / tagger_rate(config.device, width, config.hidden, threads)
        steps = config.epochs * -(-tokens // config.batch_size)
        numel = (width + 1) * config.hidden + (config.hidden + 1) * n_tags
        updates += steps * adam_seconds(numel, "float32", config.device, threads)
    return flops, seconds, updates


def measure(name: str, width: int, device: str) -> dict[str, Any]:
    """One task at one width through ``mteb.evaluate``, with its floor where it trains something."""
    import mteb

    task = mteb.get_task(name)
    if hasattr(task, "device"):  # SentEval-protocol and sequence-labelling tasks
        task.device = device
    task.load_data()
    COUNTS.clear()
    STEPS.clear()
    FITS.clear()
    start = time.perf_counter()
    result = mteb.evaluate(
        HashCounter(width), task, cache=None, overwrite_strategy="always", show_progress_bar=False
    )
    seconds = time.perf_counter() - start
    flops, floor_seconds, adam = floor(device)
    return {
        "task": name, "width": width, "device": device, "seconds": round(seconds, 2),
        "evaluation_time": result.task_results[0].evaluation_time, "gemm_flops": flops or None,
        "floor_seconds": round(floor_seconds, 3) if flops else None,
        "ratio": round(seconds / floor_seconds, 2) if flops else None,
        "floor_with_adam_seconds": round(floor_seconds + adam, 3) if flops else None,
        "ratio_with_adam": round(seconds / (floor_seconds + adam), 2) if flops else None,
        "main_score": result.task_results[0].get_score(),
    }  # fmt: skip


def cell(value: Any, digits: int) -> str:
    return "" if value is None else f"{value:.{digits}f}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 768, 1024, 4096])
    parser.add_argument("--tasks", nargs="+", default=TASKS)
    parser.add_argument("--device", default="cpu", help="the tasks' device attribute (cpu, cuda)")
    parser.add_argument("--max-seconds", type=float, help="per (task, width): skip the larger widths")
    parser.add_argument("--out", type=Path, default=Path("benchmarks/tasks_width"))
    args = parser.parse_args()
    os.environ.setdefault("MTEB_EVALRANK_SOURCE", str(DEFAULT_SOURCE))
    os.environ["HF_HUB_OFFLINE"] = os.environ["HF_DATASETS_OFFLINE"] = "1"
    counting()
    counting_tagger()
    before, rows = load_average(), []
    print("| task | width | device | seconds | task s | GEMM floor s | ratio | + Adam floor s | ratio |")
    print("|---|---:|---|---:|---:|---:|---:|---:|---:|")
    for name in args.tasks:
        over = False
        for width in sorted(args.widths):
            if over:
                rows.append({"task": name, "width": width, "skipped": f"skipped (> {args.max_seconds:g} s)"})
                print(f"| {name} | {width} | {args.device} | {rows[-1]['skipped']} | | | | | |", flush=True)
                continue
            row = measure(name, width, args.device)
            rows.append(row)
            over = args.max_seconds is not None and row["seconds"] > args.max_seconds
            print(
                f"| {name} | {width} | {args.device} | {row['seconds']:.1f} | {row['evaluation_time']:.1f} | "
                f"{cell(row['floor_seconds'], 2)} | {cell(row['ratio'], 1)} | "
                f"{cell(row['floor_with_adam_seconds'], 2)} | {cell(row['ratio_with_adam'], 1)} |",
                flush=True,
            )
    report(args, rows, before)


def report(args: argparse.Namespace, rows: list[dict[str, Any]], before: list[float]) -> None:
    """Print SentEvalMR's 4,096-d / 1,024-d time and write ``<out>.json``."""
    seconds = {r["width"]: r["seconds"] for r in rows if r["task"] == "SentEvalMR" and "seconds" in r}
    scaling = round(seconds[4096] / seconds[1024], 2) if {1024, 4096} <= seconds.keys() else None
    if scaling is not None:
        print(f"\nSentEvalMR 4,096-d time / 1,024-d time: {scaling} (target <= {SCALING_TARGET:g})")
    machine = machine_info()
    if args.device.startswith("cuda"):
        import torch

        machine["gpu"] = torch.cuda.get_device_name()
    figures = {
        "machine": machine, "device": args.device, "max_seconds": args.max_seconds,
        "load_average_before": before, "load_average_after": load_average(),
        "targets": {"time_over_floor": FLOOR_TARGET, "sentevalmr_4096_over_1024": SCALING_TARGET},
        "sentevalmr_4096_over_1024": scaling, "rows": rows,
    }  # fmt: skip
    args.out.with_suffix(".json").write_text(json.dumps(figures, indent=1) + "\n")


if __name__ == "__main__":
    main()
