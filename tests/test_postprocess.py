"""Post-processing estimators (issue 28): each against an independent computation (numpy's
SVD / eigh, scikit-learn's PCA, the formula by hand), scikit-learn's own estimator checks,
and a ``Pipeline``. No model, no data set: fast."""

from __future__ import annotations

import pickle
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest
from sklearn.base import BaseEstimator, clone
from sklearn.decomposition import PCA
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.utils.estimator_checks import parametrize_with_checks

from mteb_evalrank.evaluation import ranking
from mteb_evalrank.models import postprocess
from mteb_evalrank.models.postprocess import ABTT, PCRemoval, Truncation, Whitening, ZNorm


@pytest.fixture(scope="module")
def anisotropic() -> np.ndarray:
    rng = np.random.default_rng(0)
    return rng.normal(size=(300, 12)) @ rng.normal(size=(12, 12)) + rng.normal(size=12) * 3


def abtt_by_hand(x: np.ndarray, rows: np.ndarray, d: int) -> np.ndarray:
    """``(r - mu) - ((r - mu) P^T) P``, ``P`` the top-``d`` components of scikit-learn's PCA of ``x``."""
    pcs = PCA(n_components=d).fit(x).components_
    centred = rows - x.mean(axis=0)
    return centred - (centred @ pcs.T) @ pcs


# ------------------------------------------------------------------ the formulas
@pytest.mark.parametrize("solver", ["full", "covariance_eigh"])
def test_abtt_removes_mean_and_top_components(anisotropic: np.ndarray, solver: str) -> None:
    x = anisotropic
    abtt = ABTT(2, svd_solver=solver).fit(x)
    y = abtt.transform(x)
    assert y.dtype == np.float64 and y.shape == x.shape
    np.testing.assert_allclose(y, abtt_by_hand(x, x, 2), atol=1e-10)
    np.testing.assert_allclose(y.mean(axis=0), 0, atol=1e-10)
    row = x[:1] + 1.0  # a new row: same formula
    np.testing.assert_allclose(abtt.transform(row), abtt_by_hand(x, row, 2), atol=1e-10)
    np.testing.assert_allclose(abtt.components_ @ abtt.components_.T, np.eye(2), atol=1e-12)


def test_abtt_default_is_mu_and_viswanaths_rule() -> None:
    rng = np.random.default_rng(2)
    x = rng.normal(size=(500, 384)) * np.linspace(5, 1, 384)
    assert ABTT().fit(x).components_.shape == (4, 384)  # ceil(384 / 100)
    assert postprocess.abtt_components(50) == 1 and postprocess.abtt_components(384) == 4


def test_whitening_gives_identity_covariance(anisotropic: np.ndarray) -> None:
    y = Whitening().fit_transform(anisotropic)
    np.testing.assert_allclose(np.cov(y, rowvar=False), np.eye(12), atol=1e-10)
    np.testing.assert_allclose(y.mean(axis=0), 0, atol=1e-10)
    reduced = Whitening(n_components=4).fit(anisotropic)
    z = reduced.transform(anisotropic)
    assert z.shape == (300, 4)
    np.testing.assert_allclose(np.cov(z, rowvar=False), np.eye(4), atol=1e-10)
    # k=4 keeps the 4 largest-variance directions: the columns lie in the top-4 PC subspace
    pcs = PCA(n_components=4).fit(anisotropic).components_
    w = reduced.whitening_matrix_
    np.testing.assert_allclose(pcs.T @ pcs @ w, w, atol=1e-8)
    np.testing.assert_allclose(reduced.explained_variance_, np.linalg.eigvalsh(np.cov(anisotropic.T))[::-1])


def test_pc_removal_is_uncentred(anisotropic: np.ndarray) -> None:
    x = anisotropic
    y = PCRemoval().fit_transform(x)
    _, vectors = np.linalg.eigh(x.T @ x)  # independent: top eigenvector of X^T X, no centring
    u = vectors[:, -1]
    np.testing.assert_allclose(y @ u, 0, atol=1e-9)
    np.testing.assert_allclose(y, x - np.outer(x @ u, u), atol=1e-10)
    assert np.abs(y.mean(axis=0)).max() > 0.1  # not centred


def test_znorm_rows_have_unit_length(anisotropic: np.ndarray) -> None:
    x = anisotropic
    y = ZNorm().fit_transform(x)
    z = (x - x.mean(0)) / x.std(0)
    np.testing.assert_allclose(y, z / np.linalg.norm(z, axis=1, keepdims=True), atol=1e-12)
    np.testing.assert_allclose(np.linalg.norm(y, axis=1), 1, atol=1e-12)


def test_truncation_is_the_first_columns(anisotropic: np.ndarray) -> None:
    out = Truncation(5).transform(anisotropic)  # stateless: no fit needed
    np.testing.assert_array_equal(out, anisotropic[:, :5])
    out[0, 0] = 1e9  # a copy, not a view of the input
    assert anisotropic[0, 0] != 1e9
    np.testing.assert_array_equal(Truncation().fit_transform(anisotropic), anisotropic)
    with pytest.raises(ValueError, match=r"n_components must be in \[1, n_features = 12\]"):
        Truncation(13).fit(anisotropic)


@pytest.mark.parametrize("kind", postprocess.KINDS)
def test_degenerate_input_gives_finite_zeros(kind: str) -> None:
    constant = np.tile(np.array([[0.3, -1.7, 2.1, 0.0]], dtype=np.float32), (50, 1))
    estimator = postprocess.make_postprocessor(kind).fit(constant)
    out = estimator.transform(constant)
    assert np.isfinite(out).all() and not out.any()
    # one constant dimension among varying ones: finite
    rng = np.random.default_rng(1)
    x = rng.normal(size=(50, 4)).astype(np.float32)
    x[:, 2] = 5.0
    assert np.isfinite(postprocess.make_postprocessor(kind).fit_transform(x)).all()
    # a constant encoder does not rank: whole-background MRR with random tie-breaking ~ H(n)/n
    counts = ranking.rank_counts_all(out, list(range(0, 50, 2)), list(range(1, 50, 2)))["cosine"]
    assert ranking.rank_metrics(counts)["mrr"] == pytest.approx(sum(1 / r for r in range(1, 50)) / 49)


def test_zoo_kinds_are_the_papers_settings() -> None:
    kinds = {kind: postprocess.make_postprocessor(kind) for kind in postprocess.KINDS}
    assert [type(e) for e in kinds.values()] == [ABTT, Whitening, PCRemoval, ZNorm]
    assert kinds["abtt"].get_params() == {"n_components": None, "svd_solver": "full"}
    assert kinds["whiten"].get_params() == {"n_components": None}
    assert kinds["pcr"].get_params() == {"n_components": 1}
    with pytest.raises(ValueError, match="unknown post-processing"):
        postprocess.make_postprocessor("pca")


def test_bad_inputs_are_rejected(anisotropic: np.ndarray) -> None:
    with pytest.raises(ValueError, match="2D array"):
        ZNorm().fit(np.ones(5))
    bad = anisotropic.copy()
    bad[7, 3] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        ABTT(2).fit(bad)
    with pytest.raises(ValueError, match="1 sample"):
        Whitening().fit(anisotropic[:1])
    with pytest.raises(ValueError, match="more than 3 fit rows"):
        ABTT(3).fit(anisotropic[:3])
    with pytest.raises(ValueError, match=r"in \[1, n_features - 1\], got 12"):
        PCRemoval(12).fit(anisotropic)
    with pytest.raises(ValueError, match="svd_solver"):
        ABTT(svd_solver="randomized").fit(anisotropic)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="X has 3 features, but ZNorm is expecting 12 features"):
        ZNorm().fit(anisotropic).transform(anisotropic[:, :3])
    with pytest.raises(NotFittedError):
        ABTT().transform(anisotropic)


# ------------------------------------------------------------------ scikit-learn's contract
ESTIMATORS = [
    ABTT(),
    ABTT(svd_solver="covariance_eigh"),
    PCRemoval(),
    Whitening(),
    Whitening(n_components=1),
    ZNorm(),
    Truncation(),
]


@parametrize_with_checks(ESTIMATORS)
def test_sklearn_estimator_checks(estimator: BaseEstimator, check: Callable[[BaseEstimator], Any]) -> None:
    """Every check of ``check_estimator`` passes; only ``check_array_api_input`` skips itself (it
    runs when ``SCIPY_ARRAY_API=1`` is set; the estimators are numpy only and do not declare
    array-API support)."""
    check(estimator)


def test_estimators_work_in_a_pipeline(anisotropic: np.ndarray) -> None:
    """z-normalise, then ABTT: the pipeline equals the two fits by hand, and clones and pickles."""
    pipeline = make_pipeline(ZNorm(), ABTT(n_components=2))
    y = pipeline.fit_transform(anisotropic)
    z = ZNorm().fit_transform(anisotropic)
    np.testing.assert_allclose(y, abtt_by_hand(z, z, 2), atol=1e-10)
    again = pickle.loads(pickle.dumps(pipeline))
    # the same input as the original's (a 5-row product may take another BLAS kernel than the whole
    # matrix's, which changes the last bit: the CI run of 2026-11-29 saw 1e-17 differences)
    np.testing.assert_array_equal(again.transform(anisotropic[:5]), pipeline.transform(anisotropic[:5]))
    tuned = clone(pipeline).set_params(abtt__n_components=3).fit(anisotropic)
    assert tuned.named_steps["abtt"].components_.shape == (3, 12)
    whitened = Pipeline([("whiten", Whitening(n_components=4)), ("cut", Truncation(2))]).fit(anisotropic)
    np.testing.assert_array_equal(
        whitened.transform(anisotropic), Whitening(n_components=4).fit_transform(anisotropic)[:, :2]
    )
