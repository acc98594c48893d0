"""Why 4,096-d SentEvalMR costs more than 4x its 1,024-d time with the hash encoder: the inner folds'
logistic regressions of labels that the features cannot predict, by L2 strength and solver.

The hash encoder's vectors are standard normal and independent of MR's labels. One outer fold of MR
trains on 9,596 rows, each inner fold of its LR selection on 7,676: at 4,096-d that is 1.87 rows per
feature, below Cover's capacity ``n = 2 (d + 1)`` (half of all labellings linearly separable), so the
small-``lambda`` fits approach the separating direction and their optimum's curvature falls to about
``lambda`` (at 1,024-d: 7.5 rows per feature, not separable). This script fits the ten inner-fold
problems of one ``lambda`` (five folds, raw and z-normalised), the plugin's way and with the changes
one would try (``--variant``):

* ``plain``: the plugin's L-BFGS (memory 10, no preconditioner for these isotropic rows);
* ``memory30``: 30 pairs of memory;
* ``bound``: Boehning's bound as preconditioner (``PRECONDITIONED_CONDITION = 0``);
* ``warm``: started from the fits of the next stronger ``lambda`` (a path), not from zero;
* ``trust-ncg``: scipy's trust-region Newton-CG on the first fold's raw fit (Hessian-vector products
  with the same two products as a gradient), to the same tolerance (2-norm, so at least as strict).

Prints per ``lambda`` the iterations (L-BFGS rounds; trust-ncg: gradients + Hessian products) and the
seconds::

    PYTHONPATH=$PWD python benchmarks/bench_separable_lr.py --width 4096 --variant plain
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from scipy.optimize import minimize
from sklearn.model_selection import StratifiedKFold

from mteb_evalrank.evaluation import classifiers as C

N, FOLD_TEST = 10_662, 10  # MR's sentences; every 10th is the outer fold's test row


def lbfgs(
    fits: C._LinearFits, bound: C._Bound, memory: int, start: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor]:
    """The plugin's ``_lbfgs``, optionally from ``start``: it always starts from zero, so its one
    ``torch.zeros`` call of the parameters' shape returns ``start`` meanwhile (no start argument
    in the plugin for a benchmark's sake)."""
    if start is None:
        return C._lbfgs(fits, (10, fits.x.shape[1] + 1, 1), bound, memory)
    zeros = torch.zeros
    torch.zeros = lambda *a, **k: start.clone() if a and a[0] == tuple(start.shape) else zeros(*a, **k)
    try:
        return C._lbfgs(fits, (10, fits.x.shape[1] + 1, 1), bound, memory)
    finally:
        torch.zeros = zeros


def trust_ncg(x: torch.Tensor, y: np.ndarray, rows: np.ndarray, l2: float) -> int:
    """Gradient and Hessian-product evaluations of scipy's trust-ncg on one raw fit."""
    a, t = x[torch.as_tensor(rows)], torch.as_tensor(y[rows], dtype=x.dtype)
    n, d = a.shape
    count, curvature = [0], {}

    def value_gradient(w: np.ndarray) -> tuple[float, np.ndarray]:
        count[0] += 1
        w_ = torch.as_tensor(w)
        z = a @ w_[:d] + w_[d]
        p = torch.sigmoid(z)
        curvature["s"] = p * (1 - p) / n
        g = torch.cat([a.T @ ((p - t) / n) + l2 * w_[:d], ((p - t) / n).sum()[None]])
        return float(
            (torch.nn.functional.softplus(z) - t * z).mean() + l2 / 2 * (w_[:d] ** 2).sum()
        ), g.numpy()

    def hessian_product(w: np.ndarray, v: np.ndarray) -> np.ndarray:
        count[0] += 1
        v_ = torch.as_tensor(v)
        r = (a @ v_[:d] + v_[d]) * curvature["s"]
        return torch.cat([a.T @ r + l2 * v_[:d], r.sum()[None]]).numpy()

    minimize(value_gradient, np.zeros(d + 1), jac=True, hessp=hessian_product, method="trust-ncg",
             options={"gtol": C.LR_GTOL * l2, "maxiter": 5000})  # fmt: skip
    return count[0]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--width", type=int, default=4096)
    parser.add_argument(
        "--variant", default="plain", choices=["plain", "memory30", "bound", "warm", "trust-ncg"]
    )
    args = parser.parse_args()
    rng = np.random.default_rng(args.width)
    features = rng.standard_normal((N, args.width)).astype(np.float32)
    labels = rng.integers(0, 2, N)
    train = np.arange(N) % FOLD_TEST != 0
    x, y = torch.as_tensor(features[train], dtype=torch.float64), labels[train]
    folds = list(StratifiedKFold(C.INNER_FOLDS, shuffle=True, random_state=1).split(np.arange(len(y)), y))
    if args.variant == "bound":
        C.PRECONDITIONED_CONDITION = 0.0
    bound, previous = C._Bound(x, 1), None
    rows = len(folds[0][0])
    print(f"{args.width}-d, {rows} rows per inner fold ({rows / args.width:.2f} per feature)")
    print("| lambda | variant | iterations (min-max) | seconds |\n|---:|---|---|---:|")
    for l2 in sorted(C.L2_GRID, reverse=True):
        start = time.perf_counter()
        if args.variant == "trust-ncg":
            counts = [trust_ncg(x, y, folds[0][0], l2)]
        else:
            fits = C._linear_problem(
                x, y, np.unique(y), [(train, l2, bool(z)) for z in (0, 1) for train, _ in folds]
            )
            memory = 30 if args.variant == "memory30" else 10
            params, iterations = lbfgs(fits, bound, memory, previous if args.variant == "warm" else None)
            previous, counts = params, iterations.tolist()
        print(
            f"| {l2:g} | {args.variant} | {min(counts)}-{max(counts)} | {time.perf_counter() - start:.1f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
