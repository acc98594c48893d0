"""The reference implementation of the EvalRank counts: the protocol of
:mod:`mteb_evalrank.evaluation.ranking` written out directly, in float64, one pair at a time.

It is the one oracle the fast :func:`~mteb_evalrank.evaluation.ranking.rank_counts_all` is checked
against, by the tests (``tests/test_ranking.py``, ``tests/test_ranking_reference.py``) and by the
speed benchmark's exactness step (``benchmarks/bench_evalrank.py``, step 3). It is slow on
purpose (``O(n d)`` per pair, no chunking, no float32 screening): use it to check results, never
to compute scores. :func:`rank_counts` is the fast path for one similarity, as the tests call it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import ArrayLike, NDArray

from mteb_evalrank.evaluation.ranking import (
    DEFAULT_CHUNK_BYTES,
    DEFAULT_TOL,
    RankCounts,
    Similarity,
    rank_counts_all,
)


def rank_counts(
    embeddings: ArrayLike,
    queries: Sequence[int] | NDArray[np.intp],
    positives: Sequence[int] | NDArray[np.intp],
    *,
    similarity: Similarity = "cosine",
    tol: float = DEFAULT_TOL,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> RankCounts:
    """The package's counts (:func:`~mteb_evalrank.evaluation.ranking.rank_counts_all`) of one similarity."""
    return rank_counts_all(
        embeddings, queries, positives, similarities=(similarity,), tol=tol, chunk_bytes=chunk_bytes
    )[similarity]


def _prepared_rows(embeddings: NDArray[np.float64], similarity: str) -> NDArray[np.float64]:
    """Centred rows, L2-normalised for the cosine (a zero row stays zero)."""
    x = np.asarray(embeddings, dtype=np.float64)
    centred = x - x.mean(axis=0)
    if similarity != "cosine":
        return centred
    norms = np.sqrt((centred * centred).sum(axis=1))
    safe = np.where(norms > 0, norms, 1.0)
    return np.where(norms[:, None] > 0, centred / safe[:, None], 0.0)


def _pair_counts(rows: NDArray[np.float64], q: int, p: int, similarity: str, tol: float) -> tuple[int, int]:
    """``(#better, #tied)`` of one pair ``q != p`` over the competitors ``u not in {q, p}``."""
    keep = np.ones(len(rows), dtype=bool)
    keep[[q, p]] = False
    if similarity == "cosine":  # absolute tolerance on the cosine
        sims = rows @ rows[q]
        target, others = sims[p], sims[keep]
        better = int(np.count_nonzero(others > target + tol))
        return better, int(np.count_nonzero(np.abs(others - target) <= tol))
    # euclidean: relative tolerance on the distance d(q, u)
    distances = np.sqrt(((rows - rows[q]) ** 2).sum(axis=1))
    target, others = distances[p], distances[keep]
    better = int(np.count_nonzero(target - others > tol * target))
    return better, int(np.count_nonzero(np.abs(others - target) <= tol * target))


def brute_force_counts(
    embeddings: NDArray[np.float64],
    queries: Sequence[int] | NDArray[np.integer],
    positives: Sequence[int] | NDArray[np.integer],
    similarity: str,
    tol: float = DEFAULT_TOL,
) -> tuple[NDArray[np.int64], NDArray[np.int64]]:
    """``(better, tied)`` per pair ``(queries[i], positives[i])``, by the protocol's rule.

    cosine: better ``s(q, u) > s(q, p) + tol``, tied ``|s(q, u) - s(q, p)| <= tol`` (on the
    centred, L2-normalised rows); euclidean: better ``d(q, p) - d(q, u) > tol d(q, p)``, tied
    ``|d(q, u) - d(q, p)| <= tol d(q, p)`` (on the centred rows). A pair ``q == p`` counts
    ``(0, 0)``.
    """
    rows = _prepared_rows(embeddings, similarity)
    better, tied = [], []
    for q, p in zip(np.asarray(queries).tolist(), np.asarray(positives).tolist(), strict=True):
        g, t = (0, 0) if q == p else _pair_counts(rows, q, p, similarity, tol)
        better.append(g)
        tied.append(t)
    return np.asarray(better, dtype=np.int64), np.asarray(tied, dtype=np.int64)
