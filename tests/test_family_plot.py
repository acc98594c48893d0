"""Per-family Spearman ρ (``stats.family_spearman``) and the family plot of ``correlate``.

Expected values are recomputed independently: ``scipy.stats.spearmanr`` on each family's models
having both scores (selected here with pandas), and the within-family weights by hand.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sps

from mteb_evalrank.correlation import CorrelationInputError, correlate
from mteb_evalrank.correlation import stats as cs

SIZES = {"a": 6, "b": 4, "c": 3, "d": 2, "e": 1}


@pytest.fixture
def table(tmp_path: Path) -> tuple[Path, pd.DataFrame]:
    """Families org/a (6 models, one without E1), org/b (4), org/c (3), org/d (2), org/e (1);
    scores rounded (ties) and shifted per family."""
    rng = np.random.default_rng(21)
    names = [f"org/{f}-{i}" for f, k in SIZES.items() for i in range(k)]
    offset = np.array([{"a": 0.0, "b": 3.0, "c": -2.0, "d": 1.0, "e": 0.5}[name[4]] for name in names])
    base = rng.normal(size=len(names))
    frame = pd.DataFrame(
        {
            "I1": np.round(base + offset, 1),
            "I2": np.round(rng.normal(size=len(names)), 1),
            "E1": np.round(base + 0.7 * rng.normal(size=len(names)) - offset, 1),
        },
        index=pd.Index(names, name="model"),
    )
    frame.loc["org/a-0", "E1"] = np.nan  # org/a: 5 models have both I1 and E1
    path = tmp_path / "scores.csv"
    frame.to_csv(path)
    return path, frame


def _scipy_per_family(frame: pd.DataFrame, a: str, b: str) -> dict[str, tuple[int, float]]:
    """Each family's (models having both, scipy's ρ) — NaN below 3 models."""
    both = frame[[a, b]].dropna()
    family = both.index.str.split("-").str[0]
    out = {}
    for name in sorted(set(family)):
        members = both[family == name]
        k = len(members)
        out[name] = (k, sps.spearmanr(members[a], members[b]).statistic if k >= 3 else np.nan)
    return out


def test_family_spearman_is_scipy_per_family_and_nan_for_small_families() -> None:
    rng = np.random.default_rng(3)
    labels = ["g"] * 7 + ["f"] * 3 + ["h"] * 2 + ["i"] + ["j"] * 3
    x = np.round(rng.normal(size=16), 1)
    y = np.round(x + rng.normal(size=16), 1)
    y[13:] = 0.5  # family j: y constant, ρ undefined
    got = cs.family_spearman(x, y, labels)
    assert list(got) == ["g", "f", "j", "h", "i"]  # largest first, ties by name
    idx = {f: [i for i, label in enumerate(labels) if label == f] for f in set(labels)}
    for family in ("g", "f"):
        k, rho = got[family]
        assert k == len(idx[family])
        assert rho == pytest.approx(sps.spearmanr(x[idx[family]], y[idx[family]]).statistic, abs=1e-12)
    assert got["h"][0] == 2 and np.isnan(got["h"][1])  # 2 models: no ρ (scipy would give ±1)
    assert got["i"][0] == 1 and np.isnan(got["i"][1])
    assert got["j"][0] == 3 and np.isnan(got["j"][1])
    with pytest.raises(ValueError, match="must not contain NaN"):
        cs.family_spearman(np.array([1.0, np.nan, 3.0]), np.arange(3.0), ["a"] * 3)
    with pytest.raises(ValueError, match="equally long"):
        cs.family_spearman(np.arange(3.0), np.arange(3.0), ["a"] * 2)


def test_pooled_within_family_rho_is_the_weighted_mean_of_the_family_rhos() -> None:
    """Without ties ρ_W = Σ_g w_g ρ_g, w_g = n_g(n_g² − 1) / Σ_h n_h(n_h² − 1) (families of >= 3)."""
    rng = np.random.default_rng(5)
    labels = ["a"] * 5 + ["b"] * 4 + ["c"] * 3 + ["d"] * 2
    x = rng.normal(size=14)
    y = x + rng.normal(size=14)
    per_family = cs.family_spearman(x, y, labels)
    weights = {f: k * (k * k - 1) for f, (k, _) in per_family.items() if k >= 3}
    expected = sum(weights[f] * per_family[f][1] for f in weights) / sum(weights.values())
    assert cs.within_spearman(x, y, families=labels) == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("within", [False, True])
def test_family_plot_is_written_linked_and_tabulated(
    table: tuple[Path, pd.DataFrame], tmp_path: Path, within: bool
) -> None:
    path, frame = table
    result = correlate(
        [path], ["I1", "I2"], ["E1"], family_regex=r"org/\w", within_families=within,
        n_bootstrap=100, n_permutations=200,
    )  # fmt: skip
    pairs = [("I1", "E1"), ("I2", "E1")]
    written = result.write(tmp_path / "out", family_plot=pairs)
    png = tmp_path / "out" / "family_I1__E1.png"
    assert written["family plot I1 vs E1"] == png and (tmp_path / "out" / "family_I2__E1.png").is_file()
    from matplotlib.image import imread

    height, width, _ = imread(png).shape
    assert height > 300 and width > 300
    report = written["report"].read_text()
    assert "![family plot I1 vs E1](family_I1__E1.png)" in report
    assert "## Per-family Spearman ρ" in report and "| family | I1 vs E1 | I2 vs E1 |" in report
    expected = {pair: _scipy_per_family(frame, *pair) for pair in pairs}
    assert set(expected[pairs[0]]) == {"org/a", "org/b", "org/c", "org/d", "org/e"}
    for family in ("org/a", "org/b", "org/c", "org/d"):
        cells = []
        for pair in pairs:
            k, rho = expected[pair][family]
            cells.append(f"{100 * rho:.1f} ({k})" if np.isfinite(rho) else f"– ({k})")
        assert f"| {family} | {' | '.join(cells)} |" in report
    assert "| org/d | – (2) | – (2) |" in report  # 2 models: no ρ
    data = json.loads(written["json"].read_text())
    for entry, pair in zip(data["per_family"], pairs, strict=True):
        assert (entry["intrinsic"], entry["extrinsic"]) == pair
        for family, (k, rho) in expected[pair].items():
            got = entry["families"][family]
            assert got["n"] == k
            if np.isnan(rho):
                assert got["spearman"] is None
            else:
                assert got["spearman"] == pytest.approx(rho, abs=1e-12)
    assert data["per_family"][0]["families"]["org/a"]["n"] == 5  # org/a-0 has no E1


def test_no_family_plot_no_per_family_outputs(table: tuple[Path, pd.DataFrame], tmp_path: Path) -> None:
    path, _ = table
    result = correlate([path], ["I1"], ["E1"], family_regex=r"org/\w", n_bootstrap=50, n_permutations=100)
    written = result.write(tmp_path / "out")
    assert "per_family" not in json.loads(written["json"].read_text())
    assert "Per-family" not in written["report"].read_text()
    assert not list((tmp_path / "out").glob("family_*.png"))


def test_unknown_family_plot_pair_is_a_clear_error_before_writing(
    table: tuple[Path, pd.DataFrame], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path, _ = table
    result = correlate([path], ["I1"], ["E1"], family_regex=r"org/\w", n_bootstrap=50, n_permutations=100)
    out = tmp_path / "out"
    message = (
        r"family plot E1 vs I1: not a computed pair; intrinsic columns: \['I1'\], "
        r"extrinsic columns: \['E1'\]"
    )
    with pytest.raises(CorrelationInputError, match=message):
        result.write(out, family_plot=[("I1", "E1"), ("E1", "I1")])
    assert not out.exists()  # nothing written
    from mteb_evalrank.cli import main

    args = ["correlate", str(path), "--intrinsic", "I1", "--extrinsic", "E1", "--family-regex", r"org/\w",
            "--bootstrap", "50", "--permutations", "100", "--out", str(out)]  # fmt: skip
    with pytest.raises(SystemExit, match="family plot I2 vs E1: not a computed pair"):
        main([*args, "--family-plot", "I2", "E1"])
    main([*args, "--family-plot", "I1", "E1"])
    assert "family plot I1 vs E1" in capsys.readouterr().out
    assert (out / "family_I1__E1.png").is_file() and "per_family" in json.loads(
        (out / "correlations.json").read_text()
    )
