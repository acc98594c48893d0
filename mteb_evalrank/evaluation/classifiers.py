"""SentEval-protocol classifiers: features, hyper-parameter selection and scores.

The ``senteval`` protocol of the downstream tasks (Conneau & Kiela, 2018, with the
recommendations of Eger et al., 2019) trains on the **whole** training split and reports

* logistic regression (the main score) and a one-hidden-layer MLP, because the ranking
  of embeddings can change with the classifier (Eger et al.);
* z-normalisation of the embeddings (per dimension, mean and standard deviation of the
  training split) as a binary hyper-parameter, selected like the L2 strength, and both of
  its settings reported.

L2 strength. SentEval's grid is the weight decay ``lambda in {1e-5, 1e-4, 1e-3, 1e-2}``.
scikit-learn's estimators parametrise the penalty differently, so the grid is mapped:

* ``LogisticRegression`` (full batch, L-BFGS) minimises ``C sum_i loss_i + (1/2) ||w||^2``
  over the ``n`` rows it is fitted on; SentEval's objective ``(1/n) sum_i loss_i +
  (lambda/2) ||w||^2`` is the same up to the factor ``C n``, hence ``C = 1 / (n lambda)``
  (exact; ``n`` is an inner-fold training set during cross-validated selection, the whole
  training split otherwise).
* ``MLPClassifier`` (Adam, minibatches of ``MLP_BATCH`` = 64 rows, SentEval's batch size)
  steps along the gradient of ``(1/b) sum_{i in batch} loss_i + (alpha / (2b)) ||W||^2`` on
  each batch of ``b`` rows (scikit-learn divides the penalty by the rows *of the batch*,
  ``_compute_loss_grad``), while SentEval's MLP (PyTorch Adam with ``weight_decay =
  lambda``, batch 64, batch-mean cross-entropy) steps along that of ``(1/b) sum_{i in batch}
  loss_i + (lambda/2) ||W||^2``. Hence ``alpha = MLP_BATCH * lambda``, whatever the number
  of rows. Exact for every full batch; the last batch of an epoch holds ``b = m mod 64``
  rows when the ``m`` training rows are not a multiple of 64, and on that one step
  scikit-learn's penalty is ``alpha / b = (64 / b) lambda`` (SentEval's stays ``lambda``).
  Remaining differences: scikit-learn does not penalise the biases (PyTorch's weight decay
  does), and SentEval sets ``size_average = False`` on its loss after construction, which
  current PyTorch ignores (a batch mean, as assumed here).

Selection, as SentEval per dataset (``senteval/tools/validation.py``):

* a dataset with a validation split (SST2, SST5, SciCite, SICK-E; SentEval's
  ``SplitClassifier``): each grid point is fitted on the whole training split and scored on
  the validation split; the best one is that fit, scored once on the test split;
* a dataset without one: cross-validation on the training split (SentEval's
  ``KFoldClassifier`` for TREC and MRPC; MR, CR, SUBJ and MPQA run it inside each outer
  fold, SentEval's ``InnerKFoldClassifier``), then the selected point is refitted on the
  whole training split and scored once on the test split. Logistic regression: stratified
  ``INNER_FOLDS``-fold cross-validation, mean accuracy. MLP: one stratified hold-out of
  ``MLP_HOLDOUT`` of the training split instead (a deviation: an MLP fit costs ~10-50 LR
  fits and a single split keeps the protocol affordable on a CPU).

The grid is scanned in increasing ``lambda`` and a tie keeps the earlier point; between raw
and z-normalised embeddings a tie keeps raw. The MLP stops early on ``MLP_HOLDOUT`` of the
rows it is fitted on (SentEval stops on the validation split, or on 5% of the rows).

Pair tasks use SentEval's features ``[u, v, |u - v|, u * v]`` of the two sentence
embeddings ``u``, ``v``.

Precision and speed (docs/benchmarks.md). The features are validated in float64 and the
classifiers fitted in float32 (``FIT_DTYPE``), as SentEval's PyTorch classifiers are. The MLPs
of one selection (every grid point, raw and z-normalised) are trained side by side by
:func:`mteb_evalrank.evaluation.mlp.fit_lockstep`, each equal to scikit-learn's fit bit for bit.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.base import ClassifierMixin
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score, f1_score
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit, cross_val_score
from sklearn.pipeline import Pipeline
from sklearn.preprocessing import StandardScaler

from .mlp import FittedMLP, MLPSettings, fit_lockstep
from .ranking import check_embeddings
from .scores import ClassifierScores, Scores, flat

#: SentEval's L2 (weight decay) grid.
L2_GRID: tuple[float, ...] = (1e-5, 1e-4, 1e-3, 1e-2)
#: Inner cross-validation folds for the logistic-regression selection (SentEval's default k).
INNER_FOLDS = 5
#: Fraction of the training split held out to select the MLP's hyper-parameters.
MLP_HOLDOUT = 0.1
#: Hidden units of the MLP (SentEval's ``nhid`` in its MLP experiments).
MLP_HIDDEN = 50
#: Minibatch size of the MLP (SentEval's ``batch_size``); the L2 mapping depends on it.
MLP_BATCH = 64
#: Epochs without improvement before the MLP stops (SentEval's ``tenacity``).
MLP_PATIENCE = 5
#: Most epochs of one MLP fit.
MLP_MAX_EPOCHS = 200
#: The dtype the classifiers are fitted in (SentEval's PyTorch classifiers: float32).
FIT_DTYPE = np.float32

Kind = Literal["lr", "mlp"]


def pair_features(u: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """SentEval's pair representation ``[u, v, |u - v|, u * v]`` (one row per pair)."""
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if u.shape != v.shape or u.ndim != 2:
        raise ValueError(f"u and v must be matrices of the same shape, got {u.shape} and {v.shape}")
    return np.hstack([u, v, np.abs(u - v), u * v])


def make_classifier(kind: Kind, l2: float, n: int, *, znorm: bool, seed: int) -> Pipeline:
    """The estimator for one grid point ``l2`` (SentEval's lambda), fitted later on ``n`` rows.

    Logistic regression: ``C = 1 / (n l2)``; MLP: ``alpha = MLP_BATCH * l2`` (``n`` unused);
    see the module doc for the mapping.
    """
    if kind == "lr":
        model: ClassifierMixin = LogisticRegression(C=1.0 / (n * l2), max_iter=2000, random_state=seed)
    elif kind == "mlp":
        # SentEval's MLP (Linear -> Sigmoid -> Linear) with the settings fit_lockstep shares; the
        # penalty is divided by the batch's rows, not n
        model = _mlp_settings(seed).classifier(MLP_BATCH * l2)
    else:
        raise ValueError(f"unknown classifier {kind!r}; use 'lr' or 'mlp'")
    return Pipeline([("scale", StandardScaler() if znorm else "passthrough"), ("model", model)])


@dataclass(frozen=True)
class Selection:
    """The outcome of one classifier under the protocol."""

    kind: Kind
    znorm: bool
    l2: float
    validation_accuracy: float
    test_accuracy: float
    test_f1: float


def _splitter(kind: Kind, seed: int) -> StratifiedKFold | StratifiedShuffleSplit:
    if kind == "lr":
        return StratifiedKFold(n_splits=INNER_FOLDS, shuffle=True, random_state=seed)
    return StratifiedShuffleSplit(n_splits=1, test_size=MLP_HOLDOUT, random_state=seed)


def _scored_predictions(
    kind: Kind,
    selected: float,
    validation_accuracy: float,
    predicted: NDArray[np.generic],
    y_test: NDArray[np.integer],
    znorm: bool,
) -> Selection:
    return Selection(
        kind=kind,
        znorm=znorm,
        l2=selected,
        validation_accuracy=validation_accuracy,
        test_accuracy=float(accuracy_score(y_test, predicted)),
        test_f1=float(f1_score(y_test, predicted, average="macro")),
    )


def select_and_test(
    kind: Kind,
    x_train: NDArray[np.floating],
    y_train: NDArray[np.integer],
    x_test: NDArray[np.floating],
    y_test: NDArray[np.integer],
    *,
    znorm: bool,
    seed: int,
    grid: Sequence[float] = L2_GRID,
    validation: tuple[NDArray[np.floating], NDArray[np.integer]] | None = None,
) -> Selection:
    """Select the L2 strength of ``kind``, fit on all training rows, score the test rows.

    With ``validation = (x_valid, y_valid)`` (SentEval's ``SplitClassifier``): each grid
    point is fitted on the whole training split and scored on the validation rows; the
    best fit is the final model. Without (``KFoldClassifier``): cross-validation on the
    training rows (see ``_splitter``), then a refit of the selected point on all of them.
    ``validation_accuracy`` is the selection score (accuracy in [0, 1]).
    """
    best_l2, best_score = grid[0], -np.inf
    if validation is not None:
        x_valid, y_valid = validation
        best_fit: Pipeline | None = None
        for l2 in grid:
            fitted = make_classifier(kind, l2, len(y_train), znorm=znorm, seed=seed).fit(x_train, y_train)
            score = float(accuracy_score(y_valid, fitted.predict(x_valid)))
            if score > best_score:
                best_l2, best_score, best_fit = l2, score, fitted
        assert best_fit is not None  # the grid is not empty
        return _scored_predictions(kind, best_l2, best_score, best_fit.predict(x_test), y_test, znorm)
    splitter = _splitter(kind, seed)
    n_inner = len(y_train) - len(next(splitter.split(x_train, y_train))[1])
    for l2 in grid:
        estimator = make_classifier(kind, l2, n_inner, znorm=znorm, seed=seed)
        score = float(np.mean(cross_val_score(estimator, x_train, y_train, cv=splitter, scoring="accuracy")))
        if score > best_score:
            best_l2, best_score = l2, score
    final = make_classifier(kind, best_l2, len(y_train), znorm=znorm, seed=seed).fit(x_train, y_train)
    return _scored_predictions(kind, best_l2, best_score, final.predict(x_test), y_test, znorm)


def _mlp_settings(seed: int) -> MLPSettings:
    return MLPSettings(
        hidden=MLP_HIDDEN,
        batch_size=MLP_BATCH,
        validation_fraction=MLP_HOLDOUT,
        n_iter_no_change=MLP_PATIENCE,
        max_iter=MLP_MAX_EPOCHS,
        seed=seed,
    )


def _normalisations(
    x_fit: NDArray[np.floating], *others: NDArray[np.floating]
) -> list[list[NDArray[np.floating]]]:
    """``[[x_fit, *others] raw, [the same z-normalised]]``, the scaler fitted on ``x_fit``."""
    scaler = StandardScaler().fit(x_fit)
    return [[x_fit, *others], [scaler.transform(x) for x in (x_fit, *others)]]


def select_and_test_mlp(
    x_train: NDArray[np.floating],
    y_train: NDArray[np.integer],
    x_test: NDArray[np.floating],
    y_test: NDArray[np.integer],
    *,
    seed: int,
    grid: Sequence[float] = L2_GRID,
    validation: tuple[NDArray[np.floating], NDArray[np.integer]] | None = None,
) -> dict[str, Selection]:
    """``{"raw": ..., "znorm": ...}``: :func:`select_and_test` of the MLP for both normalisations.

    The same selections and scores as ``select_and_test("mlp", ..., znorm=z)`` for
    ``z`` in (False, True) (tested), with the networks of one step (every grid point and
    both normalisations, then the two refits) trained side by side by
    :func:`~mteb_evalrank.evaluation.mlp.fit_lockstep`.
    """
    settings = _mlp_settings(seed)
    nets = [(norm, MLP_BATCH * l2) for norm in (0, 1) for l2 in grid]
    if validation is not None:  # SplitClassifier: the best grid fit is the final model
        inputs = _normalisations(x_train, validation[0], x_test)
        fits = fit_lockstep([inputs[0][0], inputs[1][0]], y_train, nets, settings)
        best = _best_grid_points(fits, [inputs[0][1], inputs[1][1]], validation[1], len(grid))
        finals = [fits[norm * len(grid) + best[norm][0]] for norm in (0, 1)]
    else:  # one stratified hold-out, then a refit of the selected point on all rows
        inner_train, inner_test = next(_splitter("mlp", seed).split(x_train, y_train))
        inputs = _normalisations(x_train[inner_train], x_train[inner_test])
        fits = fit_lockstep([inputs[0][0], inputs[1][0]], y_train[inner_train], nets, settings)
        best = _best_grid_points(fits, [inputs[0][1], inputs[1][1]], y_train[inner_test], len(grid))
        inputs = _normalisations(x_train, x_test)
        refits = [(norm, MLP_BATCH * grid[best[norm][0]]) for norm in (0, 1)]
        finals = fit_lockstep([inputs[0][0], inputs[1][0]], y_train, refits, settings)
    return {
        name: _scored_predictions(
            "mlp", grid[index], accuracy, finals[norm].predict(inputs[norm][-1]), y_test, norm == 1
        )
        for norm, (name, (index, accuracy)) in enumerate(zip(("raw", "znorm"), best, strict=True))
    }


def _best_grid_points(
    fits: Sequence[FittedMLP],
    x_eval: Sequence[NDArray[np.floating]],
    y_eval: NDArray[np.integer],
    n_grid: int,
) -> list[tuple[int, float]]:
    """Per normalisation ``(index, accuracy)`` of the best grid point; the first of equal ones."""
    best = []
    for norm, x in enumerate(x_eval):
        scores = [float(accuracy_score(y_eval, fits[norm * n_grid + i].predict(x))) for i in range(n_grid)]
        best.append((int(np.argmax(scores)), max(scores)))
    return best


def _fit_dtype(features: ArrayLike, where: str) -> NDArray[np.floating]:
    """``features`` checked (:func:`~.ranking.check_embeddings`) and rounded to ``FIT_DTYPE``; an
    error names ``where`` if a value overflows it."""
    x = check_embeddings(features, where=where)
    with np.errstate(over="ignore"):  # an overflow is reported below, with its place
        rounded = x.astype(FIT_DTYPE)
    if not np.isfinite(rounded).all():
        raise ValueError(
            f"{where}: values beyond the float{8 * np.dtype(FIT_DTYPE).itemsize} range "
            f"(largest magnitude {np.abs(x).max():.3g}); the encoder's output is out of scale"
        )
    return rounded


def senteval_scores(
    x_train: ArrayLike,
    y_train: ArrayLike,
    x_test: ArrayLike,
    y_test: ArrayLike,
    *,
    seed: int = 1111,
    kinds: Sequence[Kind] = ("lr", "mlp"),
    grid: Sequence[float] = L2_GRID,
    x_valid: ArrayLike | None = None,
    y_valid: ArrayLike | None = None,
) -> Scores:
    """Scores of the ``senteval`` protocol for one train/test split.

    With ``x_valid``/``y_valid`` (a dataset's validation split) the hyper-parameters are
    selected on it, otherwise by cross-validation on the training rows (module doc).

    For each classifier ``k`` in ``kinds`` (``lr``, ``mlp``) and each normalisation
    ``z in {raw, znorm}``: ``{k}_accuracy_{z}``, ``{k}_f1_{z}`` (macro F1) and
    ``{k}_l2_{z}`` (the selected L2 strength). ``{k}_accuracy`` / ``{k}_f1`` are those of
    the normalisation with the better selection score (``{k}_znorm`` = 1.0 if that is
    z-normalisation; raw wins ties), i.e. normalisation treated as a hyper-parameter.
    Accuracies are fractions in [0, 1]. Also ``n_train``, ``n_test`` and, with a validation
    split, ``n_validation``; and ``{k}_seconds``, the wall time of ``k``'s selection and test
    (not a score: the study's cost report reads it).

    Raises:
        NonFiniteEmbeddingsError: when an embedding holds NaN or infinity.
        ValueError: when the training rows have fewer than two classes.
    """
    x_train = _fit_dtype(x_train, "training features")
    x_test = _fit_dtype(x_test, "test features")
    y_train = np.asarray(y_train)
    y_test = np.asarray(y_test)
    if len(np.unique(y_train)) < 2:
        raise ValueError("the training rows hold fewer than two classes; nothing to learn")
    scores: Scores = {"n_train": len(y_train), "n_test": len(y_test)}
    validation = None
    if (x_valid is None) != (y_valid is None):
        raise ValueError("give both x_valid and y_valid, or neither")
    if x_valid is not None:
        validation = (_fit_dtype(x_valid, "validation features"), np.asarray(y_valid))
        scores["n_validation"] = len(validation[1])
    data = (x_train, y_train, x_test, y_test)
    for kind in kinds:
        start = time.perf_counter()
        if kind == "mlp":
            results = select_and_test_mlp(*data, seed=seed, grid=grid, validation=validation)
        else:
            results = {
                name: select_and_test(kind, *data, znorm=znorm, seed=seed, grid=grid, validation=validation)
                for name, znorm in (("raw", False), ("znorm", True))
            }
        scores |= flat(classifier_scores(results, time.perf_counter() - start), prefix=f"{kind}_")
    return scores


def classifier_scores(results: Mapping[str, Selection], seconds: float) -> ClassifierScores:
    """One classifier's scores from its selections ``raw`` and ``znorm``: the one with the better
    selection score (raw wins ties) gives ``accuracy`` and ``f1`` (see :func:`senteval_scores`)."""
    raw, znorm = results["raw"], results["znorm"]
    chosen = znorm if znorm.validation_accuracy > raw.validation_accuracy else raw
    return {
        "accuracy_raw": raw.test_accuracy,
        "f1_raw": raw.test_f1,
        "l2_raw": raw.l2,
        "accuracy_znorm": znorm.test_accuracy,
        "f1_znorm": znorm.test_f1,
        "l2_znorm": znorm.l2,
        "accuracy": chosen.test_accuracy,
        "f1": chosen.test_f1,
        "znorm": float(chosen.znorm),
        "seconds": seconds,
    }
