"""Pooled within-family Spearman ρ_W (correlation.stats ``within_*``) and ``correlate(within_families=True)``.

Expected values are hand-worked or recomputed by brute force with scipy / numpy on the expanded
samples (``_brute_rho_w``: ranks per family with ``scipy.stats.rankdata``, ``numpy.corrcoef``).
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from mteb_evalrank.correlation import CorrelationInputError, correlate
from mteb_evalrank.correlation import stats as cs


def _groups(families: Sequence[str], minimum: int = 3) -> list[list[int]]:
    """Indices of each family with at least ``minimum`` models, in order of first appearance."""
    out: dict[str, list[int]] = {}
    for i, f in enumerate(families):
        out.setdefault(f, []).append(i)
    return [g for g in out.values() if len(g) >= minimum]


def _brute_rho_w(x: np.ndarray, y: np.ndarray, groups: Sequence[Sequence[int]]) -> float:
    """Pearson r (numpy) of the concatenated within-family ranks (scipy), each family's centred."""
    cx = np.concatenate([sps.rankdata(x[list(g)]) - sps.rankdata(x[list(g)]).mean() for g in groups])
    cy = np.concatenate([sps.rankdata(y[list(g)]) - sps.rankdata(y[list(g)]).mean() for g in groups])
    return float(np.corrcoef(cx, cy)[0, 1])


def _families_data(
    n_families: int, size: int, noise: float, seed: int
) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """``n_families`` families of ``size`` models with large family offsets and a within-family link."""
    rng = np.random.default_rng(seed)
    families = [f"f{g}" for g in range(n_families) for _ in range(size)]
    offset = np.repeat(rng.normal(scale=10, size=n_families), size)
    x = rng.normal(size=n_families * size)
    y = x + noise * rng.normal(size=n_families * size) - offset  # family effects run against x
    return x + offset, y, families


# --- the statistic ------------------------------------------------------------------------


def test_hand_worked_two_families_and_excluded_small_families() -> None:
    # family a: x ranks (1,2,3), y ranks (1,3,2): centred (-1,0,1)·(-1,1,0) = 1, S = 2 each
    # family b: x ranks (1,2,3,4), y ranks (1,2,4,3): centred products 2.25+0.25+0.75+0.75 = 4, S = 5
    # ρ_W = (1 + 4) / sqrt((2 + 5)(2 + 5)) = 5/7
    x = np.array([1.0, 2.0, 3.0, 10.0, 20.0, 30.0, 40.0])
    y = np.array([1.0, 3.0, 2.0, 5.0, 6.0, 8.0, 7.0])
    families = list("aaabbbb")
    assert cs.within_spearman(x, y, families=families) == pytest.approx(5 / 7, abs=1e-15)
    # the weighted-average form: ρ_a = 1/2, ρ_b = 4/5, weights S_g = n_g(n_g² − 1)/12 = 2 and 5
    rho_a = sps.spearmanr(x[:3], y[:3]).statistic
    rho_b = sps.spearmanr(x[3:], y[3:]).statistic
    assert (rho_a, rho_b) == pytest.approx((0.5, 0.8))
    assert (2 * rho_a + 5 * rho_b) / 7 == pytest.approx(5 / 7)
    # a family of 2 and a single model are left out and do not change the value
    x2 = np.concatenate([x, [100.0, 0.0, 7.0]])
    y2 = np.concatenate([y, [0.0, 100.0, -3.0]])
    families2 = [*families, "c", "c", "d"]
    assert cs.within_spearman(x2, y2, families=families2) == pytest.approx(5 / 7, abs=1e-15)
    pooled = cs.pooling(families2, 10)
    assert pooled.sizes == {"a": 3, "b": 4} and pooled.excluded == {"c": 2, "d": 1}
    assert pooled.used.tolist() == [True] * 7 + [False] * 3 and pooled.count == 2


def test_hand_worked_with_ties() -> None:
    # family a: x = (1, 1, 2) → ranks (1.5, 1.5, 3), centred (-.5, -.5, 1), S^x = 1.5;
    #           y = (3, 1, 2) → centred (1, -1, 0), S^y = 2; Σ c^x c^y = -.5 + .5 + 0 = 0
    # family b as above: Σ = 4, S^x = S^y = 5;  ρ_W = 4 / sqrt(6.5 · 7)
    x = np.array([1.0, 1.0, 2.0, 10.0, 20.0, 30.0, 40.0])
    y = np.array([3.0, 1.0, 2.0, 5.0, 6.0, 8.0, 7.0])
    families = list("aaabbbb")
    assert cs.within_spearman(x, y, families=families) == pytest.approx(4 / np.sqrt(6.5 * 7), abs=1e-15)
    assert cs.within_spearman(x, y, families=families) == pytest.approx(
        _brute_rho_w(x, y, [[0, 1, 2], [3, 4, 5, 6]]), abs=1e-14
    )
    # a side constant within every family: undefined
    assert np.isnan(
        cs.within_spearman(np.array([1.0, 1, 1, 2, 2, 2]), np.arange(6.0), families=list("aaabbb"))
    )


def test_brute_force_on_random_families_with_ties() -> None:
    rng = np.random.default_rng(7)
    families = [f"f{g}" for g, k in enumerate([3, 5, 4, 2, 6, 1]) for _ in range(k)]
    x = np.round(rng.normal(size=len(families)), 1)
    y = np.round(x + rng.normal(size=len(families)), 1)
    expected = _brute_rho_w(x, y, _groups(families))
    assert cs.within_spearman(x, y, families=families) == pytest.approx(expected, abs=1e-13)
    # pooled within-family Pearson: r of the values centred by their family mean
    groups = _groups(families)
    cx = np.concatenate([x[g] - x[g].mean() for g in groups])
    cy = np.concatenate([y[g] - y[g].mean() for g in groups])
    assert cs.within_pearson(x, y, families=families) == pytest.approx(np.corrcoef(cx, cy)[0, 1], abs=1e-13)


def test_one_family_is_scipy_spearman_and_the_across_model_analysis() -> None:
    rng = np.random.default_rng(2)
    x = np.round(rng.normal(size=12), 1)
    y = np.round(x + rng.normal(size=12), 1)
    one = ["f"] * 12
    assert cs.within_spearman(x, y, families=one) == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-14)
    # with one family the units are its models: exactly the ordinary bootstrap and permutation test
    ci = cs.bootstrap_spearman_ci(x, y, within=True, families=one, n_resamples=500, seed=3)
    assert ci == cs.bootstrap_spearman_ci(x, y, n_resamples=500, seed=3) and ci.units == "models"
    assert cs.permutation_p_spearman(x, y, within=True, families=one, n_permutations=2000, seed=3) == (
        cs.permutation_p_spearman(x, y, n_permutations=2000, seed=3)
    )
    # plus two left-out families: the same
    x2, y2 = np.concatenate([x, [5.0, 6.0, 7.0]]), np.concatenate([y, [1.0, 0.0, 2.0]])
    assert cs.within_spearman(x2, y2, families=[*one, "g", "g", "h"]) == pytest.approx(
        sps.spearmanr(x, y).statistic, abs=1e-14
    )


def test_family_offsets_do_not_change_the_pooled_value() -> None:
    rng = np.random.default_rng(4)
    families = [f"f{g}" for g, k in enumerate([4, 5, 3, 6]) for _ in range(k)]
    x = rng.normal(size=18)
    y = x + rng.normal(size=18)
    codes = np.array([int(f[1:]) for f in families])
    shift_x, shift_y = np.array([0.0, 5.0, -3.0, 9.0]), np.array([2.0, -6.0, 4.0, 0.5])
    x2, y2 = x + shift_x[codes], y + shift_y[codes]
    assert cs.within_spearman(x2, y2, families=families) == cs.within_spearman(x, y, families=families)
    # an increasing transformation per family neither
    x3 = np.where(codes == 1, np.exp(x), x)
    assert cs.within_spearman(x3, y2, families=families) == cs.within_spearman(x, y, families=families)
    assert cs.within_pearson(x2, y2, families=families) == pytest.approx(
        cs.within_pearson(x, y, families=families), abs=1e-12
    )
    # while the across-model ρ moves a lot
    assert abs(sps.spearmanr(x2, y2).statistic - sps.spearmanr(x, y).statistic) > 0.2


def test_partial_is_the_residual_correlation_of_centred_ranks() -> None:
    rng = np.random.default_rng(8)
    families = [f"f{g}" for g in range(5) for _ in range(6)]
    z = rng.normal(size=30)
    x = z + rng.normal(size=30)
    y = z + 0.5 * x + rng.normal(size=30)
    groups = _groups(families)

    def centred(v: np.ndarray) -> np.ndarray:
        return np.concatenate([sps.rankdata(v[g]) - (len(g) + 1) / 2 for g in groups])

    design = np.column_stack([np.ones(30), centred(z)])

    def residual(v: np.ndarray) -> np.ndarray:
        return v - design @ np.linalg.lstsq(design, v, rcond=None)[0]

    expected = np.corrcoef(residual(centred(x)), residual(centred(y)))[0, 1]
    assert cs.within_partial_spearman(x, y, z, families=families) == pytest.approx(expected, abs=1e-12)


# --- resampling ---------------------------------------------------------------------------


def _expanded_rho_w(x: np.ndarray, y: np.ndarray, groups: list[list[int]], draw: Sequence[int]) -> float:
    """ρ_W of the resample: each drawn family is one more family (a family drawn twice, twice)."""
    return _brute_rho_w(x, y, [groups[g] for g in draw])


def test_cluster_bootstrap_by_hand_and_exact_distribution() -> None:
    x = np.array([0.1, 0.4, 0.2, 0.9, 0.7, 0.5, 0.5, 0.3, 0.8, 0.6, 2.0, 3.0])
    y = np.array([0.2, 0.1, 0.5, 0.8, 0.9, 0.4, 0.6, 0.3, 0.7, 0.1, 5.0, 4.0])
    families = [*"fff", *"gggg", *"hhhhh"]
    groups = _groups(families)
    # replicate by replicate, with the family draws made by hand (3 families drawn with replacement)
    draws = np.random.default_rng(2).integers(0, 3, size=(60, 3))
    by_hand = [_expanded_rho_w(x, y, groups, d) for d in draws]
    samples = cs.bootstrap_spearman_samples(x, y, within=True, families=families, n_resamples=60, seed=2)
    assert samples == pytest.approx(by_hand, abs=1e-12, nan_ok=True)
    # the distribution over all 27 equally likely draws
    exact = np.array([_expanded_rho_w(x, y, groups, d) for d in itertools.product(range(3), repeat=3)])
    many = cs.bootstrap_spearman_samples(x, y, within=True, families=families, n_resamples=30000, seed=1)
    atoms, counts = np.unique(np.round(exact, 10), return_counts=True)
    got = np.round(many, 10)
    assert set(np.unique(got)) <= set(atoms)
    for atom, count in zip(atoms, counts, strict=True):
        assert np.mean(got == atom) == pytest.approx(count / 27, abs=0.012)
    ci = cs.bootstrap_spearman_ci(x, y, within=True, families=families, n_resamples=30000, seed=1)
    assert ci.units == "families" and ci.n_used == 30000
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile(many, [0.025, 0.975])))


def test_bootstrap_ci_contains_the_estimate_and_is_reproducible() -> None:
    x, y, families = _families_data(12, 5, noise=0.7, seed=3)
    rho = cs.within_spearman(x, y, families=families)
    ci = cs.bootstrap_spearman_ci(x, y, within=True, families=families, n_resamples=3000, seed=11)
    assert ci.low < rho < ci.high and ci.high - ci.low < 0.5
    assert cs.bootstrap_spearman_ci(x, y, within=True, families=families, n_resamples=3000, seed=11) == ci
    other = cs.bootstrap_spearman_ci(x, y, within=True, families=families, n_resamples=3000, seed=12)
    assert other != ci and other.low == pytest.approx(ci.low, abs=0.06)
    # two families: too few to resample, NaN with a reason
    two = cs.bootstrap_spearman_ci(x[:10], y[:10], within=True, families=families[:10])
    assert np.isnan(two.low) and "2 families: too few to resample" in two.reason


def test_permutation_p_matches_enumeration_within_families() -> None:
    """Families of 3 and 4 (3!·4! = 144 orders) and a left-out pair: exact two-sided p by scipy."""
    x = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 13.0, 5.0, 6.0])
    y = np.array([2.0, 1.0, 3.0, 11.0, 10.0, 13.0, 12.0, 9.0, 0.0])
    families = [*"aaa", *"bbbb", "c", "c"]
    groups = [[0, 1, 2], [3, 4, 5, 6]]
    observed = _brute_rho_w(x, y, groups)
    null = np.array(
        [
            _brute_rho_w(x, y[[*pa, *pb, 7, 8]], groups)
            for pa in itertools.permutations(groups[0])
            for pb in itertools.permutations(groups[1])
        ]
    )
    exact = min(1.0, 2 * min(np.mean(null >= observed - 1e-12), np.mean(null <= observed + 1e-12)))
    p = cs.permutation_p_spearman(x, y, within=True, families=families, n_permutations=20000, seed=5)
    assert p == pytest.approx(exact, abs=0.015)


def test_permutation_p_is_small_for_a_perfect_within_family_order() -> None:
    x, y, families = _families_data(6, 4, noise=0.0, seed=5)  # y = x within each family
    assert cs.within_spearman(x, y, families=families) == 1.0
    assert sps.spearmanr(x, y).statistic < 0.5  # the family offsets hide it across models
    p = cs.permutation_p_spearman(x, y, within=True, families=families, n_permutations=5000, seed=1)
    assert p == pytest.approx(2 / 5001)  # (1/24)^6 of permutations as extreme: none drawn
    # no within-family link: a p-value in (0, 1], not small
    shuffled = np.random.default_rng(0).permutation(y)
    p_null = cs.permutation_p_spearman(
        x, shuffled, within=True, families=families, n_permutations=5000, seed=1
    )
    assert 0.05 < p_null <= 1.0


# --- comparing two rows, row means --------------------------------------------------------


def _swap_enumeration_within(
    a: np.ndarray, b: np.ndarray, y: np.ndarray, groups: list[list[int]]
) -> tuple[float, float]:
    """Δ_W and its exact swap-test p: a family's raw a and b values exchanged (so its within-family
    ranks are), all 2^F patterns, ρ_W by brute force."""

    def delta(aa: np.ndarray, bb: np.ndarray) -> float:
        return float(
            np.mean([_brute_rho_w(aa, c, groups) for c in y.T])
            - np.mean([_brute_rho_w(bb, c, groups) for c in y.T])
        )

    observed = delta(a, b)
    null = []
    for pattern in itertools.product([False, True], repeat=len(groups)):
        aa, bb = a.copy(), b.copy()
        for swap, g in zip(pattern, groups, strict=True):
            if swap:
                aa[g], bb[g] = b[g], a[g]
        null.append(delta(aa, bb))
    return observed, float(np.mean(np.abs(null) >= abs(observed) - 1e-12))


def test_within_mean_difference_by_brute_force() -> None:
    rng = np.random.default_rng(9)
    families = [f"f{g}" for g, k in enumerate([3, 4, 5, 3, 4, 2]) for _ in range(k)]
    n = len(families)
    y = rng.normal(size=(n, 2))
    a = y.sum(axis=1) + rng.normal(size=n)
    b = rng.normal(size=n)
    groups = _groups(families)
    observed, exact = _swap_enumeration_within(a, b, y, groups)  # 2^5 = 32 patterns
    d = cs.mean_spearman_difference(a, b, y, within=True, families=families, n_resamples=150, seed=2)
    assert d.difference == pytest.approx(observed, abs=1e-12)
    assert d.mean_a == pytest.approx(np.mean([_brute_rho_w(a, c, groups) for c in y.T]), abs=1e-12)
    assert d.exact and d.p == pytest.approx(exact, abs=1e-12) and d.p_min == pytest.approx(2 / 32)
    assert (d.n, d.n_families, d.n_units, d.units) == (19, 5, 5, "families")
    # the bootstrap CI: the same family draws by hand
    draws = np.random.default_rng(2).integers(0, 5, size=(150, 5))
    deltas = np.array(
        [
            np.mean([_expanded_rho_w(a, c, groups, dr) for c in y.T])
            - np.mean([_expanded_rho_w(b, c, groups, dr) for c in y.T])
            for dr in draws
        ]
    )
    ok = deltas[~np.isnan(deltas)]
    assert (d.low, d.high) == pytest.approx(tuple(np.quantile(ok, [0.025, 0.975])), abs=1e-12)
    # row mean of ρ_W and its CI from the same draws
    mean, ci = cs.mean_spearman_ci(a, y, within=True, families=families, n_resamples=150, seed=2)
    assert mean == pytest.approx(d.mean_a, abs=1e-15)
    means = np.array([np.mean([_expanded_rho_w(a, c, groups, dr) for c in y.T]) for dr in draws])
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile(means, [0.025, 0.975])), abs=1e-12)


def test_within_mean_difference_with_one_family_is_the_model_level_test() -> None:
    rng = np.random.default_rng(1)
    y = rng.normal(size=(8, 2))
    a, b = y[:, 0] + rng.normal(size=8), rng.normal(size=8)
    within = cs.mean_spearman_difference(a, b, y, within=True, families=["f"] * 8, n_resamples=200, seed=4)
    across = cs.mean_spearman_difference(a, b, y, n_resamples=200, seed=4)
    assert within.difference == across.difference and within.p == across.p and within.low == across.low
    assert (within.units, within.n_units, within.n_families) == ("models", 8, 1)


def test_bad_inputs() -> None:
    x, y = np.arange(6.0), np.arange(6.0)
    with pytest.raises(cs.TooFewModelsError, match=r"no family has at least 3 models \(families: a \(2\)"):
        cs.within_spearman(x, y, families=list("aabbcc"))
    with pytest.raises(ValueError, match="one family label per model"):
        cs.pooling(None, 6)
    with pytest.raises(ValueError, match="5 family labels for 6 models"):
        cs.within_spearman(x, y, families=list("aaabb"))


# --- correlate(within_families=True) -----------------------------------------------------


@pytest.fixture
def table(tmp_path: Path) -> tuple[Path, pd.DataFrame, list[str]]:
    """Families org/a (5), org/b (4), org/c (3), org/d (2) and one single model; family offsets
    against the within-family order."""
    rng = np.random.default_rng(12)
    sizes = {"a": 5, "b": 4, "c": 3, "d": 2, "e": 1}
    names = [f"org/{f}-{i}" for f, k in sizes.items() for i in range(k)]
    families = [name.split("-")[0] for name in names]
    offset = np.array([{"a": 0.0, "b": 8.0, "c": -5.0, "d": 3.0, "e": 1.0}[name[4]] for name in names])
    base = rng.normal(size=len(names))
    frame = pd.DataFrame(
        {
            "I1": base + offset,
            "I2": rng.normal(size=len(names)) + offset,
            "E1": base + 0.5 * rng.normal(size=len(names)) - offset,
            "E2": base + 0.8 * rng.normal(size=len(names)) - 2 * offset,
        },
        index=pd.Index(names, name="model"),
    )
    path = tmp_path / "scores.csv"
    frame.to_csv(path)
    return path, frame, families


def test_correlate_within_families(table: tuple[Path, pd.DataFrame, list[str]], tmp_path: Path) -> None:
    path, frame, families = table
    groups = _groups(families)  # a, b, c: 12 models
    result = correlate(
        [path], ["I1", "I2"], ["E1", "E2"], family_regex=r"org/\w", compare=[("I1", "I2")],
        n_bootstrap=300, n_permutations=2000, within_families=True,
    )  # fmt: skip
    pair = result.pair("I1", "E1")
    expected = _brute_rho_w(frame["I1"].to_numpy(), frame["E1"].to_numpy(), groups)
    assert pair.spearman == pytest.approx(expected, abs=1e-13)
    assert (pair.n, pair.n_missing, pair.n_families, pair.ci_units) == (12, 0, 3, "families")
    assert np.isnan(pair.kendall) and pair.spearman_ci_low <= pair.spearman <= pair.spearman_ci_high
    assert pair.spearman > 0.5 > sps.spearmanr(frame["I1"], frame["E1"]).statistic  # offsets removed
    (c,) = result.comparisons
    _, exact = _swap_enumeration_within(
        frame["I1"].to_numpy(), frame["I2"].to_numpy(), frame[["E1", "E2"]].to_numpy(), groups
    )
    assert (c.units, c.n_units, c.n, c.p_min) == ("families", 3, 12, 0.25) and c.p_swap == pytest.approx(
        exact
    )
    (row,) = [r for r in result.row_means if r.intrinsic == "I1"]
    assert (row.n, row.n_families) == (12, 3)
    assert row.mean == pytest.approx(
        np.mean([_brute_rho_w(frame["I1"].to_numpy(), frame[e].to_numpy(), groups) for e in ("E1", "E2")])
    )
    assert result.notes[0].endswith(
        "Families pooled (3): org/a (5), org/b (4), org/c (3); "
        "left out (fewer than 3 models): org/d (2), org/e (1)"
    )
    written = result.write(tmp_path / "out", scatter=[("I1", "E1")])
    report = written["report"].read_text()
    assert report.startswith("# Intrinsic vs extrinsic rank correlation within families")
    assert (
        "Families pooled (models): org/a (5), org/b (4), org/c (3). Left out (fewer than 3 models): "
        in report
    )
    data = json.loads(written["json"].read_text())
    assert data["settings"]["within_families"] is True
    assert data["within_families"][0] == {
        "intrinsic": "I1", "extrinsic": "E1", "used": {"org/a": 5, "org/b": 4, "org/c": 3},
        "excluded": {"org/d": 2, "org/e": 1},
    }  # fmt: skip
    # the across-model view of the same table: no within-family keys in its outputs
    across = correlate([path], ["I1"], ["E1"], family_regex=r"org/\w", n_bootstrap=100, n_permutations=500)
    out = across.write(tmp_path / "across")
    data = json.loads(out["json"].read_text())
    assert "within_families" not in data and "within_families" not in data["settings"]
    assert list(pd.read_csv(out["csv"]).columns) == [
        "intrinsic", "extrinsic", "n", "n_missing", "spearman", "spearman_ci_low", "spearman_ci_high",
        "spearman_p", "spearman_p_adj", "pearson", "kendall", "partial_spearman_dim", "n_partial",
        "n_families", "ci_units",
    ]  # fmt: skip
    assert list(pd.read_csv(written["csv"]).columns) == list(pd.read_csv(out["csv"]).columns)  # same layout
    report = out["report"].read_text()
    assert report.startswith("# Intrinsic vs extrinsic rank correlation\n") and "within-family" not in report


def test_correlate_within_families_errors(table: tuple[Path, pd.DataFrame, list[str]]) -> None:
    path, frame, _ = table
    with pytest.raises(CorrelationInputError, match="--within-families with --no-families"):
        correlate([path], ["I1"], ["E1"], cluster=False, within_families=True)
    small = list(frame.index[12:])  # org/d (2) and org/e (1)
    with pytest.raises(
        CorrelationInputError, match=r"I1 vs E1: within-family view: no family has at least 3"
    ):
        correlate([path], ["I1"], ["E1"], models=small, family_regex=r"org/\w", within_families=True)


def test_cli_within_families(
    table: tuple[Path, pd.DataFrame, list[str]], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from mteb_evalrank.cli import main

    path, frame, families = table
    out = tmp_path / "out"
    main(["correlate", str(path), "--intrinsic", "I1", "--extrinsic", "E1", "E2", "--family-regex", r"org/\w",
          "--within-families", "--bootstrap", "100", "--permutations", "500", "--out", str(out)])  # fmt: skip
    printed = capsys.readouterr().out
    assert "12 models, 3 families per cell" in printed and "within-family view" in printed
    rows = pd.read_csv(out / "correlations.csv")
    expected = _brute_rho_w(frame["I1"].to_numpy(), frame["E2"].to_numpy(), _groups(families))
    assert rows.loc[rows["extrinsic"] == "E2", "spearman"].item() == pytest.approx(expected, abs=1e-13)
