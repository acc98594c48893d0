"""Chiu et al.'s (2016) window tagger over frozen word vectors, and its scores; the protocol and
why: docs/sequence_labelling.md.

Vectors :func:`centred` (known rows minus their mean; zero rows stay zero). Input of token ``t``:
for the words ``t-2 .. t+2`` of its sentence (:data:`WINDOW`), the vector and the one-hot
:func:`capitalisation` pattern, concatenated (``5 d + 5 * 5`` numbers; outside the sentence: the
zero vector and ``PAD``), gathered per mini-batch from index arrays (:func:`windows`).
``h = hardtanh(W1 x + b1)`` (300 units), ``p = softmax(W2 h + b2)``; mean cross-entropy over
mini-batches of 50 tokens reshuffled each epoch, 10 epochs of Adam (defaults, torch's fused update),
torch's default initialisation; greedy decoding (per-token argmax). A seed sets the initialisation
and the shuffles (the caller's random state untouched); a task's seeds train side by side (one
batched product per layer and step); threads: :data:`WIDE_INPUT`.

Scores: token accuracy and conlleval's chunk precision, recall and F1 (:func:`chunk_scores`,
``seqeval``'s default mode: a chunk starts at ``B-X``, at ``I-X`` after ``O`` or another type, and
ends at the sentence's end; micro-averaged; per-type F1 too).
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from numpy.typing import NDArray

if TYPE_CHECKING:
    import torch

WINDOW = 5
"""Words per window: the token and two on each side."""
PAD, LOWER, INITIAL, UPPER, MIXED = range(5)
"""The capitalisation patterns (:func:`capitalisation`); ``PAD`` marks a position outside the sentence."""
N_CAPS = 5


def capitalisation(token: str) -> int:
    """The capitalisation pattern of ``token`` (Collobert et al., 2011): ``LOWER`` no upper-case
    character (``the``, ``1990``); ``UPPER`` at least two cased characters, all upper case (``IBM``,
    ``U.S.``); ``INITIAL`` only the first upper case (``Paris``, ``I``); ``MIXED`` any other (``iPhone``)."""
    cased = [char for char in token if char.lower() != char.upper()]
    if not any(char.isupper() for char in cased):
        return LOWER
    if len(cased) >= 2 and all(char.isupper() for char in cased):
        return UPPER
    if token[0].isupper() and not any(char.isupper() for char in token[1:]):
        return INITIAL
    return MIXED


def windows(
    values: NDArray[np.intp], lengths: Sequence[int], pad: int, width: int = WINDOW
) -> NDArray[np.intp]:
    """``(n_tokens, width)``: row ``t`` holds ``values[t - h .. t + h]`` (``h = width // 2``) where those
    tokens are in ``t``'s sentence, ``pad`` elsewhere (``values``: one per token of the sentences end to
    end; ``lengths``: the sentences' lengths)."""
    sizes = np.asarray(lengths, dtype=np.intp)
    if sizes.sum() != len(values):
        raise ValueError(f"the sentence lengths sum to {sizes.sum()}, not to the {len(values)} tokens")
    ends = np.repeat(np.cumsum(sizes), sizes)
    starts = ends - np.repeat(sizes, sizes)
    neighbours = np.arange(len(values))[:, None] + (np.arange(width) - width // 2)[None, :]
    inside = (neighbours >= starts[:, None]) & (neighbours < ends[:, None])
    return np.where(inside, np.asarray(values)[np.clip(neighbours, 0, max(len(values) - 1, 0))], pad)


def centred(vectors: NDArray[np.floating], n_mean: int | None = None) -> NDArray[np.float64]:
    """``vectors`` with the mean of their non-zero rows (of the first ``n_mean``; default all) subtracted
    from every non-zero row (zero rows stay zero), in float64: a constant encoder's become zero."""
    matrix = np.asarray(vectors, dtype=np.float64)
    known = np.any(matrix != 0, axis=1)
    if not known[:n_mean].any():
        return matrix.copy()
    return np.where(known[:, None], matrix - matrix[:n_mean][known[:n_mean]].mean(axis=0), 0.0)


#: the input width (``5 d + 25``, ``d`` >= 128) from which the CPU tagger trains on every core;
#: below it on one thread (small matrices: more threads only spin)
WIDE_INPUT = WINDOW * (128 + N_CAPS)


@dataclass(frozen=True)
class TaggerConfig:
    """The window tagger's settings (the defaults are Chiu et al.'s)."""

    hidden: int = 300
    epochs: int = 10
    batch_size: int = 50
    threads: int | None = None
    """torch's CPU threads while training; ``None``: :func:`training_threads`' rule."""
    predict_batch: int = 8192
    """Test tokens scored at once (memory only; the predictions do not depend on it)."""
    device: str = "cpu"
    """Where torch trains and predicts; initialisation and shuffles come from CPU generators, so
    another device differs by rounding only."""


@dataclass(frozen=True)
class TaggerInput:
    """The windows of a split: ``words`` index the frozen matrix (0 = padding), ``caps`` the patterns."""

    words: NDArray[np.intp]
    caps: NDArray[np.intp]

    @classmethod
    def of(cls, rows: NDArray[np.intp], caps: NDArray[np.intp], lengths: Sequence[int]) -> TaggerInput:
        """From each token's row of the vector matrix (without the padding row) and pattern."""
        return cls(windows(np.asarray(rows) + 1, lengths, 0), windows(np.asarray(caps), lengths, PAD))


def training_threads(width: int, config: TaggerConfig) -> int | None:
    """The CPU threads a tagger of input ``width`` trains on: ``config.threads`` if set, else one
    below :data:`WIDE_INPUT` and ``None`` (torch's pool, every core) from it."""
    if config.threads is not None:
        return config.threads
    return 1 if width < WIDE_INPUT else None


@contextmanager
def torch_threads(n: int | None) -> Iterator[None]:
    """torch's intra-op thread count set to ``n`` for the block (``None``: left as it is), then restored."""
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n or before)
    try:
        yield
    finally:
        torch.set_num_threads(before)


def _features(
    matrix: torch.Tensor, data: tuple[torch.Tensor, torch.Tensor], rows: torch.Tensor
) -> torch.Tensor:
    """The input vectors of the tokens ``rows`` of ``data`` (the windows' word and pattern indices,
    on ``matrix``'s device): window vectors and one-hot patterns, concatenated."""
    import torch

    words, caps = data
    caps_one_hot = torch.nn.functional.one_hot(caps[rows], N_CAPS).to(matrix.dtype)
    return torch.cat([matrix[words[rows]].flatten(1), caps_one_hot.flatten(1)], dim=1)


def train_and_predict(
    vectors: NDArray[np.floating], train: TaggerInput, labels: NDArray[np.intp], test: TaggerInput,
    n_labels: int, *, seed: int, config: TaggerConfig = TaggerConfig(),
) -> NDArray[np.intp]:  # fmt: skip
    """Chiu et al.'s tagger: :func:`train_and_select`'s final test predictions, one seed, no dev split."""
    return train_and_select(vectors, train, labels, test, n_labels, seeds=(seed,), config=config)[0][0]


def train_and_select(
    vectors: NDArray[np.floating], train: TaggerInput, labels: NDArray[np.intp], test: TaggerInput,
    n_labels: int, *, seeds: Sequence[int], config: TaggerConfig = TaggerConfig(),
    dev: tuple[TaggerInput, Callable[[NDArray[np.intp]], float]] | None = None,
    l2: Sequence[float] | None = None,
) -> list[tuple[NDArray[np.intp], NDArray[np.intp], int]]:  # fmt: skip
    """Train one window tagger per seed on ``train`` (gold ``labels`` in ``0 .. n_labels - 1``) and return
    each one's greedy predictions for ``test``. ``vectors`` (``V x d``): a window's index ``i > 0`` is row
    ``i - 1``, 0 the zero padding. On ``config.device``; on the CPU with :func:`training_threads` threads.
    The seeds' taggers train side by side (their weights stacked, one batched product per layer and
    step, one Adam update): each seed's initialisation, shuffles and updates are those of a tagger
    trained alone. Per seed ``(final, selected, epoch)``: with ``dev`` (windows, and a score of
    predictions for them, higher better), after each epoch ``dev`` is predicted and scored, and
    ``selected`` are the test predictions of the first ``epoch`` (1-based) of the highest dev score (the
    same run: predicting draws no random number); without, the final epoch's. ``l2`` (one per seed, default
    0, Chiu's): tagger ``k``'s objective adds ``l2[k] / 2`` times the squared norm of its two weight
    matrices (not the biases) to its mean loss; a seed may repeat with another ``l2``."""
    import torch
    from torch.nn.functional import cross_entropy, hardtanh

    device = torch.device(config.device)
    rows = np.vstack([np.zeros((1, vectors.shape[1])), vectors]).astype(np.float32)
    matrix = torch.from_numpy(rows).to(device)
    targets = torch.from_numpy(np.asarray(labels, dtype=np.int64)).to(device)
    # the windows on the device once: a step then copies nothing between host and device
    train_data, test_data, dev_data = (
        (torch.from_numpy(x.words).to(device), torch.from_numpy(x.caps).to(device))
        for x in (train, test, dev[0] if dev else test)
    )
    width = WINDOW * (matrix.shape[1] + N_CAPS)

    def predict(k: int, data: tuple[torch.Tensor, torch.Tensor]) -> NDArray[np.intp]:
        w1, b1, w2, b2 = (p[k] for p in params)
        with torch.no_grad():
            chunks = torch.arange(len(data[0]), device=device).split(config.predict_batch)
            out = [(hardtanh(_features(matrix, data, r) @ w1 + b1) @ w2 + b2).argmax(1) for r in chunks]
        return torch.cat(out).cpu().numpy().astype(np.intp)

    with torch_threads(training_threads(width, config)), torch.random.fork_rng(devices=[]):
        layers = []
        for seed in seeds:  # torch's default initialisation, drawn on the CPU (the same on every device)
            torch.manual_seed(seed)
            layers.append((torch.nn.Linear(width, config.hidden), torch.nn.Linear(config.hidden, n_labels)))
        params = [  # stacked over the seeds; weights as inputs x outputs
            torch.stack([p for pair in layers for p in [pair[i].weight.T, pair[i].bias][j : j + 1]])
            .detach().to(device).requires_grad_()
            for i in (0, 1) for j in (0, 1)
        ]  # fmt: skip
        optimiser = torch.optim.Adam(params, fused=True)  # default parameters, one kernel
        penalty = torch.tensor(l2 or [0.0] * len(seeds), dtype=torch.float32, device=device)[:, None, None]
        penalty = penalty / 2
        shuffles = [torch.Generator().manual_seed(seed) for seed in seeds]
        best = [(-np.inf, 0, np.empty(0, dtype=np.intp)) for _ in seeds]
        for epoch in range(1, config.epochs + 1):
            orders = torch.stack([torch.randperm(len(targets), generator=g) for g in shuffles]).to(device)
            for batch in orders.split(config.batch_size, dim=1):  # seeds x tokens of the step
                w1, b1, w2, b2 = params
                x = _features(matrix, train_data, batch.flatten()).view(*batch.shape, -1)
                z = torch.baddbmm(b2[:, None], hardtanh(torch.baddbmm(b1[:, None], x, w1)), w2)
                loss = (
                    cross_entropy(z.flatten(0, 1), targets[batch.flatten()], reduction="sum") / batch.shape[1]
                )
                if l2:
                    loss = loss + (penalty * w1**2).sum() + (penalty * w2**2).sum()
                optimiser.zero_grad()
                loss.backward()  # the sum of the seeds' mean losses: each seed's own gradient
                optimiser.step()
            for k in range(len(seeds) if dev else 0):
                if (score := dev[1](predict(k, dev_data))) > best[k][0]:  # type: ignore[index]
                    best[k] = (score, epoch, predict(k, test_data))
        finals = [predict(k, test_data) for k in range(len(seeds))]
    return [(f, b[2], b[1]) if dev else (f, f, config.epochs) for f, b in zip(finals, best, strict=True)]


# --------------------------------------------------------------------------- scores
def token_accuracy(gold: Sequence[str], predicted: Sequence[str]) -> float:
    """Share of tokens whose predicted tag is the gold one."""
    if len(gold) != len(predicted) or not gold:
        raise ValueError(
            f"{len(gold)} gold and {len(predicted)} predicted tags: need the same, non-zero number"
        )
    return float(np.mean(np.asarray(gold) == np.asarray(predicted)))


def chunk_scores(gold: Sequence[Sequence[str]], predicted: Sequence[Sequence[str]]) -> dict[str, float]:
    """conlleval's chunk scores of IOB-tagged sentences (seqeval, default mode): ``precision``,
    ``recall``, ``f1`` (micro over chunks, ``2 P R / (P + R)``, 0 when nothing is found), ``accuracy``
    (tokens) and ``f1[type=X]`` per chunk type of the gold or predicted tags."""
    from seqeval.metrics import classification_report

    as_lists = [list(sentence) for sentence in gold], [list(sentence) for sentence in predicted]
    with warnings.catch_warnings():  # no chunk at all: numpy warns of its empty means, F1 is 0
        warnings.simplefilter("ignore", RuntimeWarning)
        report: dict[str, Any] = classification_report(*as_lists, output_dict=True, zero_division=0)
    micro = report["micro avg"]
    scores = {
        "precision": float(micro["precision"]),
        "recall": float(micro["recall"]),
        "f1": float(micro["f1-score"]),
        "accuracy": token_accuracy([t for s in gold for t in s], [t for s in predicted for t in s]),
    }
    types = sorted(key for key in report if not key.endswith(" avg"))
    scores.update({f"f1[type={name}]": float(report[name]["f1-score"]) for name in types})
    return scores
