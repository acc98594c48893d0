"""The SentEval-protocol classifiers in torch against scikit-learn, on the CPU and on CUDA.

Real data: the EvalRank release's toy GloVe (5,000 words, 50-d) averaged over the words of TREC's
questions (six classes: a softmax) and of MR's sentences (two classes: a sigmoid), read from the
raw data folder with plain Python (``MTEB_EVALRANK_SOURCE``), independent of mteb and
``datasets``, so that the GPU checks run where only numpy, scikit-learn and torch are installed.

* logistic regression: the selections and test accuracies of scikit-learn's
  ``LogisticRegression`` driven to its optimum (``tol = 1e-8``), written out as SentEval's loops;
* MLP: per seed within the spread over seeds of scikit-learn's ``MLPClassifier`` (the previous
  implementation equalled it bit for bit), the same initial weights, split and shuffles;
* on CUDA (where torch sees one; skipped elsewhere, naming why) the same checks.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
import torch
from numpy.typing import NDArray
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import LogisticRegression
from sklearn.model_selection import StratifiedKFold
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

from mteb_evalrank.evaluation import classifiers
from mteb_evalrank.evaluation.classifiers import (
    FIT_DTYPE,
    INNER_FOLDS,
    L2_GRID,
    MLP_BATCH,
    MLP_HIDDEN,
    MLP_HOLDOUT,
    MLP_MAX_EPOCHS,
    MLP_PATIENCE,
    senteval_scores,
)

SOURCE = Path(os.environ.get("MTEB_EVALRANK_SOURCE", Path(__file__).resolve().parents[2] / "shared" / "data"))
RAW = SOURCE / "evalrank"
NO_CUDA = "torch sees no CUDA device here: the classifiers' GPU path is checked where one exists"
DEVICES = [
    "cpu",
    pytest.param("cuda", marks=pytest.mark.skipif(not torch.cuda.is_available(), reason=NO_CUDA)),
]
Split = tuple[NDArray[np.float32], NDArray[np.intp], NDArray[np.float32], NDArray[np.intp]]


def bag_of_words(texts: list[str]) -> NDArray[np.float32]:
    """The mean toy-GloVe vector of each text's lower-cased words (zero when none is known)."""
    lines = (RAW / "word_emb" / "toy_emb.txt").read_text(encoding="utf-8").splitlines()
    index = {line.split(" ", 1)[0]: i for i, line in enumerate(lines)}
    vectors = np.array([[float(v) for v in line.rstrip().split(" ")[1:]] for line in lines])
    out = np.zeros((len(texts), vectors.shape[1]))
    for i, text in enumerate(texts):
        rows = [index[word] for word in text.lower().split() if word in index]
        if rows:
            out[i] = vectors[rows].mean(axis=0)
    return out.astype(FIT_DTYPE)


@pytest.fixture(scope="module")
def trec() -> Split:
    """TREC's coarse classes: the first 1,500 training questions and the 500 test questions."""
    if not (RAW / "word_emb" / "toy_emb.txt").is_file():
        pytest.fail(f"no evalrank/word_emb/toy_emb.txt under {SOURCE}: set MTEB_EVALRANK_SOURCE")
    splits = []
    for name, n in (("train_5500.label", 1500), ("TREC_10.label", 500)):
        lines = (RAW / "sent_classification" / "TREC" / name).read_text(encoding="latin-1").splitlines()[:n]
        splits.append(([line.split(" ", 1)[1] for line in lines], [line.split(":", 1)[0] for line in lines]))
    classes = sorted(set(splits[0][1]))
    (x, y), (xt, yt) = ((bag_of_words(t), np.array([classes.index(c) for c in c_])) for t, c_ in splits)
    return x, y, xt, yt


def sklearn_lr_protocol(x: NDArray, y: NDArray, xt: NDArray, yt: NDArray, seed: int) -> dict[str, tuple]:
    """SentEval's inner 5-fold selection written out with ``LogisticRegression`` at its optimum:
    per normalisation ``(selected lambda, test accuracy)``."""
    out = {}
    with threadpool_limits(limits=1):
        for name, znorm in (("raw", False), ("znorm", True)):

            def fit(a: NDArray, b: NDArray, labels: NDArray, l2: float, znorm: bool = znorm) -> NDArray:
                if znorm:
                    scaler = StandardScaler().fit(a)
                    a, b = scaler.transform(a), scaler.transform(b)
                model = LogisticRegression(C=1 / (len(a) * l2), tol=1e-8, max_iter=20_000)
                return model.fit(a.astype(np.float64), labels).predict(b.astype(np.float64))

            folds = list(StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=seed).split(x, y))
            cv = [
                np.mean([np.mean(fit(x[tr], x[te], y[tr], l2) == y[te]) for tr, te in folds])
                for l2 in L2_GRID
            ]
            l2 = L2_GRID[int(np.argmax(cv))]
            out[name] = (l2, float(np.mean(fit(x, xt, y, l2) == yt)))
    return out


@pytest.fixture(scope="module")
def trec_sklearn(trec: Split) -> dict[str, tuple]:
    """:func:`sklearn_lr_protocol` on TREC, seed 3 (once for every path and device)."""
    return sklearn_lr_protocol(*trec, seed=3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("rows_per_feature", [2, 1000], ids=["preconditioned", "identity"])
def test_logistic_regression_reaches_sklearns_optimum(
    trec: Split,
    trec_sklearn: dict[str, tuple],
    device: str,
    rows_per_feature: int,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With and without the preconditioner (fewer rows per feature than asked: L-BFGS's scaled
    identity; 1,500 rows of 50 features have 29)."""
    monkeypatch.setattr(classifiers, "PRECONDITIONED_ROWS_PER_FEATURE", rows_per_feature)
    fits = SimpleNamespace(l2=torch.tensor([1e-3], device=device), znorm=torch.tensor([False], device=device))
    factors, _ = classifiers._Bound(torch.as_tensor(trec[0], device=device), 6).of(fits)  # type: ignore[arg-type]
    assert bool(len(factors)) == (rows_per_feature == 2)  # the path the parameter names
    scores = senteval_scores(*trec, seed=3, kinds=("lr",), device=device)
    for name in ("raw", "znorm"):
        assert scores[f"lr_l2_{name}"] == trec_sklearn[name][0]
        assert scores[f"lr_accuracy_{name}"] == pytest.approx(
            trec_sklearn[name][1], abs=1.01 / 500
        )  # one question


def test_each_fit_is_normalised_by_its_own_rows(trec: Split) -> None:
    """The selection's fits share their fold's statistics, each fold its own: every z-normalised fit's
    ``mu`` and ``sd`` are ``StandardScaler``'s of its rows, every raw fit's ``0`` and ``1``."""
    x, y = trec[0], trec[1]
    folds = [train for train, _ in StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=3).split(x, y)]
    fits = [(rows, l2, znorm) for znorm in (False, True) for l2 in L2_GRID[:2] for rows in folds]
    problem = classifiers._linear_problem(torch.as_tensor(x, dtype=torch.float64), y, np.unique(y), fits)
    for f, (rows, _, znorm) in enumerate(fits):
        scaler = StandardScaler().fit(x[rows].astype(np.float64))
        mu, sd = (scaler.mean_, scaler.scale_) if znorm else (np.zeros(x.shape[1]), np.ones(x.shape[1]))
        np.testing.assert_allclose(problem.mu[f].numpy(), mu, rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(problem.sd[f].numpy(), sd, rtol=1e-12)
        assert problem.weights[:, f].nonzero().flatten().tolist() == sorted(rows.tolist())


def test_the_refits_reuse_the_bounds_statistics(trec: Split, monkeypatch: pytest.MonkeyPatch) -> None:
    """The fits on every training row (the refits) take the statistics the bound computed for its Gram
    matrix, ``StandardScaler``'s of all rows, without computing them again."""
    x, y = torch.as_tensor(trec[0], dtype=torch.float64), trec[1]
    bound = classifiers._Bound(x, len(np.unique(y)))
    bound.gram(True)
    scale, calls = classifiers._standard_scale, []
    monkeypatch.setattr(classifiers, "_standard_scale", lambda rows: calls.append(len(rows)) or scale(rows))
    everything = np.arange(len(y))
    fits = [(everything, L2_GRID[0], True), (everything[1:], L2_GRID[0], True)]
    fits.append((everything, L2_GRID[1], False))
    problem = classifiers._linear_problem(x, y, np.unique(y), fits, bound)
    assert calls == [len(y) - 1]  # only the fit on other rows
    scaler = StandardScaler().fit(trec[0].astype(np.float64))
    np.testing.assert_allclose(problem.mu[0].numpy(), scaler.mean_, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(problem.sd[0].numpy(), scaler.scale_, rtol=1e-12)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize(
    ("n", "d", "k"), [(40, 7, 1), (30, 55, 1), (40, 7, 3), (12, 30, 6), (16, 7, 1), (15, 7, 1)]
)
def test_the_preconditioner_solves_the_bound(
    n: int, d: int, k: int, device: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The preconditioner's ``M^-1 q`` (``_Bound``'s Cholesky factors) against ``torch.linalg.solve``
    of ``M = c Z^T Z / n + l2 P`` written out (``Z = [z, 1]``, ``P`` the identity but the intercept)
    for fits of mixed penalties and normalisations, fewer features than rows and more, for the
    sigmoid's one column and a softmax's ``k``; by default made only where the rows number at least
    twice the features with the intercept (16 rows of 7 features: made; 15: not)."""
    rng = np.random.default_rng(n + d + k)
    x = torch.as_tensor(rng.standard_normal((n, d)) * rng.uniform(0.1, 10, d) + 3, device=device)
    l2 = torch.tensor([1e-5, 1e-2, 1e-3, 1e-5], dtype=torch.float64, device=device)
    znorm = torch.tensor([False, True, False, True], device=device)
    q = torch.as_tensor(rng.standard_normal((4, d + 1, k)), device=device)
    fits = SimpleNamespace(l2=l2, znorm=znorm)
    bound = classifiers._Bound(x, k)
    factors, _ = bound.of(fits)  # type: ignore[arg-type]
    assert bool(len(factors)) == (n >= 2 * (d + 1))  # Cover's capacity: preconditioned beyond it only
    monkeypatch.setattr(classifiers, "PRECONDITIONED_ROWS_PER_FEATURE", 0)
    monkeypatch.setattr(classifiers, "PRECONDITIONED_CONDITION", 0.0)
    factors, which = bound.of(fits)  # type: ignore[arg-type]
    solved = classifiers._precondition(factors, which, torch.arange(4), q.flatten(1)).view_as(q)
    c = 0.25 if k == 1 else 0.5
    for f in range(4):
        z = (x - x.mean(0)) / x.std(0, correction=0) if znorm[f] else x
        z = torch.cat([z, torch.ones_like(z[:, :1])], dim=1)
        penalty = torch.cat([l2[f].repeat(d), l2.new_zeros(1)])
        m = c * z.T @ z / n + torch.diag(penalty)
        expected = torch.linalg.solve(m, q[f])
        torch.testing.assert_close(solved[f], expected, rtol=1e-7, atol=1e-7 * float(expected.abs().max()))


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("anisotropic", [True, False])
def test_isotropic_rows_get_no_preconditioner(anisotropic: bool, device: str) -> None:
    """Many rows per feature, standard normal (isotropic: each normalisation's ``max_i L_ii^2 / min_i
    L_ii^2`` of the Cholesky factor of ``G = Z^T Z / n``, written out here with numpy, within 2 x ``n / (n
    - d)``, Bartlett's expectation) or with column scales from 0.1 to 10 and a common mean (far beyond
    it): the bound only for the latter."""
    n, d = 400, 7
    rng = np.random.default_rng(11)
    x = rng.standard_normal((n, d))
    if anisotropic:
        x = x * np.geomspace(0.1, 10, d) + 3
    ratios = []
    for z in (x, (x - x.mean(0)) / x.std(0)):
        z = np.hstack([z, np.ones((n, 1))])
        pivots = np.square(np.diag(np.linalg.cholesky(z.T @ z / n)))
        ratios.append(pivots.max() / pivots.min())
    assert (max(ratios) > 2 * n / (n - d)) == anisotropic
    fits = SimpleNamespace(l2=torch.tensor([1e-3], device=device), znorm=torch.tensor([False], device=device))
    factors, _ = classifiers._Bound(torch.as_tensor(x, device=device), 1).of(fits)  # type: ignore[arg-type]
    assert bool(len(factors)) == anisotropic


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("preconditioned", [True, False])
def test_the_two_loop_recursion_is_bfgs_from_the_bound(
    preconditioned: bool, device: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """L-BFGS's direction from ``_Memory`` (``M^-1`` applied once per pair, to the gradient) against
    BFGS written out: ``H = gamma M^-1`` (``M`` solved by ``torch.linalg.inv`` of the bound written
    out, ``gamma = s^T y / y^T M^-1 y`` of the newest pair), then ``H <- (I - rho s y^T) H (I - rho y
    s^T) + rho s s^T`` for the 3 newest of 5 pairs, oldest first; direction ``-H g``. Two fits (raw and
    z-normalised, different penalties), a softmax's 3 columns; with the bound and without (``M = I``)."""
    n, d, k, m = 40, 6, 3, 3
    rng = np.random.default_rng(7)
    x = torch.as_tensor(rng.standard_normal((n, d)) * rng.uniform(0.5, 3, d) + 1, device=device)
    l2 = torch.tensor([1e-3, 1e-2], dtype=torch.float64, device=device)
    znorm = torch.tensor([False, True], device=device)
    monkeypatch.setattr(classifiers, "PRECONDITIONED_ROWS_PER_FEATURE", 1 if preconditioned else 10)
    monkeypatch.setattr(classifiers, "PRECONDITIONED_CONDITION", 0.0)
    factors, which = classifiers._Bound(x, k).of(SimpleNamespace(l2=l2, znorm=znorm))  # type: ignore[arg-type]
    assert bool(len(factors)) == preconditioned
    p = (d + 1) * k
    g = torch.as_tensor(rng.standard_normal((2, d + 1, k)), device=device)
    memory = classifiers._Memory.start(g, m, factors, which)
    pairs = []
    for _ in range(5):
        s = torch.as_tensor(rng.standard_normal((2, p)), device=device)
        a = torch.as_tensor(rng.standard_normal((2, p, p)), device=device)
        y = torch.einsum("fij,fj->fi", a @ a.transpose(1, 2) + torch.eye(p, device=device), s)  # s^T y > 0
        g = g + y.view_as(g)
        memory.remember(torch.arange(2, device=device), s, y, g)
        pairs.append((s, y))
    direction = memory.direction(g, torch.arange(2, device=device)).flatten(1)
    for f in range(2):
        m_inverse = torch.eye(p, dtype=torch.float64, device=device)
        if preconditioned:
            z = (x - x.mean(0)) / x.std(0, correction=0) if znorm[f] else x
            z = torch.cat([z, torch.ones_like(z[:, :1])], dim=1)
            bound = 0.5 * z.T @ z / n + torch.diag(torch.cat([l2[f].repeat(d), l2.new_zeros(1)]))
            per_class = torch.eye(k, dtype=torch.float64, device=device)
            m_inverse = torch.kron(torch.linalg.inv(bound).contiguous(), per_class)
        s, y = pairs[-1][0][f], pairs[-1][1][f]
        h = (s @ y) / (y @ m_inverse @ y) * m_inverse
        for s_all, y_all in pairs[-m:]:
            s, y = s_all[f], y_all[f]
            rho = 1 / (s @ y)
            v = torch.eye(p, dtype=torch.float64, device=device) - rho * torch.outer(y, s)
            h = v.T @ h @ v + rho * torch.outer(s, s)
        expected = -h @ g[f].flatten()
        scale = float(expected.abs().max())
        torch.testing.assert_close(direction[f], expected, rtol=1e-8, atol=1e-10 * scale)


def sklearn_mlp_accuracy(x: NDArray, y: NDArray, xt: NDArray, yt: NDArray, seed: int, znorm: bool) -> float:
    """The protocol's MLP at one grid point (1e-4), fitted by scikit-learn: test accuracy."""
    if znorm:
        scaler = StandardScaler().fit(x)
        x, xt = scaler.transform(x), scaler.transform(xt)
    model = MLPClassifier(
        hidden_layer_sizes=(MLP_HIDDEN,), activation="logistic", alpha=MLP_BATCH * 1e-4, batch_size=MLP_BATCH,
        early_stopping=True, validation_fraction=MLP_HOLDOUT, n_iter_no_change=MLP_PATIENCE,
        max_iter=MLP_MAX_EPOCHS, random_state=seed,
    )  # fmt: skip
    with threadpool_limits(limits=1):
        return float(np.mean(model.fit(x, y).predict(xt) == yt))


def test_splits_scored_together_score_as_each_alone(trec: Split) -> None:
    """``senteval_cv_scores``: the logistic regressions of three splits in one batch (one bound for
    all rows) select and score as each split's own ``senteval_scores``; the MLPs are the same fits."""
    x, y = np.concatenate([trec[0], trec[2]]), np.concatenate([trec[1], trec[3]])
    splits = list(StratifiedKFold(3, shuffle=True, random_state=5).split(x, y))
    together = classifiers.senteval_cv_scores(x, y, splits, seed=2)
    for (train, test), scores in zip(splits, together, strict=True):
        alone = senteval_scores(x[train], y[train], x[test], y[test], seed=2)
        assert scores.keys() == alone.keys()
        assert {k: v for k, v in scores.items() if "seconds" not in k} == {
            k: v for k, v in alone.items() if "seconds" not in k
        }


@pytest.mark.parametrize("kinds", [("lr",), ("mlp",)])
def test_a_split_lacking_a_class_is_refused(kinds: tuple[str, ...]) -> None:
    """Splits scored together code their labels by the classes of all rows: a split whose training
    rows lack one (its own ``senteval_scores`` would fit fewer) is refused before any fit, by name."""
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((60, 4)), np.repeat([0, 1, 2], 20)
    splits = [(np.arange(0, 60, 2), np.arange(1, 60, 2)), (np.arange(40), np.arange(40, 60))]
    with pytest.raises(ValueError, match="split 1: its training rows lack a class"):
        classifiers.senteval_cv_scores(x, y, splits, kinds=kinds)


def test_the_mlp_holds_out_sklearns_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    """Two classes: the early-stopping hold-out is the one ``MLPClassifier`` draws with the same seed
    (after the same initial weights), stratified as it stratifies its binarised targets."""
    from sklearn.neural_network import _multilayer_perceptron

    rng = np.random.RandomState(7)
    x, codes = rng.standard_normal((600, 5)), rng.randint(0, 2, 600)
    held: dict[str, NDArray] = {}
    split = _multilayer_perceptron.train_test_split

    def recorded(name: str) -> Any:
        def record(*arrays: Any, **kwargs: Any) -> Any:
            out = split(*arrays, **kwargs)
            held[name] = out[1]
            return out

        return record

    monkeypatch.setattr(_multilayer_perceptron, "train_test_split", recorded("sklearn"))
    monkeypatch.setattr(classifiers, "train_test_split", recorded("ours"))
    for seed in (0, 3):
        model = MLPClassifier(
            hidden_layer_sizes=(MLP_HIDDEN,), activation="logistic", batch_size=MLP_BATCH, max_iter=1,
            early_stopping=True, validation_fraction=MLP_HOLDOUT, random_state=seed,
        )  # fmt: skip
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            model.fit(x, codes)
        classifiers._fit_mlps([torch.as_tensor(x, dtype=torch.float32)], codes, 2, [(0, 1e-4)], seed)
        rows = {row.tobytes(): i for i, row in enumerate(x)}
        assert sorted(held["ours"].tolist()) == sorted(rows[row.tobytes()] for row in held["sklearn"])


@pytest.mark.parametrize("device", DEVICES)
def test_mlp_within_sklearns_seed_spread(trec: Split, device: str) -> None:
    """Seeds 0-4 at one grid point (the selection is then trivial and the refit on all training rows
    is scikit-learn's fit with the seed): each seed's accuracy within the spread (max - min) of
    scikit-learn's five accuracies from scikit-learn's own for that seed."""
    for znorm in (False, True):
        ours, reference = [], []
        for seed in range(5):
            scores = senteval_scores(*trec, seed=seed, kinds=("mlp",), grid=(1e-4,), device=device)
            ours.append(scores["mlp_accuracy_znorm" if znorm else "mlp_accuracy_raw"])
            reference.append(sklearn_mlp_accuracy(*trec, seed=seed, znorm=znorm))
        spread = max(reference) - min(reference)
        assert spread > 0
        assert np.abs(np.subtract(ours, reference)).max() <= spread, (znorm, ours, reference)


@pytest.mark.parametrize("device", DEVICES)
def test_networks_stacked_over_inputs_train_as_alone(trec: Split, device: str) -> None:
    """The raw and z-normalised networks of the whole grid step together in one stack (one first
    layer per input, everything else shared); each must end where it ends trained alone, on its own
    input (up to float32 rounding: the stack's reductions group the sums differently), whenever it and
    the others stop. On TREC the eight networks stop at different epochs, so every drop from the stack
    is crossed."""
    x, y = trec[0], trec[1]
    inputs = [part[0] for part in classifiers._normalisations(torch.as_tensor(x, device=device))]
    nets = [(z, l2) for z in (0, 1) for l2 in L2_GRID]
    stacked = classifiers._fit_mlps(inputs, y, 6, nets, seed=3)
    for k, (z, l2) in enumerate(nets):
        alone = classifiers._fit_mlps([inputs[z]], y, 6, [(0, l2)], seed=3)[0]
        for ours, reference in zip(stacked[k], alone, strict=True):
            torch.testing.assert_close(ours, reference, rtol=0, atol=1e-4, msg=f"network {(z, l2)}")


def test_networks_out_of_input_order_are_refused() -> None:
    """A stack's first layers are one tensor per input, its networks input by input: another order
    would pair networks with the wrong rows, so it is refused."""
    start = [torch.zeros(4, MLP_HIDDEN), torch.zeros(MLP_HIDDEN), torch.zeros(MLP_HIDDEN, 1), torch.zeros(1)]
    with pytest.raises(ValueError, match="input by input"):
        classifiers._Group([0, 1], [1, 0], [0.0, 0.0], start)
