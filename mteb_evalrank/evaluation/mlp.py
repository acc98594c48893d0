"""Several of scikit-learn's ``MLPClassifier`` fits in lockstep, identical fit by fit.

SentEval's hyper-parameter selection fits one MLP per grid point (L2 strength) and per
normalisation (raw or z-normalised embeddings) on the same rows. scikit-learn fits them one
at a time, and at SentEval's minibatch of 64 rows most of each step is Python and NumPy call
overhead around small matrix products. :func:`fit_lockstep` trains ``m`` such networks side
by side: every network sees the same minibatches (they share ``random_state``, hence the
same initial weights, early-stopping split and shuffles), so one pass over the minibatch
loop serves all of them, and the first layer's products of the networks that share an
input are one matrix product.

Scope: what the SentEval protocol uses (``mteb_evalrank.evaluation.classifiers``), i.e.
``MLPClassifier(hidden_layer_sizes=(h,), activation="logistic", solver="adam",
batch_size=b, early_stopping=True, validation_fraction=f, n_iter_no_change=k,
max_iter=T, random_state=seed)`` with the other parameters at their defaults
(``learning_rate_init = 1e-3``, ``beta_1 = 0.9``, ``beta_2 = 0.999``,
``epsilon = 1e-8``, ``tol = 1e-4``, ``shuffle=True``), dense inputs, no sample
weights; float32 or float64 inputs, whose dtype the networks keep (as scikit-learn's do).
The arithmetic is scikit-learn's, operation by operation; its training loss is not
computed, since early stopping on the validation accuracy never reads it. Checked bit for bit
against every scikit-learn version ``pyproject.toml`` allows by ``scripts/check_sklearn_versions.py``
(how to run it, and its recorded runs, are in its docstring); a new scikit-learn release is
allowed only after that script passes on it.

One network, one minibatch of ``b`` rows ``X`` with one-hot (or, for two classes, 0/1)
targets ``Y``::

    A = sigmoid(X W1 + b1)               hidden activations
    P = out(A W2 + b2)                   out = sigmoid (two classes) or softmax
    D2 = P - Y,  D1 = (D2 W2^T) * A * (1 - A)
    grad W_l = (A_{l-1}^T D_l + alpha W_l) / b,   grad b_l = sum_rows(D_l) / b

then Adam (``t`` counts the steps)::

    m <- beta_1 m + (1 - beta_1) g,  v <- beta_2 v + (1 - beta_2) g^2
    theta <- theta - lr sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)

After each epoch a network's validation accuracy ``s`` is compared with its best ``s*``:
``s < s* + tol`` counts an epoch without improvement (reset otherwise), ``s > s*`` keeps a
copy of the weights; the network stops after more than ``k`` such epochs in a row (or ``T``
epochs) and ends with its best weights.

The test ``tests/test_mlp.py`` checks the weights and predictions against scikit-learn's
own fits on real embeddings.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray
from scipy.special import expit
from sklearn.metrics import accuracy_score
from sklearn.model_selection import train_test_split
from sklearn.neural_network import MLPClassifier
from sklearn.preprocessing import LabelBinarizer
from sklearn.utils import check_random_state, gen_batches, shuffle

#: Adam's and early stopping's constants (scikit-learn's defaults)
LEARNING_RATE = 1e-3
BETA_1 = 0.9
BETA_2 = 0.999
EPSILON = 1e-8
TOL = 1e-4


@dataclass(frozen=True)
class MLPSettings:
    """The ``MLPClassifier`` parameters :func:`fit_lockstep` shares among its networks."""

    hidden: int
    batch_size: int
    validation_fraction: float
    n_iter_no_change: int
    max_iter: int
    seed: int

    def classifier(self, alpha: float) -> MLPClassifier:
        """The (unfitted) scikit-learn estimator that :func:`fit_lockstep`'s network of penalty
        ``alpha`` equals (the module doc's scope)."""
        return MLPClassifier(
            hidden_layer_sizes=(self.hidden,),
            activation="logistic",
            alpha=alpha,
            batch_size=self.batch_size,
            early_stopping=True,
            validation_fraction=self.validation_fraction,
            n_iter_no_change=self.n_iter_no_change,
            max_iter=self.max_iter,
            random_state=self.seed,
        )


@dataclass
class FittedMLP:
    """One trained network: ``coefs``/``intercepts`` as scikit-learn's ``coefs_``/``intercepts_``."""

    coefs: list[NDArray[np.floating]]
    intercepts: list[NDArray[np.floating]]
    binarizer: LabelBinarizer
    n_iter: int
    validation_scores: list[float]

    def predict(self, x: NDArray[np.floating]) -> NDArray[np.generic]:
        return _labels(self.binarizer, _forward(x, self.coefs, self.intercepts)[1])


def _labels(binarizer: LabelBinarizer, out: NDArray[np.floating]) -> NDArray[np.generic]:
    """Class labels of a network's outputs: above 1/2 for two classes, the arg-max otherwise."""
    return binarizer.inverse_transform(out.ravel() if out.shape[1] == 1 else out)


def _forward(
    x: NDArray[np.floating], coefs: Sequence[NDArray[np.floating]], intercepts: Sequence[NDArray[np.floating]]
) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
    """A network's hidden and output activations (scikit-learn's ``_forward_pass``)."""
    hidden = x @ coefs[0]
    hidden += intercepts[0]
    expit(hidden, out=hidden)
    out = hidden @ coefs[1]
    out += intercepts[1]
    return hidden, _output_activation(out)


def _output_activation(z: NDArray[np.floating]) -> NDArray[np.floating]:
    """In place: the logistic sigmoid for one output, the softmax over several."""
    if z.shape[1] == 1:
        return expit(z, out=z)
    z_shifted = z - z.max(axis=1)[:, np.newaxis]
    np.exp(z_shifted, out=z)
    z /= z.sum(axis=1)[:, np.newaxis]
    return z


class _Adam:
    """scikit-learn's ``AdamOptimizer`` over a list of parameter arrays (updated in place).

    Elementwise, so the parameters of several networks can sit side by side in one array.
    The in-place updates round exactly as scikit-learn's expressions do (one rounding per
    operation, in the same order).
    """

    def __init__(self, params: list[NDArray[np.floating]]) -> None:
        self.params = params
        self.t = 0
        self.ms = [np.zeros_like(p) for p in params]
        self.vs = [np.zeros_like(p) for p in params]

    def step(self, grads: list[NDArray[np.floating]]) -> None:
        self.t += 1
        rate = LEARNING_RATE * np.sqrt(1 - BETA_2**self.t) / (1 - BETA_1**self.t)
        for p, m, v, g in zip(self.params, self.ms, self.vs, grads, strict=True):
            m *= BETA_1  # m = beta_1 m + (1 - beta_1) g
            m += (1 - BETA_1) * g
            v *= BETA_2  # v = beta_2 v + (1 - beta_2) g^2
            g *= g
            g *= 1 - BETA_2
            v += g
            denominator = np.sqrt(v)
            denominator += EPSILON
            update = -rate * m
            update /= denominator
            p += update

    def keep(self, rows: list[int]) -> None:
        """Keep the moments of the stacked networks ``rows`` only (the others stopped)."""
        self.ms = [m[rows] for m in self.ms]
        self.vs = [v[rows] for v in self.vs]


class _Group:
    """The networks that read one input, their parameters stacked.

    ``w1`` is ``m x d x h``, ``b1`` ``m x h``, ``w2`` ``m x h x o`` and ``b2`` ``m x o``;
    ``members[k]`` is the position of network ``k`` in the caller's list. Every matrix
    product is network ``k``'s own, on contiguous operands of scikit-learn's shapes, so that
    BLAS sums in the same order as for scikit-learn's fit; only the elementwise Adam update
    runs over the stack.
    """

    def __init__(
        self,
        members: list[int],
        alphas: list[float],
        coefs: list[NDArray[np.floating]],
        intercepts: list[NDArray[np.floating]],
    ) -> None:
        m = len(members)
        self.members = members
        self.w1, self.w2 = (np.stack([c] * m) for c in coefs)
        self.b1, self.b2 = (np.stack([b] * m) for b in intercepts)
        self.alphas = list(alphas)
        self.adam = _Adam([self.w1, self.w2, self.b1, self.b2])
        self.best = [-np.inf] * m
        self.no_improvement = [0] * m
        self.best_weights = [self.weights(k) for k in range(m)]

    def weights(self, k: int) -> tuple[list[NDArray[np.floating]], list[NDArray[np.floating]]]:
        """Copies of network ``k``'s ``(coefs, intercepts)``."""
        return [self.w1[k].copy(), self.w2[k].copy()], [self.b1[k].copy(), self.b2[k].copy()]

    def forward(self, x: NDArray[np.floating], k: int) -> tuple[NDArray[np.floating], NDArray[np.floating]]:
        """Network ``k``'s hidden and output activations."""
        return _forward(x, (self.w1[k], self.w2[k]), (self.b1[k], self.b2[k]))

    def step(self, x: NDArray[np.floating], y: NDArray[np.bool_]) -> None:
        """One minibatch for every network of the group (the module doc's formulas)."""
        n = x.shape[0]
        grads = [np.empty_like(p) for p in (self.w1, self.w2, self.b1, self.b2)]
        for k, alpha in enumerate(self.alphas):
            hidden, out = self.forward(x, k)
            delta_out = out - y
            grad = hidden.T @ delta_out
            grad += alpha * self.w2[k]  # alpha a Python float: the product keeps the dtype
            grad /= n
            grads[1][k] = grad
            grads[3][k] = np.sum(delta_out, axis=0) / n
            delta_hidden = delta_out @ self.w2[k].T
            delta_hidden *= hidden
            delta_hidden *= 1 - hidden
            grad = x.T @ delta_hidden
            grad += alpha * self.w1[k]
            grad /= n
            grads[0][k] = grad
            grads[2][k] = np.sum(delta_hidden, axis=0) / n
        self.adam.step(grads)

    def end_epoch(
        self, scores: list[float], n_iter: int, settings: MLPSettings
    ) -> list[tuple[int, tuple[list[NDArray[np.floating]], list[NDArray[np.floating]]]]]:
        """Early stopping (scikit-learn's ``_update_no_improvement_count``) after an epoch.

        Returns ``(member, best weights)`` of the networks that stop now and drops them.
        """
        stopped, keep = [], []
        for k, score in enumerate(scores):
            if score < self.best[k] + TOL:
                self.no_improvement[k] += 1
            else:
                self.no_improvement[k] = 0
            if score > self.best[k]:
                self.best[k] = score
                self.best_weights[k] = self.weights(k)
            if self.no_improvement[k] > settings.n_iter_no_change or n_iter == settings.max_iter:
                stopped.append((self.members[k], self.best_weights[k]))
            else:
                keep.append(k)
        if stopped:
            self._keep(keep)
        return stopped

    def _keep(self, keep: list[int]) -> None:
        """Drop the networks not in ``keep`` (their weights and Adam moments)."""
        self.w1, self.w2, self.b1, self.b2 = (p[keep] for p in (self.w1, self.w2, self.b1, self.b2))
        self.adam.params = [self.w1, self.w2, self.b1, self.b2]
        self.adam.keep(keep)
        for name in ("members", "alphas", "best", "no_improvement", "best_weights"):
            setattr(self, name, [getattr(self, name)[k] for k in keep])


def _initial_weights(
    random_state: np.random.RandomState, units: tuple[int, int, int]
) -> tuple[list[NDArray[np.floating]], list[NDArray[np.floating]]]:
    """scikit-learn's Glorot-uniform start for ``units = (d, h, o)``: per layer, coefficients
    then intercepts, drawn from ``U(-b, b)`` with ``b = sqrt(2 / (fan_in + fan_out))`` (the
    logistic activation's factor 2)."""
    coefs: list[NDArray[np.floating]] = []
    intercepts: list[NDArray[np.floating]] = []
    for fan_in, fan_out in itertools.pairwise(units):
        bound = np.sqrt(2.0 / (fan_in + fan_out))
        coefs.append(random_state.uniform(-bound, bound, (fan_in, fan_out)))
        intercepts.append(random_state.uniform(-bound, bound, fan_out))
    return coefs, intercepts


def _validation_scores(
    group: _Group, x_valid: NDArray[np.floating], y_valid: NDArray[np.generic], binarizer: LabelBinarizer
) -> list[float]:
    """The accuracy on the early-stopping rows of each network of ``group`` (scikit-learn's ``_score``)."""
    return [
        float(accuracy_score(y_valid, _labels(binarizer, group.forward(x_valid, k)[1])))
        for k in range(len(group.members))
    ]


def fit_lockstep(
    inputs: Sequence[NDArray[np.floating]],
    y: NDArray[np.generic],
    nets: Sequence[tuple[int, float]],
    settings: MLPSettings,
) -> list[FittedMLP]:
    """Fit one network per ``(input index, alpha)`` of ``nets`` on ``inputs[index]`` and ``y``.

    Every input is an ``n x d`` float32 or float64 matrix of one shape (e.g. raw and z-normalised
    embeddings of the same rows). Each network equals ``settings.classifier(alpha).fit(inputs[index],
    y)`` (see the module doc), returned in the order of ``nets``.
    """
    shapes = {x.shape for x in inputs}
    if len(shapes) != 1 or len(next(iter(shapes))) != 2:
        raise ValueError(f"inputs must be matrices of one shape, got shapes {sorted(shapes)}")
    if any(not 0 <= index < len(inputs) for index, _ in nets):
        raise ValueError(f"a network's input index lies outside [0, {len(inputs)})")
    n, dim = next(iter(shapes))
    binarizer = LabelBinarizer().fit(y)
    targets = binarizer.transform(y).astype(bool)
    n_out = targets.shape[1]
    # scikit-learn's order of random draws: weights (layer by layer, coefficients then
    # intercepts), the stratified early-stopping split, then one shuffle per epoch
    random_state = check_random_state(settings.seed)
    coefs, intercepts = _initial_weights(random_state, (dim, settings.hidden, n_out))
    train_rows, valid_rows = train_test_split(
        np.arange(n),
        random_state=random_state,
        test_size=settings.validation_fraction,
        # stratified for two classes only: scikit-learn stratifies on the binarised targets
        # when they have one column (``n_outputs_ == 1``), not for three or more classes
        stratify=targets if n_out == 1 else None,
    )
    if valid_rows.size < 2:
        raise ValueError("the early-stopping split is too small; increase validation_fraction or the data")
    y_valid = binarizer.inverse_transform(targets[valid_rows])
    x_train = [x[train_rows] for x in inputs]
    x_valid = [x[valid_rows] for x in inputs]
    y_train = targets[train_rows]
    sources = sorted({index for index, _ in nets})
    groups = [
        _Group(
            [i for i, (index, _) in enumerate(nets) if index == source],
            [alpha for index, alpha in nets if index == source],
            [c.astype(x_train[source].dtype, copy=False) for c in coefs],
            [b.astype(x_train[source].dtype, copy=False) for b in intercepts],
        )
        for source in sources
    ]
    fitted: dict[int, FittedMLP] = {}
    scores: list[list[float]] = [[] for _ in nets]
    sample_idx = np.arange(train_rows.size, dtype=int)
    batch = int(np.clip(settings.batch_size, 1, train_rows.size))
    n_iter = 0
    while any(group.members for group in groups):
        sample_idx = shuffle(sample_idx, random_state=random_state)
        for batch_slice in gen_batches(train_rows.size, batch):
            rows = sample_idx[batch_slice]
            y_batch = y_train[rows]
            for source, group in zip(sources, groups, strict=True):
                if group.members:
                    group.step(x_train[source][rows], y_batch)
        n_iter += 1
        for source, group in zip(sources, groups, strict=True):
            epoch_scores = _validation_scores(group, x_valid[source], y_valid, binarizer)
            for member, score in zip(group.members, epoch_scores, strict=True):
                scores[member].append(score)
            for member, (best_coefs, best_intercepts) in group.end_epoch(epoch_scores, n_iter, settings):
                fitted[member] = FittedMLP(best_coefs, best_intercepts, binarizer, n_iter, scores[member])
    return [fitted[i] for i in range(len(nets))]
