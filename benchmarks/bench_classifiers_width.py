"""Cost of the SentEval-protocol classifiers against their floor, by embedding width.

For each width, synthetic features shaped like one outer fold of SentEvalMR (9,600 training
rows, 1,070 test rows, two classes; ``--pair`` adds a pair task's ``4 x width`` features;
``--spectrum ALPHA`` makes them anisotropic, the covariance's eigenvalues decaying as ``i^-ALPHA``) go
through the whole ``senteval_scores`` selection (logistic regression and MLP, raw and z-normalised)
on ``--device``. The floor is the matrix products the fits actually ran: every logistic-regression
evaluation (``x W`` and ``x^T R``: ``4 n d k`` FLOPs per fit and evaluation; the preconditioner's
centred rows' ``x^T x`` per training split, its Cholesky factorisations uncounted) and every MLP step and
validation pass (``x W1`` and ``x^T D1``), counted while the selection runs, divided by the
throughput ``torch.matmul`` reaches in the same process at the same shapes and dtypes. A second
floor adds the MLP's Adam updates (one fused update per step, memory-bound: its parameters, gradients
and moments read and written), each at the cost measured in the same process. Needs only
numpy, scipy, scikit-learn and torch (and the plugin's source on ``PYTHONPATH``)::

    PYTHONPATH=$PWD python benchmarks/bench_classifiers_width.py --device cuda \\
        --widths 64 768 1024 4096 --out benchmarks/classifiers_width_cuda

Prints a markdown table (width, device, seconds, both floors and ratios) and writes ``<out>.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from mteb_evalrank.evaluation import classifiers
from mteb_evalrank.evaluation.classifiers import MLP_HIDDEN, WIDE_FEATURES, pair_features, senteval_scores
from mteb_evalrank.evaluation.tagging import torch_threads

N_TRAIN, N_TEST = 9_600, 1_070
#: FLOPs of the products the fits ran, by (rows, width, columns, dtype) of one product
COUNTS: dict[tuple[int, int, int, str], float] = defaultdict(float)
#: the MLP's Adam steps, by (parameters updated per step, feature width, dtype)
STEPS: dict[tuple[int, int, str], int] = defaultdict(int)


def counting() -> None:
    """Count the width-dependent products of every logistic-regression evaluation and MLP pass."""
    loss_gradient, forward = classifiers._LinearFits.loss_gradient, classifiers._forward

    def counted_loss_gradient(self: Any, params: torch.Tensor, fits: torch.Tensor) -> Any:
        n, d = self.x.shape
        COUNTS[(n, d, len(fits) * params.shape[2], "float64")] += 2  # x W and x^T R
        return loss_gradient(self, params, fits)

    def counted_forward(net: Any, *xs: torch.Tensor) -> Any:
        for x, w1 in zip(xs, net, strict=False):  # one product per input and its first layer
            COUNTS[(len(x), x.shape[1], w1.shape[1] * MLP_HIDDEN, "float32")] += 1
        return forward(net, *xs)

    gram = classifiers._Bound.gram

    def counted_gram(self: Any, znorm: bool) -> Any:
        if not self.grams:  # the centred rows' x^T x, once per training split (both normalisations)
            n, d = self.x.shape
            COUNTS[(d, n, d, "float64")] += 1
        return gram(self, znorm)

    step = classifiers._Group.step

    def counted_step(self: Any, xs: Sequence[torch.Tensor], y: torch.Tensor) -> None:
        for x, w1 in zip(xs, self.params, strict=False):  # x^T D1, per input
            COUNTS[(len(x), x.shape[1], w1.shape[1] * MLP_HIDDEN, "float32")] += 1
        STEPS[(sum(p.numel() for p in self.params), xs[0].shape[1], "float32")] += 1
        step(self, xs, y)

    classifiers._LinearFits.loss_gradient = counted_loss_gradient  # type: ignore[method-assign]
    classifiers._forward = counted_forward
    classifiers._Group.step = counted_step  # type: ignore[method-assign]
    classifiers._Bound.gram = counted_gram  # type: ignore[method-assign]


def synchronise(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


#: measured throughputs, by (row band, width, columns, dtype, device): :func:`throughput`
MEASURED: dict[tuple[int, int, int, str, str], float] = {}


def throughput(rows: int, width: int, columns: int, dtype: str, device: str) -> float:
    """FLOP/s of ``torch.matmul`` for ``(rows x width) @ (width x columns)``, the faster of its two
    orientations (``a @ b`` and ``(b^T @ a^T)^T``: MKL is up to 15x faster on the wide output of a
    skinny product) and the best of a few runs, on the CPU threads the classifiers use at that width
    (``senteval_scores``' rule). Measured once per band of rows ``[2^(k-1), 2^k)`` (at the first row
    count met in it: an estimate for its other row counts) and kept for the process: the folds' and
    fits' row counts differ by a few rows, and measuring each distinct one took 20 of SentEvalMR's
    39 minutes at 4,096-d."""
    key = (rows.bit_length(), width, columns, dtype, device)
    if key not in MEASURED:
        with torch_threads(1 if width < WIDE_FEATURES else None):
            MEASURED[key] = _throughput(rows, width, columns, dtype, device)
    return MEASURED[key]


def _throughput(rows: int, width: int, columns: int, dtype: str, device: str) -> float:
    a = torch.randn(rows, width, dtype=getattr(torch, dtype), device=device)
    b = torch.randn(width, columns, dtype=a.dtype, device=device)
    repeats = max(1, min(200, int(2e8 / (rows * width * columns))))
    best = float("inf")
    for product in (lambda: a @ b, lambda: b.T @ a.T):
        for _ in range(3):
            synchronise(device)
            start = time.perf_counter()
            for _ in range(repeats):
                product()
            synchronise(device)
            best = min(best, (time.perf_counter() - start) / repeats)
    return 2 * rows * width * columns / best


def adam_seconds(numel: int, dtype: str, device: str, threads: int | None) -> float:
    """Seconds of one update by torch's fused Adam kernel (``torch._fused_adam_``, as the MLP calls it;
    without ``torch.optim``'s functional wrapper, which adds 20-30 us) of ``numel`` parameters on
    ``threads`` CPU threads: best of 3 timings of 50 updates. Memory-bound: it reads the parameters,
    gradients and both moments and writes three of them."""
    with torch_threads(threads):
        p, g, m, v = (torch.rand(numel, dtype=getattr(torch, dtype), device=device) for _ in range(4))
        steps, best = [torch.zeros((), device=device)], float("inf")
        for _ in range(3):
            synchronise(device)
            start = time.perf_counter()
            for _ in range(50):
                torch._fused_adam_([p], [g], [m], [v], [], steps, lr=1e-3, beta1=0.9, beta2=0.999,
                                   weight_decay=0.0, eps=1e-8, amsgrad=False, maximize=False)  # fmt: skip
            synchronise(device)
            best = min(best, (time.perf_counter() - start) / 50)
    return best


def adam_floor(device: str) -> float:
    """The seconds of the Adam updates in :data:`STEPS`, each at its measured cost."""
    return sum(
        n * adam_seconds(numel, dtype, device, 1 if width < WIDE_FEATURES else None)
        for (numel, width, dtype), n in STEPS.items()
    )


def features(width: int, rng: np.random.Generator, pair: bool, spectrum: float) -> tuple[np.ndarray, ...]:
    """Rows with a linear signal and label noise (accuracy ~0.8); pairs: ``[u, v, |u - v|, u v]``.
    ``spectrum`` > 0: anisotropic rows, the covariance's ``i``-th eigenvalue ``i^-spectrum`` in a random
    orthonormal basis, around a common mean (as sentence embeddings are); 0: standard normal rows."""
    n = N_TRAIN + N_TEST
    if spectrum:
        scales = np.arange(1, width + 1) ** (-spectrum / 2)
        basis = np.linalg.qr(rng.standard_normal((width, width)))[0]
        mean = rng.standard_normal(width) * scales.mean()

    def draw() -> np.ndarray:
        z = rng.standard_normal((n, width))
        return (z * scales) @ basis.T if spectrum else z

    u = mean + draw() if spectrum else draw()
    if pair:
        v = u + draw()
        x, signal = pair_features(u, v), -np.abs(u - v).sum(1)
    else:
        x, signal = u, u @ rng.standard_normal(width)
    y = (signal - np.median(signal) + rng.normal(scale=signal.std(), size=n) > 0).astype(int)
    return x[:N_TRAIN], y[:N_TRAIN], x[N_TRAIN:], y[N_TRAIN:]


def counted_floor(device: str) -> tuple[float, float]:
    """The FLOPs of the products in :data:`COUNTS` and their floor: each at its measured throughput."""
    flops, floor = 0.0, 0.0
    for (rows, d, columns, dtype), products in COUNTS.items():
        work = products * 2 * rows * d * columns
        flops += work
        floor += work / throughput(rows, d, columns, dtype, device)
    return flops, floor


def measure(width: int, device: str, pair: bool, spectrum: float) -> dict[str, Any]:
    data = features(width, np.random.default_rng(width), pair, spectrum)
    COUNTS.clear()
    STEPS.clear()
    synchronise(device)
    start = time.perf_counter()
    scores = senteval_scores(*data, seed=1, device=device)
    synchronise(device)
    seconds = time.perf_counter() - start
    flops, floor = counted_floor(device)
    with_adam = floor + adam_floor(device)
    return {
        "width": data[0].shape[1], "pair": pair, "spectrum": spectrum, "device": device, "seconds": seconds,
        "floor_seconds": floor,
        "ratio": seconds / floor, "floor_with_adam_seconds": with_adam,
        "ratio_with_adam": seconds / with_adam, "gemm_flops": flops, "lr_seconds": scores["lr_seconds"],
        "mlp_seconds": scores["mlp_seconds"], "lr_accuracy": scores["lr_accuracy"],
        "mlp_accuracy": scores["mlp_accuracy"],
    }  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--widths", type=int, nargs="+", default=[64, 768, 1024, 4096])
    parser.add_argument("--pair", action="store_true", help="also a pair task's 4 x width features")
    parser.add_argument(
        "--spectrum", type=float, default=0.0, metavar="ALPHA",
        help="anisotropic features: covariance eigenvalues i^-ALPHA (default 0: isotropic)",
    )  # fmt: skip
    parser.add_argument("--out", type=Path, default=Path("benchmarks/classifiers_width"))
    args = parser.parse_args()
    counting()
    rows = []
    print("| width | device | seconds | GEMM floor s | ratio | + Adam floor s | ratio | LR s | MLP s |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|---:|")
    for width in args.widths:
        for pair in (False, True) if args.pair else (False,):
            row = measure(width, args.device, pair, args.spectrum)
            rows.append(row)
            label = f"{row['width']} (pairs of {width})" if pair else str(width)
            print(
                f"| {label} | {args.device} | {row['seconds']:.1f} | {row['floor_seconds']:.2f} | "
                f"{row['ratio']:.1f} | {row['floor_with_adam_seconds']:.2f} | {row['ratio_with_adam']:.1f} | "
                f"{row['lr_seconds']:.1f} | {row['mlp_seconds']:.1f} |",
                flush=True,
            )
    machine = {
        "platform": platform.platform(), "cpu_count": os.cpu_count(), "torch": torch.__version__,
        "threads": torch.get_num_threads(), "load_average": os.getloadavg(),
        "gpu": torch.cuda.get_device_name() if args.device.startswith("cuda") else None,
    }  # fmt: skip
    args.out.with_suffix(".json").write_text(json.dumps({"machine": machine, "rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()
