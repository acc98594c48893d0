"""Correlation module: statistics vs scipy / brute force, loader on hand-written and real results."""

from __future__ import annotations

import itertools
import json
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps
from second_process import in_a_second_process, second_process, under_a_file_size_limit

from mteb_evalrank.correlation import CorrelationInputError, correlate, load_results
from mteb_evalrank.correlation import stats as cs


@pytest.fixture(scope="module")
def mteb_results() -> Path:
    from conftest import SOURCE  # the shared data folder (tests/conftest.py)

    folder = SOURCE / "mteb-results"
    if not (folder / "results").is_dir():
        pytest.fail(f"{folder} not found: put the shared data folder beside the repository")
    return folder


# --- statistics -------------------------------------------------------------------------


@pytest.fixture
def xy() -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(1)
    x = np.round(rng.normal(size=40), 1)  # rounding makes ties
    y = np.round(x + rng.normal(size=40), 1)
    return x, y


def test_point_estimates_match_scipy(xy: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = xy
    assert cs.spearman(x, y) == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
    assert cs.pearson(x, y) == pytest.approx(sps.pearsonr(x, y).statistic, abs=1e-12)
    assert cs.kendall(x, y) == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)


def test_bootstrap_ci_matches_a_loop_over_scipy(xy: tuple[np.ndarray, np.ndarray]) -> None:
    x, y = xy
    ci = cs.bootstrap_spearman_ci(x, y, n_resamples=300, seed=7)
    idx = np.random.default_rng(7).integers(0, len(x), size=(300, len(x)))
    rhos = [sps.spearmanr(x[i], y[i]).statistic for i in idx]
    rhos = [r for r in rhos if np.isfinite(r)]
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile(rhos, [0.025, 0.975])), abs=1e-12)
    assert ci.n_used == len(rhos)
    assert ci.low < cs.spearman(x, y) < ci.high


def _two_sided(null: np.ndarray, observed: float) -> float:
    """scipy's two-sided convention on an exact null distribution: twice the smaller tail."""
    tol = 1e-12
    return min(1.0, 2 * min(np.mean(null >= observed - tol), np.mean(null <= observed + tol)))


def test_permutation_p_exact_enumeration_and_scipy() -> None:
    x = np.array([1.0, 2.0, 3.0, 4.0, 5.0, 6.0])
    y = np.array([2.0, 1.0, 4.0, 3.0, 6.0, 5.0])
    rho = sps.spearmanr(x, y).statistic
    null = np.array([sps.spearmanr(x, y[list(p)]).statistic for p in itertools.permutations(range(6))])
    p = cs.permutation_p_spearman(x, y, n_permutations=20000, seed=3)
    assert p == pytest.approx(_two_sided(null, rho), abs=0.01)
    scipy_p = sps.permutation_test(
        (y,), lambda v: sps.spearmanr(x, v).statistic, permutation_type="pairings", n_resamples=np.inf
    ).pvalue
    assert p == pytest.approx(scipy_p, abs=0.01)


def test_permutation_within_families_matches_enumeration() -> None:
    """Families {0,1,2} and {3,4,5}, two single models pooled: 3!·3!·2! = 72 within-stratum orders."""
    x = np.array([1.0, 2.0, 3.0, 10.0, 11.0, 12.0, 5.0, 7.0])
    y = np.array([2.0, 1.0, 3.0, 12.0, 10.0, 11.0, 6.0, 4.0])
    families = ["a", "a", "a", "b", "b", "b", "c", "d"]
    rho = sps.spearmanr(x, y).statistic
    null = []
    for pa in itertools.permutations([0, 1, 2]):
        for pb in itertools.permutations([3, 4, 5]):
            for pc in itertools.permutations([6, 7]):
                null.append(sps.spearmanr(x, y[[*pa, *pb, *pc]]).statistic)
    exact = _two_sided(np.array(null), rho)
    p = cs.permutation_p_spearman(x, y, families=families, n_permutations=20000, seed=5)
    assert p == pytest.approx(exact, abs=0.015)
    # the between-family part (b above a) is kept in every permutation: far from significant here,
    # while the ordinary permutation test (families ignored) calls the same data significant
    assert p > 0.2 and cs.permutation_p_spearman(x, y, n_permutations=20000, seed=5) < 0.05
    # every permuted y keeps each family's values within the family
    strata = cs.units(families, 8).strata
    permuted = y[cs._permutations_within(tuple(strata.tolist()), 200, 0)]
    for members in ([0, 1, 2], [3, 4, 5], [6, 7]):
        assert (np.sort(permuted[:, members], axis=1) == np.sort(y[members])).all()


def _expanded_rho(x: np.ndarray, y: np.ndarray, groups: list[list[int]], draw: Sequence[int]) -> float:
    """ρ of the resample taking all models of each drawn family (a family drawn twice counts twice)."""
    idx = [i for g in draw for i in groups[g]]
    return float(sps.spearmanr(x[idx], y[idx]).statistic)


def test_cluster_bootstrap_exact_distribution_for_three_families() -> None:
    """All 3^3 = 27 equally likely family draws, enumerated with scipy on the expanded samples."""
    x = np.array([0.1, 0.4, 0.2, 0.9, 0.7, 0.5, 0.5, 0.3, 0.8])
    y = np.array([0.2, 0.1, 0.5, 0.8, 0.9, 0.4, 0.6, 0.3, 0.7])
    families = ["f", "f", "f", "g", "g", "h", "h", "h", "h"]
    groups = [[0, 1, 2], [3, 4], [5, 6, 7, 8]]
    exact = np.array([_expanded_rho(x, y, groups, d) for d in itertools.product(range(3), repeat=3)])
    samples = cs.bootstrap_spearman_samples(x, y, families=families, n_resamples=40000, seed=1)
    atoms, counts = np.unique(np.round(exact, 10), return_counts=True)
    got = np.round(samples, 10)
    assert set(np.unique(got)) <= set(atoms)  # every replicate is one of the exact outcomes
    for atom, count in zip(atoms, counts, strict=True):
        assert np.mean(got == atom) == pytest.approx(count / 27, abs=0.01)
    # and replicate by replicate, with the same draws made by hand
    draws = np.random.default_rng(2).integers(0, 3, size=(50, 3))
    by_hand = [_expanded_rho(x, y, groups, d) for d in draws]
    assert cs.bootstrap_spearman_samples(x, y, families=families, n_resamples=50, seed=2) == pytest.approx(
        by_hand, abs=1e-12
    )
    ci = cs.bootstrap_spearman_ci(x, y, families=families, n_resamples=40000, seed=1)
    assert ci.units == "families" and ci.n_used == 40000
    assert (ci.low, ci.high) == pytest.approx(tuple(np.quantile(samples, [0.025, 0.975])))


def test_too_few_units_give_nan_with_a_reason() -> None:
    x, y = np.arange(8.0), np.array([1.0, 0.0, 2.0, 4.0, 3.0, 5.0, 7.0, 6.0])
    two = cs.bootstrap_spearman_ci(x, y, families=["a"] * 4 + ["b"] * 4)
    assert np.isnan(two.low) and "2 families: too few to resample" in two.reason
    four = cs.bootstrap_spearman_ci(x[:4], y[:4])  # the old MIN_MODELS = 3 bootstrapped 4 models
    assert np.isnan(four.low) and "4 models: too few to resample" in four.reason
    assert np.isnan(cs.permutation_p_spearman(x[:4], y[:4]))
    assert not np.isnan(cs.spearman(x[:4], y[:4]))  # the point estimate is still given
    one = cs.bootstrap_spearman_ci(x, y, families=["a"] * 8)  # one family: its models are the units
    assert one.units == "models" and np.isfinite(one.low)


def test_pearson_is_scale_free_and_constant_is_relative() -> None:
    x = np.array([1.0, 2.0, 4.0, 3.0, 5.0])
    y = np.array([2.0, 1.0, 5.0, 3.0, 4.0])
    expected = sps.pearsonr(x, y).statistic
    assert cs.pearson(x * 1e-9, y) == pytest.approx(expected, abs=1e-12)  # was NaN (den <= 1e-12)
    assert cs.pearson(x * 1e-9, y * 1e-9) == pytest.approx(expected, abs=1e-12)
    assert cs.pearson(x * 1e12, y) == pytest.approx(expected, abs=1e-12)
    # constant up to rounding (0.1 + 0.2 != 0.3 by one ulp), at any scale: undefined
    almost = np.array([0.1 + 0.2, 0.3, 0.3, 0.1 * 3, 0.3])
    assert np.isnan(cs.pearson(almost, y)) and np.isnan(cs.pearson(almost * 1e-9, y))
    assert np.isnan(cs.kendall(almost, y))


def test_holm_and_benjamini_hochberg_hand_worked_and_statsmodels() -> None:
    from statsmodels.stats.multitest import multipletests

    p = np.array([0.01, 0.04, 0.03, 0.005, np.nan])
    # Holm: sorted 0.005·4 = 0.02, 0.01·3 = 0.03, 0.03·2 = 0.06, 0.04·1 = 0.04 -> running max 0.06
    assert cs.adjust_pvalues(p)[:4] == pytest.approx([0.03, 0.06, 0.06, 0.02])
    # BH: p_(i)·4/i = 0.02, 0.02, 0.04, 0.04 -> running min from the top
    assert cs.adjust_pvalues(p, "fdr_bh")[:4] == pytest.approx([0.02, 0.04, 0.04, 0.02])
    assert np.isnan(cs.adjust_pvalues(p)[4])
    q = np.random.default_rng(0).random(30) ** 3
    assert cs.adjust_pvalues(q) == pytest.approx(multipletests(q, method="holm")[1])
    assert cs.adjust_pvalues(q, "fdr_bh") == pytest.approx(multipletests(q, method="fdr_bh")[1])
    with pytest.raises(ValueError, match="holm"):
        cs.adjust_pvalues(q, "bonferroni")


def _swap_enumeration(a: np.ndarray, b: np.ndarray, y: np.ndarray, unit: list[int]) -> tuple[float, float]:
    """Δ and the exact two-sided p of the paired swap test, by scipy over all 2^U swap patterns."""
    ra, rb = sps.rankdata(a), sps.rankdata(b)

    def delta(u: np.ndarray, v: np.ndarray) -> float:
        return float(np.mean([sps.spearmanr(u, c).statistic - sps.spearmanr(v, c).statistic for c in y.T]))

    observed = delta(a, b)
    n_units = max(unit) + 1
    null = []
    for pattern in itertools.product([False, True], repeat=n_units):
        swap = np.array([pattern[k] for k in unit])
        null.append(delta(np.where(swap, rb, ra), np.where(swap, ra, rb)))
    return observed, float(np.mean(np.abs(null) >= abs(observed) - 1e-12))


def test_paired_swap_test_is_a_real_p_value_by_full_enumeration() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=(8, 3))
    a, b = y.sum(axis=1) + rng.normal(size=8), rng.normal(size=8)
    observed, exact = _swap_enumeration(a, b, y, list(range(8)))  # 2^8 = 256 patterns
    d = cs.mean_spearman_difference(a, b, y, n_resamples=200, n_permutations=1000, seed=4)
    assert d.exact and d.difference == pytest.approx(observed, abs=1e-12)
    assert d.p == pytest.approx(exact, abs=1e-12) and d.p_min == pytest.approx(2 / 256)
    # two-sided: the same p with the rows exchanged (the old "share of resamples with Δ <= 0" flips)
    swapped = cs.mean_spearman_difference(b, a, y, n_resamples=200, n_permutations=1000, seed=4)
    assert swapped.p == pytest.approx(d.p)
    # Monte Carlo when 2^U > n_permutations: close to the exact p
    mc = cs.mean_spearman_difference(a, b, y, n_resamples=50, n_permutations=255, seed=9)
    assert not mc.exact and mc.p == pytest.approx(exact, abs=0.05) and mc.p_min == pytest.approx(1 / 256)


def test_paired_swap_test_swaps_whole_families() -> None:
    rng = np.random.default_rng(6)
    y = rng.normal(size=(9, 2))
    a, b = y[:, 0] + 0.3 * rng.normal(size=9), rng.normal(size=9)
    families = ["f", "f", "f", "g", "g", "h", "h", "h", "h"]
    unit = [0, 0, 0, 1, 1, 2, 2, 2, 2]
    observed, exact = _swap_enumeration(a, b, y, unit)  # 2^3 = 8 patterns
    d = cs.mean_spearman_difference(a, b, y, families=families, n_resamples=500, seed=1)
    assert (d.units, d.n_units, d.n_families) == ("families", 3, 3)
    assert d.difference == pytest.approx(observed, abs=1e-12) and d.p == pytest.approx(exact)
    assert d.p_min == pytest.approx(0.25) and d.p >= 0.25  # 3 families: never below 0.25


def test_partial_spearman_equals_residual_correlation_of_ranks() -> None:
    rng = np.random.default_rng(2)
    z = rng.normal(size=50)
    x = z + rng.normal(size=50)
    y = z + 0.5 * x + rng.normal(size=50)
    rx, ry, rz = (sps.rankdata(v) for v in (x, y, z))
    design = np.column_stack([np.ones(50), rz])

    def residual(v: np.ndarray) -> np.ndarray:
        return v - design @ np.linalg.lstsq(design, v, rcond=None)[0]

    expected = sps.pearsonr(residual(rx), residual(ry)).statistic
    assert cs.partial_spearman(x, y, z) == pytest.approx(expected, abs=1e-12)


def test_mean_rho_difference_matches_a_loop_over_scipy() -> None:
    rng = np.random.default_rng(3)
    y = rng.normal(size=(15, 3))
    a, b = y.sum(axis=1) + rng.normal(size=15), rng.normal(size=15)
    d = cs.mean_spearman_difference(a, b, y, n_resamples=300, seed=4)

    def mean_rho(x: np.ndarray, ys: np.ndarray) -> float:
        return float(np.mean([sps.spearmanr(x, column).statistic for column in ys.T]))

    assert d.mean_a == pytest.approx(mean_rho(a, y), abs=1e-12)
    assert d.difference == pytest.approx(mean_rho(a, y) - mean_rho(b, y), abs=1e-12)
    idx = np.random.default_rng(4).integers(0, 15, size=(300, 15))  # the same resamples, by hand
    deltas = np.array([mean_rho(a[i], y[i]) - mean_rho(b[i], y[i]) for i in idx])
    ok = deltas[~np.isnan(deltas)]
    assert (d.low, d.high) == pytest.approx(tuple(np.quantile(ok, [0.025, 0.975])), abs=1e-12)
    assert d.n_used == len(ok)


def test_degenerate_inputs() -> None:
    assert np.isnan(cs.spearman(np.ones(5), np.arange(5.0)))
    assert np.isnan(cs.permutation_p_spearman(np.ones(5), np.arange(5.0), n_permutations=10))
    with pytest.raises(cs.TooFewModelsError, match="at least 3"):
        cs.spearman(np.arange(2.0), np.arange(2.0))
    with pytest.raises(ValueError, match="NaN"):
        cs.spearman(np.array([1.0, np.nan, 3.0]), np.arange(3.0))


# --- hand-written result folders --------------------------------------------------------


def write_result(
    root: Path, model: str, revision: str, task: str, subsets: dict[str, float], **extra: object
) -> None:
    folder = root / "results" / model.replace("/", "__") / revision
    folder.mkdir(parents=True, exist_ok=True)
    data = {
        "dataset_revision": "x",
        "evaluation_time": 1.0,
        "kg_co2_emissions": None,
        "mteb_version": extra.get("mteb_version", "2.26.24"),
        "task_name": task,
        "scores": {
            "test": [
                {"hf_subset": s, "languages": ["eng-Latn"], "main_score": v, "accuracy": v / 2}
                for s, v in subsets.items()
            ]
        },
    }
    (folder / f"{task}.json").write_text(json.dumps(data))
    if "embed_dim" in extra:
        meta = {"name": model, "revision": revision, "embed_dim": extra["embed_dim"]}
        (folder / "model_meta.json").write_text(json.dumps(meta))


# Five models; two tasks unknown to mteb: Intrinsic (one subset) and Extrinsic (subsets a, b).
INTRINSIC = [0.1, 0.2, 0.3, 0.4, 0.5]
EXTRINSIC_A = [0.3, 0.1, 0.2, 0.5, 0.4]
EXTRINSIC_B = [0.1, 0.2, 0.6, 0.3, 0.9]
DIMS = [256, 64, 1024, 128, 512]


@pytest.fixture
def toy(tmp_path: Path) -> Path:
    for i in range(5):
        model = f"org/model-{i}"
        write_result(tmp_path, model, "r1", "Intrinsic", {"default": INTRINSIC[i]}, embed_dim=DIMS[i])
        write_result(tmp_path, model, "r1", "Extrinsic", {"a": EXTRINSIC_A[i], "b": EXTRINSIC_B[i]})
    # an older revision of model-0 with different scores and an extra task
    write_result(tmp_path, "org/model-0", "old", "Intrinsic", {"default": 0.9}, mteb_version="2.0.0")
    write_result(tmp_path, "org/model-0", "old", "OnlyOld", {"default": 0.9}, mteb_version="2.0.0")
    return tmp_path


def test_toy_table_means_subsets_and_takes_the_newest_revision(toy: Path) -> None:
    result = correlate(
        [toy], ["Intrinsic"], ["Extrinsic", "Extrinsic:*", "Extrinsic::accuracy"], n_bootstrap=50
    )
    mean = (np.array(EXTRINSIC_A) + np.array(EXTRINSIC_B)) / 2
    assert result.table.frame["Extrinsic"].to_numpy() == pytest.approx(mean)
    assert result.table.frame["Intrinsic"].to_numpy() == pytest.approx(INTRINSIC)
    assert result.table.frame["Extrinsic::accuracy"].to_numpy() == pytest.approx(mean / 2)
    assert result.extrinsic == ["Extrinsic", "Extrinsic:a", "Extrinsic:b", "Extrinsic::accuracy"]
    assert result.pair("Intrinsic", "Extrinsic:a").spearman == pytest.approx(
        sps.spearmanr(INTRINSIC, EXTRINSIC_A).statistic
    )
    assert "mean over subsets a, b" in result.table.describe["Extrinsic"]
    assert result.table.loaded.models["org/model-0"].revision == "r1"
    assert any("model-0: revision r1 used; also present: old" in n for n in result.notes)


def test_toy_revision_choice_merge_and_explicit(toy: Path) -> None:
    explicit = load_results([toy], revisions={"org/model-0": "old"})
    assert set(explicit.models["org/model-0"].tasks) == {"Intrinsic", "OnlyOld"}
    merged = load_results([toy], revision_policy="merge")
    tasks = merged.models["org/model-0"].tasks
    assert set(tasks) == {"Intrinsic", "Extrinsic", "OnlyOld"}
    assert tasks["Intrinsic"].scores["test"][0]["main_score"] == 0.1  # the newest revision wins
    with pytest.raises(CorrelationInputError, match="available: old, r1"):
        load_results([toy], revisions={"org/model-0": "nope"})


def test_toy_missing_scores_are_dropped_per_pair_and_counted(toy: Path) -> None:
    write_result(toy, "org/model-5", "r1", "Intrinsic", {"default": 0.7})
    result = correlate([toy], ["Intrinsic"], ["Extrinsic"], n_bootstrap=50)
    pair = result.pair("Intrinsic", "Extrinsic")
    assert (pair.n, pair.n_missing) == (5, 1)
    complete = correlate([toy], ["Intrinsic"], ["Extrinsic"], complete=True, n_bootstrap=50)
    assert len(complete.table.frame) == 5


def test_toy_dimension_views(toy: Path) -> None:
    result = correlate([toy], ["Intrinsic"], ["Extrinsic:b"], control_dim=True, n_bootstrap=50)
    pair = result.pair("Intrinsic", "Extrinsic:b")
    assert pair.n_partial == 5
    pairs = {"xy": (INTRINSIC, EXTRINSIC_B), "xz": (INTRINSIC, DIMS), "yz": (EXTRINSIC_B, DIMS)}
    r = {k: sps.spearmanr(a, b).statistic for k, (a, b) in pairs.items()}
    expected = (r["xy"] - r["xz"] * r["yz"]) / np.sqrt((1 - r["xz"] ** 2) * (1 - r["yz"] ** 2))
    assert pair.partial_spearman_dim == pytest.approx(expected, abs=1e-12)
    assert np.isnan(cs.partial_spearman(INTRINSIC, EXTRINSIC_B, INTRINSIC))  # z = x: undefined
    band = correlate([toy], ["Intrinsic"], ["Extrinsic:b"], dim_band=(128, 512), n_bootstrap=50)
    assert sorted(band.table.frame.index) == ["org/model-0", "org/model-3", "org/model-4"]
    keep = [0, 3, 4]
    assert band.pair("Intrinsic", "Extrinsic:b").spearman == pytest.approx(
        sps.spearmanr(np.take(INTRINSIC, keep), np.take(EXTRINSIC_B, keep)).statistic
    )


def test_toy_writes_every_output_and_the_gap_layout(toy: Path, tmp_path: Path) -> None:
    result = correlate([toy], ["Intrinsic"], ["Extrinsic:*"], gap=True, n_bootstrap=50, n_permutations=100)
    written = result.write(tmp_path / "out", scatter=[("Intrinsic", "Extrinsic:a")])
    assert {"csv", "json", "report", "scores", "evaluation gap"} <= set(written)
    for path in written.values():
        assert path.stat().st_size > 0
    import pandas as pd

    frame = pd.read_csv(written["csv"])
    required = ["intrinsic", "extrinsic", "n", "spearman", "spearman_ci_low", "spearman_ci_high"]
    assert {*required, "spearman_p", "pearson", "kendall"} <= set(frame.columns)
    assert list(frame["extrinsic"]) == ["Extrinsic:a", "Extrinsic:b"]
    report = written["report"].read_text()
    assert "# Evaluation gap" in report
    assert "n = 5 models from 5 families in every cell." in report
    data = json.loads(written["json"].read_text())
    assert data["pairs"][0]["n"] == 5


def _correlate_and_write(results: Path, out: Path) -> None:
    result = correlate([results], ["Intrinsic"], ["Extrinsic:*"], n_bootstrap=50, n_permutations=100)
    result.write(out, scatter=[("Intrinsic", "Extrinsic:a")])


def test_a_report_rewrite_cut_by_a_full_disk_leaves_every_former_file_whole(
    toy: Path, tmp_path: Path
) -> None:
    """A report written over a former one where a figure no longer fits (a file size limit above
    every text file and below every figure, as a full disk): the write fails, and every file of
    the folder is the former one, byte for byte; no temporary file is left."""
    out = tmp_path / "out"
    _correlate_and_write(toy, out)
    former = {path.name: path.read_bytes() for path in out.iterdir()}
    figures = [len(data) for name, data in former.items() if name.endswith(".png")]
    limit = max(len(data) for name, data in former.items() if not name.endswith(".png")) + 1
    assert len(figures) == 2 and limit < min(figures)
    with pytest.raises(OSError, match="File too large"):
        in_a_second_process(under_a_file_size_limit, limit, _correlate_and_write, toy, out)
    assert {path.name: path.read_bytes() for path in out.iterdir()} == former


def test_bad_inputs_give_clear_errors(toy: Path, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    (empty / "results").mkdir(parents=True)
    with pytest.raises(CorrelationInputError, match="holds no task results"):
        correlate([empty], ["A"], ["B"])
    with pytest.raises(CorrelationInputError, match="nowhere: no such folder"):
        correlate([tmp_path / "nowhere"], ["A"], ["B"])
    (tmp_path / "no-results").mkdir()
    with pytest.raises(CorrelationInputError, match="holds no 'results/' folder"):
        correlate([tmp_path / "no-results"], ["A"], ["B"])
    with pytest.raises(CorrelationInputError, match=r"unknown task 'Intrinsik'.*Did you mean: Intrinsic"):
        correlate([toy], ["Intrinsik"], ["Extrinsic"])
    with pytest.raises(CorrelationInputError, match=r"no metric 'f1'; available: accuracy, main_score"):
        correlate([toy], ["Intrinsic"], ["Extrinsic::f1"])
    with pytest.raises(CorrelationInputError, match="no subset 'c'"):
        correlate([toy], ["Intrinsic"], ["Extrinsic:c"])
    with pytest.raises(CorrelationInputError, match="no results in split 'dev'"):
        correlate([toy], ["Intrinsic"], ["Extrinsic"], split="dev")
    with pytest.raises(CorrelationInputError, match="only 2 models have both scores"):
        correlate([toy], ["Intrinsic"], ["Extrinsic"], models=["org/model-1", "org/model-2"])
    with pytest.raises(CorrelationInputError, match="models not in the result folders: org/x"):
        correlate([toy], ["Intrinsic"], ["Extrinsic"], models=["org/x"])
    with pytest.raises(CorrelationInputError, match="Task:subset:metric"):
        correlate([toy], ["A:b:c:d"], ["Extrinsic"])


def test_a_model_named_but_not_matching_the_regex_is_left_out_of_folders_as_of_a_table(
    toy: Path, tmp_path: Path
) -> None:
    """``models`` and ``model_regex`` select alike from result folders and from a score table (the
    folders reported a named model the regex left out as not in them)."""
    named = ["org/model-1", "org/model-2", "org/model-3"]
    table = tmp_path / "scores.csv"
    table.write_text("model,Intrinsic\n" + "".join(f"org/model-{i},0.{i}\n" for i in range(5)))
    for source in (toy, table):
        assert list(load_results([source], models=named, model_regex=r"[12]$").models) == named[:2]


@second_process
def test_old_result_of_a_task_unknown_to_mteb_names_the_file(tmp_path: Path) -> None:
    write_result(tmp_path, "org/m", "r", "NoSuchTask", {"default": 0.5}, mteb_version="1.10.0")
    with pytest.raises(CorrelationInputError, match=r"org__m/r/NoSuchTask.json: mteb cannot read"):
        load_results([tmp_path])


def test_later_folder_overrides_and_is_noted(toy: Path, tmp_path: Path) -> None:
    second = tmp_path / "second"
    write_result(second, "org/model-1", "r1", "Intrinsic", {"default": 0.95})
    result = correlate([toy, second], ["Intrinsic"], ["Extrinsic"], n_bootstrap=50)
    assert result.table.frame.loc["org/model-1", "Intrinsic"] == 0.95
    assert any(f"org/model-1@r1 Intrinsic: taken from {second}" in n for n in result.notes)


# --- the real-data demonstration ---------------------------------------------------------

STS = ["BIOSSES", "SICK-R", "STS12", "STS13", "STS14", "STS15", "STS16", "STS17", "STS22", "STSBenchmark"]
CLASSIFICATION = [
    "AmazonCounterfactualClassification",
    "AmazonPolarityClassification",
    "AmazonReviewsClassification",
    "Banking77Classification",
    "EmotionClassification",
    "ImdbClassification",
    "MTOPDomainClassification",
    "MTOPIntentClassification",
    "MassiveIntentClassification",
    "MassiveScenarioClassification",
    "ToxicConversationsClassification",
    "TweetSentimentExtractionClassification",
]


def _hand_score(path: Path, subsets: set[str] | None) -> float | None:
    """Mean test main_score over the subsets, read with json only (None if incomplete)."""
    if not path.is_file():
        return None
    entries = {
        e["hf_subset"]: e["main_score"] for e in json.loads(path.read_text())["scores"].get("test", [])
    }
    if not entries or (subsets is not None and set(entries) != subsets):
        return None
    return float(np.mean(list(entries.values())))


@pytest.fixture(scope="module")
def real(mteb_results: Path) -> object:
    return correlate([mteb_results], STS, CLASSIFICATION, complete=True, n_bootstrap=500, n_permutations=2000)


@pytest.mark.slow  # ~370 models' real MTEB results
def test_real_sts_vs_classification_table(real: object, mteb_results: Path) -> None:
    from mteb_evalrank.correlation import CorrelationResult, tasks_of_type

    assert isinstance(real, CorrelationResult)
    loaded = real.table.loaded
    assert tasks_of_type(loaded, "STS", "eng") == sorted(STS)
    assert tasks_of_type(loaded, "Classification", "eng") == sorted(CLASSIFICATION)
    # Independent table: json files of each model's chosen revision folder, nothing from mteb.
    rows = {}
    subsets = {"AmazonCounterfactualClassification": {"en", "en-ext"}}
    for name, model in loaded.models.items():
        folder = mteb_results / "results" / name.replace("/", "__") / model.revision
        scores = [_hand_score(folder / f"{task}.json", subsets.get(task)) for task in STS + CLASSIFICATION]
        if all(s is not None for s in scores):
            rows[name] = scores
    assert sorted(rows) == sorted(real.table.frame.index)
    assert len(rows) >= 50
    table = np.array(list(rows.values()))
    columns = STS + CLASSIFICATION
    for a, b in [("STSBenchmark", "Banking77Classification"), ("STS22", "AmazonCounterfactualClassification"),
                 ("SICK-R", "ImdbClassification")]:  # fmt: skip
        x, y = table[:, columns.index(a)], table[:, columns.index(b)]
        pair = real.pair(a, b)
        assert pair.n == len(rows)
        assert pair.spearman == pytest.approx(sps.spearmanr(x, y).statistic, abs=1e-12)
        assert pair.pearson == pytest.approx(sps.pearsonr(x, y).statistic, abs=1e-12)
        assert pair.kendall == pytest.approx(sps.kendalltau(x, y).statistic, abs=1e-12)
        assert pair.spearman_ci_low <= pair.spearman <= pair.spearman_ci_high
        assert 0 < pair.spearman_p <= 1


@pytest.mark.slow  # ~370 models' real MTEB results, the CLI twice
def test_cli_on_real_results(tmp_path: Path, capsys: pytest.CaptureFixture[str], mteb_results: Path) -> None:
    from mteb_evalrank.cli import main

    args = [
        "correlate", str(mteb_results), "--intrinsic", "STSBenchmark", "STS22", "--extrinsic",
        "Banking77Classification", "--scatter", "STSBenchmark", "Banking77Classification",
        "--bootstrap", "200", "--permutations", "500", "--control-dim", "--out", str(tmp_path),
    ]  # fmt: skip
    main(args)
    out = capsys.readouterr().out
    assert "| STSBenchmark |" in out
    assert (tmp_path / "heatmap.png").is_file()
    compared = tmp_path / "compared"
    main([*args[:-1], str(compared), "--compare", "STSBenchmark", "STS22"])
    (comparison,) = json.loads((compared / "correlations.json").read_text())["comparisons"]
    columns = ["STSBenchmark", "STS22", "Banking77Classification"]
    both = pd.read_csv(compared / "scores.csv", index_col=0)[columns].dropna()  # models with all three
    rho = [sps.spearmanr(both[row], both["Banking77Classification"]).statistic for row in columns[:2]]
    assert comparison["n"] == len(both)
    assert comparison["difference"] == pytest.approx(rho[0] - rho[1], abs=1e-12)
    assert "## Comparisons" in (compared / "report.md").read_text()
    assert (tmp_path / "scatter_STSBenchmark__Banking77Classification.png").is_file()
    bad = ["--intrinsic", "STSBenchmrk", "--extrinsic", "STS12", "--out", str(tmp_path / "bad")]
    with pytest.raises(SystemExit, match=r"unknown task 'STSBenchmrk'.*Did you mean: STSBenchmark"):
        main(["correlate", str(mteb_results), *bad])


# --- families, score tables, adjusted p-values in the outputs ------------------------------


def test_families_from_the_zoo_a_regex_and_a_file(tmp_path: Path) -> None:
    from mteb_evalrank.correlation.core import read_families, resolve_families
    from mteb_evalrank.models import model_family

    names = ["evalrank/glove.6B.50d-dim10", "evalrank/all-MiniLM-L6-v2-cls", "org/x-v1", "org/x-v2", "org/y"]
    zoo, source = resolve_families(names)
    assert source == "zoo" and zoo["evalrank/glove.6B.50d-dim10"] == model_family(names[0]) == "glove.6B.50d"
    assert zoo["org/x-v1"] == "org/x-v1"  # unknown: its own family
    by_regex, source = resolve_families(names, family_regex=r"^org/(\w)")
    assert by_regex["org/x-v1"] == by_regex["org/x-v2"] == "x" and source == "regex+zoo"
    (tmp_path / "f.csv").write_text("model,family\norg/y,x\n")
    (tmp_path / "f.json").write_text('{"org/y": "x"}')
    for path in ("f.csv", "f.json"):
        mapping = read_families(tmp_path / path)
        both, source = resolve_families(names, mapping, r"^org/(\w)")
        assert both["org/y"] == "x" and source == "file+regex+zoo"  # the file wins over the regex
    assert set(resolve_families(names, cluster=False)[0].values()) == set(names)
    with pytest.raises(CorrelationInputError, match="model,family"):
        (tmp_path / "bad.csv").write_text("a,b\n1,2\n")
        read_families(tmp_path / "bad.csv")


def _score_table(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """Nine models in three families (a: 3, b: 2, c: 4), two intrinsic and two extrinsic columns."""
    rng = np.random.default_rng(11)
    names = [f"org/{f}-{i}" for f, k in (("a", 3), ("b", 2), ("c", 4)) for i in range(k)]
    y = rng.normal(size=(9, 2))
    frame = pd.DataFrame(
        {
            "I1": y[:, 0] + 0.5 * rng.normal(size=9),
            "I2:s": rng.normal(size=9),
            "E:x": y[:, 0],
            "E:y": y[:, 1],
        },
        index=pd.Index(names, name="model"),
    )
    path = tmp_path / "scores.csv"
    frame.to_csv(path)
    return path, frame


def test_score_table_input_families_and_adjusted_p(tmp_path: Path) -> None:
    path, frame = _score_table(tmp_path)
    before = path.read_bytes()
    result = correlate(
        [path], ["I1", "I2:s"], ["E:*"], family_regex=r"org/(\w)", compare=[("I1", "I2:s")], n_bootstrap=300
    )
    assert result.extrinsic == ["E:x", "E:y"]
    pair = result.pair("I1", "E:y")
    assert pair.spearman == pytest.approx(sps.spearmanr(frame["I1"], frame["E:y"]).statistic, abs=1e-12)
    assert (pair.n, pair.n_families, pair.ci_units) == (9, 3, "families")
    raw = [p.spearman_p for p in result.pairs]
    from statsmodels.stats.multitest import multipletests

    assert [p.spearman_p_adj for p in result.pairs] == pytest.approx(multipletests(raw, method="holm")[1])
    (c,) = result.comparisons
    _, exact = _swap_enumeration(
        frame["I1"].to_numpy(),
        frame["I2:s"].to_numpy(),
        frame[["E:x", "E:y"]].to_numpy(),
        [0, 0, 0, 1, 1, 2, 2, 2, 2],
    )
    assert (c.units, c.n_units, c.p_min) == ("families", 3, 0.25) and c.p_swap == pytest.approx(exact)
    (row,) = [r for r in result.row_means if r.intrinsic == "I1"]
    assert row.mean == pytest.approx(
        np.mean([sps.spearmanr(frame["I1"], frame[c]).statistic for c in ("E:x", "E:y")])
    )
    assert row.n_families == 3 and row.ci_low <= row.mean <= row.ci_high
    assert any("only 3 families" in note and "little power" in note for note in result.notes)
    written = result.write(tmp_path)  # into the folder of the score table: it is not rewritten
    assert path.read_bytes() == before
    report = written["report"].read_text()
    assert "n = 9 models from 3 families in every cell." in report and "p (swap test)" in report
    assert "Holm" in report and "p adj." in report
    bh = correlate([path], ["I1"], ["E:x"], family_regex=r"org/(\w)", p_adjust="fdr_bh", n_bootstrap=50)
    assert bh.settings.p_adjust == "fdr_bh"
    two = correlate([path], ["I1"], ["E:x"], family_regex=r"org/(a|b)", models=list(frame.index[:5]))
    assert np.isnan(two.pair("I1", "E:x").spearman_ci_low)
    assert any("2 families: too few to resample" in note for note in two.notes)
    with pytest.raises(CorrelationInputError, match=r"no column 'I11'.*Did you mean: I1"):
        correlate([path], ["I11"], ["E:x"])
    with pytest.raises(CorrelationInputError, match="score table records no revisions"):
        correlate([path], ["I1"], ["E:x"], revisions={"org/a-0": "r"})


def test_cli_on_a_score_table_with_a_family_file(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from mteb_evalrank.cli import main

    path, frame = _score_table(tmp_path)
    families = tmp_path / "families.json"
    families.write_text(json.dumps({name: name.split("-")[0] for name in frame.index}))
    out = tmp_path / "out"
    main(["correlate", str(path), "--intrinsic", "I1", "I2:s", "--extrinsic", "E:x", "E:y",
          "--families", str(families), "--compare", "I1", "I2:s", "--bootstrap", "100",
          "--permutations", "500", "--out", str(out)])  # fmt: skip
    printed = capsys.readouterr().out
    assert "9 models, 3 families per cell" in printed and "swap-test p" in printed
    data = json.loads((out / "correlations.json").read_text())
    assert data["settings"]["families"] == "file" and data["models"]["org/b-1"]["family"] == "org/b"
    assert data["comparisons"][0]["p_min"] == 0.25 and "p_not_better" not in data["comparisons"][0]


# --- controls: the dimension and coverage rows, the mean partial ρ -----------------------


def test_mean_partial_spearman_by_hand_and_by_residuals() -> None:
    """Ranks x = 1 2 3 4, z = 1 2 4 3, y1 = 2 1 3 4: ρ_xz = ρ_xy = 1 - 6·2/60 = 0.8, ρ_y1z =
    1 - 6·4/60 = 0.6, so ρ_xy1·z = (0.8 - 0.48) / sqrt(0.36 · 0.64) = 2/3; y2 = x: ρ = 1 and
    ρ_y2z = 0.8, so ρ_xy2·z = (1 - 0.64) / 0.36 = 1. Mean 5/6. The same from the residuals of the
    ranks regressed on rank(z) (least squares, numpy)."""
    x, z = np.array([1.0, 2, 3, 4]), np.array([1.0, 2, 4, 3])
    y = np.array([[2.0, 1], [1, 2], [3, 3], [4, 4]])
    mean, interval = cs.mean_partial_spearman_ci(x, y, z)
    assert mean == pytest.approx(5 / 6, abs=1e-12)
    assert np.isnan(interval.low) and "too few" in interval.reason  # 4 models: no bootstrap

    def residuals(v: np.ndarray) -> np.ndarray:
        design = np.column_stack([np.ones(len(z)), sps.rankdata(z)])
        return sps.rankdata(v) - design @ np.linalg.lstsq(design, sps.rankdata(v), rcond=None)[0]

    by_residuals = [sps.pearsonr(residuals(x), residuals(column)).statistic for column in y.T]
    assert np.mean(by_residuals) == pytest.approx(5 / 6, abs=1e-12)


def test_mean_partial_spearman_ci_is_a_bootstrap_of_the_mean() -> None:
    """y = x gives a partial ρ of 1 on every resample: the CI is [1, 1]; for other data the CI
    holds the estimate and lies in [-1, 1]."""
    rng = np.random.default_rng(3)
    x, z = rng.normal(size=12), rng.normal(size=12)
    families = [f"f{i // 2}" for i in range(12)]
    mean, interval = cs.mean_partial_spearman_ci(x, x[:, None], z, families=families, n_resamples=200)
    assert (
        mean == pytest.approx(1.0)
        and interval.low == pytest.approx(1.0)
        and interval.high == pytest.approx(1.0)
    )
    y = np.column_stack([x + rng.normal(size=12), rng.normal(size=12)])
    mean, interval = cs.mean_partial_spearman_ci(x, y, z, families=families, n_resamples=500)
    assert -1 <= interval.low <= mean <= interval.high <= 1 and interval.units == "families"


def test_controls_add_the_dimension_row_and_compare_every_row_with_them(toy: Path, tmp_path: Path) -> None:
    """The ``dim`` control's scores are the models' dimensions; a column control is one more row;
    each other row gets Δ against each control, equal to the difference of the scipy means."""
    for i in range(5):
        write_result(toy, f"org/model-{i}", "r1", "Coverage", {"default": [0.9, 0.5, 1.0, 0.7, 0.8][i]})
    result = correlate(
        [toy], ["Intrinsic"], ["Extrinsic:a", "Extrinsic:b"], control_dim=True, controls=("dim", "Coverage"),
        n_bootstrap=200,
    )  # fmt: skip
    assert result.intrinsic == ["Intrinsic", "Coverage", "embedding dimension"]
    assert result.table.frame["embedding dimension"].to_numpy() == pytest.approx(DIMS)
    assert result.settings.controls == ("embedding dimension", "Coverage")

    def mean_rho(values: Sequence[float]) -> float:
        return float(np.mean([sps.spearmanr(values, y).statistic for y in (EXTRINSIC_A, EXTRINSIC_B)]))

    against = {c.b: c for c in result.control_comparisons}
    assert {c.a for c in result.control_comparisons} == {"Intrinsic"} and set(against) == {
        "embedding dimension",
        "Coverage",
    }
    assert against["embedding dimension"].difference == pytest.approx(mean_rho(INTRINSIC) - mean_rho(DIMS))
    assert against["Coverage"].mean_b == pytest.approx(mean_rho([0.9, 0.5, 1.0, 0.7, 0.8]))
    means = {r.intrinsic: r for r in result.row_means}
    assert np.isnan(means["embedding dimension"].partial_mean)  # the dimension given itself
    assert means["Intrinsic"].partial_mean == pytest.approx(
        np.mean(
            [
                cs.partial_spearman(np.array(INTRINSIC), np.array(y), np.array(DIMS))
                for y in (EXTRINSIC_A, EXTRINSIC_B)
            ]
        )
    )
    out = tmp_path / "out"
    result.write(out)
    report = (out / "report.md").read_text()
    assert "## Controls" in report and "| Intrinsic |" in report and "mean partial ρ×100 (dim)" in report
    assert json.loads((out / "correlations.json").read_text())["settings"]["controls"] == [
        "embedding dimension",
        "Coverage",
    ]
    with pytest.raises(CorrelationInputError, match="unknown task 'Nope'"):  # a control is a row like any
        correlate([toy], ["Intrinsic"], ["Extrinsic:a"], controls=("Nope",))


# --- downstream protocols ---------------------------------------------------------------

FAMILIES_DIR = Path(__file__).resolve().parent.parent / "docs" / "study" / "families"


def test_each_downstream_task_has_one_protocol() -> None:
    from mteb_evalrank.correlation.table import (
        PROTOCOLS,
        by_protocol,
        default_downstream,
        downstream_protocol,
    )

    expected = {
        "SentEvalMR": "senteval", "SentEvalSICKE": "senteval", "CoNLL2003NER": "sequence-labelling",
        "EWTPOSTagging": "sequence-labelling", "MRClassification": "classification",
        "Banking77Classification": "classification", "STSBenchmark": None, "EvalRankSent": None,
        "AccSent": None, "NoSuchTask": None,
    }  # fmt: skip
    assert {task: downstream_protocol(task) for task in expected} == expected
    assert list(PROTOCOLS) == ["senteval", "sequence-labelling", "classification"]
    assert by_protocol(reversed(list(expected))) == {
        "senteval": ["SentEvalSICKE", "SentEvalMR"],
        "sequence-labelling": ["EWTPOSTagging", "CoNLL2003NER"],
        "classification": ["Banking77Classification", "MRClassification"],
    }
    assert default_downstream(list(expected)) == [t for t, p in expected.items() if p is not None]


def test_extrinsic_protocol_takes_the_committed_tables_tasks_and_gives_its_means(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``correlate --extrinsic-protocol sequence-labelling`` on the committed word-all-seq score table
    (62 models, the trainings as families) selects its three tasks and gives its row means."""
    from mteb_evalrank.cli import main

    folder = FAMILIES_DIR / "word-all-seq"
    rows = ["EvalRankWord:default", "WordSimSimLex999", "WordSimMEN"]
    main(["correlate", str(folder / "scores.csv"), "--intrinsic", *rows, "--extrinsic-protocol",
          "sequence-labelling", "--families", str(FAMILIES_DIR / "trainings.csv"), "--permutations", "100",
          "--out", str(tmp_path)])  # fmt: skip
    capsys.readouterr()
    written = json.loads((tmp_path / "correlations.json").read_text(encoding="utf-8"))
    committed = json.loads((folder / "correlations.json").read_text(encoding="utf-8"))
    assert sorted({p["extrinsic"] for p in written["pairs"]}) == [
        "CoNLL2000Chunking",
        "CoNLL2003NER",
        "EWTPOSTagging",
    ]
    expected = {r["intrinsic"]: r for r in committed["row_means"] if r["intrinsic"] in rows}
    for row in written["row_means"]:
        for key in ("n", "n_families", "mean", "ci_low", "ci_high"):
            assert row[key] == pytest.approx(expected[row["intrinsic"]][key], abs=1e-12), key
    assert "the sequence-labelling protocol's tasks" in (tmp_path / "report.md").read_text(encoding="utf-8")


def test_extrinsic_columns_of_two_protocols_are_named_in_a_note(tmp_path: Path) -> None:
    """The committed word-all and word-all-seq score tables side by side: a mean over SentEval and
    sequence-labelling columns mixes two protocols, and the notes say so."""
    merged = pd.read_csv(FAMILIES_DIR / "word-all" / "scores.csv", index_col=0)[
        ["EvalRankWord:default", "SentEvalMR"]
    ]
    tagging = pd.read_csv(FAMILIES_DIR / "word-all-seq" / "scores.csv", index_col=0)[["CoNLL2000Chunking"]]
    merged.join(tagging).to_csv(tmp_path / "scores.csv")
    extrinsic = ["SentEvalMR", "CoNLL2000Chunking"]
    result = correlate([tmp_path / "scores.csv"], ["EvalRankWord:default"], extrinsic, n_permutations=100)
    (note,) = [n for n in result.notes if "protocols" in n]
    assert note.startswith(
        "the extrinsic columns span 2 downstream protocols (senteval: SentEvalMR; sequence-labelling: "
        "CoNLL2000Chunking)"
    )
