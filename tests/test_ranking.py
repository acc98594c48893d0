"""The ranking maths against brute force, permutation enumeration and hand-worked cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mteb_evalrank.evaluation.ranking import (
    NonFiniteEmbeddingsError,
    RankCounts,
    hits_at,
    mean_ranks,
    rank_counts,
    rank_counts_all,
    rank_metrics,
    reciprocal_ranks,
)

TOL = 1e-6


def brute_force_counts(emb: np.ndarray, q: int, p: int, similarity: str) -> tuple[int, int]:
    """Loop over the background with the protocol written out literally."""
    if q == p:
        return 0, 0
    x = emb.astype(np.float64)
    x = x - x.mean(axis=0)

    def s(a: int, b: int) -> float:
        if similarity == "cosine":
            na, nb = np.linalg.norm(x[a]), np.linalg.norm(x[b])
            if na == 0 or nb == 0:
                return 0.0
            return float(x[a] @ x[b] / (na * nb))
        return 1.0 / (1.0 + float(np.linalg.norm(x[a] - x[b])))

    target = s(q, p)
    better = tied = 0
    for u in range(len(x)):
        if u in (q, p):
            continue
        value = s(q, u)
        if value > target + TOL:
            better += 1
        elif abs(value - target) <= TOL:
            tied += 1
    return better, tied


# Small integer coordinates: similarities are either equal or far apart (many exact ties).
embeddings = st.integers(3, 12).flatmap(
    lambda n: arrays(np.int64, (n, 3), elements=st.integers(-2, 2)).map(lambda a: a.astype(float))
)


@settings(max_examples=150, deadline=None)
@given(data=st.data(), emb=embeddings, similarity=st.sampled_from(["cosine", "euclidean"]))
def test_counts_match_brute_force(data: st.DataObject, emb: np.ndarray, similarity: str) -> None:
    n = len(emb)
    pairs = data.draw(st.lists(st.tuples(st.integers(0, n - 1), st.integers(0, n - 1)), min_size=1))
    q = np.array([a for a, _ in pairs])
    p = np.array([b for _, b in pairs])
    chunk = data.draw(st.sampled_from([1, 64, 1 << 20]))  # tiny chunks exercise chunking
    counts = rank_counts(emb, q, p, similarity=similarity, chunk_bytes=chunk)  # type: ignore[arg-type]
    expected = [brute_force_counts(emb, a, b, similarity) for a, b in pairs]
    assert list(zip(counts.better.tolist(), counts.tied.tolist(), strict=True)) == expected


def enumerate_tie_breaks(scores: list[int], positive: int) -> list[int]:
    """Rank of ``positive`` under every ordering of the items, ties broken by that ordering."""
    ranks = []
    for order in itertools.permutations(range(len(scores))):
        position = {item: i for i, item in enumerate(order)}
        ranked = sorted(range(len(scores)), key=lambda i: (-scores[i], position[i]))
        ranks.append(ranked.index(positive) + 1)
    return ranks


@settings(max_examples=60, deadline=None)
@given(scores=st.lists(st.integers(0, 3), min_size=1, max_size=6), k=st.integers(1, 4))
def test_expected_policy_equals_average_over_all_tie_breaks(scores: list[int], k: int) -> None:
    # item 0 is the positive, the others are competitors
    ranks = enumerate_tie_breaks(scores, 0)
    g = sum(s > scores[0] for s in scores[1:])
    t = sum(s == scores[0] for s in scores[1:])
    counts = RankCounts(np.array([g]), np.array([t]))
    assert reciprocal_ranks(counts, "expected")[0] == pytest.approx(
        np.mean([1 / r for r in ranks]), rel=1e-12
    )
    assert hits_at(counts, k, "expected")[0] == pytest.approx(np.mean([r <= k for r in ranks]), rel=1e-12)
    assert mean_ranks(counts, "expected")[0] == pytest.approx(np.mean(ranks), rel=1e-12)
    assert reciprocal_ranks(counts, "optimistic")[0] == pytest.approx(1 / min(ranks))
    assert reciprocal_ranks(counts, "pessimistic")[0] == pytest.approx(1 / max(ranks))
    assert mean_ranks(counts, "optimistic")[0] == min(ranks)
    assert mean_ranks(counts, "pessimistic")[0] == max(ranks)


def test_hand_worked_example() -> None:
    # Background on a line after centring: items 0..4 at x = -2, -1, 0, 1, 2 (2-D, y = 0).
    emb = np.array([[-2.0, 0], [-1, 0], [0, 0], [1, 0], [2, 0]]) + 7.0
    # euclidean, query 2 (x=0), positive 3 (x=1): s = 1/2; item 1 ties (distance 1),
    # items 0 and 4 are worse (distance 2) -> g = 0, t = 1 -> ranks 1 or 2.
    counts = rank_counts(emb, [2], [3], similarity="euclidean")
    assert (counts.better[0], counts.tied[0]) == (0, 1)
    assert rank_metrics(counts, ks=(1,))["hits_at_1"] == 0.5
    assert rank_metrics(counts)["mrr"] == pytest.approx((1 + 1 / 2) / 2)
    # cosine, query 3 (x=1), positive 4 (x=2): cos = 1; item 2 is the zero vector
    # (cos 0), items 0 and 1 point the other way (cos -1) -> rank 1.
    counts = rank_counts(emb, [3], [4], similarity="cosine")
    assert (counts.better[0], counts.tied[0]) == (0, 0)
    # cosine, query 0 (x=-2), positive 4 (x=2): cos -1; item 1 has cos 1 (better),
    # item 2 cos 0 (better), item 3 cos -1 (tie) -> g = 2, t = 1
    counts = rank_counts(emb, [0], [4], similarity="cosine")
    assert (counts.better[0], counts.tied[0]) == (2, 1)
    assert rank_metrics(counts, tie_policy="optimistic")["mrr"] == pytest.approx(1 / 3)
    assert rank_metrics(counts, tie_policy="pessimistic")["mrr"] == pytest.approx(1 / 4)


def test_identical_sides_rank_first() -> None:
    emb = np.random.default_rng(0).normal(size=(20, 4))
    counts = rank_counts(emb, [5, 5], [5, 6])
    assert counts.better[0] == 0 and counts.tied[0] == 0
    assert reciprocal_ranks(counts)[0] == 1.0


@pytest.mark.parametrize("similarity", ["cosine", "euclidean"])
@pytest.mark.parametrize("value", [0.0, 3.5])
def test_constant_and_zero_encoders_score_near_zero(similarity: str, value: float) -> None:
    n = 1000
    emb = np.full((n, 8), value)
    q = np.arange(0, n - 1)
    counts = rank_counts(emb, q, q + 1, similarity=similarity)  # type: ignore[arg-type]
    # every competitor ties: rank uniform on 1..n-1, MRR = H(n-1)/(n-1)
    harmonic = sum(1 / r for r in range(1, n))
    assert rank_metrics(counts)["mrr"] == pytest.approx(harmonic / (n - 1))
    assert rank_metrics(counts)["mrr"] < 0.01


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_non_finite_embeddings_are_refused_with_a_count(bad: float) -> None:
    emb = np.ones((10, 3))
    emb[[2, 7], 1] = bad
    with pytest.raises(NonFiniteEmbeddingsError, match="2 of 10 embeddings"):
        rank_counts(emb, [0], [1])


def test_bad_arguments() -> None:
    emb = np.eye(4)
    with pytest.raises(IndexError):
        rank_counts(emb, [0], [4])
    with pytest.raises(ValueError, match="similarity"):
        rank_counts(emb, [0], [1], similarity="dot")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="tie_policy"):
        reciprocal_ranks(RankCounts(np.array([0]), np.array([0])), "random")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="2-D"):
        rank_counts(np.ones(4), [0], [1])


def test_large_rank_reciprocal_is_exact() -> None:
    counts = RankCounts(np.array([10_000]), np.array([5_000]))
    exact = math.fsum(1 / r for r in range(10_001, 15_002)) / 5_001
    assert reciprocal_ranks(counts)[0] == pytest.approx(exact, rel=1e-12)


def test_float32_fast_path_is_exact_next_to_the_decision_band() -> None:
    """Competitors within float32 error of s(q, p) must be classified as in float64."""
    rng = np.random.default_rng(7)
    n, dim = 1200, 384
    x = rng.normal(size=(n, dim)) * rng.uniform(0.2, 8.0, size=(n, 1))
    # rows 1..600 are the positive (row 0's partner, row 1) perturbed by 1e-9 .. 1e-3
    scales = np.geomspace(1e-9, 1e-3, 600)[:, None]
    x[1:601] = x[1] + scales * rng.normal(size=(600, dim)) * np.linalg.norm(x[1]) / np.sqrt(dim)
    queries, positives = np.zeros(5, dtype=np.intp), np.array([1, 2, 50, 300, 1000])
    got = rank_counts_all(x, queries, positives)
    for similarity in ("cosine", "euclidean"):
        expected = [brute_force_counts(x, 0, int(p), similarity) for p in positives]
        assert (
            list(zip(got[similarity].better.tolist(), got[similarity].tied.tolist(), strict=True)) == expected
        )
        assert sum(t for _, t in expected) > 0  # the case really has ties within tol
