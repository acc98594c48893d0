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
   Otherwise, over the competitors ``u in B \\ {q, p}`` (``q`` and ``p`` themselves are
   never counted, whatever the thresholds), each ``u`` is *better* than, *tied* with or
   *worse* than ``p``; ``tol = 1e-6``:

   * ``cosine`` (an absolute tolerance on the cosine, which lies in ``[-1, 1]``)::

         better:  s(q, u) > s(q, p) + tol
         tied:    |s(q, u) - s(q, p)| <= tol

   * ``euclidean`` (a relative tolerance on the distance; ``d(a, b) = ||a - b||``, so
     ``s = 1 / (1 + d)`` ranks as ``-d``)::

         better:  d(q, p) - d(q, u) > tol * d(q, p)
         tied:    |d(q, u) - d(q, p)| <= tol * d(q, p)

     i.e. ``u`` is better when ``d(q, u) < d(q, p) (1 - tol)`` and tied when
     ``d(q, p) (1 - tol) <= d(q, u) <= d(q, p) (1 + tol)``; when ``d(q, p) = 0`` only the
     exact duplicates (``d(q, u) = 0``) tie and nothing is better.

   ``g = #better``, ``t = #tied``, so the positive occupies one of the positions
   ``1 + g .. 1 + g + t``. Other positives of ``q`` are competitors, as in the paper.
   Ranks are against the *whole* background, never a top-k cut.

   Why these tolerances: a score must not change when a model's embeddings are multiplied
   by a constant ``c > 0``. Cosines do not change, so an absolute tolerance on them is
   scale-invariant; distances are multiplied by ``c``, so the tolerance on them must be
   relative. (An absolute tolerance on ``1 / (1 + d)`` is not: it ties almost nothing for
   small embeddings and nearly everything for large ones.) Centring commutes with scaling,
   so the counts are the same for every ``c`` except for a competitor within a few float64
   roundings of a tie boundary; scaling by a power of two changes nothing at all (barring
   overflow or underflow).

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

import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

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


#: unit roundoff of float32
_U32 = 2.0**-24
#: bytes per element of a sub-tile: float32 values (4), two boolean masks (2), the float64
#: copy of the mask's rows of repeated background rows (at most 8)
_BYTES_PER_ELEMENT = 14


def _chunk_rows(n_background: int, chunk_bytes: int) -> int:
    """Query rows per tile against a background of ``n_background`` rows (many pairs)."""
    return _tile_shape(2**62, n_background, chunk_bytes)[0]


def _chunks(n: int, size: int) -> Iterator[slice]:
    for start in range(0, n, size):
        yield slice(start, min(start + size, n))


#: odd 64-bit multipliers of the row hash (fixed: the grouping must not depend on a seed)
_HASH_SEED = 0x5EED_E7A1_2A4C


def _hash_multipliers(size: int) -> NDArray[np.uint64]:
    """``size`` fixed random odd 64-bit multipliers for the row hash of :func:`unique_rows`."""
    rng = np.random.default_rng(_HASH_SEED)
    return rng.integers(0, 2**63, size=size, dtype=np.uint64) * np.uint64(2) + np.uint64(1)


def unique_rows(x: NDArray[np.float64]) -> tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.int64]]:
    """Group identical rows: ``(first, inverse, counts)`` with ``x[first][inverse] == x``.

    ``first[j]`` is one row of group ``j``, ``inverse[i]`` the group of row ``i`` and
    ``counts[j]`` the size of group ``j``. Groups with ``counts > 1`` come first. Rows are
    grouped by a 64-bit multilinear hash of their 32-bit words (``sum_i w_i m_i mod 2^64``,
    ``m_i`` fixed random odd numbers), then every row is checked against its group's
    representative with ``==``; on a hash collision (never seen in practice) the exact, slow
    ``np.unique`` of the rows' bytes is used instead. ``0.0`` and ``-0.0`` hash apart; such
    rows may stay in separate groups, which changes nothing downstream (every group is
    ranked with its multiplicity). Cost: one pass over ``x`` plus a sort of ``n`` integers,
    against ``O(n d log n)`` comparisons for ``np.unique(x, axis=0)``.
    """
    n, dim = x.shape
    x = np.ascontiguousarray(x)
    words = x.view(np.uint32)  # 2 dim words of 32 bits per row
    mult = _hash_multipliers(2 * dim)
    keys = np.empty(n, dtype=np.uint64)
    step = 1024  # small blocks: the uint64 copy of the words stays in cache
    for part in _chunks(n, step):
        keys[part] = words[part] @ mult  # sum_i w_i m_i mod 2^64, m_i random odd
    _, first, inverse, counts = np.unique(keys, return_index=True, return_inverse=True, return_counts=True)
    inverse = inverse.reshape(-1)
    if first.size < n:
        for part in _chunks(n, 16 * step):
            if not np.array_equal(x[part], x[first[inverse[part]]]):
                rows = x.view(np.dtype((np.void, 8 * dim))).reshape(-1)
                _, first, inverse, counts = np.unique(
                    rows, return_index=True, return_inverse=True, return_counts=True
                )
                inverse = inverse.reshape(-1)
                break
    # groups with several rows first (their counts are summed with weights, the others counted)
    order = np.argsort(counts == 1, kind="stable")
    position = np.empty_like(order)
    position[order] = np.arange(order.size)
    return first[order].astype(np.intp), position[inverse].astype(np.intp), counts[order].astype(np.int64)


def rank_counts(
    embeddings: ArrayLike,
    queries: Sequence[int] | NDArray[np.intp],
    positives: Sequence[int] | NDArray[np.intp],
    *,
    similarity: Similarity = "cosine",
    tol: float = DEFAULT_TOL,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    device: str | None = None,
) -> RankCounts:
    """Count, for each pair ``(queries[i], positives[i])``, the better and tied competitors.

    See :func:`rank_counts_all`, which computes several similarities from one pass.
    """
    return rank_counts_all(
        embeddings,
        queries,
        positives,
        similarities=(similarity,),
        tol=tol,
        chunk_bytes=chunk_bytes,
        device=device,
    )[similarity]


def rank_counts_all(
    embeddings: ArrayLike,
    queries: Sequence[int] | NDArray[np.intp],
    positives: Sequence[int] | NDArray[np.intp],
    *,
    similarities: Sequence[Similarity] = SIMILARITIES,
    tol: float = DEFAULT_TOL,
    chunk_bytes: int = DEFAULT_CHUNK_BYTES,
    device: str | None = None,
) -> dict[Similarity, RankCounts]:
    """Rank counts of every pair under each similarity, exact to float64 arithmetic.

    ``embeddings`` are the raw background embeddings (centred here). Pairs whose two sides
    are the same background item get ``g = t = 0`` (rank 1). ``tol`` must lie in ``[0, 1)``
    (absolute on the cosine, relative on the euclidean distance; see the module docstring).

    ``device``: where the float32 pass runs. ``None`` (default): on a CUDA GPU when torch is
    already imported (never imported here just to look) and sees one, else numpy on the
    CPU; ``"numpy"``: numpy; any torch device name (``"cuda"``, ``"cuda:1"``, ``"cpu"``):
    torch on that device. On torch the products and comparisons of a tile run on the
    device (float32, TF32 off) and only the counts and the band entries come back to the
    host, where the refinement runs in numpy float64 as always; the counts are the same
    as numpy's (tested with torch on the CPU; *untested on a real GPU*).

    How: identical embeddings have identical similarities, so the centred rows are grouped
    (:func:`unique_rows`) and the pass below runs against the ``m`` distinct rows, each
    competitor group counted with its multiplicity; the query's own group counts its other
    items (the query excluded once; the positive too if it shares the group) and the
    positive's group its other items, both classified by the rule in float64. Other items
    with the same embedding as ``q`` or ``p`` are competitors, as every other item. A
    constant, low-coverage, quantised or duplicated-text encoder therefore costs no more
    than any other (less: ``m < n``). The distinct rows are then multiplied by a power of
    two ``2^-e`` that brings the largest norm into ``[1/2, 1)``; that is exact in floating
    point and changes no count
    (every rule is scale-invariant), and it keeps the float32 pass below from overflowing
    for any input scale. The pairs are taken up to 1,024 at a time and the background in
    tiles of a few thousand rows: the dot products ``D = x_q . x_u`` of a tile are one
    float32 matrix product (fast, ``_TILE_ELEMENTS`` products), and the comparisons below
    run over cache-sized sub-tiles of it; the products are shared by
    both similarities. Each similarity is then compared through a monotone stand-in that
    costs one pass over ``D``, the per-query factors being folded into per-query thresholds:

    * cosine: ``c(q,u) |x_q| = D * (1/|x_u|)``, compared with ``(s(q,p) +- tol) |x_q|``;
    * euclidean: ``v(q,u) = D - |x_u|^2 / 2 = (|x_q|^2 - d(q,u)^2) / 2``, larger is better.
      With ``d_p = d(q,p)``, ``u`` is better iff ``d(q,u) < d_p (1 - tol)`` iff
      ``v(q,u) > hi = (|x_q|^2 - d_p^2 (1 - tol)^2) / 2``, and worse iff
      ``d(q,u) > d_p (1 + tol)`` iff ``v(q,u) < lo = (|x_q|^2 - d_p^2 (1 + tol)^2) / 2``
      (``lo`` and ``hi`` are finite, so the band ``[lo, hi]`` always is).

    A float32 dot product of rows ``a``, ``b`` is within ``gamma |a| |b|`` of the exact one,
    ``gamma = (dim + 2) u / (1 - (dim + 2) u)``, ``u = 2^-24`` (inputs rounded to float32,
    then summed in any order; Higham, *Accuracy and Stability of Numerical Algorithms*,
    Thm 3.5), plus at most ``(dim + 2) 2^-149`` from float32 underflow. Hence

    * cosine: ``|fl32(c |x_q|) - c |x_q|| <= (gamma + 3u) |x_q|`` (``|c| <= 1``);
    * euclidean: ``|fl32(v) - v| <= (gamma + 2u) (|x_q| |x_u| + |x_u|^2)
      <= (gamma + 2u) (|x_q|^2 / 2 + 3/2 max_u |x_u|^2)``.

    The margins used exceed these bounds by a third or more (cosine ``(2 gamma + 8u) |x_q|``,
    euclidean ``(gamma + 6u)(|x_q|^2 + 2 max_u |x_u|^2)``), plus the rounding of the float32
    thresholds (``2u (|lo| + |hi|)``) and the underflow term; the slack covers the rounding of
    ``lo -+ margin`` to float32, the float64 rounding of ``lo``, ``hi``
    (``O(2^-52 (|x_q|^2 + d_p^2))``, ``d_p^2 <= 2 |x_q|^2 + 2 max_u |x_u|^2``) and the
    difference between ``d_p (1 +- tol)`` and the float64 tests of the rule. Every
    competitor whose float32 stand-in lies above ``hi + margin`` is counted better, below
    ``lo - margin`` worse; the few in between are recomputed in float64 from their definition
    and classified by the rule itself, with ``s(q,p)`` or ``d(q,p)`` always computed in
    float64. The groups of ``q`` and ``p`` are set to NaN in the pass, so they fall in
    neither count nor the band (they are refined with their multiplicities, see above).
    Peak extra memory: a float64 copy of the embeddings, a float64 and a float32 copy of
    the distinct rows, and at most ``chunk_bytes`` (about 40 MiB used by default) for the tile
    buffers and the band entries awaiting refinement, whatever the background size.
    """
    if not 0.0 <= tol < 1.0:
        raise ValueError(f"tol must lie in [0, 1), got {tol}.")
    x = check_embeddings(embeddings)
    # centre (E - mean(E), as `centre`) in place when check_embeddings made a copy
    if isinstance(embeddings, np.ndarray) and np.shares_memory(x, embeddings):
        x = centre(x)
    else:
        x -= x.mean(axis=0, keepdims=True)
    q = np.asarray(queries, dtype=np.intp)
    p = np.asarray(positives, dtype=np.intp)
    n, dim = x.shape
    if q.shape != p.shape or q.ndim != 1:
        raise ValueError("queries and positives must be 1-D index arrays of equal length.")
    if q.size and (min(q.min(), p.min()) < 0 or max(q.max(), p.max()) >= n):
        raise IndexError(f"pair indices must lie in [0, {n}); got an index outside it.")
    for similarity in similarities:
        if similarity not in SIMILARITIES:
            raise ValueError(f"similarity must be one of {SIMILARITIES}, got {similarity!r}.")

    # identical rows have identical similarities: rank against the distinct rows, each
    # competitor counted with its multiplicity (ties cost nothing, however many)
    first, group, weight = unique_rows(x)
    if first.size < n:
        x = x[first]
    else:  # no duplicates: keep the rows in place
        group = first = np.arange(n, dtype=np.intp)
        weight = np.ones(n, dtype=np.int64)
    m = first.size
    n_multi = int(np.count_nonzero(weight > 1))  # the groups with several rows come first
    weight64 = weight[:n_multi].astype(np.float64)
    # exact rescaling by 2^-e, largest row norm in [1/2, 1) (max |x_ij| avoids overflow in the norm)
    # (in place: x is a copy by now; no temporary of the size of x)
    largest = max(float(x.max()), -float(x.min()))
    if largest > 0:
        np.ldexp(x, -np.frexp(largest)[1], out=x)
        np.ldexp(x, -np.frexp(float(np.sqrt(np.einsum("ij,ij->i", x, x).max())))[1], out=x)
    sq = np.einsum("ij,ij->i", x, x)
    norms = np.sqrt(sq)
    inv = np.divide(1.0, norms, out=np.zeros_like(norms), where=norms > 0)
    x32, inv32, half_sq32 = x.astype(np.float32), inv.astype(np.float32), (sq / 2).astype(np.float32)
    gamma = (dim + 2) * _U32 / (1 - (dim + 2) * _U32)
    underflow = 4 * (dim + 4) * 2.0**-149
    max_sq = float(sq.max())
    counts = {s: (np.zeros(q.size, np.int64), np.zeros(q.size, np.int64)) for s in similarities}
    rows, cols, sub = _tile_shape(q.size, m, chunk_bytes)
    gpu = _TorchPass(device, x32, inv32, half_sq32, weight64, cols) if _torch_wanted(device) else None
    # buffers reused throughout: the products of a tile (background rows by pairs, large
    # enough for an efficient GEMM) and the passes over a sub-tile of it (small, in cache)
    dots_buf = np.empty(rows * cols, dtype=np.float32)
    value_buf = np.empty(rows * sub, dtype=np.float32)
    above_buf = np.empty(rows * sub, dtype=bool)
    band_buf = np.empty(rows * sub, dtype=bool)
    # band entries are refined once this many have gathered (the refinement's own chunk)
    flush_at = max(1, chunk_bytes // (dim * 16))
    count_dtype = np.uint16 if sub < 2**16 else np.int64
    for part in _chunks(q.size, rows):
        # qc, pc index the distinct rows from here on (x[qc] is the query's row)
        qc, pc = group[q[part]], group[p[part]]
        r = qc.size
        local = np.arange(r)
        left = np.ascontiguousarray(x32[qc].T)  # dim x r
        # the other items of q's and p's own groups (q and p excluded once each) are ranked
        # in the refinement with these multiplicities; the pass sees neither group
        own_weight = weight[qc] - 1 - (qc == pc)
        pos_weight = np.where(qc == pc, 0, weight[pc] - 1)
        state = {}
        for similarity in similarities:
            if similarity == "cosine":
                target = np.einsum("ij,ij->i", x[qc], x[pc]) * inv[qc] * inv[pc]
                scale = norms[qc]
                lo = (target - tol) * scale
                hi = (target + tol) * scale
                # |fl32(value) - c |x_q|| <= (gamma + 3u) |x_q|, |c| <= 1; thresholds rounded to float32
                margin = (2 * gamma + 8 * _U32) * scale + 2 * _U32 * np.maximum(abs(lo), abs(hi))
            else:
                target = _distances(x[qc], x[pc])
                hi = (sq[qc] - (target * (1.0 - tol)) ** 2) / 2  # v > hi  <=>  d(q,u) < d_p (1 - tol)
                lo = (sq[qc] - (target * (1.0 + tol)) ** 2) / 2  # v < lo  <=>  d(q,u) > d_p (1 + tol)
                # |fl32(value) - v| <= (gamma + 2u)(|x_q|^2 / 2 + 3/2 max |x_u|^2); thresholds to float32
                margin = (gamma + 6 * _U32) * (sq[qc] + 2 * max_sq) + 2 * _U32 * (abs(lo) + abs(hi))
            margin = margin + underflow
            lo32 = (lo - margin)[None, :].astype(np.float32)
            hi32 = (hi + margin)[None, :].astype(np.float32)
            # q's and p's groups go to the refinement with their remaining multiplicities
            keep = own_weight > 0
            pending = [(local[keep], qc[keep], own_weight[keep])]
            keep = pos_weight > 0
            pending.append((local[keep], pc[keep], pos_weight[keep]))
            g = np.zeros(r, dtype=np.int64)
            t = np.zeros(r, dtype=np.int64)
            state[similarity] = (target, lo32, hi32, g, t, pending, [0])
        xq, inv_q = x[qc], inv[qc]  # the queries' float64 rows, for the refinement
        if gpu is not None:
            thresholds = {sim: (state[sim][1], state[sim][2]) for sim in similarities}
            for similarity, band_rows, band_cols in gpu.band_entries(qc, pc, thresholds):
                target, _, _, g, t, pending, size = state[similarity]
                pending.append((band_rows, band_cols, weight[band_cols]))
                size[0] += band_rows.size
                if size[0] >= flush_at:
                    _refine_pending(x, inv, xq, inv_q, pending, target, tol, similarity, g, t)
                    size[0] = 0
            for similarity, better in gpu.better.items():
                state[similarity][3][:] += better
        for c0 in range(0, m if gpu is None else 0, cols):
            c1 = min(c0 + cols, m)
            # tile: dots[u - c0, i] = x_u . x_q(i) for background rows u in [c0, c1)
            tile = np.matmul(x32[c0:c1], left, out=dots_buf[: (c1 - c0) * r].reshape(c1 - c0, r))
            for s0 in range(c0, c1, sub):
                s1 = min(s0 + sub, c1)
                height = s1 - s0
                dots = tile[s0 - c0 : s1 - c0]
                value = value_buf[: height * r].reshape(height, r)
                # q's and p's own groups are refined apart: NaN compares false, so neither
                # above nor in the band
                own = local[(qc >= s0) & (qc < s1)]
                partner = local[(pc >= s0) & (pc < s1)]
                n_weighted = max(0, min(n_multi, s1) - s0)  # rows of groups of several items
                for similarity in similarities:
                    target, lo32, hi32, g, t, pending, size = state[similarity]
                    if similarity == "cosine":
                        # value = D / |x_u| = cos(q, u) |x_q|  (a zero row has cosine 0)
                        np.multiply(dots, inv32[s0:s1, None], out=value)
                    else:
                        # value = v(q,u) = D - |x_u|^2 / 2 = (|x_q|^2 - d(q,u)^2) / 2
                        np.subtract(dots, half_sq32[s0:s1, None], out=value)
                    value[qc[own] - s0, own] = np.nan
                    value[pc[partner] - s0, partner] = np.nan
                    above = np.greater(value, hi32, out=above_buf[: height * r].reshape(height, r))
                    band = np.greater_equal(value, lo32, out=band_buf[: height * r].reshape(height, r))
                    band ^= above  # lo <= value <= hi  (value > hi implies value >= lo)
                    # better: singleton groups counted, the others summed with their multiplicities
                    # (summing bytes into a narrow integer is several times faster than count_nonzero)
                    g += np.add.reduce(above[n_weighted:].view(np.uint8), axis=0, dtype=count_dtype)
                    if n_weighted:
                        g += (weight64[s0 : s0 + n_weighted] @ above[:n_weighted]).astype(np.int64)
                    flat = _sparse_flatnonzero(band_buf[: height * r])
                    if flat.size:
                        band_cols = flat // r + s0
                        pending.append((flat % r, band_cols, weight[band_cols]))
                        size[0] += flat.size
                        if size[0] >= flush_at:
                            _refine_pending(x, inv, xq, inv_q, pending, target, tol, similarity, g, t)
                            size[0] = 0
        same = q[part] == p[part]
        for similarity in similarities:
            target, _, _, g, t, pending, _ = state[similarity]
            _refine_pending(x, inv, xq, inv_q, pending, target, tol, similarity, g, t)
            g[same] = 0
            t[same] = 0
            counts[similarity][0][part] = g
            counts[similarity][1][part] = t
    return {s: RankCounts(better, tied) for s, (better, tied) in counts.items()}


#: products per tile (one GEMM: large enough to run at the machine's full speed)
_TILE_ELEMENTS = 2**22
#: pairs per tile
_TILE_ROWS = 1024
#: elements of a sub-tile, over which the comparisons run (its buffers stay in cache)
_SUB_TILE_ELEMENTS = 2**19


def _tile_shape(n_pairs: int, m: int, chunk_bytes: int) -> tuple[int, int, int]:
    """``(pairs, background rows, background rows of a sub-tile)`` of a tile within ``chunk_bytes``.

    Memory: ``4`` bytes per tile element (its float32 products) and ``_BYTES_PER_ELEMENT``
    per sub-tile element.
    """
    budget = max(1, chunk_bytes // 2)
    rows = max(1, min(n_pairs, _TILE_ROWS, budget // (4 + _BYTES_PER_ELEMENT)))
    sub = max(1, min(m, _SUB_TILE_ELEMENTS // rows, budget // (_BYTES_PER_ELEMENT * rows)))
    cols = max(sub, min(m, _TILE_ELEMENTS // rows, budget // (4 * rows)) // sub * sub)
    return rows, cols, sub


def _sparse_flatnonzero(mask: NDArray[np.bool_]) -> NDArray[np.intp]:
    """``np.flatnonzero`` of a sparse contiguous boolean vector, scanning 8 bytes at a time."""
    whole = mask.size - mask.size % 8
    words = np.flatnonzero(mask[:whole].view(np.uint64) != 0)  # (faster than on the words)
    found = (words[:, None] * 8 + np.arange(8)).reshape(-1)
    found = found[mask[found]]
    if whole < mask.size:
        found = np.concatenate([found, whole + np.flatnonzero(mask[whole:])])
    return found


def _refine_pending(
    x: NDArray[np.float64],
    inv: NDArray[np.float64],
    xq: NDArray[np.float64],
    inv_q: NDArray[np.float64],
    pending: list[tuple[NDArray[np.intp], NDArray[np.intp], NDArray[np.int64]]],
    target: NDArray[np.float64],
    tol: float,
    similarity: Similarity,
    better: NDArray[np.int64],
    tied: NDArray[np.int64],
) -> None:
    """Refine the gathered ``(rows, cols, weights)`` entries and empty ``pending``."""
    if pending:
        rows, cols, weights = (np.concatenate(a) for a in zip(*pending, strict=True))
        pending.clear()
        _refine(x, inv, xq, inv_q, rows, cols, weights, target, tol, similarity, better, tied)


def _torch_wanted(device: str | None) -> bool:
    """Whether the float32 pass runs on torch (see ``rank_counts_all``'s ``device``)."""
    if device == "numpy":
        return False
    if device is not None:
        return True
    torch: Any = sys.modules.get("torch")  # not imported here just to look for a GPU
    return torch is not None and bool(torch.cuda.is_available())


class _TorchPass:
    """The float32 pass of ``rank_counts_all`` on a torch device (a GPU), tile by tile.

    Same arithmetic as the numpy pass: float32 products (TF32 disabled), float32
    ``value`` and thresholds, the pair's own groups set to NaN; only the band entries
    (per tile) and the better-counts (per chunk of pairs) go back to the host.
    """

    def __init__(
        self,
        device: str | None,
        x32: NDArray[np.float32],
        inv32: NDArray[np.float32],
        half_sq32: NDArray[np.float32],
        weight64: NDArray[np.float64],
        cols: int,
    ) -> None:
        import torch  # only on this path: the module itself never imports torch

        self.torch = torch
        self.device = torch.device(device if device is not None else "cuda")
        self.x32 = torch.from_numpy(x32).to(self.device)
        self.inv32 = torch.from_numpy(inv32).to(self.device)
        self.half_sq32 = torch.from_numpy(half_sq32).to(self.device)
        self.weight64 = torch.from_numpy(weight64).to(self.device)
        self.cols = cols
        self.better: dict[Similarity, NDArray[np.int64]] = {}

    def band_entries(
        self,
        qc: NDArray[np.intp],
        pc: NDArray[np.intp],
        thresholds: dict[Similarity, tuple[NDArray[np.float32], NDArray[np.float32]]],
    ) -> Iterator[tuple[Similarity, NDArray[np.intp], NDArray[np.intp]]]:
        """Yield ``(similarity, pair rows, background rows)`` of each tile's band; then
        ``self.better`` holds the chunk's better-counts (host arrays)."""
        torch, dev = self.torch, self.device
        r, m, n_multi = qc.size, self.x32.shape[0], self.weight64.shape[0]
        qc_t = torch.from_numpy(np.asarray(qc, dtype=np.int64)).to(dev)
        pc_t = torch.from_numpy(np.asarray(pc, dtype=np.int64)).to(dev)
        local = torch.arange(r, device=dev)
        left = self.x32[qc_t].T.contiguous()  # dim x r
        limits = {
            s: (torch.from_numpy(lo).to(dev), torch.from_numpy(hi).to(dev))
            for s, (lo, hi) in thresholds.items()
        }
        better = {s: torch.zeros(r, dtype=torch.int64, device=dev) for s in thresholds}
        tf32 = torch.backends.cuda.matmul.allow_tf32
        torch.backends.cuda.matmul.allow_tf32 = False  # the error bounds assume float32 products
        try:
            for c0 in range(0, m, self.cols):
                c1 = min(c0 + self.cols, m)
                dots = self.x32[c0:c1] @ left  # dots[u - c0, i] = x_u . x_q(i)
                own = (qc_t >= c0) & (qc_t < c1)
                partner = (pc_t >= c0) & (pc_t < c1)
                n_weighted = max(0, min(n_multi, c1) - c0)
                for similarity, (lo, hi) in limits.items():
                    if similarity == "cosine":
                        value = dots * self.inv32[c0:c1, None]
                    else:
                        value = dots - self.half_sq32[c0:c1, None]
                    value[qc_t[own] - c0, local[own]] = float("nan")
                    value[pc_t[partner] - c0, local[partner]] = float("nan")
                    above = value > hi
                    band = (value >= lo) & ~above
                    better[similarity] += above[n_weighted:].sum(dim=0)
                    if n_weighted:
                        weighted = self.weight64[c0 : c0 + n_weighted] @ above[:n_weighted].double()
                        better[similarity] += weighted.round().long()
                    u, i = band.nonzero(as_tuple=True)
                    if u.numel():
                        yield (
                            similarity,
                            i.cpu().numpy().astype(np.intp),
                            (u + c0).cpu().numpy().astype(np.intp),
                        )
        finally:
            torch.backends.cuda.matmul.allow_tf32 = tf32
        self.better = {s: b.cpu().numpy() for s, b in better.items()}


def _distances(a: NDArray[np.float64], b: NDArray[np.float64]) -> NDArray[np.float64]:
    """Row-wise euclidean distances ``||a_i - b_i||`` (the one formula for ``d`` used here)."""
    diff = a - b
    return np.sqrt(np.einsum("ij,ij->i", diff, diff))


def _refine(
    x: NDArray[np.float64],
    inv: NDArray[np.float64],
    xq: NDArray[np.float64],
    inv_q: NDArray[np.float64],
    band_rows: NDArray[np.intp],
    band_cols: NDArray[np.intp],
    band_weights: NDArray[np.int64],
    target: NDArray[np.float64],
    tol: float,
    similarity: Similarity,
    better: NDArray[np.int64],
    tied: NDArray[np.int64],
) -> None:
    """Classify the competitors near the decision band by the rule, in float64.

    ``x`` holds the distinct rows and ``inv`` their inverse norms, ``xq`` and ``inv_q`` the
    same for the chunk's queries; ``(band_rows[i], band_cols[i])`` is a pair of the chunk
    against distinct row ``band_cols[i]``, which stands for
    ``band_weights[i]`` competitors (its multiplicity, less ``q`` and ``p`` themselves in
    their own rows). ``target`` is ``s(q,p)`` (cosine) or ``d(q,p)`` (euclidean); the
    comparisons are the module docstring's formulas verbatim.
    """
    # small blocks: the gathered float64 rows stay in cache
    for part in _chunks(band_rows.size, 2048):
        r, c, w = band_rows[part], band_cols[part], band_weights[part]
        a, b = xq[r], x[c]
        reference = target[r]
        if similarity == "cosine":
            values = np.einsum("ij,ij->i", a, b) * inv_q[r] * inv[c]
            is_better = values > reference + tol
            is_tied = np.abs(values - reference) <= tol
        else:
            gap = _distances(a, b) - reference  # d(q,u) - d(q,p)
            bound = tol * reference
            is_better = -gap > bound
            is_tied = np.abs(gap) <= bound
        better += np.bincount(r, weights=w * is_better, minlength=better.size).astype(np.int64)
        tied += np.bincount(r, weights=w * is_tied, minlength=tied.size).astype(np.int64)


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
