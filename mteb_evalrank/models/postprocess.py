"""Post-processing of embeddings, as the papers define it: pure numpy, fitted once, applied to any rows.

Every transform here is affine, optionally followed by L2 normalisation::

    y = (x - mean) @ matrix                       (matrix: d_in x d_out)
    y <- y / ||y||   if unit_length (a zero row stays zero)

* **ABTT** "all-but-the-top" (Mu and Viswanath, ICLR 2018): ``mean = mu`` (mean of the fit
  rows), ``u_1..u_D`` the top-``D`` principal directions of ``X - mu``, ``matrix = I - U U^T``,
  i.e. ``y = (x - mu) - sum_i (u_i . (x - mu)) u_i``. Rule of thumb ``D ~ d / 100``.
* **Whitening** (Su et al., 2021, "Whitening sentence representations"): ``mean = mu``,
  ``Sigma = cov(X)`` (``np.cov``, ``n - 1`` denominator), ``Sigma = U diag(S) U^T`` (SVD),
  ``matrix = (U diag(S^-1/2))[:, :k]``; the fit rows then have identity covariance.
* **Principal-component removal** (Arora, Liang and Ma, ICLR 2017, "SIF"): no centring,
  ``u_1..u_D`` the top right singular vectors of ``X`` itself, ``y = x - sum_i u_i u_i^T x``.
* **z-normalisation + unit length** (Eger, Rücklé and Gurevych, 2019): per dimension
  ``(x_j - mu_j) / sigma_j`` (population std), then ``y / ||y||``.
* **Truncation** (Eger et al.: "size matters"): the first ``k`` dimensions, no fit.

Degenerate input (e.g. a constant encoder): a direction whose spread is below the float32
resolution of the data (``sigma <= 1e-7 * max|X|``) is mapped to 0 instead of being divided
by ~0, and the residual of a projection that is only rounding noise
(``||y|| <= 1e-6 ||x - mean||``) is set to the zero vector. A constant encoder therefore
gives all-zero, finite output (no NaN, no noise that could rank well).

Why hand-written: scikit-learn's PCA always centres (Arora et al.'s removal must not), has
no whitening with the ``n - 1`` covariance of Su et al. and no zero-variance guard; the
exact SVD of numpy is a few lines and deterministic.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

#: Spread below this share of ``max|X|`` is float32 rounding, treated as zero variance.
FLOAT32_RESOLUTION = 1e-7
#: A projection residual below this share of ``||x - mean||`` is rounding noise -> zero.
RESIDUAL_RTOL = 1e-6

KINDS = ("abtt", "whiten", "pcr", "znorm")


@dataclass(frozen=True, eq=False)
class Transform:
    """A fitted ``y = (x - mean) @ matrix`` (+ optional unit length); apply with ``transform(X)``."""

    kind: str
    mean: NDArray[np.float64]
    """``(d_in,)``."""
    matrix: NDArray[np.float64]
    """``(d_in, d_out)``."""
    unit_length: bool = False
    residual_rtol: float = 0.0
    """Rows with ``||y|| <= residual_rtol * ||x - mean||`` become 0 (projections only)."""

    @property
    def in_dim(self) -> int:
        return int(self.matrix.shape[0])

    @property
    def out_dim(self) -> int:
        return int(self.matrix.shape[1])

    def __call__(self, embeddings: ArrayLike) -> NDArray[np.float32]:
        x = _check(embeddings, what=f"{self.kind} input")
        if x.shape[1] != self.in_dim:
            raise ValueError(f"{self.kind}: fitted on {self.in_dim}-d rows, got {x.shape[1]}-d rows.")
        centred = x - self.mean
        y = centred @ self.matrix
        norms = np.linalg.norm(y, axis=1)
        if self.residual_rtol > 0:
            noise = norms <= self.residual_rtol * np.linalg.norm(centred, axis=1)
            y[noise] = 0.0
            norms[noise] = 0.0
        if self.unit_length:
            y = np.divide(y, norms[:, None], out=np.zeros_like(y), where=norms[:, None] > 0)
        return y.astype(np.float32)


def _check(embeddings: ArrayLike, *, what: str, min_rows: int = 1) -> NDArray[np.float64]:
    x = np.array(embeddings, dtype=np.float64)  # a copy: callers may modify the result
    if x.ndim != 2:
        raise ValueError(f"{what}: expected a 2-D (rows, dims) array, got shape {x.shape}.")
    if x.shape[0] < min_rows:
        raise ValueError(f"{what}: needs at least {min_rows} rows, got {x.shape[0]}.")
    if x.shape[1] < 1:
        raise ValueError(f"{what}: rows have no dimensions.")
    if not np.isfinite(x).all():
        bad = int(np.flatnonzero(~np.isfinite(x).all(axis=1))[0])
        raise ValueError(f"{what}: non-finite value (NaN or inf) in row {bad}.")
    return x


def _floor(x: NDArray[np.float64]) -> float:
    """Spread at or below which a direction counts as constant (float32 resolution of ``x``)."""
    return FLOAT32_RESOLUTION * float(np.abs(x).max())


def _top_directions(x: NDArray[np.float64], d: int, kind: str) -> NDArray[np.float64]:
    """``(dim, d)``: the top-``d`` right singular vectors of ``x`` (exact SVD)."""
    if not 1 <= d < x.shape[1]:
        raise ValueError(f"{kind}: the number of directions must be in [1, {x.shape[1] - 1}], got {d}.")
    if x.shape[0] <= d:
        raise ValueError(f"{kind}: removing {d} directions needs more than {d} fit rows, got {x.shape[0]}.")
    _, _, vt = np.linalg.svd(x, full_matrices=False)
    return vt[:d].T


def fit_abtt(embeddings: ArrayLike, d: int) -> Transform:
    """All-but-the-top (Mu and Viswanath, 2018): remove the mean and the top-``d`` PCs."""
    x = _check(embeddings, what="abtt fit", min_rows=2)
    mean = x.mean(axis=0)
    u = _top_directions(x - mean, d, "abtt")
    return Transform("abtt", mean, np.eye(x.shape[1]) - u @ u.T, residual_rtol=RESIDUAL_RTOL)


def fit_pc_removal(embeddings: ArrayLike, d: int = 1) -> Transform:
    """Common-component removal (Arora et al., 2017): ``x - sum_i u_i u_i^T x``, no centring."""
    x = _check(embeddings, what="pcr fit", min_rows=2)
    u = _top_directions(x, d, "pcr")
    return Transform("pcr", np.zeros(x.shape[1]), np.eye(x.shape[1]) - u @ u.T, residual_rtol=RESIDUAL_RTOL)


def fit_whitening(embeddings: ArrayLike, k: int | None = None) -> Transform:
    """Whitening (Su et al., 2021): ``(x - mu) U S^-1/2``, first ``k`` columns (all if ``None``).

    Directions with ``sqrt(S) <= 1e-7 max|X|`` (zero variance) get weight 0, not ``1/0``.
    """
    x = _check(embeddings, what="whitening fit", min_rows=2)
    dim = x.shape[1]
    k = dim if k is None else k
    if not 1 <= k <= dim:
        raise ValueError(f"whitening: k must be in [1, {dim}], got {k}.")
    mean = x.mean(axis=0)
    u, s, _ = np.linalg.svd(np.cov(x, rowvar=False).reshape(dim, dim))
    std = np.sqrt(np.clip(s, 0.0, None))
    keep = std > _floor(x)
    scale = np.divide(1.0, std, out=np.zeros_like(std), where=keep)
    return Transform("whiten", mean, (u * scale)[:, :k])


def fit_znorm(embeddings: ArrayLike) -> Transform:
    """z-normalisation + unit length (Eger et al., 2019); zero-variance dimensions map to 0."""
    x = _check(embeddings, what="znorm fit", min_rows=2)
    mean, std = x.mean(axis=0), x.std(axis=0)
    scale = np.divide(1.0, std, out=np.zeros_like(std), where=std > _floor(x))
    return Transform("znorm", mean, np.diag(scale), unit_length=True)


def truncation(in_dim: int, k: int) -> Transform:
    """The first ``k`` of ``in_dim`` dimensions (nothing to fit)."""
    if not 1 <= k <= in_dim:
        raise ValueError(f"truncation: k must be in [1, {in_dim}], got {k}.")
    return Transform("truncate", np.zeros(in_dim), np.eye(in_dim)[:, :k])


def abtt_components(dim: int) -> int:
    """Mu and Viswanath's rule of thumb ``D ~ d / 100``, at least 1: ``ceil(d / 100)``."""
    return max(1, math.ceil(dim / 100))


def fitter(kind: str, dim: int) -> Callable[[NDArray[np.floating]], Transform]:
    """The zoo's fit function of ``kind`` for ``dim``-d embeddings (ABTT: ``D = ceil(dim/100)``,
    whitening: all dims, PC removal: ``D = 1``, as Arora et al.)."""
    if kind == "abtt":
        d = abtt_components(dim)
        return lambda x: fit_abtt(x, d)
    if kind == "whiten":
        return fit_whitening
    if kind == "pcr":
        return lambda x: fit_pc_removal(x, 1)
    if kind == "znorm":
        return fit_znorm
    raise ValueError(f"unknown post-processing {kind!r}; expected one of {', '.join(KINDS)}.")
