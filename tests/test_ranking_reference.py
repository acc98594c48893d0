"""The brute-force reference (``tests/ranking_reference.py``) implements the
ranking rule.

It is the one oracle of the tests and of ``benchmarks/bench_evalrank.py`` step 3; a reference with
a different rule reports false disagreements (the benchmark's former copy reported pair q=5830,
p=5829 of glove.6B.50d as 2565/0 against 2564/1: it still used an absolute tolerance on
``1 / (1 + d)`` instead of the relative one on ``d``).
"""

from __future__ import annotations

import numpy as np
from ranking_reference import brute_force_counts, rank_counts

from mteb_evalrank.evaluation.ranking import DEFAULT_TOL


def _line(distances: list[float]) -> np.ndarray:
    """Points on a line, symmetric about 0 so that centring leaves them in place.

    Row 0 is the query at 0, the others at the given distances to the right, mirrored
    to the left (so every distance appears twice and the mean is 0).
    """
    right = np.array(distances, dtype=np.float64)
    points = np.concatenate([[0.0], right, -right])
    return np.stack([points, np.zeros_like(points)], axis=1)


def test_euclidean_reference_uses_the_relative_tolerance() -> None:
    # q = 0, p at distance 5 (and its mirror at -5, a tie); u at 5 - 2e-5 on both sides.
    # Relative rule: 5 - (5 - 2e-5) = 2e-5 > 1e-6 * 5, so both u are better; the mirror of p
    # ties. (The absolute rule on 1 / (1 + d) would tie all three: the gap is 2e-5 / 36 < 1e-6.)
    emb = _line([5.0, 5.0 - 2e-5])
    better, tied = brute_force_counts(emb, [0], [1], "euclidean", DEFAULT_TOL)
    assert (int(better[0]), int(tied[0])) == (2, 1)
    got = rank_counts(emb, [0], [1], similarity="euclidean")
    assert (int(got.better[0]), int(got.tied[0])) == (2, 1)


def test_reference_agrees_with_rank_counts_on_random_rows() -> None:
    rng = np.random.default_rng(3)
    emb = rng.standard_normal((400, 8))
    emb[200:260] = emb[0]  # a group of duplicates of a query
    q, p = rng.integers(0, 400, 60), rng.integers(0, 400, 60)
    q[:5] = 0
    for similarity in ("cosine", "euclidean"):
        better, tied = brute_force_counts(emb, q.tolist(), p.tolist(), similarity, DEFAULT_TOL)
        got = rank_counts(emb, q, p, similarity=similarity)
        np.testing.assert_array_equal(got.better, better)
        np.testing.assert_array_equal(got.tied, tied)
