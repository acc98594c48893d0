"""The types of the plugin's scores: fixed-shape pieces (TypedDicts) flattened into a task's
:data:`Scores` under keys built at run time (``cosine_``, ``hits_at_{k}``, ``lr_``, ``[column=value]``),
which a TypedDict cannot list (no PEP 728 in mypy).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TypedDict, cast

#: A task's scores for one hf_subset: metric name -> number (the pieces below, flattened).
Scores = dict[str, float | int]


class TripletAccuracy(TypedDict):
    """The accuracies and tie counts of a set of triplets (``triplets.triplet_accuracy``)."""

    anchor_accuracy: float
    paraphrase_accuracy: float
    n_triplets: int
    n_anchor_ties: int
    n_paraphrase_ties: int


class ClassifierScores(TypedDict):
    """One classifier's ``senteval``-protocol scores (``classifiers.senteval_scores``)."""

    accuracy_raw: float
    f1_raw: float
    l2_raw: float
    accuracy_znorm: float
    f1_znorm: float
    l2_znorm: float
    accuracy: float
    f1: float
    znorm: float
    seconds: float


def flat(piece: TripletAccuracy | ClassifierScores, *, prefix: str = "", suffix: str = "") -> Scores:
    """``piece``'s values as :data:`Scores` under ``{prefix}{key}{suffix}``, in its order."""
    numbers = cast("Mapping[str, float | int]", piece)  # every value of these TypedDicts is a number
    return {f"{prefix}{key}{suffix}": value for key, value in numbers.items()}
