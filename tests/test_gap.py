"""Evaluation-gap diagnostics (Abe et al., 2022): slicing maths on hand-made rows, the
``wmt17-da`` / ``stsb-granularity`` builds checked against the raw files read independently,
the five tasks through ``mteb run`` (GloVe, scores recomputed with numpy/scipy), ``diagnose``."""

from __future__ import annotations

import csv
import json
import subprocess
import sys
from pathlib import Path

import datasets
import mteb
import numpy as np
import pytest
from scipy.stats import kendalltau, pearsonr, spearmanr
from sklearn.metrics.pairwise import paired_cosine_distances
from test_word_similarity import mteb_cosine

import mteb_evalrank  # noqa: F401
from mteb_evalrank.data.layout import BuiltDataset
from mteb_evalrank.data.registry import WMT17_DA
from mteb_evalrank.data.sources import SourceFormatError
from mteb_evalrank.evaluation import slices
from mteb_evalrank.tasks import GAP_TASKS, WMT17DA

BIN = Path(sys.executable).parent
GLOVE = "evalrank/glove.6B.50d"
LPS = ("cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en")
STSB = "evalrank/sent_similarity/STS/STSBenchmark"


# ------------------------------------------------------------------ slicing maths, by hand
def test_pair_length_and_coverage_by_hand() -> None:
    assert slices.pair_length("a b c", "d e") == 2.5
    vocab = slices.vocabulary(["The cat", "a DOG ."])
    assert vocab == {"the", "cat", "a", "dog", "."}
    # tokens {the, cat, sat, dog, mat}: the, cat, dog covered -> 3/5; repeated "the" counts once
    assert slices.vocabulary_coverage("The cat sat", "the dog the mat", vocab) == pytest.approx(3 / 5)
    assert slices.vocabulary_coverage("THE", "Cat", vocab) == 1.0
    assert slices.vocabulary_coverage("zebra", "yak", vocab) == 0.0
    with pytest.raises(ValueError, match="empty pair"):
        slices.vocabulary_coverage(" ", "", vocab)


def test_bands_are_right_closed_and_reject_outliers() -> None:
    labels = slices.band_labels([0.0, 1.0, 1.0001, 2.0, 3.5, 5.0], slices.STS_BAND_EDGES)
    assert labels.tolist() == [0, 0, 1, 1, 3, 4]
    with pytest.raises(ValueError, match=r"outside \[0, 5\].*row 1"):
        slices.band_labels([1.0, 5.5], slices.STS_BAND_EDGES)
    with pytest.raises(ValueError, match="strictly increasing"):
        slices.band_labels([1.0], [0, 2, 2])
    got = slices.gold_slices([0.5, 4.2, 1.0, 3.0, 2.2], slices.STS_BAND_EDGES)
    assert {k: v.tolist() for k, v in got.items()} == {
        "gold-0-1": [0, 2], "gold-1-2": [], "gold-2-3": [3, 4], "gold-3-4": [], "gold-4-5": [1],
    }  # fmt: skip


def test_quartiles_by_hand() -> None:
    # 1..8: linear quantiles Q1 = 2.75, Q2 = 4.5, Q3 = 6.25
    scores = [8, 1, 7, 2, 6, 3, 5, 4]
    assert slices.quartile_edges(scores) == (1.0, 2.75, 4.5, 6.25, 8.0)
    got = {k: sorted(scores[i] for i in v) for k, v in slices.gold_slices(scores).items()}
    assert got == {"gold-low": [1, 2], "gold-midlow": [3, 4], "gold-midhigh": [5, 6], "gold-high": [7, 8]}
    with pytest.raises(ValueError, match="tied"):
        slices.quartile_edges([1, 1, 1, 2])


def test_extremes_break_ties_by_row() -> None:
    high, low = slices.extremes([0.5, 1.0, 1.0, 0.2, 1.0, 0.1], k=2)
    assert high.tolist() == [1, 2]
    assert low.tolist() == [3, 5]
    with pytest.raises(ValueError, match="overlap"):
        slices.extremes([1, 2, 3], k=2)


def test_length_window_follows_the_reference_histogram() -> None:
    # window [0, 10), bins [0, 5) and [5, 10): reference shares 3/4 and 1/4
    reference = [1, 2, 3, 6, 40]
    lengths = [1, 2, 2, 3, 4, 4.5, 7, 12, 10]  # bin 0: rows 0-5 (6), bin 1: row 6 (1); 12 and 10 outside
    # largest N with 3/4 N <= 6 and 1/4 N <= 1 -> N = 4: 3 rows of bin 0 and row 6
    for seed in range(5):
        rows = slices.sample_length_window(lengths, reference, (0, 10), seed=seed)
        assert len(rows) == 4 and 6 in rows.tolist()
        assert set(rows.tolist()) - {6} <= {0, 1, 2, 3, 4, 5}
        assert rows.tolist() == sorted(rows.tolist())
        assert rows.tolist() == slices.sample_length_window(lengths, reference, (0, 10), seed=seed).tolist()
    with pytest.raises(ValueError, match="no reference pair"):
        slices.sample_length_window(lengths, reference, (50, 60))


def test_slice_dataset_on_a_hand_made_dataset() -> None:
    data = datasets.Dataset.from_dict(
        {
            "sentence1": ["a cat", "the dog runs fast", "x y", "a b"],
            "sentence2": ["a cat sat", "a dog", "z", "b"],
            "score": [0.1, 0.9, 0.5, 0.7],
        }
    )
    reference = datasets.Dataset.from_dict({"sentence1": ["a cat"], "sentence2": ["the dog"], "score": [1.0]})
    by_gold = slices.slice_dataset(data, "gold", edges=[0, 0.5, 1])
    assert by_gold["gold-0-0.5"]["score"] == [0.1, 0.5] and by_gold["gold-0.5-1"]["score"] == [0.9, 0.7]
    by_coverage = slices.slice_dataset(data, "coverage", reference=reference, k=1)
    # coverages: 2/3, 3/5, 0, 1/2 -> high row 0, low row 2
    assert by_coverage["coverage-high"]["sentence1"] == ["a cat"]
    assert by_coverage["coverage-low"]["sentence1"] == ["x y"]
    by_length = slices.slice_dataset(data, "length", reference=reference, windows=[(0, 5)])
    # reference pair length 2 -> all mass in bin [0, 5); every row (lengths 2.5, 3, 1.5, 1.5) qualifies
    assert by_length["length-0-5"]["sentence1"] == data["sentence1"]
    with pytest.raises(ValueError, match="needs a reference"):
        slices.slice_dataset(data, "coverage")


# --------------------------------------------------------------------- builds vs raw files
def raw_wmt(source: Path) -> list[dict[str, object]]:
    """Every row of the seven TSV files, read with the csv module (independent of the recipe)."""
    rows = []
    for lp in LPS:
        with (source / f"wmt17-da/testset_{lp}.tsv").open(encoding="utf-8", newline="") as handle:
            for record in csv.DictReader(handle, delimiter="\t", quoting=csv.QUOTE_NONE):
                rows.append({"ref": record["reference"], "mt": record["translation"],
                             "score": float(record["HUMAN_score"]), "lp": lp})  # fmt: skip
    return rows


def test_wmt17_build_matches_the_raw_files(built: dict[str, BuiltDataset], source: Path) -> None:
    configs = built["wmt17-da"].configs
    raw = raw_wmt(source)
    table = configs["all"]["test"]
    assert len(table) == len(raw) == 3795
    assert table["sentence1"] == [r["ref"] for r in raw]
    assert table["sentence2"] == [r["mt"] for r in raw]
    assert table["score"] == [r["score"] for r in raw]
    for lp in LPS:
        assert len(configs[lp]["test"]) == (435 if lp == "lv-en" else 560)
        assert set(configs[lp]["test"]["lp"]) == {lp}


def test_slices_of_the_build_brute_force(built: dict[str, BuiltDataset], source: Path) -> None:
    configs = built["wmt17-da"].configs
    raw = raw_wmt(source)
    by_pair = {(r["lp"], r["ref"], r["mt"]): r for r in raw}
    stsb_text = []
    for split in ("train", "dev", "test"):
        for line in (source / STSB / f"sts-{split}.csv").read_text(encoding="utf-8").splitlines():
            stsb_text += line.split("\t")[5:7]
    vocab = {w.lower() for text in stsb_text for w in text.split()}
    assert len(stsb_text) == 2 * 8628

    def coverage(r: dict[str, object]) -> float:
        words = {w.lower() for w in f"{r['ref']} {r['mt']}".split()}
        return len(words & vocab) / len(words)

    cov = sorted((coverage(r), i) for i, r in enumerate(raw))
    high = configs["coverage-high"]["test"]
    high_keys = list(zip(high["lp"], high["sentence1"], high["sentence2"], strict=True))
    assert len(high) == 100 and all(coverage(by_pair[k]) == 1.0 for k in high_keys)
    low = configs["coverage-low"]["test"]
    expected_low = {i for _, i in cov[:100]}
    assert {
        raw.index(by_pair[k]) for k in zip(low["lp"], low["sentence1"], low["sentence2"], strict=True)
    } == expected_low
    # snapshot: this test's brute-force value at 03f244d; guards against data regressions
    assert np.mean([c for c, _ in cov]) == pytest.approx(0.8665, abs=1e-4)  # paper (own tokeniser): 0.882

    scores = sorted(r["score"] for r in raw)
    q1, q2, q3 = np.quantile(scores, [0.25, 0.5, 0.75])
    # snapshot: this test's brute-force value at 03f244d; guards against data regressions
    assert (round(q1, 2), round(q2, 2), round(q3, 2)) == (-0.47, -0.03, 0.43)  # paper: -0.47, -0.03, 0.42
    bands = {
        "gold-low": (-np.inf, q1),
        "gold-midlow": (q1, q2),
        "gold-midhigh": (q2, q3),
        "gold-high": (q3, np.inf),
    }
    for name, (lo, hi) in bands.items():
        expected = sum(1 for s in scores if lo < s <= hi)
        assert len(configs[name]["test"]) == expected
        assert all(lo < s <= hi for s in configs[name]["test"]["score"]), name

    stsb_lengths = np.array(
        [(len(a.split()) + len(b.split())) / 2 for a, b in zip(stsb_text[::2], stsb_text[1::2], strict=True)]
    )
    for lo in range(0, 35, 5):
        rows = configs[f"length-{lo}-{lo + 40}"]["test"]
        lengths = np.array(
            [
                (len(a.split()) + len(b.split())) / 2
                for a, b in zip(rows["sentence1"], rows["sentence2"], strict=True)
            ]
        )
        assert lengths.min() >= lo and lengths.max() < lo + 40
        edges = np.arange(lo, lo + 45, 5)
        share = np.histogram(stsb_lengths, edges)[0] / np.sum((stsb_lengths >= lo) & (stsb_lengths < lo + 40))
        counts = np.histogram(lengths, edges)[0]
        assert np.all(np.abs(counts - len(rows) * share) < len(share)), lo  # floor(N p_j) per bin
        assert len(set(zip(rows["lp"], rows["pair_id"], strict=True))) == len(rows)  # no row twice
    # snapshot: copied from the code's output at 03f244d; guards against regressions, not correctness
    # (the loop above checks each window against the reference histogram, to floor(N p_j) per bin)
    assert [len(configs[f"length-{lo}-{lo + 40}"]["test"]) for lo in range(0, 35, 5)] == [
        560, 556, 1230, 1490, 1116, 694, 468,
    ]  # paper's Table 4: 481, 481, 1225, 1484, 1112, 715, 465  # fmt: skip


def test_stsb_granularity_bands(built: dict[str, BuiltDataset], source: Path) -> None:
    lines = (source / STSB / "sts-test.csv").read_text(encoding="utf-8").splitlines()
    gold = [float(line.split("\t")[4]) for line in lines]
    configs = built["stsb-granularity"].configs
    limits = {
        "gold-0-1": (-1, 1),
        "gold-1-2": (1, 2),
        "gold-2-3": (2, 3),
        "gold-3-4": (3, 4),
        "gold-4-5": (4, 5),
    }
    for name, (lo, hi) in limits.items():
        assert len(configs[name]["test"]) == sum(1 for s in gold if lo < s <= hi), name
    assert sum(len(c["test"]) for c in configs.values()) == len(gold) == 1379


def test_malformed_wmt_row_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "testset_cs-en.tsv"
    header = "LP\tsource\ttranslation\treference\tHUMAN_score\tsentBLEU\n"
    path.write_text(header + "cs-en\ts\tt\tr\t0.5\t0.1\nde-en\ts\tt\tr\t0.5\t0.1\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"testset_cs-en.tsv:3: LP is 'de-en'"):
        WMT17_DA.recipe.read_wmt17_da(path, "cs-en")
    path.write_text(header + "cs-en\ts\tt\tr\tnan\t0.1\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r":2: HUMAN_score nan is not finite"):
        WMT17_DA.recipe.read_wmt17_da(path, "cs-en")


# ---------------------------------------------------------------------------- mteb tasks
def test_task_metadata_and_score_range(built: dict[str, BuiltDataset]) -> None:
    assert [t.metadata.name for t in GAP_TASKS] == [
        "WMT17DA", "WMT17DAPooled", "WMT17DALength", "WMT17DAVocabCoverage", "WMT17DAGranularity",
        "STSBenchmarkGranularity",
    ]  # fmt: skip
    for task in GAP_TASKS:
        assert task.metadata.main_score == "cosine_pearson"
        family = "stsb-granularity" if task.__name__ == "STSBenchmarkGranularity" else "wmt17-da"
        assert set(task().hf_subsets) <= set(built[family].configs), task
        scores = [s for name in task().hf_subsets for s in built[family].configs[name]["test"]["score"]]
        assert task.min_score <= min(scores) and max(scores) <= task.max_score, (
            task
        )  # affine map kept increasing


@pytest.mark.slow
def test_mteb_run_glove_all_gap_tasks(built: dict[str, BuiltDataset], tmp_path: Path) -> None:
    names = [t.metadata.name for t in GAP_TASKS]
    command = [str(BIN / "mteb"), "run", "-t", *names, "-m", GLOVE, "--output-folder", str(tmp_path)]
    result = subprocess.run([*command, "--overwrite-strategy", "always"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    folder = next((tmp_path / "results" / GLOVE.replace("/", "__")).iterdir())
    glove = mteb.get_model(GLOVE)
    for task in GAP_TASKS:
        family = "stsb-granularity" if task.__name__ == "STSBenchmarkGranularity" else "wmt17-da"
        scores = {
            s["hf_subset"]: s
            for s in json.loads((folder / f"{task.metadata.name}.json").read_text())["scores"]["test"]
        }
        assert set(scores) == set(task().hf_subsets)
        for name in task().hf_subsets if task is WMT17DA else task().hf_subsets[:1]:
            rows = built[family].configs[name]["test"]
            cos = mteb_cosine(glove.embed(rows["sentence1"]), glove.embed(rows["sentence2"]))
            got = scores[name]
            assert got["main_score"] == got["cosine_pearson"]
            assert got["cosine_pearson"] == pytest.approx(pearsonr(cos, rows["score"]).statistic, abs=1e-5), (
                name
            )
            # Rank statistics: mteb's float32 cosines tie or swap pairs that float64 orders (e.g. identical
            # reference and output give 1 +- 1e-7), which moves Spearman/Kendall by ~1e-3 on 100 rows; so
            # they are recomputed from float32 cosines (sklearn, as mteb) with scipy.
            cos32 = 1 - paired_cosine_distances(
                glove.embed(rows["sentence1"]), glove.embed(rows["sentence2"])
            )
            assert got["cosine_spearman"] == pytest.approx(
                spearmanr(cos32, rows["score"]).statistic, abs=1e-6
            )
            assert got["cosine_kendall"] == pytest.approx(
                kendalltau(cos32, rows["score"]).statistic, abs=1e-6
            )


def test_degenerate_encoder_does_not_score(built: dict[str, BuiltDataset]) -> None:
    """A constant encoder gives constant cosines: the correlations are undefined (NaN), never high."""
    task = WMT17DA()
    task.load_data()
    data = task.dataset["cs-en"]["test"]
    metrics = task._calculate_scores(
        {"cosine_scores": [1.0] * len(data), "manhattan_distances": [0.0] * len(data),
         "euclidean_distances": [0.0] * len(data), "similarity_scores": None},
        list(map(task._normalize, data["score"])),
    )  # fmt: skip
    assert np.isnan(metrics["cosine_pearson"]) and np.isnan(metrics["cosine_kendall"])


# ------------------------------------------------------------------------------ diagnose
def test_diagnose_on_hand_made_files(tmp_path: Path) -> None:
    reference = tmp_path / "ref.tsv"
    reference.write_text("sentence1\tsentence2\nthe cat\ta dog sat down\n", encoding="utf-8")
    target = tmp_path / "target.jsonl"
    target.write_text(
        json.dumps({"sentence1": "The cat ran", "sentence2": "a bird"}) + "\n"
        + json.dumps({"sentence1": "the dog", "sentence2": "sat"}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "out"
    command = [str(BIN / "mteb-evalrank"), "diagnose", "--reference", str(reference), "--target", str(target)]
    result = subprocess.run([*command, "--out", str(out)], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    stats = json.loads((out / "diagnostics.json").read_text())
    assert stats["reference_vocabulary_size"] == 6
    entry = stats["datasets"][str(target)]
    # coverages: {the, cat, ran, a, bird} -> 3/5; {the, dog, sat} -> 1
    assert entry["coverage"]["mean"] == pytest.approx((3 / 5 + 1) / 2)
    assert entry["coverage"]["share_fully_covered"] == 0.5
    assert (
        entry["coverage_counts"][12] == 1 and entry["coverage_counts"][19] == 1
    )  # [0.6, 0.65) and [0.95, 1]
    # sentence lengths 3, 2, 2, 1 (all in [0, 5)); reference 2, 4
    assert entry["sentence_length_counts"][0] == 4 and entry["sentence_length"]["mean"] == 2.0
    assert stats["datasets"][str(reference)]["pair_length"]["mean"] == 3.0
    for name in ("sentence_length.png", "vocabulary_coverage.png"):
        assert (out / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert "| [0.95, 1] | 1 |" in (out / "diagnostics.md").read_text()
