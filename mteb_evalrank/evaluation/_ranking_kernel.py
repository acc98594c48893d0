"""The compiled part of the ranking: one fused scan of a tile of products, and the float64 row
gathers of the refinement (why compiled, and the cache: docs/architecture.md, "The ranking core").

Arithmetic: the float32 operations whose error :func:`mteb_evalrank.evaluation.ranking.
_screening_margins` bounds, ``x - half_sq[u]`` and ``x * inv[u]`` each rounded to float32 (no
fast-math: no reassociation, no contraction; NaN compares false), compared with float32 limits.
Integer counts are exact. Imported by the pass on first use, so that ``import
mteb_evalrank.evaluation.ranking`` does not import numba.
"""

from __future__ import annotations

import numpy as np
from numba import njit


@njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def screen_tile(  # type: ignore[no-untyped-def]
    dots, n_weighted, weight, half_sq, inv, lo_e, hi_e, lo_c, hi_c, better_e, better_c,
    band_pair, band_row, band_kind, n_band, first_pair, row_offset,
):  # fmt: skip
    """Count and gather the products of one tile, pairs ``first_pair`` onwards.

    ``dots``: float32 ``(pairs, k)``, ``dots[i, u] = x_q(i) . x_u`` for the tile's ``k``
    distinct rows (NaN where the pass must not look). Per product the euclidean stand-in
    ``ve = x - half_sq[u]`` and the cosine one ``vc = x * inv[u]`` (float32). ``v > hi[i]``
    adds the row's multiplicity (``weight[u]`` for the first ``n_weighted`` rows, else 1) to
    ``better_*[i]``; ``lo[i] <= v <= hi[i]`` (the band; NaN is in neither) appends the entry
    ``(i, row_offset + u, kind)``, kind 0 euclidean and 1 cosine, at ``n_band`` of the band
    buffers. A similarity not wanted has ``+inf`` limits: nothing is above or inside.

    Per pair, one vectorised loop counts (``above`` and ``at least lo`` per similarity); only a
    pair whose two counts differ (about a quarter of them on random data) is read again, to
    mark its band products in a byte row that is then scanned eight bytes at a time.

    Returns ``(next_pair, n_band)``: it stops before a pair whose entries might not fit
    (``n_band + 2 k`` past the buffers' end), so that the caller refines and calls again from
    ``next_pair``; ``next_pair == pairs`` when the tile is done.
    """
    pairs, k = dots.shape
    words = (k + 7) // 8
    marks = np.zeros(8 * words, dtype=np.uint8)
    mark_words = marks.view(np.uint64)
    n = n_band
    for i in range(first_pair, pairs):
        if n + 2 * k > band_pair.size:
            return i, n
        row = dots[i]
        le, he, lc, hc = lo_e[i], hi_e[i], lo_c[i], hi_c[i]
        extra_e = np.int64(0)  # the multiplicities beyond 1 of the rows above
        extra_c = np.int64(0)
        for u in range(n_weighted):
            extra_e += (weight[u] - 1) * np.int64(row[u] - half_sq[u] > he)
            extra_c += (weight[u] - 1) * np.int64(row[u] * inv[u] > hc)
        above_e = np.int32(0)
        above_c = np.int32(0)
        at_least_lo = np.int32(0)
        for u in range(k):
            x = row[u]
            ve = x - half_sq[u]
            vc = x * inv[u]
            above_e += np.int32(ve > he)
            above_c += np.int32(vc > hc)
            at_least_lo += np.int32(ve >= le) + np.int32(vc >= lc)
        better_e[i] += extra_e + above_e
        better_c[i] += extra_c + above_c
        if at_least_lo == above_e + above_c:  # no band entry
            continue
        for u in range(k):
            x = row[u]
            ve = x - half_sq[u]
            vc = x * inv[u]
            marks[u] = np.uint8((ve >= le) & (ve <= he)) | (np.uint8((vc >= lc) & (vc <= hc)) << np.uint8(1))
        for w in range(words):
            if mark_words[w] == 0:
                continue
            for u in range(8 * w, min(8 * w + 8, k)):
                for kind in range(2):
                    if marks[u] >> kind & 1:
                        band_pair[n] = i
                        band_row[n] = row_offset + u
                        band_kind[n] = kind
                        n += 1
    return pairs, n


@njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def scaled_rows(raw, index, mean, scale_1, scale_2, out):  # type: ignore[no-untyped-def]
    """``out[j] = ((raw[index[j]] - mean) * scale_1) * scale_2`` in float64, each operation
    rounded as numpy rounds it: the refinement's exact rows (``ranking._scaled_rows`` with two
    normal powers of two ``scale_*``) in one pass over the gathered row instead of numpy's four."""
    for j in range(index.size):
        source = raw[index[j]]
        for k in range(out.shape[1]):
            out[j, k] = ((np.float64(source[k]) - mean[k]) * scale_1) * scale_2
    return out


@njit(nogil=True, cache=True, boundscheck=False, error_model="numpy")
def differences(queries, query_index, raw, index, mean, scale_1, scale_2, out):  # type: ignore[no-untyped-def]
    """``out[j] = queries[query_index[j]] - scaled_rows(raw, index, ...)[j]``: the differences
    ``x_q - x_u`` of the refinement's euclidean distances, without gathering either side first."""
    for j in range(index.size):
        source = raw[index[j]]
        query = queries[query_index[j]]
        for k in range(out.shape[1]):
            out[j, k] = query[k] - ((np.float64(source[k]) - mean[k]) * scale_1) * scale_2
    return out
