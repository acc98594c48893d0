"""Word-similarity and STR 2021 STS tasks: data fidelity, scores against independent
computations (hand-computed and numpy/scipy), malformed sources, the mteb CLI."""

from __future__ import annotations

import csv
import importlib
import json
import math
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import datasets
import mteb
import numpy as np
import pytest
from scipy.stats import spearmanr
from second_process import second_process

import mteb_evalrank  # noqa: F401
from mteb_evalrank.data.layout import BuiltDataset
from mteb_evalrank.data.registry import STR_2021, WORD_SIMILARITY
from mteb_evalrank.data.sources import SourceFormatError
from mteb_evalrank.models.static import StaticWordEmbeddings
from mteb_evalrank.tasks import STR2021
from mteb_evalrank.tasks.word_similarity import WORD_SIMILARITY_TASKS

BIN = Path(sys.executable).parent
WORD_DIR = "evalrank/word_similarity"
STR_CSV = "evalrank/sent_similarity/STR/sem_text_rel_ranked.csv"
GLOVE = "evalrank/glove.6B.50d"
TASK_OF_CONFIG = {task.metadata.dataset["name"]: task for task in WORD_SIMILARITY_TASKS}
EXPECTED_PAIRS = {
    "ws-353-all": 353, "ws-353-rel": 252, "ws-353-sim": 203, "mc-30": 30, "rg-65": 65,
    "rw-stanford": 2034, "men-tr-3k": 3000, "mturk-287": 287, "mturk-771": 771, "yp-130": 130,
    "simlex-999": 999, "verb-143": 144, "simverb-3500": 3500,
}  # fmt: skip


def non_empty_lines(path: Path) -> list[str]:
    """The file's non-blank lines (any of LF / CRLF line ends), read independently of the recipe."""
    return [line for line in path.read_bytes().decode("utf-8").splitlines() if line.strip()]


def mteb_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine in float64; a zero vector counts as the zero unit vector.

    That is the convention of mteb's STS cosine (``1 - paired_cosine_distances``,
    which normalises a zero row to zero): one zero side gives 0.5, two zero sides give 1.0.
    """
    a, b = a.astype(np.float64), b.astype(np.float64)
    cos = np.empty(len(a))
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        nx, ny = np.linalg.norm(x), np.linalg.norm(y)
        if nx > 0 and ny > 0:
            cos[i] = float(x @ y) / (nx * ny)
        else:
            cos[i] = 1.0 if nx == ny == 0 else 0.5
    return cos


def zero_cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """Row-wise cosine in float64; 0 when either side is the zero vector (word-similarity tasks)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    cos = np.zeros(len(a))
    for i, (x, y) in enumerate(zip(a, b, strict=True)):
        nx, ny = math.sqrt(float(x @ x)), math.sqrt(float(y @ y))
        if nx > 0 and ny > 0:
            cos[i] = float(x @ y) / (nx * ny)
    return cos


def independent_spearman(
    model: StaticWordEmbeddings, rows: datasets.Dataset, cosine: Callable[..., np.ndarray] = mteb_cosine
) -> tuple[float, float]:
    """Spearman of float64 cosines with the scores, and the tolerance to compare it with mteb's.

    mteb computes the cosines of float32 embeddings in float32 (resolution ~1e-7). When two
    distinct cosines lie closer than 1e-6, float32 and float64 may order them differently and
    Spearman may move by up to ~12/n^2 per swap: tolerance 1e-6. Otherwise the rankings, hence
    the correlations, must agree: tolerance 1e-9.
    """
    cos = cosine(model.embed(rows["sentence1"]), model.embed(rows["sentence2"]))
    gaps = np.diff(np.sort(cos))
    near_ties = bool(np.any((gaps > 0) & (gaps < 1e-6)))
    return float(spearmanr(cos, list(rows["score"])).statistic), 1e-6 if near_ties else 1e-9


def evaluate(model: object, task: mteb.AbsTask) -> dict[str, float]:
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    return result.task_results[0].scores["test"][0]


# ------------------------------------------------------------------------------------ data
def test_every_non_empty_line_is_a_lower_cased_row(built: dict[str, BuiltDataset], source: Path) -> None:
    data = built["word-similarity"]
    word_sets = WORD_SIMILARITY.recipe.WORD_SETS
    assert sorted(p.name for p in (source / WORD_DIR).glob("*.txt")) == sorted(s.filename for s in word_sets)
    assert list(data.configs) == [s.config for s in word_sets]
    for word_set in word_sets:
        lines = non_empty_lines(source / word_set.source)
        table = data.configs[word_set.config]["test"]
        assert len(table) == len(lines) == EXPECTED_PAIRS[word_set.config], word_set.config
        fields = [line.split() for line in lines]
        assert table["sentence1"] == [f[0].lower() for f in fields]
        assert table["sentence2"] == [f[1].lower() for f in fields]
        assert table["score"] == [float(f[2]) for f in fields]
        assert table.features["score"].dtype == "float64"
        assert all(w == w.lower() and w.strip() == w for w in [*table["sentence1"], *table["sentence2"]])
    # WS-353 is the only set with capitals; they are lower-cased, not dropped
    rel = data.configs["ws-353-rel"]["test"]
    assert ("jerusalem", "israel") in zip(rel["sentence1"], rel["sentence2"], strict=True)
    # snapshot: copied from the code's output at 03f244d; guards against regressions, not correctness
    assert data.stats["ws-353-all"]["n_lines_lowercased"] == 18
    # repeated and identical-word pairs are kept
    assert data.stats["ws-353-all"]["n_repeated_pairs"] == 1
    assert data.stats["n_pairs_total"] == sum(EXPECTED_PAIRS.values()) == 11768


def test_configs_load_offline_by_name(built: dict[str, BuiltDataset]) -> None:
    for spec in (WORD_SIMILARITY, STR_2021):
        for config, data in built[spec.family].configs.items():
            loaded = datasets.load_dataset(spec.hub_id, name=config, split="test", revision=spec.revision)
            assert loaded.to_dict() == data["test"].to_dict(), (spec.hub_id, config)


def test_task_metadata_scales_names_and_benchmark(built: dict[str, BuiltDataset]) -> None:
    registry = importlib.import_module("mteb.get_tasks")._TASKS_REGISTRY
    word_sets = WORD_SIMILARITY.recipe.WORD_SETS
    assert [task.metadata.dataset["name"] for task in WORD_SIMILARITY_TASKS] == [s.config for s in word_sets]
    for word_set in word_sets:
        task = TASK_OF_CONFIG[word_set.config]
        assert task.metadata.dataset == {
            "path": WORD_SIMILARITY.hub_id,
            "revision": WORD_SIMILARITY.revision,
            "name": word_set.config,
        }
        assert (task.min_score, task.max_score) == (word_set.min_score, word_set.max_score)
        scores = built["word-similarity"].configs[word_set.config]["test"]["score"]
        assert task.min_score <= min(scores) and max(scores) <= task.max_score
        assert task.metadata.type == "STS" and task.metadata.main_score == "cosine_spearman"
    for task in (*WORD_SIMILARITY_TASKS, STR2021):
        assert registry[task.metadata.name] is task  # registered, and no mteb task of that name
    assert (STR2021.min_score, STR2021.max_score) == (0, 1)
    benchmark = mteb.get_benchmark("EvalRank-WordSimilarity")
    assert [t.metadata.name for t in benchmark.tasks] == [t.metadata.name for t in WORD_SIMILARITY_TASKS]


def test_str_pairs_are_split_on_the_newline(built: dict[str, BuiltDataset], source: Path) -> None:
    table = built["str-2021"].configs["default"]["test"]
    with (source / STR_CSV).open(encoding="utf-8", newline="") as handle:
        raw = list(csv.DictReader(handle))
    assert len(table) == len(raw) == 5500
    first = raw[0]["Text"].split("\n")
    assert [table[0]["sentence1"], table[0]["sentence2"]] == first
    assert first == ["It that happens, just pull the plug.", "if that ever happens, just pull the plug."]
    assert table["sentence1"] == [r["Text"].split("\n")[0] for r in raw]
    assert table["sentence2"] == [r["Text"].split("\n")[1] for r in raw]
    assert table["score"] == [float(r["Score"]) for r in raw]
    assert table["pair_id"] == [r["PairID"] for r in raw]
    sides = [*table["sentence1"], *table["sentence2"]]
    assert all(side.strip() and "\n" not in side for side in sides)
    assert min(len(side) for side in sides) > 1  # sentences, not characters
    assert min(table["score"]) == 0.0 and max(table["score"]) == 1.0


# ------------------------------------------------------------------------ malformed sources
@second_process
def test_malformed_word_line_names_file_and_line(tmp_path: Path) -> None:
    read = WORD_SIMILARITY.recipe.read_word_pairs
    path = tmp_path / "EN-BAD.txt"
    path.write_bytes(b"Cat\tdog\t7.5\r\n\r\nbird 8\r\n")  # the blank line 2 still counts
    with pytest.raises(SourceFormatError, match=r"EN-BAD\.txt:3: expected 'word1 word2 score'"):
        read(path, 0, 10)
    for body, problem in (
        ("cat dog 1\nnew york city 5\n", r"EN-BAD\.txt:2: expected 'word1 word2 score'"),
        ("cat dog high\n", r"EN-BAD\.txt:1: the score 'high' is not a number"),
        ("cat dog 1\ncat dog 11\n", r"EN-BAD\.txt:2: the score 11 is outside the set's scale \[0, 10\]"),
        ("cat dog nan\n", r"EN-BAD\.txt:1: the score nan is outside"),
        ("\n \n", r"EN-BAD\.txt: the file holds no word pairs"),
    ):
        path.write_text(body, encoding="utf-8")
        with pytest.raises(SourceFormatError, match=problem):
            read(path, 0, 10)
    path.write_text("Cat\tdog\t7.5\n\nbird  fish 2\n", encoding="utf-8")
    assert read(path, 0, 10) == [("Cat", "dog", 7.5), ("bird", "fish", 2.0)]


def test_build_stops_at_a_malformed_set_file(source: Path, tmp_path: Path) -> None:
    folder = tmp_path / WORD_DIR
    folder.mkdir(parents=True)
    for path in (source / WORD_DIR).glob("*.txt"):
        (folder / path.name).symlink_to(path)
    (folder / "EN-RG-65.txt").unlink()
    (folder / "EN-RG-65.txt").write_text("gem\tjewel\t3.94\nmidday\tnoon\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"EN-RG-65\.txt:2: "):
        WORD_SIMILARITY.recipe.build(tmp_path)


@second_process
def test_malformed_str_row_names_file_and_line(tmp_path: Path) -> None:
    read = STR_2021.recipe.read_str_pairs
    path = tmp_path / "str.csv"
    header = "Index,SourceID,SubsetID,PairID,Text,Score\n"
    good = '0,STS,STS,STS_1,"A dog runs.\nA dog is running.",0.9\n'
    for row, problem in (
        ('1,STS,STS,STS_2,"no newline here",0.5\n', r"str\.csv:4: Text must hold two sentences"),
        ('1,STS,STS,STS_2,"one\ntwo\nthree",0.5\n', r"str\.csv:4: Text must hold two sentences"),
        ('1,STS,STS,STS_2,"A cat.\n  ",0.5\n', r"str\.csv:4: pair 'STS_2' has an empty sentence"),
        ('1,STS,STS,STS_2,"A cat.\nA dog.",1.5\n', r"str\.csv:4: the score 1\.5 is outside \[0, 1\]"),
        ('1,STS,STS,STS_1,"A cat.\nA dog.",0.5\n', r"str\.csv:4: PairID 'STS_1' is repeated"),
        ('1,STS,STS_2,"A cat.\nA dog.",0.5\n', r"str\.csv:4: expected 6 fields, got 5"),
    ):
        path.write_text(header + good + row, encoding="utf-8")
        with pytest.raises(SourceFormatError, match=problem):
            read(path)
    path.write_text("Text,Score\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"str\.csv:1: expected the header"):
        read(path)
    path.write_text(header + good, encoding="utf-8")
    assert read(path) == [
        {"sentence1": "A dog runs.", "sentence2": "A dog is running.", "score": 0.9,
         "pair_id": "STS_1", "source_id": "STS"},
    ]  # fmt: skip


# ---------------------------------------------------------------------------------- scores
@pytest.mark.usefixtures("built")
def test_hand_computed_spearman_on_five_pairs() -> None:
    task = mteb.get_task("WordSimMC30")
    task.load_data()
    task.dataset["test"] = task.dataset["test"].select(range(5))
    rows = task.dataset["test"]
    assert list(zip(rows["sentence1"], rows["sentence2"], strict=True)) == [
        ("car", "automobile"), ("gem", "jewel"), ("journey", "voyage"), ("boy", "lad"), ("coast", "shore"),
    ]  # fmt: skip
    assert rows["score"] == [3.92, 3.84, 3.84, 3.76, 3.70]
    vectors = {
        "car": [1, 0], "automobile": [0.6, 0.8],  # cos 0.6
        "gem": [0, 1], "jewel": [0, 2],  # cos 1.0
        "journey": [1, 0], "voyage": [0, 1],  # cos 0.0
        "boy": [1, 0], "lad": [0.8, 0.6],  # cos 0.8
        "coast": [1, 0], "shore": [-0.6, 0.8],  # cos -0.6
    }  # fmt: skip
    model = StaticWordEmbeddings(list(vectors), np.array(list(vectors.values()), dtype=np.float64))
    # gold ranks (ties averaged) 5, 3.5, 3.5, 2, 1; cosine ranks 3, 5, 2, 4, 1
    # -> centred products sum 3.5, squares 9.5 and 10: rho = 3.5 / sqrt(95)
    expected = 3.5 / math.sqrt(95)
    assert float(spearmanr([0.6, 1.0, 0.0, 0.8, -0.6], list(rows["score"])).statistic) == pytest.approx(
        expected
    )
    scores = evaluate(model, task)
    assert scores["cosine_spearman"] == pytest.approx(expected, abs=1e-12)
    assert scores["main_score"] == scores["cosine_spearman"]
    assert scores["coverage"] == 1.0


@pytest.mark.usefixtures("built")
def test_unknown_words_have_cosine_zero_and_are_counted() -> None:
    """A zero (unknown-word) embedding has cosine 0 with everything, another zero included.

    mteb's own STS cosine scores a pair of two unknown words 1.0 (perfect agreement) and a
    pair with one unknown word 0.5. Hand-worked on the first five pairs of MC-30 with a
    two-word vocabulary per pair (see ``test_hand_computed_spearman_on_five_pairs``).
    """
    task = mteb.get_task("WordSimMC30")
    task.load_data()
    task.dataset["test"] = task.dataset["test"].select(range(5))
    gold = list(task.dataset["test"]["score"])  # 3.92, 3.84, 3.84, 3.76, 3.70
    vectors = {
        "car": [1, 0], "automobile": [0.6, 0.8],  # cos 0.6
        "gem": [0, 1], "jewel": [0, 2],  # cos 1.0
        "journey": [1, 0], "voyage": [0, 1],  # cos 0.0
        "boy": [1, 0], "lad": [0.8, 0.6],  # cos 0.8
    }  # fmt: skip
    # ("coast", "shore") both unknown: cos 0 (mteb: 1.0)
    model = StaticWordEmbeddings(list(vectors), np.array(list(vectors.values()), dtype=np.float64))
    scores = evaluate(model, task)
    # gold ranks 5, 3.5, 3.5, 2, 1; cosines 0.6, 1, 0, 0.8, 0 -> ranks 3, 5, 1.5, 4, 1.5
    # centred products 0 + 1 - 0.75 - 1 + 3 = 2.25, squares 9.5 and 9.5: rho = 2.25 / 9.5
    # (mteb's 1.0 for the last pair would give -5.25 / 9.5)
    assert float(spearmanr([0.6, 1.0, 0.0, 0.8, 0.0], gold).statistic) == pytest.approx(2.25 / 9.5)
    assert scores["cosine_spearman"] == pytest.approx(2.25 / 9.5, abs=1e-12)
    assert scores["main_score"] == scores["cosine_spearman"]
    assert scores["coverage"] == pytest.approx(4 / 5)
    covered = float(spearmanr([0.6, 1.0, 0.0, 0.8], gold[:4]).statistic)
    assert scores["covered_cosine_spearman"] == pytest.approx(covered, abs=1e-12)
    # one unknown side ("shore"): cosine 0 as well (mteb: 0.5), the same rho
    vectors["coast"] = [1, 0]
    model = StaticWordEmbeddings(list(vectors), np.array(list(vectors.values()), dtype=np.float64))
    scores = evaluate(model, task)
    assert scores["cosine_spearman"] == pytest.approx(2.25 / 9.5, abs=1e-12)
    assert scores["coverage"] == pytest.approx(4 / 5)


@pytest.mark.usefixtures("built")
@pytest.mark.slow  # glove.6B.50d over all 13 sets
def test_glove_on_every_set_matches_numpy_and_scipy() -> None:
    """The task's ``cosine_spearman`` equals numpy cosines + ``scipy.stats.spearmanr``.

    On every pair, an unknown word's pair having cosine 0 (``zero_cosine``); 1e-9, or 1e-6
    where float32 near-ties exist (see ``independent_spearman``). glove.6B.50d knows both
    words of every pair except 252 of RW and 2 of SimVerb-3500 (counted here from its
    vocabulary), which is the task's ``coverage``.
    """
    glove = mteb.get_model(GLOVE)
    n_unknown, tolerances = {}, {}
    for task_cls in WORD_SIMILARITY_TASKS:
        task = mteb.get_task(task_cls.metadata.name)
        task.load_data()
        rows = task.dataset["test"]
        known = [i for i, pair in enumerate(zip(rows["sentence1"], rows["sentence2"], strict=True))
                 if all(word in glove.index for word in pair)]  # fmt: skip
        n_unknown[task_cls.metadata.dataset["name"]] = len(rows) - len(known)
        expected, tolerance = independent_spearman(glove, rows, zero_cosine)
        tolerances[task_cls.metadata.dataset["name"]] = tolerance
        scores = evaluate(glove, task)
        assert scores["cosine_spearman"] == pytest.approx(expected, abs=tolerance), task_cls.metadata.name
        assert scores["coverage"] == pytest.approx(len(known) / len(rows), abs=1e-12)
        covered, _ = independent_spearman(glove, rows.select(known), zero_cosine)
        assert scores["covered_cosine_spearman"] == pytest.approx(covered, abs=tolerance)
    # snapshot: this test's brute-force value at 03f244d; guards against data regressions
    assert {name: n for name, n in n_unknown.items() if n} == {"rw-stanford": 252, "simverb-3500": 2}
    assert sum(t == 1e-9 for t in tolerances.values()) >= 10  # exact agreement is the rule


def test_data_reproduce_the_evalrank_reference_log(built: dict[str, BuiltDataset], source: Path) -> None:
    """Our 13 configs scored the EvalRank way reproduce its published toy-embedding log.

    The EvalRank toolkit (``w_model.py``; log ``scripts/word_cos_no_post_processing/
    w_model_1.log`` with normalization and centralization on) mean-centres the vectors,
    normalises them, gives an unknown word the mean of the normalised vectors and scores a
    pair by the dot product. Matching all 13 Spearman values checks every pair and score.
    """
    reference = {
        "ws-353-all": 0.2219919266844553, "ws-353-sim": 0.2193772937124389,
        "ws-353-rel": 0.28533818270277184, "mc-30": 0.2672797688343043,
        "rg-65": 0.08680656485014356, "rw-stanford": -0.1029873723335357,
        "men-tr-3k": 0.09696928726165306, "mturk-287": 0.3304633593019574,
        "mturk-771": 0.26115354602697816, "yp-130": 0.12143060821284002,
        "simlex-999": 0.03417856843081391, "verb-143": 0.2292011785031184,
        "simverb-3500": -0.032268959118573616,
    }  # fmt: skip
    toy = StaticWordEmbeddings.from_file(source / "evalrank" / "word_emb" / "toy_emb.txt")
    centred = toy.vectors - toy.vectors.mean(axis=0)
    unit = centred / np.linalg.norm(centred, axis=1, keepdims=True)
    unknown = unit.mean(axis=0)
    for config, value in reference.items():
        rows = built["word-similarity"].configs[config]["test"]

        def vector(word: str) -> np.ndarray:
            return unit[toy.index[word]] if word in toy.index else unknown

        dots = [
            float(vector(a) @ vector(b)) for a, b in zip(rows["sentence1"], rows["sentence2"], strict=True)
        ]
        assert float(spearmanr(dots, list(rows["score"])).statistic) == pytest.approx(value, abs=1e-6), config


def run_cli(*args: str) -> None:
    result = subprocess.run(list(args), capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]


@pytest.mark.slow
def test_mteb_cli_word_set_and_str(built: dict[str, BuiltDataset], tmp_path: Path) -> None:
    run_cli(str(BIN / "mteb"), "run", "-t", "WordSimSimLex999", "STR2021", "-m", GLOVE,
            "--output-folder", str(tmp_path), "--overwrite-strategy", "always")  # fmt: skip
    glove = mteb.get_model(GLOVE)
    for task, rows in (
        ("WordSimSimLex999", built["word-similarity"].configs["simlex-999"]["test"]),
        ("STR2021", built["str-2021"].configs["default"]["test"]),
    ):
        files = list((tmp_path / "results" / GLOVE.replace("/", "__")).glob(f"*/{task}.json"))
        assert len(files) == 1, files
        scores = json.loads(files[0].read_text())["scores"]["test"][0]
        assert scores["main_score"] == scores["cosine_spearman"]
        # the result file holds 6 decimals
        cosine = zero_cosine if task.startswith("WordSim") else mteb_cosine
        expected, tolerance = independent_spearman(glove, rows, cosine)
        assert scores["main_score"] == pytest.approx(expected, abs=tolerance + 5e-7), task
        assert scores["main_score"] == round(scores["main_score"], 6)
