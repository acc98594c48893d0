"""Chiu et al.'s window tagger (one seed, 10 epochs) on all of CoNLL-2000 chunking, by width and device.

Run from the repository root (the raw data folder as for the tests: ``MTEB_EVALRANK_SOURCE`` or
``../shared/data``)::

    python benchmarks/bench_tagger_device.py [--dims 64 768 4096] [--devices cpu cuda]
        [--cpu-max-dim 1024] [--out benchmarks]

Each word form's vector is drawn from its SHA-256 (a zero-cost encoder, ``tests/test_tagger_device.py``),
so every second is the tagger's. For each width and device: the wall time of
``train_and_predict`` (train 211,727 tokens, predict 47,377), its token accuracy, the threads
torch used on the CPU (one below ``WIDE_INPUT``, else every core) and the **floor**: the
forward and backward matrix products of the training (``3 x 2 x tokens x epochs x (width x
hidden + hidden x tags)`` FLOPs) at the float32 GEMM throughput measured in the same process on
the same device with the tagger's own shapes (a mini-batch of 50 rows). CPU widths above
``--cpu-max-dim`` are skipped (minutes on a laptop). Writes ``<out>/tagger_device.json`` and
prints a Markdown table.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from test_tagger_device import hashed_vectors, load_chunking

from mteb_evalrank.evaluation.tagging import (
    N_CAPS,
    WINDOW,
    TaggerConfig,
    centred,
    train_and_predict,
    training_threads,
)


def gemm_flops_per_second(device: str, width: int, hidden: int, threads: int | None) -> float:
    """float32 throughput of the tagger's first-layer products (50 x width @ width x hidden and its
    weight gradient), the median of 5 timings of 200 steps each."""
    before = torch.get_num_threads()
    torch.set_num_threads(threads or before)
    try:
        x = torch.randn(50, width, device=device)
        w = torch.randn(width, hidden, device=device)
        g = torch.randn(50, hidden, device=device)
        times = []
        for _ in range(6):
            if device != "cpu":
                torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(200):
                x @ w, x.T @ g  # forward, weight gradient
            if device != "cpu":
                torch.cuda.synchronize()
            times.append(time.perf_counter() - start)
        return 200 * 2 * 2 * 50 * width * hidden / float(np.median(times[1:]))
    finally:
        torch.set_num_threads(before)


def training_flops(tokens: int, width: int, n_tags: int, config: TaggerConfig) -> int:
    """The forward and backward products of one training (the floor's work): the first layer's
    forward and weight gradient (its input, the frozen vectors, has none), the second layer's forward,
    weight gradient and the hidden layer's gradient:
    ``2 x tokens x epochs x (2 x width x hidden + 3 x hidden x tags)`` FLOPs."""
    return 2 * tokens * config.epochs * (2 * width * config.hidden + 3 * config.hidden * n_tags)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dims", type=int, nargs="+", default=[64, 768, 4096])
    parser.add_argument(
        "--devices", nargs="+", default=["cpu", "cuda"] if torch.cuda.is_available() else ["cpu"]
    )
    parser.add_argument("--cpu-max-dim", type=int, default=1024)
    parser.add_argument("--out", type=Path, default=Path("benchmarks"))
    args = parser.parse_args()
    forms, inputs, train_targets, test_targets, n_tags = load_chunking(10**6, 10**6)
    config = TaggerConfig()
    tokens = len(train_targets)
    rows = []
    for dim in args.dims:
        vectors = centred(hashed_vectors(forms, dim)).astype(np.float32)
        width = WINDOW * (dim + N_CAPS)
        for device in args.devices:
            if device == "cpu" and dim > args.cpu_max_dim:
                continue
            threads = training_threads(width, config) or torch.get_num_threads()
            run = TaggerConfig(device=device)
            start = time.perf_counter()
            predicted = train_and_predict(
                vectors, inputs["train"], train_targets, inputs["test"], n_tags, seed=0, config=run
            )
            seconds = time.perf_counter() - start
            flops = training_flops(tokens, width, n_tags, config)
            rate = gemm_flops_per_second(device, width, config.hidden, threads if device == "cpu" else None)
            rows.append(
                {
                    "dim": dim,
                    "device": torch.cuda.get_device_name()
                    if device.startswith("cuda")
                    else f"cpu ({threads} threads)",
                    "seconds": round(seconds, 1),
                    "floor_seconds": round(flops / rate, 1),
                    "ratio": round(seconds / (flops / rate), 2),
                    "accuracy": round(float((predicted == test_targets).mean()), 4),
                }
            )
            print(rows[-1], flush=True)
    machine = (
        f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, torch {torch.__version__}"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "tagger_device.json").write_text(
        json.dumps({"machine": machine, "rows": rows}, indent=2) + "\n"
    )
    keys = ("dim", "device", "seconds", "floor_seconds", "ratio", "accuracy")
    print(f"\n{machine}\n\n| " + " | ".join(keys) + " |\n|" + "---|" * len(keys))
    for r in rows:
        print("| " + " | ".join(str(r[key]) for key in keys) + " |")


if __name__ == "__main__":
    main()
