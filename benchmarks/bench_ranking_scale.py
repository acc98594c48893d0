"""The EvalRank ranking core at web scale: time and peak memory against the GEMM floor.

Run from the repository root::

    python benchmarks/bench_ranking_scale.py [--backgrounds 100000 1000000] [--pairs 10000]
        [--dim 384] [--seed 0] [--chunk-mib 128] [--cases random ties] [--out benchmarks]

For each background size ``n`` and each case, a fresh subprocess builds ``n`` synthetic
float32 unit vectors of ``--dim`` dimensions (``numpy.random.default_rng(seed)``, built in
blocks so that no float64 copy exists) and ``--pairs`` random pairs ``(q, p)``, then

1. times the **GEMM floor**: the same ``pairs x n`` similarity products as float32 matrix
   products (``x[q_block] @ x[col_block].T`` into a reused output buffer, 1,024 query rows
   by as many columns as ``--chunk-mib`` holds), i.e. what the machine's BLAS needs just to
   produce every similarity once;
2. times ``rank_counts_all`` (cosine and euclidean from one pass, as the EvalRank tasks
   call it) with ``chunk_bytes = --chunk-mib MiB``;
3. times the GEMM floor again; the ratio is ranking / mean of the two floors.

Peak memory: the process's resident-set high-water mark (``VmHWM``) is reset
(``/proc/self/clear_refs``) after the data are built; the peak extra memory of the ranking
is ``VmHWM - VmRSS`` before it, reported next to the compiled kernels' code (numba and
LLVM, loaded on first use: a fixed amount, measured by a tiny ranking before the timed one),
the copies the ranking makes of the embeddings (see ``embedding_copies``: they grow with the
background) and what remains beyond both: vectors of length ``n`` (row hash, groups, norms:
``O(n)`` bytes, not ``O(n d)``), the BLAS library's per-thread buffers, and the tiles, band
entries and refinement blocks (bounded by the chunk budget).

Cases: ``random`` (all rows distinct) and ``ties`` (a low-coverage word model: 76 % of the
rows are one vector, as the EvalRank release's toy GloVe, whose unknown words share one
vector; the rest distinct). Target: ranking <= 1.5x the GEMM floor; extra memory beyond
the embedding copies within the chunk budget.

Writes ``<out>/ranking_scale.json`` and ``<out>/ranking_scale.md`` (also printed), with the
machine's load average before and after each case. BLAS threads: as the process starts
(set ``OMP_NUM_THREADS`` / ``OPENBLAS_NUM_THREADS`` to change them).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent


def _status(field: str) -> int:
    """A ``/proc/self/status`` memory field in bytes."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise KeyError(field)


def _cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), or the platform's processor string."""
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def _reset_peak() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def build(
    n: int, dim: int, pairs: int, case: str, seed: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray, int]:
    """``n`` float32 unit vectors (``ties``: 76 % of them one vector), random pairs ``q != p``
    and the number of distinct rows."""
    rng = np.random.default_rng(seed)
    x = np.empty((n, dim), dtype=np.float32)
    for start in range(0, n, 65536):
        block = rng.standard_normal((min(65536, n - start), dim), dtype=np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        x[start : start + len(block)] = block
    distinct = n
    if case == "ties":
        same = rng.permutation(n)[: int(0.76 * n)]
        x[same] = x[0]
        distinct = n - len(same) + int(0 in same)
    q = rng.integers(0, n, pairs)
    p = (q + rng.integers(1, n, pairs)) % n
    return x, q, p, distinct


def gemm_floor(x: np.ndarray, q: np.ndarray, chunk_bytes: int) -> float:
    """Seconds to compute every ``x[q] . x[u]`` as float32 GEMMs of about ``chunk_bytes`` output."""
    rows = min(len(q), 1024)
    cols = max(1, min(len(x), chunk_bytes // (4 * rows)))
    out = np.empty((rows, cols), dtype=np.float32)
    start = time.perf_counter()
    for r in range(0, len(q), rows):
        left = x[q[r : r + rows]]
        for c in range(0, len(x), cols):
            right = x[c : c + cols]
            np.matmul(left, right.T, out=out[: len(left), : len(right)])
    return time.perf_counter() - start


def embedding_copies(distinct: int, dim: int) -> int:
    """Peak bytes of the copies ``rank_counts_all`` makes of (float32) embeddings.

    The float32 distinct rows of the pass (``4 m d``). The input is used in place; its
    finiteness check, row hash and the float64 rows (centring, norms, refinement) are
    computed block by block, so no other copy grows with ``n d`` (vectors of length ``n``
    and the per-thread buffers count as "beyond copies").
    """
    return 4 * distinct * dim


def worker(spec: dict[str, Any]) -> dict[str, Any]:
    from mteb_evalrank.evaluation.ranking import rank_counts_all

    n, dim, pairs, case, seed = spec["n"], spec["dim"], spec["pairs"], spec["case"], spec["seed"]
    chunk_bytes = spec["chunk_mib"] * 2**20
    x, q, p, distinct = build(n, dim, pairs, case, seed)
    floor_1 = gemm_floor(x, q, chunk_bytes)
    rss_before = _status("VmRSS")
    reset = _reset_peak()
    # the compiled kernels (numba and LLVM, loaded from their cache on first use): a fixed
    # amount of code, reported apart from the data
    rank_counts_all(np.eye(16, dim, dtype=np.float32), [0, 1], [2, 3])
    library = _status("VmRSS") - rss_before
    start = time.perf_counter()
    counts = rank_counts_all(x, q, p, chunk_bytes=chunk_bytes)
    ranking = time.perf_counter() - start
    peak = _status("VmHWM")
    floor_2 = gemm_floor(x, q, chunk_bytes)
    floor = (floor_1 + floor_2) / 2
    copies = embedding_copies(distinct, dim)
    return {
        **spec,
        "distinct_rows": distinct,
        "gemm_floor_s": [round(floor_1, 3), round(floor_2, 3)],
        "gemm_gflops": round(2 * pairs * n * dim / floor / 1e9, 1),
        "ranking_s": round(ranking, 3),
        "ratio": round(ranking / floor, 3),
        "peak_extra_mib": round((peak - rss_before) / 2**20, 1) if reset else None,
        "embedding_copies_mib": round(copies / 2**20, 1),
        "kernel_code_mib": round(library / 2**20, 1),
        "beyond_copies_mib": round((peak - rss_before - library - copies) / 2**20, 1) if reset else None,
        "input_mib": round(x.nbytes / 2**20, 1),
        "mean_tied": {s: float(c.tied.mean()) for s, c in counts.items()},
    }


def markdown(report: dict[str, Any]) -> str:
    lines = [
        "# EvalRank ranking at scale",
        "",
        f"{report['pairs']:,} pairs, {report['dim']}-d float32 unit vectors, seed {report['seed']}, "
        f"chunk budget {report['chunk_mib']} MiB; {report['machine']}. Ranking = `rank_counts_all` "
        "(cosine and euclidean from one pass); floor = the same products as float32 GEMMs, timed "
        "before and after the ranking in the same process; target ratio <= 1.5.",
        "",
        "| case | background | distinct | GEMM floor (s) | GFLOP/s | ranking (s) | ratio | "
        "peak extra (MiB) | compiled kernels (MiB) | embedding copies (MiB) | beyond copies (MiB) | "
        "load before/after |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|",
    ]
    for r in report["results"]:
        floors = " / ".join(f"{f:.1f}" for f in r["gemm_floor_s"])
        lines.append(
            f"| {r['case']} | {r['n']:,} | {r['distinct_rows']:,} | {floors} | {r['gemm_gflops']} | "
            f"{r['ranking_s']:.1f} | {r['ratio']:.2f} | {r['peak_extra_mib']} | "
            f"{r.get('kernel_code_mib', '–')} | "
            f"{r['embedding_copies_mib']} | {r['beyond_copies_mib']} | "
            f"{r['load_before']} / {r['load_after']} |"
        )
    lines += ["", f"Command: `{report['command']}`", ""]
    return "\n".join(lines)


def rewrite_report(out: Path) -> None:
    """Recompute the derived columns of ``<out>/ranking_scale.json`` and rewrite both reports."""
    report = json.loads((out / "ranking_scale.json").read_text())
    for r in report["results"]:
        copies = embedding_copies(r["distinct_rows"], r["dim"])
        r["embedding_copies_mib"] = round(copies / 2**20, 1)
        code = r.get("kernel_code_mib", 0.0)
        r["beyond_copies_mib"] = round(r["peak_extra_mib"] - code - copies / 2**20, 1)
    (out / "ranking_scale.json").write_text(json.dumps(report, indent=2) + "\n")
    (out / "ranking_scale.md").write_text(markdown(report))
    print(markdown(report))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backgrounds", type=int, nargs="+", default=[100_000, 1_000_000])
    parser.add_argument("--pairs", type=int, default=10_000)
    parser.add_argument("--dim", type=int, default=384)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--chunk-mib", type=int, default=128)
    parser.add_argument("--cases", nargs="+", default=["random", "ties"], choices=["random", "ties"])
    parser.add_argument("--out", type=Path, default=ROOT / "benchmarks")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--report-only", action="store_true", help="rewrite the markdown from the JSON")
    args = parser.parse_args()
    if args.worker:
        print(json.dumps(worker(json.loads(args.worker))))
        return 0
    if args.report_only:  # e.g. after a change of the derived columns
        rewrite_report(args.out)
        return 0
    results = []
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    for n in args.backgrounds:
        for case in args.cases:
            spec = {"n": n, "dim": args.dim, "pairs": args.pairs, "case": case, "seed": args.seed}
            spec["chunk_mib"] = args.chunk_mib
            load_before = " ".join(f"{v:.1f}" for v in os.getloadavg())
            print(f"{case} n={n:,} (load {load_before}) ...", file=sys.stderr, flush=True)
            out = subprocess.run(
                [sys.executable, __file__, "--worker", json.dumps(spec)],
                env=env,
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            result = json.loads(out.strip().splitlines()[-1])
            result["load_before"] = load_before
            result["load_after"] = " ".join(f"{v:.1f}" for v in os.getloadavg())
            print(json.dumps(result), file=sys.stderr, flush=True)
            results.append(result)
    report = {
        "pairs": args.pairs,
        "dim": args.dim,
        "seed": args.seed,
        "chunk_mib": args.chunk_mib,
        "machine": f"{_cpu_model()}, {platform.machine()}, {os.cpu_count()} CPUs, numpy {np.__version__}, "
        f"numba {metadata.version('numba')}",
        "command": "python benchmarks/bench_ranking_scale.py " + " ".join(sys.argv[1:]),
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "ranking_scale.json").write_text(json.dumps(report, indent=2) + "\n")
    text = markdown(report)
    (args.out / "ranking_scale.md").write_text(text)
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
