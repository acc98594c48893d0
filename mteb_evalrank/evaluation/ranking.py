"""Exact EvalRank ranking maths (Wang et al., ACL 2022), as small pure functions.

Protocol
--------
Let ``B`` be the background (``n`` items) and ``E`` their embeddings, one row each.

1. Centre: ``E <- E - mean(E over B)``.
2. Similarity on the centred rows:

   * ``cosine``: rows are L2-normalised (a zero row stays zero) and
     ``s(a, b) = a . b``;
   * ``euclidean``: ``s(a, b) = 1 / (1 + ||a - b||)``.

3. For a positive pair ``(q, p)`` (indices into ``B``): if ``q == p`` the rank is 1.
   Otherwise, over the competitors ``u in B \\ {q, p}``::

       g = #{u : s(q, u) > s(q, p) + tol}            (strictly better)
       t = #{u : |s(q, u) - s(q, p)| <= tol}          (tied), tol = 1e-6

   so the positive occupies one of the positions ``1 + g .. 1 + g + t``. Other positives
   of ``q`` are competitors, as in the paper. Ranks are against the *whole* background,
   never a top-k cut.

4. Tie policy:

   * ``expected`` (default; uniformly random tie-breaking, computed exactly):
     ``RR = mean_{r = 1+g}^{1+g+t} 1/r = (H(1+g+t) - H(g)) / (t + 1)`` with ``H`` the
     harmonic numbers, ``Hits@k = clip(k - g, 0, t + 1) / (t + 1)``,
     ``mean rank = 1 + g + t/2``;
   * ``optimistic``: rank ``1 + g``; ``pessimistic``: rank ``1 + g + t``.

``MRR``, ``Hits@k`` and mean rank are the means over all pairs.

Why hand-written: mteb's stock retrieval evaluator (and pytrec_eval) only sees a top-k
cut and breaks ties by document id; neither gives whole-background ranks with an exact
tie policy, so the counting is done here, in memory-bounded chunks.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import digamma

Similarity = Literal["cosine", "euclidean"]
TiePolicy = Literal["expected", "optimistic", "pessimistic"]

SIMILARITIES: tuple[Similarity, ...] = ("cosine", "euclidean")
TIE_POLICIES: tuple[TiePolicy, ...] = ("expected", "optimistic", "pessimistic")
DEFAULT_TOL = 1e-6
DEFAULT_KS: tuple[int, ...] = (1, 3, 10)
#: Memory budget for one chunk of the similarity matrix and its comparison masks.
DEFAULT_CHUNK_BYTES = 128 * 2**20


class NonFiniteEmbeddingsError(ValueError):
    """Raised when embeddings contain NaN or infinite values."""

    def __init__(self, n_bad_rows: int, n_rows: int, where: str = "") -> None:
        self.n_bad_rows = n_bad_rows
        self.n_rows = n_rows
        prefix = f"{where}: " if where else ""
        super().__init__(
            f"{prefix}{n_bad_rows} of {n_rows} embeddings contain NaN or inf values; "
            "the encoder is broken for these inputs (check its dtype/precision and "
            "inputs) and EvalRank cannot rank them."
        )


@dataclass(frozen=True)
class RankCounts:
    """Per-pair rank counts: ``g`` competitors strictly better, ``t`` tied."""

    better: NDArray[np.int64]
    tied: NDArray[np.int64]

    def __len__(self) -> int:
        return len(self.better)

    def select(self, index: NDArray[np.intp]) -> RankCounts:
        """The counts of the pairs at ``index``."""
        return RankCounts(self.better[index], self.tied[index])


def check_embeddings(embeddings: ArrayLike, *, where: str = "") -> NDArray[np.float64]:
    """Validate a 2-D matrix of finite embeddings and return it as float64.

    Raises:
        ValueError: if the array is not 2-D or has no rows.
        NonFiniteEmbeddingsError: if any row holds NaN or inf (the message counts them).
    """
    matrix = np.asarray(embeddings, dtype=np.float64)
    prefix = f"{where}: " if where else ""
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(
            f"{prefix}expected a non-empty 2-D embedding matrix (n_items, dim), got shape {matrix.shape}."
        )
    bad = ~np.isfinite(matrix).all(axis=1)
    if bad.any():
        raise NonFiniteEmbeddingsError(int(bad.sum()), matrix.shape[0], where)
    return matrix


def centre(embeddings: NDArray[np.float64]) -> NDArray[np.float64]:
    """``E - mean(E)``: subtract the mean background embedding from every row."""
    return embeddings - embeddings.mean(axis=0, keepdims=True)


def l2_normalise(embeddings: NDArray[np.float64]) -> NDArray[np.float64]:
    """Rows divided by their L2 norm; a zero row stays zero (its cosine is 0)."""
    norms = np.linalg.norm(embeddings, axis=1, keepdims=True)
    return np.divide(embeddings, norms, out=np.zeros_like(embeddings), where=norms > 0)


def _chunk_rows(n_background: int, chunk_bytes: int) -> int:
    # one float64 similarity row plus two boolean masks per pair
    return max(1, chunk_bytes // (n_background * 10))


def _chunks(n: int, size: int) -> Iterator[slice]:
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


def similarity_rows(
    prepared: NDArray[np.float64],
    rows: NDArray[np.intp],
    similarity: Similarity,
    sq_norms: NDArray[np.float64] | None = None,
) -> NDArray[np.float64]:
    """``s(prepared[rows[i]], prepared[j])`` for every ``i`` and every background ``j``.

    ``prepared`` holds the centred rows, L2-normalised for ``cosine``. For
    ``euclidean`` the distance uses ``||a-b||^2 = ||a||^2 + ||b||^2 - 2 a.b`` (clipped
    at 0), with ``sq_norms`` the squared row norms.
    """
    dots = prepared[rows] @ prepared.T
    if similarity == "cosine":
        return dots
    if sq_norms is None:
        sq_norms = np.einsum("ij,ij->i", prepared, prepared)
    sq_dist = sq_norms[rows, None] + sq_norms[None, :] - 2.0 * dots
    np.maximum(sq_dist, 0.0, out=sq_dist)
    return 1.0 / (1.0 + np.sqrt(sq_dist, out=sq_dist))


def rank_counts(
    embeddings: ArrayLike,
    queries: Sequence[int] | NDArray[np.intp],
    positives: Sequence[int] | NDArray[np.intp],
    *,
    similarity: Similarity = "cosine",
    tol: float = DEFAULT_TOL,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
) -> RankCounts:
    """Count, for each pair ``(queries[i], positives[i])``, the better and tied competitors.

    ``embeddings`` are the raw background embeddings (centred here). Pairs whose two
    sides are the same background item get ``g = t = 0`` (rank 1). The similarity matrix
    is formed ``chunk_bytes`` at a time, so peak extra memory is bounded by it (plus the
    centred copy of the embeddings).
    """
    matrix = centre(check_embeddings(embeddings))
    q = np.asarray(queries, dtype=np.intp)
    p = np.asarray(positives, dtype=np.intp)
    n = matrix.shape[0]
    if q.shape != p.shape or q.ndim != 1:
        raise ValueError("queries and positives must be 1-D index arrays of equal length.")
    if q.size and (min(q.min(), p.min()) < 0 or max(q.max(), p.max()) >= n):
        raise IndexError(f"pair indices must lie in [0, {n}); got an index outside it.")
    if similarity not in SIMILARITIES:
        raise ValueError(f"similarity must be one of {SIMILARITIES}, got {similarity!r}.")

    prepared = l2_normalise(matrix) if similarity == "cosine" else matrix
    sq_norms = np.einsum("ij,ij->i", prepared, prepared) if similarity == "euclidean" else None
    better = np.zeros(q.size, dtype=np.int64)
    tied = np.zeros(q.size, dtype=np.int64)
    for part in _chunks(q.size, _chunk_rows(n, chunk_bytes)):
        qc, pc = q[part], p[part]
        local = np.arange(qc.size)
        scores = similarity_rows(prepared, qc, similarity, sq_norms)
        positive = scores[local, pc][:, None]
        is_better = scores > positive + tol
        is_tied = np.abs(scores - positive) <= tol
        # exclude u = q and u = p from the competitors (p always ties with itself)
        g = is_better.sum(axis=1) - is_better[local, qc]
        t = is_tied.sum(axis=1) - is_tied[local, qc] - 1
        same = qc == pc
        g[same] = 0
        t[same] = 0
        better[part] = g
        tied[part] = t
    return RankCounts(better, tied)


def reciprocal_ranks(counts: RankCounts, tie_policy: TiePolicy = "expected") -> NDArray[np.float64]:
    """Per-pair reciprocal rank under ``tie_policy`` (see the module docstring)."""
    g = counts.better.astype(np.float64)
    t = counts.tied.astype(np.float64)
    if tie_policy == "optimistic":
        return 1.0 / (1.0 + g)
    if tie_policy == "pessimistic":
        return 1.0 / (1.0 + g + t)
    if tie_policy == "expected":
        # sum_{r=g+1}^{g+t+1} 1/r = psi(g+t+2) - psi(g+1)
        return (digamma(g + t + 2.0) - digamma(g + 1.0)) / (t + 1.0)
    raise ValueError(f"tie_policy must be one of {TIE_POLICIES}, got {tie_policy!r}.")


def hits_at(counts: RankCounts, k: int, tie_policy: TiePolicy = "expected") -> NDArray[np.float64]:
    """Per-pair probability that the positive is ranked within the top ``k``."""
    g, t = counts.better, counts.tied
    if tie_policy == "optimistic":
        return (1 + g <= k).astype(np.float64)
    if tie_policy == "pessimistic":
        return (1 + g + t <= k).astype(np.float64)
    if tie_policy == "expected":
        return np.clip(k - g, 0, t + 1) / (t + 1.0)
    raise ValueError(f"tie_policy must be one of {TIE_POLICIES}, got {tie_policy!r}.")


def mean_ranks(counts: RankCounts, tie_policy: TiePolicy = "expected") -> NDArray[np.float64]:
    """Per-pair (expected) rank: ``1+g``, ``1+g+t/2`` or ``1+g+t``."""
    share = {"optimistic": 0.0, "expected": 0.5, "pessimistic": 1.0}
    if tie_policy not in share:
        raise ValueError(f"tie_policy must be one of {TIE_POLICIES}, got {tie_policy!r}.")
    return 1.0 + counts.better + share[tie_policy] * counts.tied


def rank_metrics(
    counts: RankCounts,
    *,
    tie_policy: TiePolicy = "expected",
    ks: Sequence[int] = DEFAULT_KS,
    prefix: str = "",
) -> dict[str, float]:
    """``{prefix}mrr``, ``{prefix}hits_at_{k}`` and ``{prefix}mean_rank`` over all pairs."""
    if len(counts) == 0:
        raise ValueError("cannot score an empty set of pairs.")
    scores = {f"{prefix}mrr": float(reciprocal_ranks(counts, tie_policy).mean())}
    for k in ks:
        scores[f"{prefix}hits_at_{k}"] = float(hits_at(counts, k, tie_policy).mean())
    scores[f"{prefix}mean_rank"] = float(mean_ranks(counts, tie_policy).mean())
    return scores
