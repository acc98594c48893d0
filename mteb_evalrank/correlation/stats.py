"""Rank-correlation statistics across models, vectorised with numpy.

Conventions (all functions take two equally long 1-D float arrays ``x``, ``y`` without NaN):

* Spearman's ρ = Pearson's r of the average ranks (ties get the mean of their ranks), i.e.
  ``scipy.stats.spearmanr``; Kendall's τ is τ-b (``scipy.stats.kendalltau``).
* Bootstrap CI: resample the *models* (pairs ``(x_i, y_i)``) with replacement ``n_resamples``
  times, recompute ρ on each resample (ranks recomputed per resample), and take the
  percentile interval ``[q_{α/2}, q_{1-α/2}]``. Resamples on which ρ is undefined (one side
  constant) are left out; their number is returned.
* Permutation p-value (two-sided): permute ``y`` against ``x`` ``n_permutations`` times and
  ``p = (1 + #{|ρ_perm| ≥ |ρ_obs|}) / (1 + n_permutations)`` (Phipson & Smyth 2010: never 0).
* Comparing two intrinsic rows ``a``, ``b`` against the same ``k`` extrinsic columns: the
  difference of their mean ρ, ``Δ = (1/k) Σ_j ρ(a, y_j) − (1/k) Σ_j ρ(b, y_j)``, with a
  *paired* bootstrap (one resample of the models for both rows and all columns), its
  percentile CI, and ``p = share of resamples with Δ* ≤ 0`` (one-sided: "a does not beat b").
* Partial Spearman controlling for ``z``: Pearson partial correlation of the ranks,
  ``ρ_xy·z = (ρ_xy − ρ_xz ρ_yz) / sqrt((1 − ρ_xz²)(1 − ρ_yz²))``.

``scipy.stats.bootstrap``/``permutation_test`` would need a vectorised statistic wrapper and
re-derive the resampling per call; here each is one (B, n) numpy operation with a fixed
seed, so that the hundreds of pairs of an MTEB-scale table take seconds (the tests check
both against scipy).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

MIN_MODELS = 3


class TooFewModelsError(ValueError):
    """Fewer than :data:`MIN_MODELS` models have both scores."""


def _check(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"x and y must be 1-D and equally long, got {x.shape} and {y.shape}")
    if np.isnan(x).any() or np.isnan(y).any():
        raise ValueError("x and y must not contain NaN: drop models without a score first")
    if len(x) < MIN_MODELS:
        raise TooFewModelsError(f"{len(x)} models; a correlation needs at least {MIN_MODELS}")
    return x, y


def _row_pearson(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Pearson's r of each row of ``a`` (B, n) with the same row of ``b``; NaN for a constant row."""
    a = a - a.mean(axis=-1, keepdims=True)
    b = b - b.mean(axis=-1, keepdims=True)
    den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    num = (a * b).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    # Rounding can make a constant row look non-constant by ~1e-16; treat those as undefined too.
    return np.where(den > 1e-12, np.clip(r, -1.0, 1.0), np.nan)


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ (average ranks for ties); NaN when one side is constant."""
    x, y = _check(x, y)
    return float(_row_pearson(stats.rankdata(x), stats.rankdata(y)))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; NaN when one side is constant."""
    x, y = _check(x, y)
    return float(_row_pearson(x, y))


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b (``scipy.stats.kendalltau``); NaN when one side is constant."""
    x, y = _check(x, y)
    return float(stats.kendalltau(x, y).statistic)


@dataclass(frozen=True)
class Interval:
    """A bootstrap percentile interval and the number of resamples it rests on."""

    low: float
    high: float
    n_used: int
    n_undefined: int


def bootstrap_spearman_ci(
    x: np.ndarray,
    y: np.ndarray,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile bootstrap CI of Spearman's ρ over models (see module docstring)."""
    x, y = _check(x, y)
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(x), size=(n_resamples, len(x)))
    rho = _row_pearson(stats.rankdata(x[idx], axis=1), stats.rankdata(y[idx], axis=1))
    ok = rho[~np.isnan(rho)]
    low, high = _percentile_interval(ok, confidence)
    return Interval(low, high, len(ok), n_resamples - len(ok))


def _percentile_interval(samples: np.ndarray, confidence: float) -> tuple[float, float]:
    """``[q_{α/2}, q_{1-α/2}]`` of the (NaN-free) bootstrap ``samples``; NaNs when there are none."""
    if len(samples) == 0:
        return float("nan"), float("nan")
    alpha = 1.0 - confidence
    low, high = np.quantile(samples, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


def permutation_p_spearman(
    x: np.ndarray, y: np.ndarray, *, n_permutations: int = 10000, seed: int = 0
) -> float:
    """Two-sided permutation p-value of Spearman's ρ (see module docstring); NaN if ρ is undefined."""
    x, y = _check(x, y)
    rx = stats.rankdata(x)
    ry = stats.rankdata(y)
    observed = float(_row_pearson(rx, ry))
    if np.isnan(observed):
        return float("nan")
    rng = np.random.default_rng(seed)
    # Permuting y's ranks keeps the tie structure, so ρ of a permutation = r(rx, ry[perm]).
    perms = rng.permuted(np.broadcast_to(ry, (n_permutations, len(ry))), axis=1)
    null = _row_pearson(np.broadcast_to(rx, perms.shape), perms)
    # Tolerance: permutations that reproduce |ρ_obs| exactly must count despite rounding.
    extreme = int((np.abs(null) >= abs(observed) - 1e-12).sum())
    return (1 + extreme) / (1 + n_permutations)


@dataclass(frozen=True)
class Difference:
    """``mean ρ(a) − mean ρ(b)`` over the extrinsic columns, with its paired-bootstrap CI."""

    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    p_not_better: float
    n: int
    n_used: int


def mean_spearman_difference(
    a: np.ndarray,
    b: np.ndarray,
    targets: np.ndarray,
    *,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Difference:
    """Difference of the mean Spearman ρ of rows ``a`` and ``b`` with the columns of ``targets``.

    ``targets`` is ``(n_models, k)``; see the module docstring for Δ, the paired bootstrap and
    ``p``. Resamples on which some ρ is undefined are left out (``n_used`` counts the others).
    """
    a, b = _check(a, b)
    y = np.asarray(targets, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] != len(a) or y.shape[1] == 0 or np.isnan(y).any():
        raise ValueError(f"targets must be (n_models={len(a)}, k>=1) without NaN, got shape {y.shape}")

    def mean_rho(rx: np.ndarray, ry: np.ndarray) -> np.ndarray:  # rows (..., n), columns (..., n, k)
        return np.mean([_row_pearson(rx, ry[..., j]) for j in range(ry.shape[-1])], axis=0)

    mean_a = float(np.mean([spearman(a, column) for column in y.T]))
    mean_b = float(np.mean([spearman(b, column) for column in y.T]))
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, len(a), size=(n_resamples, len(a)))
    ry = stats.rankdata(y[idx], axis=1)  # (B, n, k), ranks within each resample
    delta = mean_rho(stats.rankdata(a[idx], axis=1), ry) - mean_rho(stats.rankdata(b[idx], axis=1), ry)
    ok = delta[~np.isnan(delta)]
    low, high = _percentile_interval(ok, confidence)
    p = float((ok <= 0).mean()) if len(ok) else float("nan")
    return Difference(mean_a, mean_b, mean_a - mean_b, low, high, p, len(a), len(ok))


def partial_spearman(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    """Spearman's ρ of ``x`` and ``y`` controlling for ``z`` (see module docstring)."""
    x, y = _check(x, y)
    _, z = _check(x, z)
    rxy = spearman(x, y)
    rxz = spearman(x, z)
    ryz = spearman(y, z)
    den = np.sqrt((1 - rxz**2) * (1 - ryz**2))
    if not np.isfinite(den) or den <= 1e-12:
        return float("nan")
    return float((rxy - rxz * ryz) / den)
