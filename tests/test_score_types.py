"""The scores the plugin's evaluators return: EvalRank's rank metrics and the TypedDicts
``TripletAccuracy`` and ``ClassifierScores`` (``mteb_evalrank.evaluation.scores``) flattened under the
prefixes and suffixes the tasks use, every value a number."""

from __future__ import annotations

import numpy as np
import pytest

from mteb_evalrank.evaluation.classifiers import senteval_scores
from mteb_evalrank.evaluation.ranking import RankCounts, rank_metrics
from mteb_evalrank.evaluation.scores import ClassifierScores, TripletAccuracy
from mteb_evalrank.evaluation.triplets import accuracy_scores, triplet_accuracy, triplet_outcomes


def test_rank_metrics_are_flat_means_under_the_prefix() -> None:
    counts = RankCounts(np.array([0, 2, 5]), np.array([0, 1, 0]))
    flat = rank_metrics(counts, ks=(1, 3), prefix="cosine_")
    assert list(flat) == ["cosine_mrr", "cosine_hits_at_1", "cosine_hits_at_3", "cosine_mean_rank"]
    assert flat["cosine_mrr"] == pytest.approx((1 + (1 / 3 + 1 / 4) / 2 + 1 / 6) / 3)
    assert flat["cosine_hits_at_3"] == pytest.approx((1 + 1 / 2 + 0) / 3)
    assert all(isinstance(value, float) for value in flat.values())


def test_triplet_scores_are_the_triplet_accuracy_with_a_suffix() -> None:
    outcomes = triplet_outcomes([0.9, 0.2, 0.5], [0.1, 0.3, 0.5], [0.0, 0.0, 0.0])
    accuracy = triplet_accuracy(outcomes)
    assert list(accuracy) == list(TripletAccuracy.__annotations__)
    assert accuracy_scores(outcomes, "[x=1]") == {f"{key}[x=1]": value for key, value in accuracy.items()}
    with pytest.raises(ValueError, match="no triplets to score"):
        accuracy_scores(triplet_outcomes([], [], []), "[x=1]")


def test_senteval_scores_are_one_classifier_scores_per_classifier() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(90, 3))
    y = (x[:, 0] > 0).astype(int)
    scores = senteval_scores(x[:60], y[:60], x[60:], y[60:], kinds=("lr",))
    assert list(scores) == ["n_train", "n_test", *(f"lr_{key}" for key in ClassifierScores.__annotations__)]
    assert all(isinstance(value, int | float) for value in scores.values())
