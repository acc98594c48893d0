"""Rank-correlation statistics across models, vectorised with numpy (docs/correlation.md).

Functions take equally long 1-D float arrays ``x``, ``y`` without NaN (one entry per model) and
optionally ``families`` (one label per model). Conventions and formulas:

* Spearman's ρ = Pearson's r of the average ranks (``scipy.stats.spearmanr``); Kendall's τ-b
  (``scipy.stats.kendalltau``). A side is *constant* (NaN) when ``max − min`` is at most
  :data:`CONSTANT_ULPS` ulps of its largest magnitude. At least :data:`MIN_MODELS` models.
* **Units**: the families when some family has ≥ 2 models and there are ≥ 2 families (a model
  without a family is its own), else the models.
* **Bootstrap CI** (family-cluster): draw ``G`` units with replacement, take all models of each
  drawn unit (as weights ``w_i``: ρ of the weighted sample = ρ of the expanded resample), ranks
  recomputed, percentile interval ``[q_{α/2}, q_{1-α/2}]``; resamples with ρ undefined are left
  out and counted. Fewer than :data:`MIN_FAMILIES` families: NaN with a reason (``G`` families
  give only ``C(2G−1, G)`` distinct resamples).
* **Permutation p** (two-sided): ``p = min(1, 2·min(p_≥, p_≤))``, ``p_≥ = (1 + #{ρ* ≥ ρ_obs})/(1 + B)``
  (Phipson & Smyth 2010), ``y`` permuted *within strata*: each family of ≥ 2 models, plus one
  stratum of the single models. Null: within each stratum ``y`` is exchangeable against ``x``.
* **Two rows** ``a``, ``b`` against ``k`` columns: ``Δ = (1/k) Σ_j ρ(a, y_j) − (1/k) Σ_j ρ(b, y_j)``,
  CI by the bootstrap above. **Paired swap test**: swap the ranks of ``a`` and ``b`` within each
  unit, recompute Δ; ``p = #{|Δ*| ≥ |Δ_obs|} / 2^U`` over all ``2^U`` patterns when
  ``2^U ≤ n_permutations`` (smallest p ``2/2^U``), else ``(1 + #)/(1 + B)`` over ``B`` random ones.
* **Multiple comparisons**: :func:`adjust_pvalues` (Holm, or Benjamini-Hochberg ``"fdr_bh"``).
* **Partial Spearman** given ``z``: ``ρ_xy·z = (ρ_xy − ρ_xz ρ_yz) / sqrt((1 − ρ_xz²)(1 − ρ_yz²))``.

**Within-family view** (``within_*``, ``within=True``): families of at least
:data:`MIN_FAMILY_SIZE` models (:class:`Pooling`), ``F`` of them. In family ``g`` (``n_g``
models) rank within the family and centre, ``c^x_gi = rank_g(x_i) − (n_g + 1)/2``; then::

    ρ_W = Σ_g Σ_i c^x_gi c^y_gi / sqrt( Σ_g S^x_g · Σ_g S^y_g ),   S^x_g = Σ_i (c^x_gi)²

i.e. ``Σ_g ρ_g sqrt(S^x_g S^y_g) / sqrt(Σ_g S^x_g Σ_g S^y_g)`` (:func:`family_spearman`), weights
``n_g(n_g² − 1) / Σ_h n_h(n_h² − 1)`` without ties. Family offsets cannot change ρ_W; with one
family it is that family's ρ (models as units). ``r_W``: the same on values centred by their
family mean; partial ``ρ_W``: the partial formula with ρ_W. CI: the cluster bootstrap over the
``F`` families (ranks within a family unchanged); p: ``y`` permuted within each family; swap
test: a family's within-family ranks of ``a`` and ``b`` exchanged. Seeds: ``numpy.random.default_rng``.
"""

from __future__ import annotations

import functools
import warnings
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from scipy import stats

MIN_MODELS = 3
"""Fewest models for a point estimate (ρ, r, τ)."""
MIN_RESAMPLE_MODELS = 5
"""Fewest models, as resampling units, for a bootstrap CI or a permutation test (below: NaN)."""
MIN_FAMILIES = 3
"""Fewest families for the family-cluster bootstrap (below: NaN with a reason)."""
MIN_FAMILY_SIZE = 3
"""Fewest models of a family for it to enter the pooled within-family statistics."""
FEW_FAMILIES = 10
"""Below this many families the reports say plainly that CIs are coarse and tests weak."""
CONSTANT_ULPS = 8
"""A side whose spread is within this many ulps of its magnitude counts as constant."""


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


def _constant(v: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Per row: is the spread of ``v`` (over entries of positive weight) within a few ulps of its size?"""
    if weights is None:
        high, low = v.max(axis=-1), v.min(axis=-1)
    else:
        present = weights > 0
        high = np.where(present, v, -np.inf).max(axis=-1)
        low = np.where(present, v, np.inf).min(axis=-1)
    scale = np.maximum(np.abs(high), np.abs(low))
    return (high - low) <= CONSTANT_ULPS * np.finfo(np.float64).eps * scale


def _row_pearson(a: np.ndarray, b: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Pearson's r of rows of ``a``, ``b`` (..., n), entries counted ``weights`` times; NaN if constant."""
    if weights is None:  # each side reduced as it is, then broadcast (a permutation test's fixed side once)
        undefined = _constant(a) | _constant(b)
        a = a - a.mean(axis=-1, keepdims=True)
        b = b - b.mean(axis=-1, keepdims=True)
        num = (a * b).sum(axis=-1)
        den = np.sqrt((a * a).sum(axis=-1) * (b * b).sum(axis=-1))
    else:
        a, b = np.broadcast_arrays(a, b)
        undefined = _constant(a, weights) | _constant(b, weights)
        total = weights.sum(axis=-1, keepdims=True)
        a = a - (weights * a).sum(axis=-1, keepdims=True) / total
        b = b - (weights * b).sum(axis=-1, keepdims=True) / total
        num = (weights * a * b).sum(axis=-1)
        den = np.sqrt((weights * a * a).sum(axis=-1) * (weights * b * b).sum(axis=-1))
    with np.errstate(invalid="ignore", divide="ignore"):
        r = num / den
    return np.where(undefined | ~(den > 0), np.nan, np.clip(r, -1.0, 1.0))


def _weighted_ranks(x: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """Average ranks of ``x`` (n,) in the multiset where model ``i`` appears ``weights[..., i]`` times."""
    # one product: [i, j] = 1 if x_j < x_i, 1/2 if x_j == x_i (exact in float64 for integer weights)
    below_or_half = (x[None, :] < x[:, None]) + 0.5 * (x[None, :] == x[:, None])
    return weights @ below_or_half.T + 0.5


def spearman(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's ρ (average ranks for ties); NaN when one side is constant."""
    x, y = _check(x, y)
    return float(_row_pearson(stats.rankdata(x), stats.rankdata(y)))


def pearson(x: np.ndarray, y: np.ndarray) -> float:
    """Pearson's r; NaN when one side is constant (relative criterion, see module docstring)."""
    x, y = _check(x, y)
    return float(_row_pearson(x, y))


def kendall(x: np.ndarray, y: np.ndarray) -> float:
    """Kendall's τ-b (``scipy.stats.kendalltau``); NaN when one side is constant."""
    x, y = _check(x, y)
    if _constant(x) or _constant(y):
        return float("nan")
    return float(stats.kendalltau(x, y).statistic)


@dataclass(frozen=True)
class Units:
    """The resampling units of ``n`` models: ``codes[i]`` = unit of model ``i`` (0..count-1); ``kind``:
    ``"families"`` or ``"models"``."""

    codes: np.ndarray
    count: int
    kind: str
    n_families: int

    @property
    def strata(self) -> np.ndarray:
        """Permutation strata: each family of ≥ 2 models, plus one stratum of all single models."""
        if self.kind == "models":
            return np.zeros(len(self.codes), dtype=np.int64)
        sizes = np.bincount(self.codes)
        return np.where(sizes[self.codes] >= 2, self.codes + 1, 0)


def units(families: Sequence[str] | None, n: int) -> Units:
    """Resampling units (see module docstring): families if any has ≥ 2 models and there are ≥ 2."""
    if families is None:
        return Units(np.arange(n), n, "models", n)
    labels = list(families)
    if len(labels) != n:
        raise ValueError(f"{len(labels)} family labels for {n} models")
    order = {label: i for i, label in enumerate(dict.fromkeys(labels))}  # first appearance
    codes = np.array([order[label] for label in labels], dtype=np.int64)
    g = len(order)
    if g in (1, n):
        return Units(np.arange(n), n, "models", g)
    return Units(codes, g, "families", g)


def _bootstrap_weights(u: Units, n_resamples: int, seed: int) -> np.ndarray:
    """(B, n) weights: how often each model's unit was drawn in each of B draws of ``U`` units."""
    draws = np.random.default_rng(seed).integers(0, u.count, size=(n_resamples, u.count))
    counts = np.zeros((n_resamples, u.count))
    np.add.at(counts, (np.arange(n_resamples)[:, None], draws), 1.0)
    return counts[:, u.codes]


@dataclass(frozen=True)
class Interval:
    """A bootstrap percentile interval, the resamples it rests on, and why it is NaN (if it is)."""

    low: float
    high: float
    n_used: int
    n_undefined: int
    units: str = "models"
    reason: str = ""


def too_few_units(u: Units) -> str:
    """Why the units are too few to resample ("" if they are enough)."""
    if u.kind == "families" and u.count < MIN_FAMILIES:
        return (
            f"{u.count} families: too few to resample (a family-cluster bootstrap needs at least "
            f"{MIN_FAMILIES})"
        )
    if u.kind == "models" and u.count < MIN_RESAMPLE_MODELS:
        return (
            f"{u.count} models: too few to resample "
            f"(a bootstrap or permutation test needs at least {MIN_RESAMPLE_MODELS})"
        )
    return ""


def _interval(samples: np.ndarray, confidence: float, kind: str) -> Interval:
    """``[q_{α/2}, q_{1-α/2}]`` of the bootstrap replicates that are defined (not NaN)."""
    ok = samples[~np.isnan(samples)]
    if len(ok) == 0:
        return Interval(float("nan"), float("nan"), 0, len(samples), kind, "ρ undefined on every resample")
    alpha = 1.0 - confidence
    low, high = np.quantile(ok, [alpha / 2, 1 - alpha / 2])
    return Interval(float(low), float(high), len(ok), len(samples) - len(ok), kind)


def _no_interval(u: Units, reason: str) -> Interval:
    return Interval(float("nan"), float("nan"), 0, 0, u.kind, reason)


def _bootstrap_ci(
    v: View, statistic: Callable[[np.ndarray], np.ndarray], n_resamples: int, seed: int, confidence: float
) -> Interval:
    """The percentile interval of ``statistic(weights)`` over the resamples; NaN if too few units."""
    if reason := too_few_units(v.units):
        return _no_interval(v.units, reason)
    return _interval(statistic(_bootstrap_weights(v.units, n_resamples, seed)), confidence, v.units.kind)


# --- the two views: across models, within families (module docstring) ------------------


@dataclass(frozen=True)
class Pooling:
    """The models that enter a pooled within-family statistic (``used``, a mask over the input models),
    their family codes (0..F-1, order of first appearance), family -> size of the families used and of
    those left out (fewer than MIN_FAMILY_SIZE models)."""

    used: np.ndarray
    codes: np.ndarray
    sizes: dict[str, int]
    excluded: dict[str, int]

    @property
    def count(self) -> int:
        return len(self.sizes)


def pooling(families: Sequence[str] | None, n: int) -> Pooling:
    """Which of ``n`` models enter the within-family view; TooFewModelsError if no family can."""
    if families is None:
        raise ValueError("the within-family view needs one family label per model")
    labels = [str(label) for label in families]
    if len(labels) != n:
        raise ValueError(f"{len(labels)} family labels for {n} models")
    sizes = Counter(labels)
    used_sizes = {f: k for f, k in sizes.items() if k >= MIN_FAMILY_SIZE}
    if not used_sizes:
        listed = ", ".join(f"{f} ({k})" for f, k in sizes.items())
        raise TooFewModelsError(
            f"no family has at least {MIN_FAMILY_SIZE} models (families: {listed}); the within-family "
            "view needs one"
        )
    order = {f: i for i, f in enumerate(used_sizes)}
    used = np.array([label in order for label in labels])
    codes = np.array([order[label] for label in labels if label in order], dtype=np.int64)
    excluded = {f: k for f, k in sizes.items() if f not in order}
    return Pooling(used, codes, used_sizes, excluded)


def _centred(v: np.ndarray, codes: np.ndarray, ranks: bool = True) -> np.ndarray:
    """Ranks within each family minus ``(n_g + 1)/2`` (exact); ``ranks=False``: minus the family mean."""
    out = np.empty(v.shape)
    for g in np.unique(codes):
        members = codes == g
        if ranks:
            out[members] = stats.rankdata(v[members], axis=0) - (members.sum() + 1) / 2
        else:
            out[members] = 0.0 if _constant(v[members]) else v[members] - v[members].mean()
    return out


@dataclass(frozen=True)
class View:
    """The models a resampling statistic uses, its units and strata, and their ranks: over the models
    (recomputed per resample), or (``codes``) centred within each family (unchanged by resampling).
    """

    used: np.ndarray
    units: Units
    strata: np.ndarray
    codes: np.ndarray | None = None

    def ranks(self, v: np.ndarray) -> np.ndarray:
        """The used models' ranks of ``v`` (n,) or of each column of ``v`` (n, k)."""
        v = v[self.used]
        return stats.rankdata(v, axis=0) if self.codes is None else _centred(v, self.codes)

    def resampled(self, v: np.ndarray, weights: np.ndarray) -> np.ndarray:
        """The ranks of ``v`` on each resample (``weights`` (B, m)): (B, m), or (B, m, k) for (n, k)."""
        if self.codes is not None:
            return self.ranks(v)
        v = v[self.used]
        if v.ndim == 1:
            return _weighted_ranks(v, weights)
        return np.stack([_weighted_ranks(column, weights) for column in v.T], axis=-1)

    def reranked(self, swapped: np.ndarray) -> np.ndarray:
        """Ranks of rows mixing two rows' ranks (a swap pattern); within families they are ranks already."""
        return stats.rankdata(swapped, axis=1) if self.codes is None else swapped


def view(families: Sequence[str] | None, n: int, within: bool = False) -> View:
    """The view of ``n`` models (:class:`View`); within families, TooFewModelsError if no family can enter."""
    if not within:
        u = units(families, n)
        return View(np.ones(n, dtype=bool), u, u.strata)
    p = pooling(families, n)
    m = int(p.used.sum())
    if p.count == 1:  # the family's models are the units
        return View(p.used, Units(np.arange(m), m, "models", 1), np.zeros(m, dtype=np.int64))
    return View(p.used, Units(p.codes, p.count, "families", p.count), p.codes, p.codes)


# --- resampling statistics of either view ---------------------------------------------------


def bootstrap_spearman_ci(
    x: np.ndarray,
    y: np.ndarray,
    *,
    families: Sequence[str] | None = None,
    within: bool = False,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Interval:
    """Percentile (family-cluster) bootstrap CI of ρ, or of ρ_W ``within`` families."""
    x, y = _check(x, y)
    v = view(families, len(x), within)
    return _bootstrap_ci(
        v, lambda w: _row_pearson(v.resampled(x, w), v.resampled(y, w), w), n_resamples, seed, confidence
    )


def bootstrap_spearman_samples(
    x: np.ndarray,
    y: np.ndarray,
    *,
    families: Sequence[str] | None = None,
    within: bool = False,
    n_resamples: int = 2000,
    seed: int = 0,
) -> np.ndarray:
    """The ``n_resamples`` bootstrap replicates of ρ (or ρ_W), NaN where undefined; no minimum of units."""
    x, y = _check(x, y)
    v = view(families, len(x), within)
    w = _bootstrap_weights(v.units, n_resamples, seed)
    return _row_pearson(v.resampled(x, w), v.resampled(y, w), w)


@functools.lru_cache(maxsize=4)
def _permutations_within(strata: tuple[int, ...], n: int, seed: int) -> np.ndarray:
    """(n, len) read-only index rows permuting within each stratum; cached for the pairs of one model set."""
    codes, m = np.asarray(strata), len(strata)
    rng = np.random.default_rng(seed)
    if len(set(strata)) == 1:
        index = rng.permuted(np.broadcast_to(np.arange(m), (n, m)), axis=1)
    else:
        base = np.argsort(codes, kind="stable")  # positions grouped by stratum
        index = np.empty((n, m), dtype=np.intp)
        index[:, base] = np.argsort(codes[None, :] * 2.0 + rng.random((n, m)), axis=1)
    index.flags.writeable = False
    return index


def permutation_p_spearman(
    x: np.ndarray,
    y: np.ndarray,
    *,
    families: Sequence[str] | None = None,
    within: bool = False,
    n_permutations: int = 10000,
    seed: int = 0,
) -> float:
    """Two-sided (within-stratum) permutation p of ρ, or of ρ_W ``within`` families; NaN if undefined."""
    x, y = _check(x, y)
    v = view(families, len(x), within)
    rx, ry = v.ranks(x), v.ranks(y)
    observed = float(_row_pearson(rx, ry))
    if np.isnan(observed) or (v.units.kind == "models" and too_few_units(v.units)):
        return float("nan")
    # Permuting y's ranks keeps the tie structure, so ρ of a permutation = r(rx, ry[perm]).
    null = _row_pearson(rx, ry[_permutations_within(tuple(v.strata.tolist()), n_permutations, seed)])
    return _two_sided(null, observed)


def _two_sided(null: np.ndarray, observed: float) -> float:
    """``min(1, 2·min(p_≥, p_≤))`` with ``p = (1 + #)/(1 + B)``; ties within 1e-12 count as extreme."""
    tol = 1e-12 * max(1.0, abs(observed))
    high = (1 + int((null >= observed - tol).sum())) / (1 + len(null))
    low = (1 + int((null <= observed + tol).sum())) / (1 + len(null))
    return min(1.0, 2 * min(high, low))


def adjust_pvalues(p: Sequence[float] | np.ndarray, method: str = "holm") -> np.ndarray:
    """Adjusted p-values (``statsmodels`` ``multipletests``: ``"holm"`` or ``"fdr_bh"``); NaN stays NaN."""
    from statsmodels.stats.multitest import multipletests

    if method not in ("holm", "fdr_bh"):
        raise ValueError(f"p-value adjustment {method!r}: use 'holm' or 'fdr_bh'")
    p = np.asarray(p, dtype=np.float64)
    out = np.full(p.shape, np.nan)
    ok = np.isfinite(p)
    if ok.any():
        out[ok] = multipletests(p[ok], method=method)[1]
    return out


@dataclass(frozen=True)
class Difference:
    """``mean ρ(a) − mean ρ(b)`` with its (cluster-)bootstrap CI and the paired swap test's p."""

    mean_a: float
    mean_b: float
    difference: float
    low: float
    high: float
    p: float  # two-sided, of the paired swap test
    p_min: float  # the smallest p it can give with these units (2/2^U when exact)
    exact: bool
    n: int
    n_families: int
    n_units: int
    units: str
    n_used: int
    reason: str = ""


def _mean_rho(rx: np.ndarray, ry: np.ndarray, weights: np.ndarray | None = None) -> np.ndarray:
    """Mean over columns j of r(rx, ry[..., j]); rx (..., n), ry (..., n, k)."""
    return np.mean([_row_pearson(rx, ry[..., j], weights) for j in range(ry.shape[-1])], axis=0)


def _swap_patterns(u: Units, n_permutations: int, seed: int) -> tuple[np.ndarray, bool]:
    """(P, n) swap masks (a unit's models swapped together): all ``2^U`` if ``2^U <= n_permutations``."""
    exact = 2**u.count <= n_permutations
    if exact:
        patterns = (np.arange(2**u.count)[:, None] >> np.arange(u.count)[None, :]) & 1
    else:
        patterns = np.random.default_rng(seed).integers(0, 2, size=(n_permutations, u.count))
    return patterns[:, u.codes].astype(bool), exact


def _swap_p(null: np.ndarray, observed: float, exact: bool, n_units: int) -> tuple[float, float]:
    """Two-sided p of the paired swap test and the smallest p it can give (module docstring)."""
    extreme = int((np.abs(null) >= abs(observed) - 1e-12).sum())
    p = extreme / len(null) if exact else (1 + extreme) / (1 + len(null))
    return (p if np.isfinite(observed) else float("nan")), (2 / 2**n_units if exact else 1 / (1 + len(null)))


def _targets(a: np.ndarray, targets: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``a`` (n,) and ``targets`` (n, k >= 1) as checked float arrays (no NaN, at least MIN_MODELS)."""
    a = np.asarray(a, dtype=np.float64)
    y = np.asarray(targets, dtype=np.float64)
    if y.ndim != 2 or y.shape[0] != len(a) or y.shape[1] == 0 or np.isnan(y).any():
        raise ValueError(f"targets must be (n_models={len(a)}, k>=1) without NaN, got shape {y.shape}")
    a, _ = _check(a, y[:, 0])
    return a, y


def mean_spearman_difference(
    a: np.ndarray,
    b: np.ndarray,
    targets: np.ndarray,
    *,
    families: Sequence[str] | None = None,
    within: bool = False,
    n_resamples: int = 2000,
    n_permutations: int = 10000,
    confidence: float = 0.95,
    seed: int = 0,
) -> Difference:
    """Δ of the mean ρ (or ρ_W) of rows ``a``, ``b`` over the columns of ``targets`` (n, k), CI and swap
    test; resamples with some ρ undefined are left out (``n_used`` counts the others)."""
    a, b = _check(a, b)
    a, y = _targets(a, targets)
    v = view(families, len(a), within)
    u = v.units
    ra, rb, ry = v.ranks(a), v.ranks(b), v.ranks(y)
    mean_a, mean_b = float(_mean_rho(ra, ry)), float(_mean_rho(rb, ry))
    observed = mean_a - mean_b

    def delta(w: np.ndarray) -> np.ndarray:
        wy = v.resampled(y, w)
        return _mean_rho(v.resampled(a, w), wy, w) - _mean_rho(v.resampled(b, w), wy, w)

    ci = _bootstrap_ci(v, delta, n_resamples, seed, confidence)
    swap, exact = _swap_patterns(u, n_permutations, seed)
    sa, sb = v.reranked(np.where(swap, rb, ra)), v.reranked(np.where(swap, ra, rb))
    null = _mean_rho(sa, ry[None]) - _mean_rho(sb, ry[None])
    p, p_min = _swap_p(null, observed, exact, u.count)
    return Difference(
        mean_a, mean_b, observed, ci.low, ci.high, p, p_min, exact, int(v.used.sum()), u.n_families, u.count,
        u.kind, ci.n_used, too_few_units(u),
    )  # fmt: skip


def mean_spearman_ci(
    a: np.ndarray,
    targets: np.ndarray,
    *,
    families: Sequence[str] | None = None,
    within: bool = False,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, Interval]:
    """Mean over the columns of ``targets`` of ρ(a, column) (or ρ_W) and its cluster-bootstrap CI."""
    a, y = _targets(a, targets)
    v = view(families, len(a), within)
    mean = float(_mean_rho(v.ranks(a), v.ranks(y)))

    def samples(w: np.ndarray) -> np.ndarray:
        return _mean_rho(v.resampled(a, w), v.resampled(y, w), w)

    return mean, _bootstrap_ci(v, samples, n_resamples, seed, confidence)


def partial_spearman(x: np.ndarray, y: np.ndarray, z: np.ndarray) -> float:
    """Spearman's ρ of ``x`` and ``y`` controlling for ``z`` (see module docstring)."""
    x, y = _check(x, y)
    _, z = _check(x, z)
    return float(_partial(np.asarray(spearman(x, y)), np.asarray(spearman(x, z)), np.asarray(spearman(y, z))))


def _partial(rxy: np.ndarray, rxz: np.ndarray, ryz: np.ndarray) -> np.ndarray:
    """``(ρ_xy − ρ_xz ρ_yz) / sqrt((1 − ρ_xz²)(1 − ρ_yz²))``, NaN where the denominator is ~0."""
    den = np.sqrt((1 - rxz**2) * (1 - ryz**2))
    with np.errstate(invalid="ignore", divide="ignore"):
        out = (rxy - rxz * ryz) / den
    return np.where(np.isfinite(den) & (den > 1e-12), out, np.nan)


def mean_partial_spearman_ci(
    a: np.ndarray,
    targets: np.ndarray,
    z: np.ndarray,
    *,
    families: Sequence[str] | None = None,
    n_resamples: int = 2000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, Interval]:
    """Mean over the columns ``y_j`` of ``targets`` of the partial ρ (on the ranks) of ``a``, ``y_j`` given
    ``z``, over the defined columns; its CI as :func:`mean_spearman_ci`.
    """
    a, z = _check(a, z)
    a, y = _targets(a, targets)
    v = view(families, len(a))

    def per_column(ra: np.ndarray, rz: np.ndarray, ry: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
        raz = _row_pearson(ra, rz, w)
        return np.stack(
            [_partial(_row_pearson(ra, c, w), raz, _row_pearson(c, rz, w)) for c in np.moveaxis(ry, -1, 0)]
        )

    point = per_column(v.ranks(a), v.ranks(z), v.ranks(y))
    point = point[np.isfinite(point)]
    mean = float(point.mean()) if len(point) else float("nan")

    def samples(w: np.ndarray) -> np.ndarray:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)  # a resample where every column is undefined
            return np.nanmean(per_column(v.resampled(a, w), v.resampled(z, w), v.resampled(y, w), w), axis=0)

    return mean, _bootstrap_ci(v, samples, n_resamples, seed, confidence)


# --- point estimates of the within-family view (module docstring) ----------------------


def within_spearman(x: np.ndarray, y: np.ndarray, *, families: Sequence[str]) -> float:
    """Pooled within-family Spearman ρ_W (module docstring); NaN if a side is constant in every family."""
    x, y = _check(x, y)
    p = pooling(families, len(x))
    return float(_row_pearson(_centred(x[p.used], p.codes), _centred(y[p.used], p.codes)))


def family_spearman(x: np.ndarray, y: np.ndarray, families: Sequence[str]) -> dict[str, tuple[int, float]]:
    """Each family's own Spearman ρ_g, ``{family: (k, ρ_g)}``, largest family first (ties by name); NaN
    below :data:`MIN_FAMILY_SIZE` models or with a constant side."""
    x, y = _check(x, y)
    labels = [str(label) for label in families]
    if len(labels) != len(x):
        raise ValueError(f"{len(labels)} family labels and {len(x)} models: they must be equally long")
    out: dict[str, tuple[int, float]] = {}
    for family, k in sorted(Counter(labels).items(), key=lambda item: (-item[1], item[0])):
        members = np.array([label == family for label in labels])
        out[family] = (k, spearman(x[members], y[members]) if k >= MIN_FAMILY_SIZE else float("nan"))
    return out


def within_pearson(x: np.ndarray, y: np.ndarray, *, families: Sequence[str]) -> float:
    """Pooled within-family Pearson r_W: Pearson's r of the values centred by their family mean."""
    x, y = _check(x, y)
    p = pooling(families, len(x))
    return float(_row_pearson(_centred(x[p.used], p.codes, False), _centred(y[p.used], p.codes, False)))


def within_partial_spearman(x: np.ndarray, y: np.ndarray, z: np.ndarray, *, families: Sequence[str]) -> float:
    """ρ_W of ``x`` and ``y`` controlling for ``z``: the partial-correlation formula with ρ_W."""
    x, y = _check(x, y)
    _, z = _check(x, z)
    rho = [np.asarray(within_spearman(p, q, families=families)) for p, q in ((x, y), (x, z), (y, z))]
    return float(_partial(*rho))
