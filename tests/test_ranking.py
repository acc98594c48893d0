"""The ranking maths against brute force, permutation enumeration and hand-worked cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays
from ranking_reference import brute_force_counts, rank_counts

from mteb_evalrank.evaluation.ranking import (
    NonFiniteEmbeddingsError,
    RankCounts,
    hits_at,
    mean_ranks,
    rank_counts_all,
    rank_metrics,
    reciprocal_ranks,
)

TOL = 1e-6


def oracle_counts(
    emb: np.ndarray, q: np.ndarray | list[int], p: np.ndarray | list[int], similarity: str
) -> tuple[list[int], list[int]]:
    """``(better, tied)`` per pair by the brute-force reference (``ranking_reference``), as lists."""
    better, tied = brute_force_counts(emb, q, p, similarity, TOL)
    return better.tolist(), tied.tolist()


def pair_counts(emb: np.ndarray, q: int, p: int, similarity: str) -> tuple[int, int]:
    """``(better, tied)`` of one pair by the brute-force reference."""
    better, tied = oracle_counts(emb, [q], [p], similarity)
    return better[0], tied[0]


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
    expected = [pair_counts(emb, a, b, similarity) for a, b in pairs]
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


@pytest.mark.parametrize("scale", [1.0, 1e-3, 12345.6789])
def test_float32_fast_path_is_exact_next_to_the_decision_band(scale: float) -> None:
    """Competitors within float32 error of s(q, p) must be classified as in float64."""
    rng = np.random.default_rng(7)
    n, dim = 1200, 384
    x = rng.normal(size=(n, dim)) * rng.uniform(0.2, 8.0, size=(n, 1))
    # rows 1..600 are the positive (row 0's partner, row 1) perturbed by 1e-9 .. 1e-3
    scales = np.geomspace(1e-9, 1e-3, 600)[:, None]
    x[1:601] = x[1] + scales * rng.normal(size=(600, dim)) * np.linalg.norm(x[1]) / np.sqrt(dim)
    x *= scale
    queries, positives = np.zeros(5, dtype=np.intp), np.array([1, 2, 50, 300, 1000])
    got = rank_counts_all(x, queries, positives)
    for similarity in ("cosine", "euclidean"):
        expected = [pair_counts(x, 0, int(p), similarity) for p in positives]
        assert (
            list(zip(got[similarity].better.tolist(), got[similarity].tied.tolist(), strict=True)) == expected
        )
        assert sum(t for _, t in expected) > 0  # the case really has ties within tol


def structured_background(seed: int) -> np.ndarray:
    """Random rows plus duplicated rows and equally spaced collinear points (many exact ties)."""
    rng = np.random.default_rng(seed)
    dim = 6
    base = rng.normal(size=(40, dim))
    duplicates = np.repeat(base[:4], 3, axis=0)  # rows 0..3 three more times each
    start, step = rng.normal(size=dim), rng.normal(size=dim)
    line = start + np.arange(-4, 5)[:, None] * step  # 9 points, equal spacing: d(q, q +- k step) tie
    lattice = rng.integers(-2, 3, size=(15, dim)).astype(float)  # equal distances and cosines
    return np.vstack([base, duplicates, line, lattice, lattice[:3]])


SCALES = [1e-3, 0.0731, 1.0, 3.7, 1e2, 12345.6789, 1e7]


@pytest.mark.parametrize("similarity", ["cosine", "euclidean"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_counts_equal_the_float64_oracle_and_do_not_change_with_scale(similarity: str, seed: int) -> None:
    emb = structured_background(seed)
    n = len(emb)
    rng = np.random.default_rng(100 + seed)
    # every pair of the collinear and duplicated rows, plus random pairs (some with q == p)
    special = np.r_[0:4, 40:61]
    grid = np.array(list(itertools.product(special, special))).T
    q = np.r_[grid[0], rng.integers(0, n, 300)]
    p = np.r_[grid[1], rng.integers(0, n, 300)]
    reference = None
    for scale in SCALES:
        got = rank_counts(emb * scale, q, p, similarity=similarity)  # type: ignore[arg-type]
        assert (got.better.tolist(), got.tied.tolist()) == oracle_counts(emb * scale, q, p, similarity), scale
        assert np.all(got.better + got.tied <= n - 2)
        if reference is None:
            reference = got
            assert reference.tied.sum() > 50  # the case really has many ties
        assert np.array_equal(got.better, reference.better) and np.array_equal(got.tied, reference.tied), (
            scale
        )
        for policy in ("expected", "optimistic", "pessimistic"):
            a = rank_metrics(got, tie_policy=policy)  # type: ignore[arg-type]
            b = rank_metrics(reference, tie_policy=policy)  # type: ignore[arg-type]
            assert all(abs(a[k] - b[k]) <= 1e-12 for k in a), (scale, policy)


def test_euclidean_ties_do_not_grow_with_the_embedding_scale() -> None:
    # random 64-d data: the old absolute tolerance on 1/(1+d) gave 0.06, 0.48, 4.2 and 42 ties
    # per pair at scales 1, 10, 100, 1000; a relative tolerance of 1e-6 on the distance leaves
    # about 200k * 2e-6 * 11 * 0.4 ~ 1 chance tie among the 200k comparisons, at every scale,
    # as the absolute tolerance on the (scale-free) cosine does
    emb = np.random.default_rng(0).normal(size=(500, 64))
    q, p = np.arange(0, 400), np.arange(1, 401)
    expected = {s: oracle_counts(emb, q, p, s) for s in ("cosine", "euclidean")}
    assert sum(expected["euclidean"][1]) <= 5 and sum(expected["cosine"][1]) <= 5
    for scale in (1.0, 10.0, 100.0, 1000.0, 1e7):
        got = rank_counts_all(emb * scale, q, p)
        for similarity, counts in got.items():
            assert (counts.better.tolist(), counts.tied.tolist()) == expected[similarity], (scale, similarity)


def test_far_apart_points_never_count_the_query_or_the_positive() -> None:
    # 4 collinear points spaced 1e7 apart (x = 0, 1e7, 2e7, 3e7): at most 2 competitors
    emb = np.array([[0.0, 0.0], [1e7, 0.0], [2e7, 0.0], [3e7, 0.0]])
    cases = {
        (0, 1): (0, 0),  # the others at 2e7 and 3e7 are worse
        (1, 0): (0, 1),  # x = 2e7 is also 1e7 away: tied; x = 3e7 worse
        (0, 3): (2, 0),  # x = 1e7 and 2e7 are nearer
        (1, 3): (2, 0),  # d(q,p) = 2e7; x = 0 and x = 2e7 are 1e7 away: better
    }
    for (q, p), expected in cases.items():
        got = rank_counts(emb, [q], [p], similarity="euclidean")
        assert (int(got.better[0]), int(got.tied[0])) == expected, (q, p)
        assert pair_counts(emb, q, p, "euclidean") == expected


def test_duplicates_tie_only_with_exact_duplicates_at_distance_zero() -> None:
    emb = np.array([[0.0, 0.0], [0.0, 0.0], [0.0, 0.0], [1e-9, 0.0], [0.0, 2.0]])
    # q = 0, p = 1 (its duplicate, d = 0): row 2 ties; row 3 (d = 1e-9) and row 4 are worse
    for scale in (1.0, 1e-3, 1e7):
        got = rank_counts(emb * scale, [0], [1], similarity="euclidean")
        assert (int(got.better[0]), int(got.tied[0])) == (0, 1)
    # cosine: rows 0..2 are the same vector (identical cosine 1 with row 0 after centring)
    got = rank_counts(emb, [0], [1], similarity="cosine")
    assert (int(got.better[0]), int(got.tied[0])) == pair_counts(emb, 0, 1, "cosine")
    assert int(got.tied[0]) >= 1


@pytest.mark.parametrize("scale", [1e-100, 1e100])
def test_extreme_scales_do_not_overflow_the_float32_pass(scale: float) -> None:
    emb = structured_background(3)
    q, p = np.arange(0, 60), np.arange(1, 61)
    base = rank_counts_all(emb, q, p)
    got = rank_counts_all(emb * scale, q, p)
    for similarity in ("cosine", "euclidean"):
        assert np.array_equal(got[similarity].better, base[similarity].better)
        assert np.array_equal(got[similarity].tied, base[similarity].tied)


def test_tolerance_must_lie_in_zero_one() -> None:
    emb = np.eye(4)
    for bad in (-1e-6, 1.0):
        with pytest.raises(ValueError, match="tol"):
            rank_counts(emb, [0], [1], tol=bad)


def heavy_duplicate_backgrounds() -> dict[str, np.ndarray]:
    """Encoders whose rows repeat: the ranking runs on distinct rows with multiplicities."""
    rng = np.random.default_rng(11)
    n, dim = 400, 8
    # a constant encoder with a few different rows (76 % one vector, as a 24 %-coverage
    # word model that maps every unknown word to the same vector)
    coverage = rng.normal(size=(n, dim))
    coverage[rng.permutation(n)[: int(0.76 * n)]] = 0.0
    # duplicated texts: 120 distinct rows, each 1..6 times, shuffled
    distinct = rng.normal(size=(120, dim))
    duplicated = distinct[rng.permutation(np.repeat(np.arange(120), rng.integers(1, 7, size=120)))]
    # a quantised encoder: 3 levels per coordinate in 3 dims, so every row repeats often
    quantised = rng.integers(-1, 2, size=(n, 3)).astype(float)
    constant = np.full((50, dim), 0.25)
    constant[7] = 1.0  # one different row
    # the mean_vector convention: 76 % of the rows exactly zero after centring (the known rows are
    # integer rows and their negatives: the mean is exactly 0), so a zero query ties with every item
    known = rng.integers(-3, 4, size=(48, dim)).astype(float)
    mean_vector = np.zeros((n, dim))
    mean_vector[rng.permutation(n)[:96]] = np.vstack([known, -known])
    return {
        "coverage": coverage,
        "duplicated": duplicated,
        "quantised": quantised,
        "constant": constant,
        "mean_vector": mean_vector,
    }


def duplicate_heavy_pairs(emb: np.ndarray, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Random pairs plus, for the largest group of identical rows, pairs inside it and across it."""
    n = len(emb)
    _, inverse, counts = np.unique(emb, axis=0, return_inverse=True, return_counts=True)
    big = np.flatnonzero(inverse.reshape(-1) == np.argmax(counts))
    other = np.flatnonzero(inverse.reshape(-1) != np.argmax(counts))
    q = [rng.integers(0, n, 150), big[:5], big[:5], big[:3], other[:5]]
    p = [rng.integers(0, n, 150), big[1:6], other[:5], big[:3], big[:5]]  # big[:3]: q == p
    return np.concatenate(q), np.concatenate(p)


@pytest.mark.parametrize("name", ["coverage", "duplicated", "quantised", "constant", "mean_vector"])
@pytest.mark.parametrize("chunk", [1, 4096, 1 << 24])
def test_duplicated_rows_are_ranked_with_their_multiplicities(name: str, chunk: int) -> None:
    emb = heavy_duplicate_backgrounds()[name]
    q, p = duplicate_heavy_pairs(emb, np.random.default_rng(3))
    got = rank_counts_all(emb, q, p, chunk_bytes=chunk)
    n = len(emb)
    for similarity in ("cosine", "euclidean"):
        expected = oracle_counts(emb, q, p, similarity)
        assert (got[similarity].better.tolist(), got[similarity].tied.tolist()) == expected, similarity
        # every competitor of a pair with q != p is counted once: g + t <= n - 2
        assert np.all(got[similarity].better + got[similarity].tied <= n - 2)
    assert sum(oracle_counts(emb, q, p, "euclidean")[1]) > 2 * len(q)  # the case is tie-heavy
    if name == "mean_vector":  # zero rows stay zero after centring; a zero query ties with all n - 2
        zero = ~emb[q].any(axis=1) & (q != p)
        assert not emb.mean(axis=0).any() and zero.sum() > 5
        assert np.all(got["cosine"].better[zero] == 0) and np.all(got["cosine"].tied[zero] == n - 2)


@pytest.mark.parametrize("similarity", ["cosine", "euclidean"])
def test_duplicates_of_the_query_and_positive_are_competitors(similarity: str) -> None:
    # rows: 0, 1, 2 are the same vector A; 3, 4 the same vector B; 5 and 6 different
    a, b = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0]
    emb = np.array([a, a, a, b, b, [0.0, 0.0, 1.0], [1.0, 1.0, 1.0]])
    q = np.array([0, 0, 3, 0, 1])
    p = np.array([3, 1, 0, 0, 3])
    got = rank_counts(emb, q, p, similarity=similarity)  # type: ignore[arg-type]
    expected = [pair_counts(emb, int(i), int(j), similarity) for i, j in zip(q, p, strict=True)]
    assert list(zip(got.better.tolist(), got.tied.tolist(), strict=True)) == expected
    # q = 0, p = 3 (B): rows 1, 2 (A, like the query) are better, row 4 (B) ties
    assert expected[0][0] >= 2 and expected[0][1] >= 1


def test_unique_rows_groups_exactly_and_falls_back_on_hash_collisions(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from mteb_evalrank.evaluation import ranking

    emb = heavy_duplicate_backgrounds()["duplicated"]
    emb = np.vstack([emb, -emb[:10], np.zeros((3, emb.shape[1]))])
    reference, counts = np.unique(emb, axis=0, return_counts=True)
    for patched in (False, True):
        if patched:  # every row hashes to 0: the exact fallback must group them
            monkeypatch.setattr(ranking, "_hash_multipliers", lambda size: np.zeros(size, dtype=np.uint64))
        first, inverse, group_counts = ranking.unique_rows(emb)
        assert np.array_equal(emb[first][inverse], emb)
        assert np.array_equal(np.bincount(inverse), group_counts)
        assert sorted(group_counts.tolist()) == sorted(counts.tolist())
        assert len(first) == len(reference)
        several = group_counts > 1
        assert several[: several.sum()].all()  # groups with several rows come first


def test_structured_and_duplicate_heavy_backgrounds_equal_the_oracle() -> None:
    rng = np.random.default_rng(5)
    structured = structured_background(0)
    cases = [(structured, rng.integers(0, len(structured), (2, 400)))]
    cases += [(emb, duplicate_heavy_pairs(emb, rng)) for emb in heavy_duplicate_backgrounds().values()]
    for emb, (q, p) in cases:
        for chunk in (4096, 1 << 24):
            got = rank_counts_all(emb, q, p, chunk_bytes=chunk)
            for similarity in ("cosine", "euclidean"):
                assert (got[similarity].better.tolist(), got[similarity].tied.tolist()) == oracle_counts(
                    emb, q, p, similarity
                )


def test_importing_the_ranking_module_imports_neither_torch_nor_mteb_nor_numba() -> None:
    import subprocess
    import sys

    # (the package itself may register with mteb; the ranking module adds neither import)
    code = (
        "import sys, mteb_evalrank; before = set(sys.modules); import mteb_evalrank.evaluation.ranking; "
        "new = {m.split('.')[0] for m in set(sys.modules) - before}; "
        "print('torch' in sys.modules, bool(new & {'torch', 'mteb', 'numba'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]  # numba too: the compiled kernels load on first use


# ------------------------------------------------------------------ the compiled kernels
def _bits(x: np.ndarray) -> np.ndarray:
    """The IEEE bit patterns (so -0.0 differs from 0.0 and NaN equals itself)."""
    return np.ascontiguousarray(x).view(np.uint64 if x.dtype == np.float64 else np.uint32)


@pytest.mark.parametrize(
    ("dtype", "layout", "scale"),
    [("float32", "C", 1.0), ("float64", "F", 1e-3), ("float32", "strided", 3e4), ("float64", "C", 1e308)],
)
def test_compiled_rows_and_differences_equal_numpy_bit_for_bit(dtype: str, layout: str, scale: float) -> None:
    """The refinement's exact rows and differences (numba) against numpy's operations on the
    same values, bit for bit, for float32/float64 input in any memory layout; at 1e308 the
    scaling exponent is not a normal power of two and the numpy path must take over."""
    from mteb_evalrank.evaluation import ranking as R

    rng = np.random.default_rng(5)
    base = rng.normal(size=(300, 24))
    base[::7] *= 1e-6  # entries many binades apart, so the roundings differ from row to row
    if scale > 1e300:  # one entry near the top of float64 (a mean of many would overflow)
        base[3, 5] = scale
    else:
        base *= scale
    raw = {"C": base, "F": np.asfortranarray(base), "strided": np.repeat(base, 2, axis=1)[:, ::2]}[layout]
    raw = raw.astype(dtype, order="K") if layout != "strided" else raw.astype(dtype)[:, :]
    bg = R._prepare_background(raw, map)
    index = rng.integers(0, bg.m, 500)
    expected = R._scaled_rows(bg.raw, bg.first[index], bg.mean, bg.exponents)
    assert np.array_equal(_bits(bg.rows(index)), _bits(expected))
    queries = rng.normal(size=(40, 24))
    query_index = rng.integers(0, 40, 500)
    assert np.array_equal(
        _bits(bg.differences(queries, query_index, index)), _bits(queries[query_index] - expected)
    )
    assert (bg._normal_scales() is None) == (scale == 1e308)


def _numpy_screen(dots, n_weighted, weight, half_sq, inv, limits):  # type: ignore[no-untyped-def]
    """The pass written as numpy passes (float32 stand-ins, the band ``lo <= v`` and not ``v > hi``)."""
    better, band = {}, {}
    for kind, value in ((0, dots - half_sq[None, :]), (1, dots * inv[None, :])):
        lo, hi = limits[kind]
        above = value > hi[:, None]
        multiplicity = np.where(np.arange(dots.shape[1]) < n_weighted, weight, 1)
        better[kind] = (above * multiplicity[None, :]).sum(axis=1)
        inside = (value >= lo[:, None]) & ~above
        band[kind] = sorted(zip(*np.nonzero(inside), strict=True))
    return better, band


@pytest.mark.parametrize("capacity", [10_000, 2 * 37 + 1])
def test_fused_screen_kernel_equals_the_numpy_passes(capacity: int) -> None:
    """``screen_tile`` against the same float32 operations as separate numpy passes, on a tile
    whose limits sit exactly on products (``v == lo``, ``v == hi``), with NaN cells, weighted
    rows, a similarity switched off by ``+inf`` limits and, with the small capacity, a call
    that stops early and resumes where it stopped."""
    from mteb_evalrank.evaluation._ranking_kernel import screen_tile

    rng = np.random.default_rng(9)
    pairs, k = 29, 37
    dots = rng.normal(size=(pairs, k)).astype(np.float32)
    dots[rng.random((pairs, k)) < 0.05] = np.nan
    half_sq = rng.random(k).astype(np.float32)
    inv = (rng.random(k) + 0.5).astype(np.float32)
    weight = rng.integers(1, 5, k).astype(np.int64)
    n_weighted = 6
    limits = {}
    for kind, value in ((0, dots - half_sq[None, :]), (1, dots * inv[None, :])):
        ranked = np.sort(np.nan_to_num(value, nan=0.0), axis=1)
        lo, hi = ranked[:, 10].copy(), ranked[:, 14].copy()  # limits equal to products: both ends
        limits[kind] = (lo, hi)
    limits[1][0][-3:] = limits[1][1][-3:] = np.inf  # the last pairs: cosine switched off
    better_e, better_c = np.zeros(pairs, np.int64), np.zeros(pairs, np.int64)
    band_pair, band_row = np.empty(capacity, np.intp), np.empty(capacity, np.intp)
    band_kind = np.empty(capacity, np.uint8)
    got: dict[int, list[tuple[int, int]]] = {0: [], 1: []}
    first, calls = 0, 0
    while first < pairs:
        first, n = screen_tile(
            dots, n_weighted, weight, half_sq, inv, *limits[0], *limits[1],
            better_e, better_c, band_pair, band_row, band_kind, 0, first, 100,
        )  # fmt: skip
        calls += 1
        for i, u, kind in zip(band_pair[:n], band_row[:n], band_kind[:n], strict=True):
            got[int(kind)].append((int(i), int(u) - 100))
    better, band = _numpy_screen(dots, n_weighted, weight, half_sq, inv, limits)
    assert better_e.tolist() == better[0].tolist() and better_c.tolist() == better[1].tolist()
    assert sorted(got[0]) == band[0] and sorted(got[1]) == band[1]
    assert len(band[0]) > 2 * pairs  # the limits hold products at both ends: a real band
    assert (calls > 1) == (capacity < 1000)


def test_embeddings_too_large_to_centre_in_float64_are_refused() -> None:
    """Finite float64 rows whose mean or centred rows overflow (|x| near 1e308) would turn into
    infinities and NaN inside the ranking, whose counts then put every pair first: refused."""
    x = np.random.default_rng(0).normal(size=(300, 8)) * 1e307
    with pytest.raises(ValueError, match=r"too large.*rescale"):
        rank_counts_all(x, [0, 1], [2, 3])
