"""Exact EvalRank ranking maths (Wang et al., ACL 2022); the protocol: docs/evalrank.md.

Background ``B`` (``n`` items), embeddings ``E`` centred: ``E <- E - mean(E over B)``. ``cosine``:
rows L2-normalised (a zero row stays zero), ``s(a, b) = a . b``; ``euclidean``:
``s(a, b) = 1 / (1 + d(a, b))``, ``d(a, b) = ||a - b||``. A pair ``(q, p)`` with ``q == p`` ranks 1;
otherwise each competitor ``u in B \\ {q, p}`` is better, tied or worse, ``tol = 1e-6``:

* ``cosine`` (absolute tolerance): better ``s(q, u) > s(q, p) + tol``, tied ``|s(q, u) - s(q, p)| <= tol``;
* ``euclidean`` (relative, so that scaling the embeddings by ``c > 0`` changes no count): better
  ``d(q, p) - d(q, u) > tol d(q, p)``, tied ``|d(q, u) - d(q, p)| <= tol d(q, p)`` (at
  ``d(q, p) = 0`` only exact duplicates tie and nothing is better).

``g = #better``, ``t = #tied``: the positive holds one of the ranks ``1 + g .. 1 + g + t`` against the
whole background (other positives of ``q`` are competitors). Tie policies: ``expected`` (default,
exact random tie-breaking) ``RR = (H(1+g+t) - H(g)) / (t + 1)`` (``H`` the harmonic numbers),
``Hits@k = clip(k - g, 0, t + 1) / (t + 1)``, mean rank ``1 + g + t/2``; ``optimistic`` rank ``1 + g``;
``pessimistic`` rank ``1 + g + t``. MRR, Hits@k and mean rank are means over the pairs. mteb's
retrieval evaluator sees only a top-k cut, hence this module; how it counts (a float32 pass with
proven margins, float64 refinement): docs/architecture.md, "The ranking core".
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from functools import reduce
from typing import Any, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray
from scipy.special import digamma

Similarity = Literal["cosine", "euclidean"]
TiePolicy = Literal["expected", "optimistic", "pessimistic"]

SIMILARITIES: tuple[Similarity, ...] = ("cosine", "euclidean")
#: a similarity's kind in the float32 pass (:mod:`._ranking_kernel`): its rows of limits and counts
_KIND: dict[Similarity, int] = {"euclidean": 0, "cosine": 1}
TIE_POLICIES: tuple[TiePolicy, ...] = ("expected", "optimistic", "pessimistic")
DEFAULT_TOL = 1e-6
DEFAULT_KS: tuple[int, ...] = (1, 3, 10)
#: Memory budget for one chunk of the similarity matrix and its comparison masks.
DEFAULT_CHUNK_BYTES = 128 * 2**20


class NonFiniteEmbeddingsError(ValueError):
    """Raised when embeddings contain NaN or infinite values."""

    def __init__(self, n_bad_rows: int, n_rows: int, where: str = "") -> None:
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


def check_embeddings(embeddings: ArrayLike, *, where: str = "") -> NDArray[np.float64]:
    """Validate a 2-D matrix of finite embeddings (:func:`_embedding_rows`) and return it as float64."""
    return _embedding_rows(embeddings, where).astype(np.float64, copy=False)


#: unit roundoffs of float32 and float64
_U32 = 2.0**-24
_U64 = 2.0**-53
#: pairs per chunk: the columns of every tile
_PAIRS_PER_CHUNK = 1024
#: products per tile: one single-threaded float32 GEMM (512 rows by 1,024 pairs); 2^18 to 2^20
#: measured alike, 2^16 about 15 % slower
_TILE_ELEMENTS = 2**19
#: ranges of the background per worker thread and chunk (handed out as the threads come free)
_PIECES_PER_WORKER = 8
#: bytes per tile element: the float32 products (the fused scan needs no other buffer per product)
_BYTES_PER_ELEMENT = 4
#: band entries refined per block (their gathered float64 rows stay in cache)
_REFINE_BLOCK = 512
#: background rows prepared per block
_PREPARE_BLOCK = 2048
#: distinct rows with a scaled norm in (0, _TINY_NORM) skip the float32 cosine pass: their
#: inverse norm would amplify float32 underflow; every pair refines them in float64
_TINY_NORM = 2.0**-60


def _chunks(n: int, size: int) -> Iterator[slice]:
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


#: odd 64-bit multipliers of the row hash (fixed: the grouping must not depend on a seed)
_HASH_SEED = 0x5EED_E7A1_2A4C


def _hash_multipliers(size: int) -> NDArray[np.uint64]:
    """``size`` fixed random odd 64-bit multipliers for the row hash of :func:`unique_rows`."""
    rng = np.random.default_rng(_HASH_SEED)
    return rng.integers(0, 2**63, size=size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def unique_rows(x: NDArray[Any]) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.int64]]:
    """Group identical rows of a 2-D float32 or float64 ``x``: ``(first, inverse, counts)`` with
    ``x[first][inverse] == x``, groups of several rows first.

    Rows are grouped by a 64-bit multilinear hash of their 32-bit words (``sum_i w_i m_i mod 2^64``,
    ``m_i`` fixed random odd numbers), then checked against their group's first row with ``==``; on a
    hash collision the exact ``np.unique`` of the rows' bytes is used. ``0.0`` and ``-0.0`` may stay
    in separate groups, which changes nothing downstream (every group counts with its multiplicity)."""
    n = x.shape[0]
    x = np.ascontiguousarray(x)
    words = x.view(np.uint32).reshape(n, -1)  # dim (float32) or 2 dim (float64) words per row
    mult = _hash_multipliers(words.shape[1])
    keys = np.empty(n, dtype=np.uint64)
    step = 1024  # small blocks: the uint64 copy of the words stays in cache
    for part in _chunks(n, step):
        keys[part] = words[part] @ mult  # sum_i w_i m_i mod 2^64, m_i random odd
    _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    exact = (np.array_equal(x[part], x[first[inverse[part]]]) for part in _chunks(n, 16 * step))
    if first.size < n and not all(exact):  # a hash collision: group the rows' bytes
        rows = x.view(np.dtype((np.void, x.itemsize * x.shape[1]))).reshape(-1)
        _, first, inverse, counts = np.unique(
            rows, return_index=True, return_inverse=True, return_counts=True
        )
    # groups with several rows first (their counts are summed with weights, the others counted)
    order = np.argsort(counts == 1, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    return first[order].astype(np.intp), position[inverse].astype(np.intp), counts[order].astype(np.int64)


def rank_counts_all(
    embeddings: ArrayLike,
    queries: Sequence[int] | NDArray[np.intp],
    positives: Sequence[int] | NDArray[np.intp],
    *,
    similarities: Sequence[Similarity] = SIMILARITIES,
    tol: float = DEFAULT_TOL,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    centre: bool = True,
) -> dict[Similarity, RankCounts]:
    """Rank counts of every pair under each similarity, exact to float64 arithmetic.

    ``embeddings`` are the raw background rows, centred here (``centre=False``: already centred by the
    caller, so that a row exactly zero after centring stays zero); float32 and float64 input is used
    in place. Pairs ``q == p`` get ``g = t = 0``; under the cosine a query whose centred row is zero
    gets ``g = 0, t = n - 2`` without a pass (its cosine is 0 with every item). ``tol`` lies in
    ``[0, 1)``. Steps, threads (BLAS limited to one thread per worker, process-wide, during the
    call) and memory (``chunk_bytes`` beyond the float32 distinct rows): docs/architecture.md,
    "The ranking core"."""
    _check_options(tol, similarities)
    raw = _embedding_rows(embeddings)
    q, p = _pair_indices(queries, positives, raw.shape[0])
    workers = _cpu_threads()
    counts = {s: (np.zeros(q.size, np.int64), np.zeros(q.size, np.int64)) for s in similarities}
    with _worker_pool(workers) as run:
        bg = _prepare_background(raw, run, centre)
        shape = _tile_shape(q.size, bg.m, bg.dim, chunk_bytes, workers)
        for part in _chunks(q.size, shape.pairs):
            chunk = _prepare_chunk(bg, q[part], p[part], similarities, tol)
            found = _sum_counts(
                _screen_background(bg, chunk, shape, run, workers),
                _refine_all(bg, chunk, _fixed_entries(bg, chunk)),
            )
            if "cosine" in found:  # zero query rows: every competitor ties (the docstring)
                better, tied = found["cosine"]
                blank = bg.inv[chunk.qc] == 0
                found["cosine"] = (np.where(blank, 0, better), np.where(blank, raw.shape[0] - 2, tied))
            same = q[part] == p[part]
            for similarity, (better, tied) in found.items():
                counts[similarity][0][part] = np.where(same, 0, better)
                counts[similarity][1][part] = np.where(same, 0, tied)
    return {s: RankCounts(better, tied) for s, (better, tied) in counts.items()}


# ---------------------------------------------------------------- validation
def _check_options(tol: float, similarities: Sequence[Similarity]) -> None:
    if not 0.0 <= tol < 1.0:
        raise ValueError(f"tol must lie in [0, 1), got {tol}.")
    for similarity in similarities:
        if similarity not in SIMILARITIES:
            raise ValueError(f"similarity must be one of {SIMILARITIES}, got {similarity!r}.")


def _embedding_rows(embeddings: ArrayLike, where: str = "") -> NDArray[np.floating[Any]]:
    """The embeddings as a C-contiguous float32 or float64 matrix (used as they are; other dtypes
    converted to float64), checked block by block (no float64 copy of the whole matrix).

    Raises:
        ValueError: if the array is not 2-D or has no rows (the message starts with ``where``).
        NonFiniteEmbeddingsError: if any row holds NaN or inf (the message counts them)."""
    matrix = np.asarray(embeddings)
    if matrix.dtype not in (np.float32, np.float64):
        matrix = matrix.astype(np.float64)
    if matrix.ndim != 2 or matrix.shape[0] == 0 or matrix.shape[1] == 0:
        raise ValueError(
            f"{where + ': ' if where else ''}expected a non-empty 2-D embedding matrix (n_items, dim), "
            f"got shape {matrix.shape}."
        )
    matrix = np.ascontiguousarray(matrix)
    bad = sum(
        int(np.count_nonzero(~np.isfinite(matrix[part]).all(axis=1))) for part in _chunks(len(matrix), 8192)
    )
    if bad:
        raise NonFiniteEmbeddingsError(bad, matrix.shape[0], where)
    return matrix


def _pair_indices(
    queries: Sequence[int] | NDArray[np.intp], positives: Sequence[int] | NDArray[np.intp], n: int
) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
    """``(q, p)`` as 1-D ``intp`` arrays of equal length with every index in ``[0, n)``."""
    q = np.asarray(queries, dtype=np.intp)
    p = np.asarray(positives, dtype=np.intp)
    if q.shape != p.shape or q.ndim != 1:
        raise ValueError("queries and positives must be 1-D index arrays of equal length.")
    if q.size and (min(q.min(), p.min()) < 0 or max(q.max(), p.max()) >= n):
        raise IndexError(f"pair indices must lie in [0, {n}); got an index outside it.")
    return q, p


# ---------------------------------------------------------------- the background
@dataclass(frozen=True)
class _Background:
    """The distinct background rows, ready for the float32 pass and the float64 refinement.

    Distinct row ``j`` stands for the ``weight[j]`` items ``i`` with ``group[i] == j``; it is
    ``x_j = ((E[first[j]] - mean) * 2^e1) * 2^e2`` in float64 (``exponents = (e1, e2)``, see
    :func:`_prepare_background`), i.e. the centred row (``mean`` is ``E``'s column mean in
    float64) times the power of two that brings the largest row norm into ``[1/2, 1)``.
    Scaling by a power of two is exact (barring underflow) and changes no count (every rule
    is scale-invariant); it keeps the float32 pass from overflowing for any input scale.
    ``x32 = fl32(fl32(x 2^-e2) 2^e2)`` (the pass's rows: rounded to float32 before the
    second scaling), ``sq = |x|^2`` (float64), ``inv = 1/|x|`` (``0`` for a zero row),
    ``half_sq32 = fl32(sq / 2)``, ``inv32 = fl32(inv)`` (``NaN`` for the ``tiny`` rows, so
    that the cosine pass skips them). Groups with several items come first (``n_multi``).
    """

    raw: NDArray[np.floating[Any]]
    mean: NDArray[np.float64]
    exponents: tuple[int, int]
    first: NDArray[np.intp]
    group: NDArray[np.intp]
    weight: NDArray[np.int64]
    n_multi: int
    x32: NDArray[np.float32]
    sq: NDArray[np.float64]
    inv: NDArray[np.float64]
    inv32: NDArray[np.float32]
    half_sq32: NDArray[np.float32]
    tiny: NDArray[np.intp]

    @property
    def m(self) -> int:
        return int(self.first.size)

    @property
    def dim(self) -> int:
        return int(self.raw.shape[1])

    def rows(self, index: NDArray[np.intp]) -> NDArray[np.float64]:
        """The exact float64 rows ``x_j`` of the distinct rows ``index`` (bit for bit)."""
        scales = self._normal_scales()
        if scales is None:
            return _scaled_rows(self.raw, self.first[index], self.mean, self.exponents)
        from ._ranking_kernel import scaled_rows

        out = np.empty((index.size, self.dim))
        return scaled_rows(self.raw, self.first[index], self.mean[0], *scales, out)

    def differences(
        self, queries: NDArray[np.float64], query_index: NDArray[np.intp], index: NDArray[np.intp]
    ) -> NDArray[np.float64]:
        """``queries[query_index] - rows(index)``, bit for bit as numpy computes it."""
        scales = self._normal_scales()
        if scales is None:
            return queries[query_index] - self.rows(index)
        from ._ranking_kernel import differences

        out = np.empty((index.size, self.dim))
        return differences(queries, query_index, self.raw, self.first[index], self.mean[0], *scales, out)

    def _normal_scales(self) -> tuple[float, float] | None:
        """``(2^e1, 2^e2)`` when both are normal floats (then a product rounds as
        ``np.ldexp`` does), else ``None``: the numpy path handles the rest."""
        if all(-1022 <= e <= 1023 for e in self.exponents):
            return 2.0 ** self.exponents[0], 2.0 ** self.exponents[1]
        return None


def _scaled_rows(
    raw: NDArray[np.floating[Any]],
    rows: NDArray[np.intp],
    mean: NDArray[np.float64],
    exponents: tuple[int, ...],
) -> NDArray[np.float64]:
    """``((raw[rows] - mean) * 2^e1) * 2^e2`` in float64: the centred, scaled rows (each scaling
    by ``np.ldexp``: exact barring underflow)."""
    x = raw[rows].astype(np.float64)
    x -= mean
    for exponent in exponents:
        np.ldexp(x, exponent, out=x)
    return x


def _prepare_background(raw: NDArray[np.floating[Any]], run: _Map, centre: bool = True) -> _Background:
    """Group the rows, centre (unless ``centre=False``) and scale them, and write the pass's float32 rows
    (block by block in the worker threads, never one float64 matrix). ``e1 = -(frexp(max |E|) + 1)``
    makes every centred entry smaller than 1 (``|E_ij - mean_j| <= 2 max |E|``: ``sq`` cannot overflow);
    ``e2`` brings the largest norm into ``[1/2, 1)``."""
    n, dim = raw.shape
    with np.errstate(over="ignore", invalid="ignore"):  # an overflow is refused just below
        mean = raw.mean(axis=0, dtype=np.float64, keepdims=True)  # bit for bit E.astype(float64).mean
    if not centre:
        mean = np.zeros_like(mean)
    largest = max(float(raw.max()), -float(raw.min()))
    if not np.isfinite(largest + float(np.max(np.abs(mean)))):  # |x - mean| could overflow
        raise ValueError(
            f"embeddings too large for float64 arithmetic: max |x| = {largest:.3g}, and their mean "
            "or centred values overflow; rescale them (e.g. divide by their largest norm)."
        )
    first, group, weight = unique_rows(raw)
    if first.size == n:  # no duplicates: keep the rows in place
        first = group = np.arange(n, dtype=np.intp)
    m = first.size
    e1 = -(int(np.frexp(largest)[1]) + 1) if largest > 0 else 0
    x32 = np.empty((m, dim), dtype=np.float32)
    sq = np.empty(m, dtype=np.float64)

    def fill(part: slice) -> None:
        rows = _scaled_rows(raw, first[part], mean, (e1,))
        sq[part] = np.einsum("ij,ij->i", rows, rows)
        x32[part] = rows

    list(run(fill, _chunks(m, _PREPARE_BLOCK)))
    top = float(sq.max())
    e2 = -int(np.frexp(np.sqrt(top))[1]) if top > 0 else 0
    # exact in float64; in float32 exact unless the entry is subnormal there (the margins
    # allow 2^-150 per entry for that)
    x32 *= np.float32(2.0**e2)
    sq *= 4.0**e2
    norms = np.sqrt(sq)
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    tiny = np.flatnonzero((norms > 0) & (norms < _TINY_NORM))
    inv32 = inv.astype(np.float32)
    inv32[tiny] = np.nan
    return _Background(
        raw=raw,
        mean=mean,
        exponents=(e1, e2),
        first=first,
        group=group,
        weight=weight,
        n_multi=int(np.count_nonzero(weight > 1)),
        x32=x32,
        sq=sq,
        inv=inv,
        inv32=inv32,
        half_sq32=(sq / 2).astype(np.float32),
        tiny=tiny.astype(np.intp),
    )


# ---------------------------------------------------------------- a chunk of pairs
@dataclass(frozen=True)
class _Chunk:
    """A chunk of ``r`` pairs: ``qc``, ``pc`` the distinct rows of ``q`` and ``p``; ``xq`` the queries'
    exact rows (float64); ``left`` their float32 rows as the columns of a ``dim x width`` matrix
    (``width >= r`` a multiple of 8, the extra columns zero); ``targets[s]``: ``s(q,p)`` (cosine) or
    ``d(q,p)`` (euclidean) in float64; ``limits``: the float32 rows ``lo32``, ``hi32`` of the
    euclidean, then of the cosine (``+inf`` for a similarity not wanted and on the extra columns)."""

    qc: NDArray[np.intp]
    pc: NDArray[np.intp]
    xq: NDArray[np.float64]
    left: NDArray[np.float32]
    targets: dict[Similarity, NDArray[np.float64]]
    limits: NDArray[np.float32]
    tol: float

    @property
    def r(self) -> int:
        return int(self.qc.size)

    @property
    def width(self) -> int:
        return int(self.left.shape[1])


def _prepare_chunk(
    bg: _Background,
    q: NDArray[np.intp],
    p: NDArray[np.intp],
    similarities: Sequence[Similarity],
    tol: float,
) -> _Chunk:
    """Targets, band limits and query rows of the pairs ``(q, p)`` (see :class:`_Chunk`)."""
    qc, pc = bg.group[q], bg.group[p]
    width = -(-qc.size // 8) * 8
    xq, xp = bg.rows(qc), bg.rows(pc)
    targets: dict[Similarity, NDArray[np.float64]] = {}
    limits = np.full((4, width), np.inf, dtype=np.float32)
    for similarity in similarities:
        if similarity == "cosine":
            target = np.einsum("ij,ij->i", xq, xp) * bg.inv[qc] * bg.inv[pc]
        else:
            target = _norms(xq - xp)
        lo, hi = _rule_limits(bg.sq[qc], target, similarity, tol)
        margin = _screening_margins(bg, bg.sq[qc], target, similarity)
        row = 2 * _KIND[similarity]
        limits[row : row + 2, : qc.size] = _float32_limits(lo - margin, hi + margin)
        if similarity == "cosine":  # a zero query row: every item ties (rank_counts_all), no pass
            limits[row : row + 2, : qc.size][:, bg.inv[qc] == 0] = np.inf
        targets[similarity] = target
    left = np.zeros((bg.dim, width), dtype=np.float32)
    left[:, : qc.size] = bg.x32[qc].T
    return _Chunk(qc=qc, pc=pc, xq=xq, left=left, targets=targets, limits=limits, tol=tol)


def _rule_limits(
    sq_q: NDArray[np.float64], target: NDArray[np.float64], similarity: Similarity, tol: float
) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """The rule's thresholds ``(lo, hi)`` on the pass's stand-in value (float64).

    The pass compares, per competitor ``u``, a stand-in that is monotone in the similarity
    and costs one operation on the product ``D = x_q . x_u``:

    * cosine: ``c(q,u) |x_q| = D / |x_u|``; better iff ``> hi = (s(q,p) + tol) |x_q|``,
      worse iff ``< lo = (s(q,p) - tol) |x_q|``;
    * euclidean: ``v(q,u) = D - |x_u|^2 / 2 = (|x_q|^2 - d(q,u)^2) / 2``; with ``d_p = d(q,p)``,
      ``u`` is better iff ``d(q,u) < d_p (1 - tol)`` iff ``v > hi = (|x_q|^2 - d_p^2 (1 - tol)^2) / 2``
      and worse iff ``d(q,u) > d_p (1 + tol)`` iff ``v < lo = (|x_q|^2 - d_p^2 (1 + tol)^2) / 2``.
    """
    if similarity == "cosine":
        scale = np.sqrt(sq_q)
        return (target - tol) * scale, (target + tol) * scale
    hi = (sq_q - (target * (1.0 - tol)) ** 2) / 2
    lo = (sq_q - (target * (1.0 + tol)) ** 2) / 2
    return lo, hi


def _screening_margins(
    bg: _Background, sq_q: NDArray[np.float64], target: NDArray[np.float64], similarity: Similarity
) -> NDArray[np.float64]:
    """Per pair, a proven bound on the error of the float32 stand-in, plus room for float64.

    Notation: ``n`` = dim, ``u = 2^-24``, ``gamma = (n + 2) u / (1 - (n + 2) u)``,
    ``kappa = (n + 8) 2^-53``; ``|x|`` is the exact norm of a float64 row ``x`` (see
    :class:`_Background`), ``M = max_u |x_u|``, in ``[1/2, 1)`` by the scaling (or 0: then
    every stand-in and limit is 0 and everything is refined); ``e2`` the second scaling
    exponent, ``eps = 2^-149 max(1, 2^e2)`` and ``eta = (3n + 8) eps`` (float32 underflow).

    *Rows.* ``x32 = fl32(fl32(x 2^-e2) 2^e2)``: every entry is within ``u |x_i| + eps``
    of ``x_i`` (one relative rounding; an entry subnormal in float32 before or after the
    scaling loses at most ``2^-150`` there, i.e. ``2^-150 2^e2`` or ``2 2^-150`` here).

    *Product.* A float32 dot product of ``n`` terms, summed in any order with or without
    FMA, is within ``gamma_n sum_i |a_i b_i|`` of the exact one (Higham, *Accuracy and
    Stability of Numerical Algorithms*, 2nd ed., Eq. 3.5 / Thm 3.5), plus ``2^-150`` per
    product that underflows. With the rows' rounding (relative: a factor ``(1 + u)^2``,
    ``(1 + gamma_n)(1 + u)^2 <= 1 + gamma``; absolute: ``eps (|x_q|_1 + |x_u|_1) < 2 n eps``,
    entries below 1) and Cauchy-Schwarz, ``|D32 - x_q . x_u| <= gamma |x_q| |x_u| + eta``.

    *Float64.* The rule's float64 values are within ``kappa`` of the exact ones: ``sq``
    relatively (``gamma_n`` in float64), ``inv`` and ``sqrt(sq)`` relatively within
    ``kappa / 2`` (one more rounding each), the rule's cosine ``(x_q . x_u) inv_q inv_u``
    absolutely within ``2 kappa`` and its distance relatively within ``kappa / 2``.

    *Cosine.* ``value32 = fl32(D32 inv32_u)``, ``inv32_u = inv_u (1 + d1)``, ``|d1| <= u``,
    the product rounded by ``(1 + d2)``, ``|d2| <= u``. With ``|x_q . x_u| / |x_u| <= |x_q|``::

        |value32 - c |x_q|| <= |x_q| ((1 + kappa/2)(1 + d1)(1 + d2) - 1)
                               + (gamma |x_q| + eta / |x_u|)(1 + kappa/2)(1 + d1)(1 + d2)
                            <= (gamma + 3u) |x_q| + 2 eta max_u inv_u

    (``kappa / 2 + 2u gamma + u^2`` fit in the third ``u`` while ``gamma <= 1/4``). Rows with
    ``|x_u| < 2^-60`` are refined instead, so ``max inv <= 2^60``. Margin:
    ``(gamma + 3u + 8 kappa) sqrt(sq_q) + 2 eta max inv``. Room: the rule's threshold
    ``T = fl(s(q,p) + tol)`` (``|T| < 2``) gives ``hi = fl(T sqrt(sq_q))`` within
    ``1.25 kappa |x_q|`` of ``T |x_q|``; so ``value32 > hi + margin`` gives
    ``c > T + 6 kappa`` and the rule's cosine ``> T + 4 kappa``: better. Likewise
    ``value32 < lo - margin`` puts the rule's cosine below ``fl(s(q,p) - tol) - 4 kappa``,
    so its rounded difference from ``s(q,p)`` exceeds ``tol``: worse.

    *Euclidean.* ``value32 = fl32(D32 - h32_u)``, ``h32_u = fl32(sq_u / 2)`` within
    ``(u + kappa) h_u + 2^-150`` of ``h_u = |x_u|^2 / 2 <= M^2 / 2``, the difference
    rounded by ``(1 + d)``, ``|d| <= u``; with ``|D| <= |x_q||x_u|``::

        |value32 - v| <= gamma |x_q||x_u| + eta + (u + kappa) h_u + 2^-150
                         + u (|x_q||x_u| (1 + gamma) + eta + 2.01 h_u + 2^-150)
                      <= (gamma + 2u) |x_q| M + 1.05 u M^2 + 2 eta.

    Margin: ``(gamma + 2u) |x_q| M + 2u M^2 + 2 eta + 8 kappa (sq_q + d_p^2)``, with
    ``d_p = d(q,p)`` the rule's float64 distance; room
    ``R = 0.95 u M^2 + 8 kappa (sq_q + d_p^2)``. The float64 ``lo``, ``hi`` are within
    ``2 kappa (|x_q|^2 + d_p^2)`` of ``(|x_q|^2 - d_p^2 (1 -+ tol)^2) / 2``. Better:
    ``value32 > hi + margin`` gives ``d^2 < b^2 - X``, ``b = d_p (1 - tol)``,
    ``X = 2 R - 4 kappa (|x_q|^2 + d_p^2) >= 11 kappa d_p^2``, so
    ``d <= b - X / (2b) <= b - 5.5 kappa d_p`` and the rule's distance
    ``<= d (1 + kappa/2) <= b - 5 kappa d_p``: its rounded gap exceeds ``fl(tol d_p)``
    (``2^-53 2 d_p`` of rounding). Worse: ``d^2 > a^2 + X``, ``a = d_p (1 + tol) <= 2 d_p``;
    if ``d >= 2a`` the rule's distance is at least ``1.9 a``; else
    ``d - a > X / (3a) >= 1.9 u M^2 / (3a) >= 0.07 u d_p`` (``d_p <= 2M``), far above the
    ``3 kappa d_p`` of rounding (``0.07 u > 3 kappa`` for ``n < 10^7``); if ``d_p = 0``,
    ``d^2 > 1.9 u M^2 > 0``. Either way the rule says worse.

    :func:`_float32_limits` then rounds ``lo - margin`` down and ``hi + margin`` up to float32.
    """
    n = bg.dim
    gamma = (n + 2) * _U32 / (1 - (n + 2) * _U32)
    eta = (3 * n + 8) * 2.0 ** (-149 + max(0, bg.exponents[1]))
    kappa = (n + 8) * _U64
    norm_q = np.sqrt(sq_q)
    if similarity == "cosine":
        finite = bg.inv[np.isfinite(bg.inv32)]
        max_inv = float(finite.max()) if finite.size else 0.0
        return (gamma + 3 * _U32 + 8 * kappa) * norm_q + 2 * eta * max_inv
    max_sq = float(bg.sq.max())
    return (
        (gamma + 2 * _U32) * norm_q * np.sqrt(max_sq)
        + 2 * _U32 * max_sq
        + 2 * eta
        + 8 * kappa * (sq_q + target**2)
    )


def _float32_limits(lo: NDArray[np.float64], hi: NDArray[np.float64]) -> NDArray[np.float32]:
    """The rows ``lo32``, ``hi32``: ``lo`` rounded down and ``hi`` rounded up to float32
    (``lo32 <= lo`` and ``hi32 >= hi`` exactly)."""
    limits = np.array([lo, hi], dtype=np.float32)
    for rounded, exact, direction in ((limits[0], lo, -1.0), (limits[1], hi, 1.0)):
        inward = direction * (rounded.astype(np.float64) - exact) < 0  # rounded into the band
        rounded[inward] = np.nextafter(rounded[inward], np.float32(direction * np.inf))
    return limits


# ---------------------------------------------------------------- the float32 pass
@dataclass(frozen=True)
class _TileShape:
    """``pairs`` per chunk, distinct background ``rows`` per tile, band entries gathered
    before a refinement (``flush_at``), all within the memory budget."""

    pairs: int
    rows: int
    flush_at: int


def _tile_shape(n_pairs: int, m: int, dim: int, chunk_bytes: int, workers: int = 1) -> _TileShape:
    """Tile shape within ``chunk_bytes``: half for each worker's tile buffers
    (``_BYTES_PER_ELEMENT`` per element), half for the band entries awaiting refinement
    (about ``16 dim`` bytes each while refined)."""
    budget = max(1, chunk_bytes // (2 * workers))
    pairs = max(1, min(n_pairs, _PAIRS_PER_CHUNK, budget // (8 * _BYTES_PER_ELEMENT)))
    width = -(-pairs // 8) * 8
    rows = max(1, min(m, _TILE_ELEMENTS // width, budget // (_BYTES_PER_ELEMENT * width)))
    return _TileShape(pairs=pairs, rows=rows, flush_at=max(1, budget // (16 * dim)))


def _cpu_threads() -> int:
    """Threads of the CPU pass: the BLAS library's threads, at most the usable CPUs."""
    from threadpoolctl import threadpool_info  # light, no side effects; only when ranking

    blas = [int(info.get("num_threads", 1)) for info in threadpool_info() if info.get("user_api") == "blas"]
    try:
        cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        cpus = os.cpu_count() or 1
    return max(1, min(max(blas, default=1), cpus))


@contextmanager
def _worker_pool(workers: int) -> Iterator[_Map]:
    """The ``map`` of a pool of ``workers`` threads with BLAS limited to one thread each (the
    builtin ``map`` if 1)."""
    if workers <= 1:
        yield map
        return
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1, user_api="blas"), ThreadPoolExecutor(workers) as pool:
        yield pool.map


_Counts = dict[Similarity, tuple[NDArray[np.int64], NDArray[np.int64]]]
#: ``map`` or a thread pool's ``map``
_Map = Callable[..., Iterator[Any]]
#: band entries: (pair index in the chunk, distinct row, multiplicity)
_Entries = tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.int64]]


def _sum_counts(a: _Counts, b: _Counts) -> _Counts:
    """Elementwise sum of two sets of partial counts of the same similarities."""
    return {s: (a[s][0] + b[s][0], a[s][1] + b[s][1]) for s in a}


def _screen_background(bg: _Background, chunk: _Chunk, shape: _TileShape, run: _Map, workers: int) -> _Counts:
    """The numpy pass of one chunk over all distinct rows, its partial counts summed: ranges of whole
    tiles, ``_PIECES_PER_WORKER`` per worker thread, handed out as the threads come free."""
    pieces = workers * _PIECES_PER_WORKER if workers > 1 else 1
    tiles = -(-bg.m // shape.rows)
    step = -(-tiles // min(pieces, tiles)) * shape.rows
    starts = range(0, bg.m, step)
    return reduce(
        _sum_counts, run(lambda start: _screen_rows(bg, chunk, start, min(start + step, bg.m), shape), starts)
    )


def _screen_rows(bg: _Background, chunk: _Chunk, start: int, stop: int, shape: _TileShape) -> _Counts:
    """Counts of the chunk's pairs against the distinct rows ``[start, stop)``: per tile of ``shape.rows``
    rows one float32 GEMM ``D = left.T @ x32[tile].T`` (pairs by rows), ``q``'s and ``p``'s own cells set
    to NaN (neither counted nor in the band: refined apart), then the fused scan
    :func:`._ranking_kernel.screen_tile`; the band entries are refined in float64 (:func:`_refine_all`)
    once ``shape.flush_at`` have gathered."""
    from ._ranking_kernel import screen_tile  # numba: imported (and compiled) on first use

    rows, width = shape.rows, chunk.width
    tile = np.empty(width * rows, dtype=np.float32)
    lo_e, hi_e, lo_c, hi_c = chunk.limits
    better = np.zeros((2, width), np.int64)  # euclidean, cosine
    capacity = shape.flush_at + 2 * rows
    band = (np.empty(capacity, np.intp), np.empty(capacity, np.intp), np.empty(capacity, np.uint8))
    found: _Counts = {s: (np.zeros(chunk.r, np.int64), np.zeros(chunk.r, np.int64)) for s in chunk.targets}
    n_band = 0
    own_rows = np.concatenate([chunk.qc, chunk.pc])
    own_cols = np.tile(np.arange(chunk.r), 2)
    for c0 in range(start, stop, rows):
        c1 = min(c0 + rows, stop)
        d = np.matmul(chunk.left.T, bg.x32[c0:c1].T, out=tile[: width * (c1 - c0)].reshape(width, c1 - c0))
        own = (own_rows >= c0) & (own_rows < c1)
        d[own_cols[own], own_rows[own] - c0] = np.nan
        n_weighted = max(0, min(bg.n_multi, c1) - c0)  # rows of groups of several items
        i = 0
        while i < width:
            i, n_band = screen_tile(
                d, n_weighted, bg.weight[c0:c1], bg.half_sq32[c0:c1], bg.inv32[c0:c1],
                lo_e, hi_e, lo_c, hi_c, better[0], better[1], *band, n_band, i, c0,
            )  # fmt: skip
            if i < width or n_band >= shape.flush_at:
                found = _sum_counts(found, _refine_all(bg, chunk, _band_entries(bg, chunk, band, n_band)))
                n_band = 0
    found = _sum_counts(found, _refine_all(bg, chunk, _band_entries(bg, chunk, band, n_band)))
    return {s: (g + better[_KIND[s], : chunk.r], t) for s, (g, t) in found.items()}


def _band_entries(
    bg: _Background, chunk: _Chunk, band: tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.uint8]], n: int
) -> dict[Similarity, _Entries]:
    """The first ``n`` gathered band entries ``(pair, row, kind)``, per similarity (``_KIND``)."""
    pair, row, kind = band
    entries: dict[Similarity, _Entries] = {}
    for similarity in chunk.targets:
        mine = np.flatnonzero(kind[:n] == _KIND[similarity])
        rows = row[mine]
        entries[similarity] = (pair[mine], rows, bg.weight[rows])
    return entries


# ---------------------------------------------------------------- float64 refinement
def _fixed_entries(bg: _Background, chunk: _Chunk) -> dict[Similarity, _Entries]:
    """The entries every chunk refines whatever the pass found: the other items of ``q``'s group (``q``
    excluded once, ``p`` too if it shares the group) and of ``p``'s (``p`` excluded), which the pass
    never sees (NaN), and for the cosine the ``tiny`` rows against every pair whose ``q`` and ``p`` are
    not among them. Other items with the embedding of ``q`` or ``p`` are competitors."""
    local = np.arange(chunk.r)
    own = bg.weight[chunk.qc] - 1 - (chunk.qc == chunk.pc)
    partner = np.where(chunk.qc == chunk.pc, 0, bg.weight[chunk.pc] - 1)
    base = [(local[own > 0], chunk.qc[own > 0], own[own > 0])]
    base.append((local[partner > 0], chunk.pc[partner > 0], partner[partner > 0]))
    entries = {}
    for similarity in chunk.targets:
        extra = list(base)
        if similarity == "cosine" and bg.tiny.size:
            rows = np.repeat(local, bg.tiny.size)
            cols = np.tile(bg.tiny, chunk.r)
            keep = (cols != chunk.qc[rows]) & (cols != chunk.pc[rows])
            extra.append((rows[keep], cols[keep], bg.weight[cols[keep]]))
        pairs, distinct, weights = (np.concatenate(parts) for parts in zip(*extra, strict=True))
        entries[similarity] = (pairs, distinct, weights)
    return entries


def _norms(diff: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row-wise ``sqrt(diff_i . diff_i)``: the euclidean distances ``d`` of the differences ``diff``
    (the one formula for ``d`` used here)."""
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def _refine_all(bg: _Background, chunk: _Chunk, entries: dict[Similarity, _Entries]) -> _Counts:
    """Classify band entries by the rule in float64: ``{similarity: (better, tied)}`` per pair. Entry
    ``(i, j, w)`` is pair ``i`` against distinct row ``j``, standing for ``w`` competitors; the module
    docstring's comparisons on the exact rows (``cosine``: ``(x_q . x_u) inv_q inv_u`` against ``s(q,p)``;
    ``euclidean``: ``||x_q - x_u||`` against ``d(q,p)``), in blocks whose gathered rows stay in cache."""
    out: _Counts = {}
    for similarity, (rows, cols, weights) in entries.items():
        better = np.zeros(chunk.r, dtype=np.float64)
        tied = np.zeros(chunk.r, dtype=np.float64)
        target, tol = chunk.targets[similarity], chunk.tol
        for part in _chunks(rows.size, _REFINE_BLOCK):
            r, c, w = rows[part], cols[part], weights[part]
            reference = target[r]
            if similarity == "cosine":
                values = np.einsum("ij,ij->i", chunk.xq[r], bg.rows(c)) * bg.inv[chunk.qc[r]] * bg.inv[c]
                is_better = values > reference + tol
                is_tied = np.abs(values - reference) <= tol
            else:
                gap = _norms(bg.differences(chunk.xq, r, c)) - reference  # d(q,u) - d(q,p)
                bound = tol * reference
                is_better = -gap > bound
                is_tied = np.abs(gap) <= bound
            better += np.bincount(r, weights=w * is_better, minlength=chunk.r)
            tied += np.bincount(r, weights=w * is_tied, minlength=chunk.r)
        out[similarity] = (better.astype(np.int64), tied.astype(np.int64))
    return out


def reciprocal_ranks(counts: RankCounts, tie_policy: TiePolicy = "expected") -> NDArray[np.float64]:
    """Per-pair reciprocal rank under ``tie_policy`` (see the module docstring): ``1 /`` the
    :func:`mean_ranks` rank for ``optimistic`` and ``pessimistic``."""
    if tie_policy != "expected":
        return 1.0 / mean_ranks(counts, tie_policy)
    g = counts.better.astype(np.float64)
    t = counts.tied.astype(np.float64)
    # sum_{r=g+1}^{g+t+1} 1/r = psi(g+t+2) - psi(g+1)
    return (digamma(g + t + 2.0) - digamma(g + 1.0)) / (t + 1.0)


def hits_at(counts: RankCounts, k: int, tie_policy: TiePolicy = "expected") -> NDArray[np.float64]:
    """Per-pair probability that the positive is ranked within the top ``k`` (for ``optimistic`` and
    ``pessimistic``: whether the :func:`mean_ranks` rank is)."""
    if tie_policy != "expected":
        return (mean_ranks(counts, tie_policy) <= k).astype(np.float64)
    return np.clip(k - counts.better, 0, counts.tied + 1) / (counts.tied + 1.0)


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
    """``{prefix}mrr``, ``{prefix}hits_at_{k}`` (the fraction of pairs ranked within the first
    ``k``) and ``{prefix}mean_rank``: means over all pairs."""
    if counts.better.size == 0:
        raise ValueError("cannot score an empty set of pairs.")
    scores = {f"{prefix}mrr": float(reciprocal_ranks(counts, tie_policy).mean())}
    scores |= {f"{prefix}hits_at_{k}": float(hits_at(counts, k, tie_policy).mean()) for k in ks}
    scores[f"{prefix}mean_rank"] = float(mean_ranks(counts, tie_policy).mean())
    return scores
