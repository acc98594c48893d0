"""Triplet accuracies (AccSent, docs/accsent.md) of triplets ``(X, X', Y)`` (anchor, paraphrase,
one-word swap) under a similarity ``s``:

* anchor accuracy     ``A_x  = mean_i [ s(X_i, X'_i) - s(X_i,  Y_i) > tol ]``
* paraphrase accuracy ``A_x' = mean_i [ s(X_i, X'_i) - s(X'_i, Y_i) > tol ]``

A tie (within ``tol``, default ``ranking.DEFAULT_TOL``) and a NaN similarity fail, so a constant,
zero or NaN encoder scores 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
from numpy.typing import ArrayLike, NDArray

from .ranking import DEFAULT_TOL
from .scores import Scores, TripletAccuracy, flat


@dataclass(frozen=True)
class TripletOutcomes:
    """Per-triplet successes ``s(X, X') - s(X, Y) > tol`` (``anchor``), ``s(X, X') - s(X', Y) > tol``
    (``paraphrase``), and ties (difference within ``tol``, or a NaN) of each."""

    anchor: NDArray[np.bool_]
    paraphrase: NDArray[np.bool_]
    anchor_ties: NDArray[np.bool_]
    paraphrase_ties: NDArray[np.bool_]


def _as_vector(values: ArrayLike) -> NDArray[np.float64]:
    if hasattr(values, "detach"):  # torch tensor
        values = values.detach().cpu().double().numpy()
    return np.asarray(values, dtype=np.float64).reshape(-1)


def triplet_outcomes(
    sim_anchor_positive: ArrayLike,
    sim_anchor_negative: ArrayLike,
    sim_positive_negative: ArrayLike,
    *,
    tol: float = DEFAULT_TOL,
) -> TripletOutcomes:
    """Successes and ties per triplet (see :class:`TripletOutcomes`) from the three pairwise
    similarities (same length)."""
    if tol < 0:
        raise ValueError(f"tol must be >= 0, got {tol}")
    ap, an, pn = (_as_vector(v) for v in (sim_anchor_positive, sim_anchor_negative, sim_positive_negative))
    if not ap.shape == an.shape == pn.shape:
        raise ValueError(
            f"the three similarity vectors differ in length: {ap.shape[0]}, {an.shape[0]}, {pn.shape[0]}"
        )
    with np.errstate(invalid="ignore"):
        anchor_margin, paraphrase_margin = ap - an, ap - pn
        anchor, paraphrase = anchor_margin > tol, paraphrase_margin > tol  # NaN > tol is False
        anchor_losses, paraphrase_losses = anchor_margin < -tol, paraphrase_margin < -tol
    return TripletOutcomes(
        anchor=anchor,
        paraphrase=paraphrase,
        anchor_ties=~anchor & ~anchor_losses,
        paraphrase_ties=~paraphrase & ~paraphrase_losses,
    )


def triplet_accuracy(outcomes: TripletOutcomes) -> TripletAccuracy:
    """The anchor and paraphrase accuracies, the number of triplets and the tie counts (an accuracy
    of no triplets is undefined: an error)."""
    n = int(outcomes.anchor.size)
    if n == 0:
        raise ValueError("no triplets to score")
    return {
        "anchor_accuracy": float(outcomes.anchor.mean()),
        "paraphrase_accuracy": float(outcomes.paraphrase.mean()),
        "n_triplets": n,
        "n_anchor_ties": int(outcomes.anchor_ties.sum()),
        "n_paraphrase_ties": int(outcomes.paraphrase_ties.sum()),
    }


def accuracy_scores(outcomes: TripletOutcomes, suffix: str = "") -> Scores:
    """:func:`triplet_accuracy` with ``suffix`` appended to every key (e.g. ``[length_bucket=short]``)."""
    return flat(triplet_accuracy(outcomes), suffix=suffix)


def grouped_accuracy_scores(outcomes: TripletOutcomes, groups: Mapping[str, Sequence[Any]]) -> Scores:
    """:func:`accuracy_scores` overall and, with the suffix ``[c=v]``, for each label ``v`` (sorted) of
    each column ``c`` of ``groups`` (one label per triplet)."""
    scores = accuracy_scores(outcomes)
    n = outcomes.anchor.size
    for column, labels in groups.items():
        if len(labels) != n:
            raise ValueError(f"column {column!r} has {len(labels)} labels for {n} triplets")
        values = np.asarray([str(label) for label in labels], dtype=object)
        for value in sorted(set(values.tolist())):
            subset = TripletOutcomes(**{name: kept[values == value] for name, kept in vars(outcomes).items()})
            scores.update(accuracy_scores(subset, f"[{column}={value}]"))
    return scores
