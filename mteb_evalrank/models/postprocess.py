"""Post-processing of embeddings as the papers define it: scikit-learn transformers (docs/zoo.md).

``X`` is the ``(n, d)`` fit rows, ``mu`` their mean; the maths is float64. A direction with spread
``sigma <= 1e-7 max|X|`` maps to 0 (not ``1 / 0``) and a projection residual
``||y|| <= 1e-6 ||x - mu||`` to the zero vector, so a constant encoder gives all-zero output.
Not scikit-learn's ``PCA``: it always centres (Arora et al.'s removal must not) and has no
``n - 1`` whitening nor zero-variance guard.
"""

from __future__ import annotations

import math
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import BaseEstimator, TransformerMixin
from sklearn.utils.validation import check_is_fitted, validate_data

FLOAT32_RESOLUTION = 1e-7  # spread below this share of max|X|: zero variance
RESIDUAL_RTOL = 1e-6  # a projection residual below this share of ||x - mean||: zero

Float64Array = NDArray[np.float64]


# ------------------------------------------------------------------ shared steps
def _fit_rows(estimator: BaseEstimator, X: ArrayLike) -> Float64Array:
    """``X`` as float64 after scikit-learn's checks (2-D, finite, >= 2 rows); records ``n_features_in_``."""
    rows: Float64Array = validate_data(estimator, X, reset=True, dtype=np.float64, ensure_min_samples=2)
    return rows


def _new_rows(estimator: BaseEstimator, X: ArrayLike) -> Float64Array:
    """``X`` as float64 for ``transform``: the estimator fitted, as many columns as at fit time."""
    check_is_fitted(estimator)
    rows: Float64Array = validate_data(estimator, X, reset=False, dtype=np.float64)
    return rows


def _floor(x: Float64Array) -> float:
    """Spread at or below which a direction counts as constant (float32 resolution of ``x``)."""
    return FLOAT32_RESOLUTION * float(np.abs(x).max())


def _n_directions(n_components: int | None, x: Float64Array, name: str) -> int:
    """The number of directions to remove: ``n_components``, default ``ceil(d / 100)``."""
    n, d = x.shape
    k = abtt_components(d) if n_components is None else n_components
    if not 1 <= k < d:
        raise ValueError(f"{name}: n_components must be in [1, n_features - 1], got {k}; n_features = {d}.")
    if n <= k:
        raise ValueError(f"{name}: removing {k} directions needs more than {k} fit rows, got {n}.")
    return k


def _n_outputs(n_components: int | None, dim: int, name: str) -> int:
    """The number of dimensions kept: ``n_components`` (``None``: all ``dim``), in ``[1, dim]``."""
    k = dim if n_components is None else n_components
    if not 1 <= k <= dim:
        raise ValueError(f"{name}: n_components must be in [1, n_features = {dim}], got {k}.")
    return k


def _top_directions(x: Float64Array, k: int, solver: str = "full") -> Float64Array:
    """``(k, d)``: the top-``k`` right singular vectors of ``x``, by exact SVD (``"full"``) or as the
    top eigenvectors of ``x^T x`` (``"covariance_eigh"``: the same directions)."""
    if solver == "full":
        _, _, vt = np.linalg.svd(x, full_matrices=False)
        return vt[:k]
    _, vectors = np.linalg.eigh(x.T @ x)  # eigenvalues ascending
    top: Float64Array = vectors[:, ::-1][:, :k].T
    return top


def _projection(components: Float64Array) -> Float64Array:
    """``I - U U^T`` with ``U = components^T`` (orthonormal columns)."""
    u = components.T
    matrix: Float64Array = np.eye(u.shape[0]) - u @ u.T
    return matrix


def _drop_noise(y: Float64Array, before: Float64Array) -> Float64Array:
    """Rows with ``||y|| <= 1e-6 ||before||`` (a projection's rounding noise) set to 0."""
    noise = np.linalg.norm(y, axis=1) <= RESIDUAL_RTOL * np.linalg.norm(before, axis=1)
    y[noise] = 0.0
    return y


def abtt_components(dim: int) -> int:
    """Mu and Viswanath's rule of thumb ``D ~ d / 100``, at least 1: ``ceil(d / 100)``."""
    return max(1, math.ceil(dim / 100))


# ------------------------------------------------------------------ estimators
class ABTT(TransformerMixin, BaseEstimator):
    """All-but-the-top (Mu and Viswanath, 2018): ``y = (x - mu) (I - U U^T)``, ``U^T`` the top-``D``
    principal directions of ``X - mu``.

    Args:
        n_components: ``D``, the number of directions removed; ``None``: ``ceil(d / 100)``.
        svd_solver: ``"full"`` (exact SVD of ``X - mu``) or ``"covariance_eigh"`` (eigenvectors of
            ``(X - mu)^T (X - mu)``: the same directions, fast for tall ``X``).

    Fitted attributes: ``mean_`` ``(d,)``, ``components_`` ``(D, d)`` (orthonormal rows),
    ``projection_`` ``(d, d)`` = ``I - U U^T``, ``n_features_in_``.
    """

    def __init__(
        self, n_components: int | None = None, svd_solver: Literal["full", "covariance_eigh"] = "full"
    ) -> None:
        self.n_components = n_components
        self.svd_solver = svd_solver

    def fit(self, X: ArrayLike, y: object = None) -> ABTT:
        x = _fit_rows(self, X)
        k = _n_directions(self.n_components, x, "ABTT")
        if self.svd_solver not in ("full", "covariance_eigh"):
            raise ValueError(f"ABTT: svd_solver is 'full' or 'covariance_eigh', got {self.svd_solver!r}.")
        self.mean_ = x.mean(axis=0)
        self.components_ = _top_directions(x - self.mean_, k, self.svd_solver)
        self.projection_ = _projection(self.components_)
        return self

    def transform(self, X: ArrayLike) -> Float64Array:
        centred = _new_rows(self, X) - self.mean_
        return _drop_noise(centred @ self.projection_, centred)


class PCRemoval(TransformerMixin, BaseEstimator):
    """Principal-component removal (Arora et al., 2017), no centring: ``y = x (I - U U^T)``, ``U^T`` the
    top-``D`` right singular vectors of ``X`` itself (the common component includes the mean).

    Args:
        n_components: ``D``, the number of directions removed (Arora et al.: 1).

    Fitted attributes: ``components_`` ``(D, d)``, ``projection_`` ``(d, d)`` = ``I - U U^T``,
    ``n_features_in_``.
    """

    def __init__(self, n_components: int = 1) -> None:
        self.n_components = n_components

    def fit(self, X: ArrayLike, y: object = None) -> PCRemoval:
        x = _fit_rows(self, X)
        self.components_ = _top_directions(x, _n_directions(self.n_components, x, "PCRemoval"))
        self.projection_ = _projection(self.components_)
        return self

    def transform(self, X: ArrayLike) -> Float64Array:
        x = _new_rows(self, X)
        return _drop_noise(x @ self.projection_, x)


class Whitening(TransformerMixin, BaseEstimator):
    """Whitening (Su et al., 2021): ``y = (x - mu) (U diag(S^-1/2))[:, :k]``, ``cov(X) = U diag(S) U^T``
    (``n - 1`` denominator): the whitened fit rows have identity covariance.

    Args:
        n_components: ``k``, the number of output dimensions (largest variance first);
            ``None``: all ``d``.

    Fitted attributes: ``mean_`` ``(d,)``, ``explained_variance_`` ``(d,)`` (``S``),
    ``whitening_matrix_`` ``(d, k)``, ``n_features_in_``.
    """

    def __init__(self, n_components: int | None = None) -> None:
        self.n_components = n_components

    def fit(self, X: ArrayLike, y: object = None) -> Whitening:
        x = _fit_rows(self, X)
        dim = x.shape[1]
        k = _n_outputs(self.n_components, dim, "Whitening")
        self.mean_ = x.mean(axis=0)
        u, s, _ = np.linalg.svd(np.cov(x, rowvar=False).reshape(dim, dim))
        std = np.sqrt(np.clip(s, 0.0, None))
        scale = np.divide(1.0, std, out=np.zeros_like(std), where=std > _floor(x))
        self.explained_variance_ = s
        self.whitening_matrix_ = (u * scale)[:, :k]
        return self

    def transform(self, X: ArrayLike) -> Float64Array:
        result: Float64Array = (_new_rows(self, X) - self.mean_) @ self.whitening_matrix_
        return result


class ZNorm(TransformerMixin, BaseEstimator):
    """z-normalisation then unit length (Eger et al., 2019): ``z = (x - mu) / sigma``, ``y = z / ||z||``
    (``sigma``: the population standard deviation per dimension; a zero ``z`` stays zero).

    Fitted attributes: ``mean_`` ``(d,)``, ``scale_`` ``(d,)`` (``1 / sigma``, or 0),
    ``n_features_in_``.
    """

    def fit(self, X: ArrayLike, y: object = None) -> ZNorm:
        x = _fit_rows(self, X)
        self.mean_, std = x.mean(axis=0), x.std(axis=0)
        self.scale_ = np.divide(1.0, std, out=np.zeros_like(std), where=std > _floor(x))
        return self

    def transform(self, X: ArrayLike) -> Float64Array:
        z = (_new_rows(self, X) - self.mean_) * self.scale_
        norms = np.linalg.norm(z, axis=1, keepdims=True)
        result: Float64Array = np.divide(z, norms, out=np.zeros_like(z), where=norms > 0)
        return result


class Truncation(TransformerMixin, BaseEstimator):
    """The first ``k = n_components`` dimensions (``None``: all): ``y = x[:k]`` (Eger et al., 2019).
    Stateless: ``transform`` works without ``fit``."""

    def __init__(self, n_components: int | None = None) -> None:
        self.n_components = n_components

    def __sklearn_tags__(self) -> Any:
        tags = super().__sklearn_tags__()
        tags.requires_fit = False
        return tags

    def fit(self, X: ArrayLike, y: object = None) -> Truncation:
        """Check that ``X`` has at least ``k`` columns; nothing is learnt."""
        x = validate_data(self, X, reset=True, dtype=np.float64)
        _n_outputs(self.n_components, x.shape[1], "Truncation")
        return self

    def transform(self, X: ArrayLike) -> Float64Array:
        """The first ``k`` columns of ``X`` (a float64 copy)."""
        x: Float64Array = validate_data(self, X, reset=False, dtype=np.float64)
        return np.array(x[:, : _n_outputs(self.n_components, x.shape[1], "Truncation")])


ESTIMATORS: dict[str, type[TransformerMixin]] = {
    "abtt": ABTT,
    "whiten": Whitening,
    "pcr": PCRemoval,
    "znorm": ZNorm,
}
"""The zoo's post-processings by model name suffix, see :func:`make_postprocessor`."""
KINDS = tuple(ESTIMATORS)


def make_postprocessor(kind: str) -> TransformerMixin:
    """The zoo's (unfitted) post-processing ``kind`` (one of :data:`KINDS`) with default arguments."""
    if kind not in ESTIMATORS:
        raise ValueError(f"unknown post-processing {kind!r}; expected one of {', '.join(KINDS)}.")
    return ESTIMATORS[kind]()


def table_abtt(table: ArrayLike) -> ABTT:
    """``ABTT(ceil(d / 100), svd_solver="covariance_eigh")`` fitted on every row of a word-vector table
    (the ``d x d`` eigenproblem instead of the table's SVD; two float64 copies, ``16 n d`` bytes)."""
    return ABTT(abtt_components(np.shape(table)[1]), svd_solver="covariance_eigh").fit(table)
