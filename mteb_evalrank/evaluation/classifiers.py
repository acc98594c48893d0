"""SentEval-protocol classifiers; the protocol, its selection per dataset and its deviations:
docs/downstream.md.

Features (pair tasks: SentEval's ``[u, v, |u - v|, u * v]``) are checked in float64 and rounded to
``FIT_DTYPE`` (float32). For each L2 strength of ``L2_GRID`` (SentEval's weight decay ``lambda``) and
raw or z-normalised features (mean and standard deviation of the rows fitted on), both reported:

* logistic regression (float64, full-batch L-BFGS preconditioned by a bound of the Hessian,
  :func:`_lbfgs`) minimises
  ``(1/n) sum_i loss_i + (lambda/2) ||W||^2`` (intercepts unpenalised; a sigmoid for two classes, a
  softmax otherwise), i.e. scikit-learn's ``C sum_i loss_i + (1/2) ||W||^2`` with ``C = 1 / (n lambda)``;
  a fit stops when no gradient entry exceeds ``LR_GTOL * lambda``;
* the MLP (float32, ``MLP_HIDDEN`` sigmoid units, Adam on batches of ``MLP_BATCH`` = 64 rows) steps on a
  batch of ``b`` rows along ``(1/b) sum_i loss_i + (alpha / (2b)) ||W||^2``, ``alpha = MLP_BATCH lambda``
  (scikit-learn's ``MLPClassifier``; SentEval's ``weight_decay = lambda`` on every full batch; biases
  unpenalised). One step of ``G`` networks (every grid point of both normalisations: network ``g``
  reads input ``X_s(g)``, ``b x d``, the raw or the z-normalised rows of one batch), targets ``Y``::

    A = sigmoid([X_1 W1_(1) ... X_S W1_(S)] + b1)   one product per input for its networks
    P = out(A_g W2_g + b2_g)                  out = sigmoid (two classes) or softmax
    D2 = P - Y,  D1 = (D2 W2^T) * A * (1 - A)
    grad W_l = (A_{l-1}^T D_l + alpha W_l) / b,   grad b_l = sum_rows(D_l) / b

  then scikit-learn's Adam (rate 1e-3, betas 0.9, 0.999, epsilon 1e-8):
  ``theta -= rate sqrt(1 - beta_2^t) / (1 - beta_1^t) * m / (sqrt(v) + epsilon)``. Early stopping on
  ``MLP_HOLDOUT`` of the rows: an epoch's accuracy ``s < s* + 1e-4`` counts as no improvement, ``s > s*``
  keeps the weights; after more than ``MLP_PATIENCE`` such epochs in a row (or ``MLP_MAX_EPOCHS``) the
  best weights remain. Initial weights (Glorot uniform), split and shuffles are scikit-learn's draws
  from ``RandomState(seed)``.

Selection: with a validation split, the best grid fit on it is the model; otherwise LR by stratified
``INNER_FOLDS``-fold cross-validation, the MLP by one stratified ``MLP_HOLDOUT`` hold-out, then a
refit on the whole training split. Increasing ``lambda``; a tie keeps the earlier point, and raw.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from sklearn.metrics import f1_score
from sklearn.model_selection import StratifiedKFold, StratifiedShuffleSplit, train_test_split

from .ranking import check_embeddings
from .scores import ClassifierScores, Scores, flat
from .tagging import torch_threads

if TYPE_CHECKING:
    import torch

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
#: The dtype the features are rounded to (SentEval's PyTorch classifiers: float32).
FIT_DTYPE = np.float32
#: Logistic regression: a fit stops when no gradient entry of its mean objective exceeds this times
#: its ``lambda`` (the weights are then within ``LR_GTOL`` of the optimum, per entry and scaled).
LR_GTOL = 1e-4
#: Most L-BFGS iterations of one logistic-regression fit.
LR_MAX_ITER = 5000
#: Logistic regression's preconditioner (:class:`_Bound`) where the training rows number at least this
#: many times the features (with the intercept): beyond Cover's capacity (``n = 2 (d + 1)``: half the
#: labellings of ``n`` points in general position linearly separable), so the small-``lambda`` fits are
#: not separable by width alone. Nearer it the bound (``p (1 - p) = 1/4``) far exceeds the curvature
#: of the fitted rows and slows those fits: mpnet's 3,072-d MRPC pairs (4,076 rows), 364 s with it, 52 s
#: without; MiniLM's 1,536-d pairs, 40 s with it, 49 s without; anisotropic 4,096-d features, one MR
#: fold, 210 s with it, 674 s without (``benchmarks/classifiers_width.md``).
PRECONDITIONED_ROWS_PER_FEATURE = 2
#: ... and where the rows are far from isotropic: a normalisation's ``G = Z^T Z / n`` has a condition
#: number above this times ``n / (n - d)`` by the lower bound ``max_i L_ii^2 / min_i L_ii^2`` of its
#: Cholesky factor ``L``; isotropic rows have about ``n / (n - d)`` (Bartlett: ``L_ii^2 ~ chi^2_{n-i+1} /
#: n``). Their bound is the identity up to sampling noise: it saves few iterations (standard normal
#: 4,096-d rows, one MR fold: 186 rounds with it, 229 without) and costs its solves (152 against 90 s,
#: one thread; at 1,024-d it saves 1.4 of 10.2 s). Real features' is far above it (MiniLM's MR rows:
#: ``benchmarks/classifiers_width.md``).
PRECONDITIONED_CONDITION = 2.0
#: Features from this width on are fitted on torch's whole CPU pool; narrower ones on one thread.
WIDE_FEATURES = 128
#: Adam's and early stopping's constants (scikit-learn's ``MLPClassifier`` defaults).
ADAM_RATE, ADAM_BETAS, ADAM_EPSILON, STOP_TOL = 1e-3, (0.9, 0.999), 1e-8, 1e-4

Kind = Literal["lr", "mlp"]


def pair_features(u: ArrayLike, v: ArrayLike) -> NDArray[np.float64]:
    """SentEval's pair representation ``[u, v, |u - v|, u * v]`` (one row per pair)."""
    u = np.asarray(u, dtype=np.float64)
    v = np.asarray(v, dtype=np.float64)
    if u.shape != v.shape or u.ndim != 2:
        raise ValueError(f"u and v must be matrices of the same shape, got {u.shape} and {v.shape}")
    return np.hstack([u, v, np.abs(u - v), u * v])


@dataclass(frozen=True)
class Selection:
    """The outcome of one classifier under the protocol."""

    kind: Kind
    znorm: bool
    l2: float
    validation_accuracy: float
    test_accuracy: float
    test_f1: float


def _scored(
    kind: Kind, znorm: bool, l2: float, selection_score: float, predicted: NDArray[Any], y_test: NDArray[Any]
) -> Selection:
    accuracy, f1 = float(np.mean(predicted == y_test)), float(f1_score(y_test, predicted, average="macro"))
    return Selection(kind, znorm, l2, validation_accuracy=selection_score, test_accuracy=accuracy, test_f1=f1)


# ------------------------------------------------------------------ logistic regression
def _logits(params: torch.Tensor, mu: torch.Tensor, sd: torch.Tensor, x: torch.Tensor) -> torch.Tensor:
    """``n x F x k`` logits of ``F`` fits (``params``: ``F x (d + 1) x k``, weights then intercepts;
    ``mu``, ``sd``: ``F x d``) for the rows ``x``: ``x (W / sd) + (b - mu (W / sd))``, one product,
    taken as ``((W / sd)^T x^T)^T``: a wide output is MKL's fast case (9,600 x 4,096 rows, 40 columns,
    one thread: 216 ms against 478 ms; the gradient's ``x^T R`` as ``(R^T x)^T`` likewise, 233 against
    690 ms, and 53 against 828 ms for 2 columns)."""
    import torch

    d = x.shape[1]
    w = params[:, :d] / sd[:, :, None]
    b = params[:, d] - torch.einsum("fd,fdk->fk", mu, w)
    return (w.permute(0, 2, 1).reshape(-1, d) @ x.T).T.reshape(len(x), len(params), -1) + b


@dataclass
class _LinearFits:
    """``F`` L2-penalised logistic regressions on the rows of one matrix ``x`` (``n x d``), each on its
    own rows, optionally z-normalised by their statistics: fit ``f``'s logits are
    ``((x - mu_f) / sd_f) W_f + b_f`` (``mu = 0``, ``sd = 1`` raw), for all fits at once
    ``x (W / sd) + (b - mu (W / sd))``, one matrix product."""

    x: torch.Tensor  # n x d, float64
    targets: torch.Tensor  # n x k: 0/1 (k = 1 for two classes, the sigmoid's), one-hot otherwise
    weights: torch.Tensor  # n x F: 1/n_f on fit f's rows, 0 elsewhere
    mu: torch.Tensor  # F x d
    sd: torch.Tensor  # F x d
    l2: torch.Tensor  # F
    znorm: torch.Tensor  # F, bool

    def loss_gradient(self, params: torch.Tensor, fits: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """Per fit the objective ``sum_i r_fi loss_i + (l2_f / 2) ||W_f||^2`` and its gradient."""
        import torch

        z = _logits(params, self.mu[fits], self.sd[fits], self.x)
        r = self.weights[:, fits, None]
        y = self.targets[:, None, :]
        if z.shape[2] == 1:  # sigmoid: log(1 + e^z) - y z
            loss = torch.nn.functional.softplus(z) - y * z
            residual = torch.sigmoid(z) - y
        else:  # softmax: logsumexp(z) - z_y
            log_p = torch.log_softmax(z, dim=2)
            loss = -(log_p * y)
            residual = log_p.exp() - y
        residual = residual * r
        d = self.x.shape[1]
        w = params[:, :d]
        value = (loss * r).sum((0, 2)) + 0.5 * self.l2[fits] * (w**2).sum((1, 2))
        grad = torch.empty_like(params)
        column_sums = residual.sum(0)  # A x k
        xt_r = (residual.reshape(len(self.x), -1).T @ self.x).view(len(fits), -1, d).permute(0, 2, 1)
        grad[:, :d] = (xt_r - self.mu[fits, :, None] * column_sums[:, None, :]) / self.sd[fits, :, None]
        grad[:, :d] += self.l2[fits, None, None] * w
        grad[:, d] = column_sums
        return value, grad


@dataclass
class _Memory:
    """L-BFGS's memory of every fit: the last ``m`` steps ``s`` and gradient changes ``y`` (unused pairs
    have ``rho = 0``), ``rho = 1 / s^T y``, the initial matrix ``gamma M^-1`` (``M``: :class:`_Bound`'s
    ``factors``, fit ``f``'s the ``which[f]``-th), and, where there are factors, ``u = M^-1 g`` of the
    current gradient with ``v = M^-1 y`` of each pair. ``M^-1`` is linear: ``M^-1 y = M^-1 g' - M^-1 g``
    and the two-loop recursion's ``M^-1 q = u - sum_j a_j v_j``, so an iteration applies ``M^-1`` once
    (to the new gradient) where the recursion and ``gamma`` would apply it twice. Without factors (``M =
    I``) ``u`` is ``g``, ``v`` is ``y`` and ``M^-1 q`` is ``q``: neither is kept."""

    s: torch.Tensor  # F x m x p
    y: torch.Tensor  # F x m x p
    rho: torch.Tensor  # F x m
    gamma: torch.Tensor  # F
    factors: torch.Tensor
    which: torch.Tensor
    u: torch.Tensor | None  # F x p, with factors
    v: torch.Tensor | None  # F x m x p, with factors

    @classmethod
    def start(cls, g: torch.Tensor, m: int, factors: torch.Tensor, which: torch.Tensor) -> _Memory:
        """An empty memory of ``m`` pairs for the fits of gradient ``g``; the first step ``-M^-1 g``,
        unpreconditioned of unit length."""
        import torch

        flat = g.flatten(1)
        s = torch.zeros(len(g), m, flat.shape[1], dtype=g.dtype, device=g.device)
        rho = torch.zeros(len(g), m, dtype=g.dtype, device=g.device)
        gamma = torch.ones(len(g), dtype=g.dtype, device=g.device)
        if not len(factors):
            gamma /= flat.norm(dim=1).clamp_min(1e-12)
            return cls(s, torch.zeros_like(s), rho, gamma, factors, which, None, None)
        u = _precondition(factors, which, torch.arange(len(g), device=g.device), flat)
        return cls(s, torch.zeros_like(s), rho, gamma, factors, which, u, torch.zeros_like(s))

    def direction(self, g: torch.Tensor, rows: torch.Tensor) -> torch.Tensor:
        """``-H g`` of the fits ``rows`` (ascending) by L-BFGS's two-loop recursion (``r`` is ``M^-1 q``).
        The fits' pairs are gathered once (none when ``rows`` is every fit), not per pair and loop."""
        q = g[rows].flatten(1).clone()
        r = q if self.u is None else self.u[rows].clone()
        every = len(rows) == len(self.s)  # rows ascending and distinct: all fits, in order
        s, y, rho = (t if every else t[rows] for t in (self.s, self.y, self.rho))
        v = self.v if every or self.v is None else self.v[rows]
        alphas = []
        for j in range(s.shape[1] - 1, -1, -1):
            a = rho[:, j] * (s[:, j] * q).sum(1)
            q -= a[:, None] * y[:, j]
            if v is not None:
                r -= a[:, None] * v[:, j]
            alphas.append(a)
        r *= self.gamma[rows, None]
        for j, a in zip(range(s.shape[1]), reversed(alphas), strict=True):
            b = rho[:, j] * (y[:, j] * r).sum(1)
            r += (a - b)[:, None] * s[:, j]
        return -r.view(-1, *g.shape[1:])

    def remember(self, fits: torch.Tensor, s: torch.Tensor, y: torch.Tensor, g: torch.Tensor) -> None:
        """The fits ``fits`` stepped by ``s`` (flattened) to the gradient ``g``, which changed by ``y``: the
        pairs that meet the curvature condition ``s^T y > 1e-10 y^T y`` replace their fit's oldest, with
        ``gamma = s^T y / y^T M^-1 y``."""
        import torch

        stores = [(self.s, s), (self.y, y)]
        v = y
        if self.u is not None and self.v is not None:
            u = _precondition(self.factors, self.which, fits, g.flatten(1))
            v = u - self.u[fits]
            self.u[fits] = u
            stores.append((self.v, v))
        sy = (s * y).sum(1)
        keep = sy > 1e-10 * (y * y).sum(1)
        kept = fits[keep]
        for store, new in (*stores, (self.rho, 1.0 / sy)):
            store[kept] = torch.roll(store[kept], -1, dims=1)
            store[kept, -1] = new[keep]
        self.gamma[kept] = sy[keep] / (y[keep] * v[keep]).sum(1)


class _Bound:
    """L-BFGS's initial matrix ``M^-1`` for logistic regressions on the rows of ``x``: ``M = c Z^T Z / n +
    l2 P``, Boehning's bound of the Hessian of a fit on all ``n`` rows (``c = 1/4`` sigmoid, ``1/2``
    softmax, each class; ``Z = [x, 1]``, z-normalised for the z-normalised fits; ``P`` the identity but the
    intercept). Correlated features (word vectors) no longer slow the fits: 300-d MR, 5,000 iterations
    before, 13 with it; the optimum and the stopping rule are unchanged. Both normalisations' ``Z^T Z``
    (one product) and each ``(znorm, l2)``'s Cholesky factor are computed once, for the cross-validation
    batch and the refits alike; with fewer than :data:`PRECONDITIONED_ROWS_PER_FEATURE` rows per feature, or
    rows about isotropic (:data:`PRECONDITIONED_CONDITION`), none (``M = I``)."""

    def __init__(self, x: torch.Tensor, k: int) -> None:
        self.x, self.c = x, 0.25 if k == 1 else 0.5
        self.grams: dict[bool, torch.Tensor] = {}
        self.factors: dict[tuple[bool, float], torch.Tensor] = {}

    def gram(self, znorm: bool) -> torch.Tensor:
        """``c Z^T Z / n`` of the raw or the z-normalised rows, both from one product, the centred rows'
        ``C = (x - mu)^T (x - mu)`` (``mu``, ``sd``: :func:`_standard_scale`): ``Z^T Z`` is ``[[C + n mu
        mu^T, n mu], [n mu^T, n]]`` raw and ``[[C / (sd sd^T), 0], [0, n]]`` z-normalised (centred
        columns sum to 0). Adding ``n mu mu^T`` to ``C`` cancels nothing; subtracting it from the raw
        product would (``sd << |mu|``)."""
        import torch

        if not self.grams:
            x, (n, d) = self.x, self.x.shape
            mean, std = self.statistics
            centred = x - mean
            covariance = centred.T @ centred
            for z in (False, True):
                gram = x.new_zeros(d + 1, d + 1)
                gram[d, d] = n
                if z:
                    gram[:d, :d] = covariance / std[:, None] / std[None, :]
                else:
                    gram[:d, :d] = covariance + n * torch.outer(mean, mean)
                    gram[:d, d] = gram[d, :d] = n * mean
                self.grams[z] = self.c / n * gram
        return self.grams[znorm]

    @functools.cached_property
    def statistics(self) -> tuple[torch.Tensor, torch.Tensor]:
        """:func:`_standard_scale` of all the rows of ``x``: :meth:`gram`'s, and the refits' on every
        training row (:func:`_linear_problem`), computed once for both."""
        return _standard_scale(self.x)

    @functools.cached_property
    def conditions(self) -> list[float]:
        """``max_i L_ii^2 / min_i L_ii^2`` of the Cholesky factor ``L`` of the raw and the z-normalised
        :meth:`gram` (``c`` cancels), a lower bound of its condition number; infinite where it is
        singular."""
        import torch

        out = []
        for znorm in (False, True):
            factor, info = torch.linalg.cholesky_ex(self.gram(znorm))
            pivots = factor.diagonal().square()
            out.append(float(pivots.max() / pivots.min()) if not info else float("inf"))
        return out

    def of(self, fits: _LinearFits) -> tuple[torch.Tensor, torch.Tensor]:
        """The Cholesky factors of the fits' distinct ``(znorm, l2)`` and each fit's index (none with
        too few rows per feature or about isotropic rows)."""
        import torch

        x, (n, d) = self.x, self.x.shape
        if n < PRECONDITIONED_ROWS_PER_FEATURE * (d + 1) or max(self.conditions) <= (
            PRECONDITIONED_CONDITION * n / max(n - d, 1)
        ):
            return torch.empty(0, dtype=x.dtype, device=x.device), torch.empty(
                0, dtype=torch.long, device=x.device
            )
        pairs = list(zip(fits.znorm.tolist(), fits.l2.tolist(), strict=True))
        keys = sorted(set(pairs))
        for znorm, l2 in keys:
            if (znorm, l2) not in self.factors:
                penalty = torch.tensor([l2] * d + [0.0], dtype=x.dtype, device=x.device)
                self.factors[znorm, l2] = torch.linalg.cholesky(self.gram(znorm) + torch.diag(penalty))
        factors = torch.stack([self.factors[key] for key in keys])
        return factors, torch.tensor([keys.index(pair) for pair in pairs], device=x.device)


def _precondition(
    factors: torch.Tensor, which: torch.Tensor, rows: torch.Tensor, q: torch.Tensor
) -> torch.Tensor:
    """``M^-1 q`` for the fits ``rows`` (``q``: one flattened ``(d + 1) x k`` vector per row): ``L^-T (L^-1
    q)`` by two triangular solves. Not ``torch.cholesky_solve``, which copies the factor on every call:
    at 4,097 x 4,097, 5 columns, one thread, 129 ms against 31 ms (the product with an explicit inverse:
    192 ms)."""
    import torch

    if not len(factors):
        return q
    q = q.view(len(rows), factors.shape[1], -1)
    out = torch.empty_like(q)
    for i in which[rows].unique().tolist():  # the fits of one factor: their columns side by side
        mine = which[rows] == i
        columns = q[mine].permute(1, 0, 2).reshape(factors.shape[1], -1)
        half = torch.linalg.solve_triangular(factors[i], columns, upper=False)
        solved = torch.linalg.solve_triangular(factors[i].mT, half, upper=True)
        out[mine] = solved.view(factors.shape[1], -1, q.shape[2]).permute(1, 0, 2)
    return out.flatten(1)


def _lbfgs(
    fits: _LinearFits, shape: tuple[int, int, int], bound: _Bound, memory: int = 10
) -> tuple[torch.Tensor, torch.Tensor]:
    """Minimise every fit's objective by L-BFGS, all fits evaluated together (one product per round);
    each fit has its own memory of ``memory`` pairs and backtracking Armijo line search from the unit
    step (``c1 = 1e-4``), and stops when no gradient entry exceeds ``LR_GTOL`` times its ``lambda``, when
    a step no longer lowers its objective, or after ``LR_MAX_ITER`` iterations. Returns the parameters
    (``F x (d + 1) x k``) and each fit's iteration count."""
    import torch

    n_fits = shape[0]
    device, dtype = fits.x.device, fits.x.dtype
    x = torch.zeros(shape, dtype=dtype, device=device)
    everyone = torch.arange(n_fits, device=device)
    f, g = fits.loss_gradient(x, everyone)
    pairs = _Memory.start(g, memory, *bound.of(fits))
    iterations = torch.zeros(n_fits, dtype=torch.long, device=device)
    tolerance = LR_GTOL * fits.l2
    active = g.flatten(1).abs().amax(1) > tolerance
    step = torch.ones(n_fits, dtype=dtype, device=device)

    search = torch.zeros_like(x)
    search[active] = pairs.direction(g, everyone[active])
    while bool(active.any()):
        rows = everyone[active]
        trial = x[rows] + step[rows, None, None] * search[rows]
        f_trial, g_trial = fits.loss_gradient(trial, rows)
        slope = (g[rows] * search[rows]).flatten(1).sum(1)
        accepted = f_trial <= f[rows] + 1e-4 * step[rows] * slope
        stalled = ~accepted & (step[rows] < 1e-12)
        done = rows[stalled]
        active[done] = False
        moved = rows[accepted]
        step[rows[~accepted]] *= 0.5
        if len(moved):
            s = (trial[accepted] - x[moved]).flatten(1)
            pairs.remember(moved, s, (g_trial[accepted] - g[moved]).flatten(1), g_trial[accepted])
            progress = (f[moved] - f_trial[accepted]) / torch.maximum(
                f[moved].abs(), f_trial[accepted].abs()
            ).clamp_min(1.0)
            x[moved], f[moved], g[moved] = trial[accepted], f_trial[accepted], g_trial[accepted]
            iterations[moved] += 1
            active[moved] = (
                (g[moved].flatten(1).abs().amax(1) > tolerance[moved])
                & (iterations[moved] < LR_MAX_ITER)
                & (progress > 64 * torch.finfo(dtype).eps)
            )
            going = moved[active[moved]]
            if len(going):
                search[going] = pairs.direction(g, going)
                step[going] = 1.0
    return x, iterations


def _class_targets(y: NDArray[Any], classes: NDArray[Any], device: torch.device) -> torch.Tensor:
    """0/1 targets of the positive class (two classes: one column), one-hot columns otherwise."""
    import torch

    codes = torch.as_tensor(np.searchsorted(classes, y), device=device)
    onehot = torch.nn.functional.one_hot(codes, len(classes)).to(torch.float64)
    return onehot[:, 1:] if len(classes) == 2 else onehot


def _linear_problem(
    x: torch.Tensor,
    y: NDArray[Any],
    classes: NDArray[Any],
    fits: Sequence[tuple[NDArray[np.intp], float, bool]],
    bound: _Bound | None = None,
) -> _LinearFits:
    """The logistic regressions of ``fits`` on ``x``, one per ``(rows, l2, znorm)``, as one problem. The
    statistics of each distinct set of rows are computed once: the grid's fits share their fold's (5
    inner folds, 20 z-normalised fits: 5 ``std_mean``s and row copies, not 20; with :class:`_Memory`'s
    gathers once per direction, one MR-shaped 1,024-d selection takes 1.95 s, 2.70 s before); those of
    every row of ``x`` in order (the refits') are ``bound``'s :attr:`_Bound.statistics`, where given."""
    import torch

    n, d = x.shape
    weights = torch.zeros(n, len(fits), dtype=x.dtype, device=x.device)
    mu = torch.zeros(len(fits), d, dtype=x.dtype, device=x.device)
    sd = torch.ones_like(mu)
    statistics: dict[bytes, tuple[torch.Tensor, torch.Tensor]] = {}
    every = np.arange(n).tobytes()
    for f, (rows, _, znorm) in enumerate(fits):
        index = torch.as_tensor(rows, device=x.device)
        weights[index, f] = 1.0 / len(rows)
        if znorm:
            key = np.asarray(rows).tobytes()
            if key == every and bound is not None:  # every row in order: the bound's (one per split)
                statistics[key] = bound.statistics
            elif key not in statistics:
                statistics[key] = _standard_scale(x[index])
            mu[f], sd[f] = statistics[key]
    l2 = torch.tensor([l2 for _, l2, _ in fits], dtype=x.dtype, device=x.device)
    normalised = torch.tensor([z for _, _, z in fits], device=x.device)
    return _LinearFits(x, _class_targets(y, classes, x.device), weights, mu, sd, l2, normalised)


def _lr_fits(
    x: torch.Tensor,
    y: NDArray[Any],
    classes: NDArray[Any],
    fits: Sequence[tuple[NDArray[np.intp], float, bool]],
    bound: _Bound,
) -> tuple[_LinearFits, torch.Tensor]:
    """Fit one logistic regression per ``(rows, l2, znorm)`` of ``fits`` on ``x`` (preconditioned by
    ``bound``, of ``x``); return the problem and the parameters of every fit."""
    problem = _linear_problem(x, y, classes, fits, bound)
    params, _ = _lbfgs(problem, (len(fits), x.shape[1] + 1, problem.targets.shape[1]), bound)
    return problem, params


def _predict_linear(
    problem: _LinearFits, params: torch.Tensor, fits: Sequence[int], x: torch.Tensor, classes: NDArray[Any]
) -> NDArray[Any]:
    """``n x F`` predicted labels of the fits ``fits`` (``params`` theirs) for the rows ``x``."""
    z = _logits(params, problem.mu[list(fits)], problem.sd[list(fits)], x)
    codes = (z[:, :, 0] > 0).long() if z.shape[2] == 1 else z.argmax(2)
    return classes[codes.cpu().numpy()]


def _lr_selections(
    x_train: torch.Tensor, y_train: NDArray[Any], x_test: torch.Tensor, y_test: NDArray[Any],
    *, seed: int, grid: Sequence[float], validation: tuple[torch.Tensor, NDArray[Any]] | None,
) -> dict[str, Selection]:  # fmt: skip
    """``{"raw": ..., "znorm": ...}``: the logistic regression's selection and test. One batch of fits:
    the ``2 x len(grid)`` fits on the training split, selected on ``validation``; without it, those of
    :func:`_lr_cv_fits` for the one split."""
    classes = np.unique(y_train)
    if validation is None:
        problem, params, best, accuracy = _lr_cv_fits(x_train, y_train, [np.arange(len(y_train))], seed, grid)
        return _lr_tested(problem, params, [0, 1], x_test, y_test, classes, grid, best[0], accuracy[0])
    bound = _Bound(x_train, 1 if len(classes) == 2 else len(classes))
    fits = [(np.arange(len(y_train)), l2, bool(z)) for z in (0, 1) for l2 in grid]
    problem, params = _lr_fits(x_train, y_train, classes, fits, bound)
    predicted = _predict_linear(problem, params, range(len(fits)), validation[0], classes)
    accuracy = (predicted == validation[1][:, None]).mean(0).reshape(2, len(grid))
    best = accuracy.argmax(1)  # the first of equal ones
    chosen = [z * len(grid) + best[z] for z in (0, 1)]
    return _lr_tested(problem, params[chosen], chosen, x_test, y_test, classes, grid, best, accuracy)


def _lr_cv_fits(
    x: torch.Tensor, y: NDArray[Any], trains: Sequence[NDArray[np.intp]], seed: int, grid: Sequence[float]
) -> tuple[_LinearFits, torch.Tensor, NDArray[np.intp], NDArray[np.float64]]:
    """The logistic regression selected by cross-validation on each set ``trains[k]`` of training rows
    of ``x``, every set's fits in one batch: the ``2 x len(grid) x INNER_FOLDS`` inner-fold fits of all
    sets, then all their refits. Late in a batch few fits are left, and a round reads the rows twice for
    them (4,096-d, 9,600 rows: 9.2 ms per fit and round with 10 fits, 2.3 ms with 100): one batch reads
    them once for every set's (a cross-validated task's folds). Preconditioned by the bound of all the
    rows of ``x`` (one set of factors, where ten folds' own would hold ten). Returns the refits' problem
    and parameters (set ``k``'s raw and z-normalised refits: ``2k``, ``2k + 1``), the selected grid
    indices (``sets x 2``, the first of equal ones) and the inner folds' mean accuracies (``sets x 2 x
    len(grid)``)."""
    classes = np.unique(y)
    fits, held = [], []
    for train in trains:
        inner = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=seed).split(train, y[train])
        folds = [(train[fit], train[out]) for fit, out in inner]
        fits += [(rows, l2, bool(z)) for z in (0, 1) for l2 in grid for rows, _ in folds]
        held += [out for _ in range(2 * len(grid)) for _, out in folds]
    bound = _Bound(x, 1 if len(classes) == 2 else len(classes))
    problem, params = _lr_fits(x, y, classes, fits, bound)
    predicted = _predict_linear(problem, params, range(len(fits)), x, classes)
    accuracy = np.array([np.mean(predicted[out, f] == y[out]) for f, out in enumerate(held)])
    accuracy = accuracy.reshape(len(trains), 2, len(grid), INNER_FOLDS).mean(3)
    best = accuracy.argmax(2)
    refits = [(train, grid[best[k, z]], bool(z)) for k, train in enumerate(trains) for z in (0, 1)]
    return *_lr_fits(x, y, classes, refits, bound), best, accuracy


def _lr_tested(
    problem: _LinearFits, params: torch.Tensor, fits: Sequence[int], x_test: torch.Tensor,
    y_test: NDArray[Any], classes: NDArray[Any], grid: Sequence[float], best: NDArray[np.intp],
    accuracy: NDArray[np.float64],
) -> dict[str, Selection]:  # fmt: skip
    """``{"raw": ..., "znorm": ...}`` of the selected fits ``fits`` of ``problem`` (raw, z-normalised;
    ``params`` theirs) on the test rows; ``best[z]``: their grid index, ``accuracy[z]``: the grid's
    selection scores."""
    predicted = _predict_linear(problem, params, fits, x_test, classes)
    return {
        name: _scored("lr", bool(z), grid[best[z]], float(accuracy[z, best[z]]), predicted[:, z], y_test)
        for z, name in enumerate(("raw", "znorm"))
    }


# ------------------------------------------------------------------------------ MLP
Net = tuple["torch.Tensor", "torch.Tensor", "torch.Tensor", "torch.Tensor"]


def _initial_weights(random_state: np.random.RandomState, units: tuple[int, int, int]) -> list[NDArray[Any]]:
    """scikit-learn's Glorot-uniform start for ``units = (d, h, o)``: per layer, coefficients then
    intercepts, drawn from ``U(-s, s)`` with ``s = sqrt(2 / (fan_in + fan_out))`` (the logistic
    activation's factor 2)."""
    drawn = []
    for fan_in, fan_out in ((units[0], units[1]), (units[1], units[2])):
        bound = np.sqrt(2.0 / (fan_in + fan_out))
        drawn += [
            random_state.uniform(-bound, bound, (fan_in, fan_out)),
            random_state.uniform(-bound, bound, fan_out),
        ]
    return drawn


def _forward(net: Sequence[torch.Tensor], *xs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """Hidden (``n x G x h``) and output (``n x G x o``) activations of ``G`` stacked networks ``net =
    (*w1, b1, w2, b2)`` (``w1[s]: d x G_s x h`` the first layer of the ``G_s`` networks reading ``xs[s]``,
    input by input; ``b1: G x h``, ``w2: G x h x o``, ``b2: G x o``): the first layer is one product per
    input."""
    import torch

    *w1, b1, w2, b2 = net
    first = [x @ w.reshape(len(w), -1) for x, w in zip(xs, w1, strict=True)]
    joined = first[0] if len(first) == 1 else torch.cat(first, dim=1)
    hidden = torch.sigmoid(joined.view(len(xs[0]), *b1.shape) + b1)
    z = (hidden[:, :, :, None] * w2).sum(2) + b2  # each A_g W2_g: 15 us, against 40 as an einsum
    return hidden, torch.sigmoid(z) if z.shape[2] == 1 else torch.softmax(z, dim=2)


def _mlp_codes(net: Sequence[torch.Tensor], *xs: torch.Tensor) -> torch.Tensor:
    """``n x G`` class codes (:func:`_forward`'s networks): output above 1/2 for two classes, the
    arg-max otherwise."""
    out = _forward(net, *xs)[1]
    return (out[:, :, 0] > 0.5).long() if out.shape[2] == 1 else out.argmax(2)


class _Group:
    """The networks trained side by side, whatever input each reads (module doc: one step). Network
    ``k`` reads input ``sources[k]`` (non-decreasing); the first layer is one tensor per input (its
    product), every other tensor and all of Adam one stack, so the small operations of a step run once
    for every network: both normalisations step together."""

    def __init__(
        self, members: list[int], sources: list[int], alphas: list[float], start: Sequence[torch.Tensor]
    ) -> None:
        import torch

        if sources != sorted(sources):
            raise ValueError(f"networks must come input by input, got inputs {sources}")
        w1, b1, w2, b2 = start
        self.members, self.sources = members, sources
        self.alphas = torch.tensor(alphas, dtype=w1.dtype, device=w1.device)
        first = [w1[:, None].repeat(1, sources.count(s), 1) for s in self.inputs]
        g = len(members)
        self.params = [*first, b1.repeat(g, 1), w2.repeat(g, 1, 1), b2.repeat(g, 1)]
        self.moments = [torch.zeros_like(p) for p in self.params for _ in range(2)]
        self.t = 0  # Adam's step count (``self.count``: the same, as the fused step reads it)
        self.count = torch.zeros((), dtype=torch.float32, device=w1.device)
        self.best = [-np.inf] * g
        self.no_improvement = [0] * g
        self.best_net: list[Net] = [self.net(k) for k in range(g)]

    @property
    def inputs(self) -> list[int]:
        """The inputs the networks read, one first-layer tensor each, in order."""
        return sorted(set(self.sources))

    def net(self, k: int) -> Net:
        """A copy of network ``k``'s parameters (stack of one)."""
        *w1, b1, w2, b2 = self.params
        j = k - self.sources.index(self.sources[k])  # its place among its input's networks
        first = w1[self.inputs.index(self.sources[k])][:, j : j + 1]
        return first.clone(), b1[k : k + 1].clone(), w2[k : k + 1].clone(), b2[k : k + 1].clone()

    def step(self, xs: Sequence[torch.Tensor], y: torch.Tensor) -> None:
        """One minibatch (``xs``: the batch's rows of each input of ``inputs``): scikit-learn's
        gradients (``alpha`` over the batch's rows), each written in one pass after its product, and
        its Adam step as torch's fused Adam kernel (one pass over each parameter; ``torch.optim``'s
        functional ``adam`` around it adds 40-70 us a step: it groups the tensors and increments one
        step count per parameter, where all share ``self.count``): ``epsilon / sqrt(1 - beta_2^t)`` in
        torch's denominator ``sqrt(v) / sqrt(1 - beta_2^t) + epsilon`` is scikit-learn's ``sqrt(v) +
        epsilon``."""
        import torch

        *w1, _, w2, _ = self.params
        n = len(y)
        hidden, out = _forward(self.params, *xs)
        d2 = (out - y[:, None, :]) / n
        decay = self.alphas / n
        grad_w2 = (hidden[:, :, :, None] * d2[:, :, None, :]).sum(0).addcmul_(w2, decay[:, None, None])
        # D1 = (D2 W2^T) * A * (1 - A) in one pass, as autograd's sigmoid backward
        d1 = torch.ops.aten.sigmoid_backward((d2[:, :, None, :] * w2).sum(3), hidden)
        grad_w1, at = [], 0
        for x, w in zip(xs, w1, strict=True):
            g = w.shape[1]
            product = x.T @ d1[:, at : at + g].reshape(n, -1)
            grad_w1.append(product.view_as(w).addcmul_(w, decay[at : at + g, None]))
            at += g
        grads = [*grad_w1, d1.sum(0), grad_w2, d2.sum(0)]
        self.t += 1
        self.count.fill_(self.t)
        (beta_1, beta_2), moments = ADAM_BETAS, self.moments
        torch._fused_adam_(
            self.params, grads, moments[::2], moments[1::2], [], [self.count] * len(grads), lr=ADAM_RATE,
            beta1=beta_1, beta2=beta_2, weight_decay=0.0, eps=ADAM_EPSILON / np.sqrt(1 - beta_2**self.t),
            amsgrad=False, maximize=False,
        )  # fmt: skip

    def end_epoch(self, scores: list[float], epoch: int) -> list[tuple[int, Net]]:
        """Early stopping after an epoch (scikit-learn's rule, module doc); returns ``(member, best
        network)`` of the networks that stop now and drops them from the stack (an input with none left
        with its first layer)."""
        stopped, keep = [], []
        for k, score in enumerate(scores):
            self.no_improvement[k] = self.no_improvement[k] + 1 if score < self.best[k] + STOP_TOL else 0
            if score > self.best[k]:
                self.best[k], self.best_net[k] = score, self.net(k)
            if self.no_improvement[k] > MLP_PATIENCE or epoch == MLP_MAX_EPOCHS:
                stopped.append((self.members[k], self.best_net[k]))
            else:
                keep.append(k)
        if stopped:
            first = len(self.inputs)
            kept = [[self.sources[:k].count(s) for k in keep if self.sources[k] == s] for s in self.inputs]
            tensors = []  # per parameter: it and its moments
            for i, p in enumerate(self.params):
                rows = kept[i] if i < first else keep
                if rows:
                    parts = (p, *self.moments[2 * i : 2 * i + 2])
                    tensors.append([t[:, rows] if i < first else t[rows] for t in parts])
            self.params = [parts[0] for parts in tensors]
            self.moments = [m for parts in tensors for m in parts[1:]]
            self.alphas = self.alphas[keep]
            for name in ("members", "sources", "best", "no_improvement", "best_net"):
                setattr(self, name, [getattr(self, name)[k] for k in keep])
        return stopped


def _fit_mlps(
    inputs: Sequence[torch.Tensor],
    codes: NDArray[np.intp],
    n_classes: int,
    nets: Sequence[tuple[int, float]],
    seed: int,
) -> list[Net]:
    """One MLP per ``(input index, l2)`` of ``nets`` (ordered by input) on ``inputs[index]`` (``n x d``,
    one shape) and the class codes ``codes``, in lockstep (module doc); returns each network's best
    weights."""
    import torch
    from sklearn.utils import shuffle

    x_all = inputs[0]
    n, d = x_all.shape
    n_out = 1 if n_classes == 2 else n_classes
    onehot = np.eye(n_classes, dtype=np.float32)[codes]
    targets = onehot[:, 1:] if n_classes == 2 else onehot
    random_state = np.random.RandomState(seed)  # scikit-learn's draws: weights, split, shuffles
    start = [
        torch.as_tensor(a, dtype=x_all.dtype, device=x_all.device)
        for a in _initial_weights(random_state, (d, MLP_HIDDEN, n_out))
    ]
    # stratified by the 1-D codes: the split MLPClassifier draws from its n x 1 binarised targets (it
    # joins each row into a string first: ~30 ms per 9,600 rows, against 3)
    train_rows, valid_rows = train_test_split(
        np.arange(n), random_state=random_state, test_size=MLP_HOLDOUT, stratify=codes if n_out == 1 else None
    )
    y_train = torch.as_tensor(targets[train_rows], device=x_all.device)
    x_valid = [x[torch.as_tensor(valid_rows, device=x.device)] for x in inputs]
    x_train = [x[torch.as_tensor(train_rows, device=x.device)] for x in inputs]
    y_valid = torch.as_tensor(codes[valid_rows], device=x_all.device)
    group = _Group(
        list(range(len(nets))),
        [s for s, _ in nets],
        [MLP_BATCH * l2 for _, l2 in nets],
        (start[0], start[1], start[2], start[3]),
    )
    fitted: dict[int, Net] = {}
    order = np.arange(len(train_rows))
    batch = int(np.clip(MLP_BATCH, 1, len(train_rows)))
    for epoch in range(1, MLP_MAX_EPOCHS + 1):
        order = shuffle(order, random_state=random_state)
        for chunk in torch.as_tensor(order, device=x_all.device).split(batch):
            group.step(  # index_select: 7.5 against 25 us for 64 of 8,640 rows of 768
                [torch.index_select(x_train[s], 0, chunk) for s in group.inputs],
                torch.index_select(y_train, 0, chunk),
            )
        codes_valid = _mlp_codes(group.params, *(x_valid[s] for s in group.inputs))
        fitted.update(group.end_epoch((codes_valid == y_valid[:, None]).double().mean(0).tolist(), epoch))
        if not group.members:
            break
    return [fitted[i] for i in range(len(nets))]


def _standard_scale(x: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``StandardScaler``'s statistics of ``x``'s rows: the mean and the standard deviation (ddof 0),
    1 for a column constant up to rounding (its values are then only centred)."""
    import torch

    std, mean = torch.std_mean(x, dim=0, correction=0)
    return mean, torch.where(std > 10 * torch.finfo(x.dtype).eps * mean.abs().clamp_min(1.0), std, 1.0)


def _normalisations(x_fit: torch.Tensor, *others: torch.Tensor) -> list[list[torch.Tensor]]:
    """``[[x_fit, *others] raw, [the same z-normalised]]``, mean and standard deviation of ``x_fit``
    (``StandardScaler``: ddof 0, a constant column divided by 1), rounded back to ``x_fit``'s dtype."""
    mean, std = _standard_scale(x_fit.double())
    return [[x_fit, *others], [((x.double() - mean) / std).to(x_fit.dtype) for x in (x_fit, *others)]]


def _mlp_selections(
    x_train: torch.Tensor, y_train: NDArray[Any], x_test: torch.Tensor, y_test: NDArray[Any],
    *, seed: int, grid: Sequence[float], validation: tuple[torch.Tensor, NDArray[Any]] | None,
) -> dict[str, Selection]:  # fmt: skip
    """``{"raw": ..., "znorm": ...}``: the MLP's selection and test (module doc). The networks of
    one step (every grid point and both normalisations, then the two refits) train in lockstep."""
    import torch

    classes = np.unique(y_train)
    codes = np.searchsorted(classes, y_train)
    nets = [(z, l2) for z in (0, 1) for l2 in grid]

    def best_points(
        fits: list[Net], x_eval: list[torch.Tensor], y_eval: NDArray[Any]
    ) -> list[tuple[int, float]]:
        """Per normalisation ``(index, accuracy)`` of the best grid point; the first of equal ones."""
        y = torch.as_tensor(np.searchsorted(classes, y_eval), device=x_train.device)
        out = []
        for z in (0, 1):
            stacked = [
                torch.cat(parts, dim=int(i == 0))
                for i, parts in enumerate(zip(*fits[z * len(grid) : (z + 1) * len(grid)], strict=True))
            ]
            accuracy = (_mlp_codes(stacked, x_eval[z]) == y[:, None]).double().mean(0).cpu().numpy()
            out.append((int(np.argmax(accuracy)), float(accuracy.max())))  # the first of equal ones
        return out

    if validation is not None:  # SplitClassifier: the best grid fit is the final model
        inputs = _normalisations(x_train, validation[0], x_test)
        fits = _fit_mlps([inputs[0][0], inputs[1][0]], codes, len(classes), nets, seed)
        best = best_points(fits, [inputs[0][1], inputs[1][1]], validation[1])
        finals = [fits[z * len(grid) + best[z][0]] for z in (0, 1)]
    else:  # one stratified hold-out, then a refit of the selected point on all rows
        split = StratifiedShuffleSplit(n_splits=1, test_size=MLP_HOLDOUT, random_state=seed)
        inner_train, inner_test = (
            torch.as_tensor(r, device=x_train.device) for r in next(split.split(codes, codes))
        )
        inputs = _normalisations(x_train[inner_train], x_train[inner_test])
        fits = _fit_mlps(
            [inputs[0][0], inputs[1][0]], codes[inner_train.cpu().numpy()], len(classes), nets, seed
        )
        best = best_points(fits, [inputs[0][1], inputs[1][1]], y_train[inner_test.cpu().numpy()])
        inputs = _normalisations(x_train, x_test)
        refits = [(z, grid[best[z][0]]) for z in (0, 1)]
        finals = _fit_mlps([inputs[0][0], inputs[1][0]], codes, len(classes), refits, seed)
    return {
        name: _scored(
            "mlp",
            bool(z),
            grid[best[z][0]],
            best[z][1],
            classes[_mlp_codes(finals[z], inputs[z][-1])[:, 0].cpu().numpy()],
            y_test,
        )
        for z, name in enumerate(("raw", "znorm"))
    }


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
    device: str = "cpu",
) -> Scores:
    """Scores of the ``senteval`` protocol for one train/test split (selection on ``x_valid`` /
    ``y_valid`` when given, else by cross-validation on the training rows: the module doc).

    Per classifier ``k`` in ``kinds`` and ``z in {raw, znorm}``: ``{k}_accuracy_{z}``, ``{k}_f1_{z}``
    (macro F1), ``{k}_l2_{z}`` (the selected L2); ``{k}_accuracy`` / ``{k}_f1`` of the normalisation
    with the better selection score (raw wins ties; ``{k}_znorm`` 1.0 if z-normalised);
    ``{k}_seconds`` (wall time, for the study's cost report); ``n_train``, ``n_test`` and
    ``n_validation``. Accuracies are fractions. Torch runs on ``device``; on the CPU on one thread
    below :data:`WIDE_FEATURES` columns, on every core from there.

    Raises:
        NonFiniteEmbeddingsError: when an embedding holds NaN or infinity.
        ValueError: when the training rows have fewer than two classes."""
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
    with torch_threads(1 if x_train.shape[1] < WIDE_FEATURES else None):
        scores |= _fitted_scores(x_train, y_train, x_test, y_test, validation, seed, kinds, grid, device)
    return scores


def senteval_cv_scores(
    x: ArrayLike,
    y: ArrayLike,
    splits: Sequence[tuple[ArrayLike, ArrayLike]],
    *,
    seed: int = 1111,
    kinds: Sequence[Kind] = ("lr", "mlp"),
    grid: Sequence[float] = L2_GRID,
    device: str = "cpu",
) -> list[Scores]:
    """:func:`senteval_scores` of each ``(train, test)`` split of the rows of ``x`` (row indices; the
    cross-validated tasks' folds), selecting by cross-validation on its training rows: the same fits
    and scores, but the logistic regressions of all splits run as one batch
    (:func:`_lr_cv_fits`; their ``lr_seconds`` is the batch's time over the splits) and are
    preconditioned by the bound of all rows (the optimum is the same; the iterations to it differ).
    The MLPs train split by split, as :func:`senteval_scores` trains them.

    Raises:
        NonFiniteEmbeddingsError: when an embedding holds NaN or infinity.
        ValueError: when a split's training rows have fewer than two classes, or lack a class."""
    import torch

    x = _fit_dtype(x, "features")
    y = np.asarray(y)
    parts = [(np.asarray(train), np.asarray(test)) for train, test in splits]
    _check_kinds(kinds)
    classes = np.unique(y)
    scores: list[Scores] = []
    for k, (train, test) in enumerate(parts):
        if (present := len(np.unique(y[train]))) < 2:
            raise ValueError(f"split {k}: the training rows hold fewer than two classes; nothing to learn")
        if present < len(classes):
            raise ValueError(f"split {k}: its training rows lack a class; score it with senteval_scores")
        scores.append({"n_train": len(train), "n_test": len(test)})
    with torch_threads(1 if x.shape[1] < WIDE_FEATURES else None):
        for kind in kinds:
            if kind == "mlp":
                for split, (train, test) in zip(scores, parts, strict=True):
                    split |= _fitted_scores(
                        x[train], y[train], x[test], y[test], None, seed, ("mlp",), grid, device
                    )
                continue
            start = time.perf_counter()
            rows = torch.as_tensor(x, device=device).to(torch.float64)
            problem, params, best, accuracy = _lr_cv_fits(rows, y, [train for train, _ in parts], seed, grid)
            results = []
            for k, (_, test) in enumerate(parts):
                refits = [2 * k, 2 * k + 1]
                tested = (rows[test], y[test], classes, grid, best[k], accuracy[k])
                results.append(_lr_tested(problem, params[refits], refits, *tested))
            seconds = (time.perf_counter() - start) / len(parts)
            for split, result in zip(scores, results, strict=True):
                split |= flat(classifier_scores(result, seconds), prefix="lr_")
    return scores


def _check_kinds(kinds: Sequence[str]) -> None:
    if unknown := [kind for kind in kinds if kind not in ("lr", "mlp")]:
        raise ValueError(f"unknown classifier {unknown[0]!r}; use 'lr' or 'mlp'")


def _fitted_scores(
    x_train: NDArray[Any], y_train: NDArray[Any], x_test: NDArray[Any], y_test: NDArray[Any],
    validation: tuple[NDArray[Any], NDArray[Any]] | None,
    seed: int, kinds: Sequence[Kind], grid: Sequence[float], device: str,
) -> Scores:  # fmt: skip
    """:func:`senteval_scores`' classifier scores, the features moved to ``device`` once: float64
    for the logistic regression (as scikit-learn's L-BFGS), ``FIT_DTYPE`` for the MLP."""
    import torch

    _check_kinds(kinds)
    scores: Scores = {}
    for kind in kinds:
        start = time.perf_counter()
        dtype = torch.float64 if kind == "lr" else torch.float32
        on_device = [torch.as_tensor(x, device=device).to(dtype) for x in (x_train, x_test)]
        valid = validation and (torch.as_tensor(validation[0], device=device).to(dtype), validation[1])
        select = _lr_selections if kind == "lr" else _mlp_selections
        results = select(on_device[0], y_train, on_device[1], y_test, seed=seed, grid=grid, validation=valid)
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
