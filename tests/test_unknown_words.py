"""The unknown-word conventions of the word-level tasks (``evaluation.unknown_words``): hand-worked
examples and the brute-force EvalRank reference, the task option, the vocabulary file and the
study's rule that redoes a result written before the conventions."""

from __future__ import annotations

import hashlib
import json
import math
import warnings
from pathlib import Path
from typing import Any

import mteb
import numpy as np
import pytest
from ranking_reference import brute_force_counts
from scipy.stats import spearmanr
from second_process import second_process

import mteb_evalrank
from mteb_evalrank.evaluation.ranking import RankCounts, rank_metrics
from mteb_evalrank.evaluation.unknown_words import VOCABULARY_ENV
from mteb_evalrank.models.static import StaticWordEmbeddings
from mteb_evalrank.result_files import OutdatedResultWarning, result_is_done

# MC-30's first five pairs (see test_word_similarity.py): gold 3.92, 3.84, 3.84, 3.76, 3.70. No two
# cosines are meant to tie: a cosine of 1 computed two ways may differ in the last bit
MC30_VECTORS = {
    "car": [1, 0], "automobile": [0.6, 0.8],  # cos 0.6
    "gem": [0, 1], "jewel": [0.28, 0.96],  # cos 0.96
    "journey": [1, 0], "voyage": [0, 1],  # cos 0.0
    "boy": [1, 0], "lad": [0.8, 0.6],  # cos 0.8
}  # fmt: skip


def scores_of(model: Any, task: Any) -> dict[str, Any]:
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    scores: dict[str, Any] = result.task_results[0].scores["test"][0]
    return scores


def static(vectors: dict[str, list[float]]) -> StaticWordEmbeddings:
    return StaticWordEmbeddings(list(vectors), np.array(list(vectors.values()), dtype=np.float64))


def mc30_five() -> Any:
    task = mteb.get_task("WordSimMC30")
    task.load_data()
    task.dataset["test"] = task.dataset["test"].select(range(5))
    return task


# ------------------------------------------------------------------------- word similarity
@pytest.mark.usefixtures("built")
def test_word_similarity_conventions_by_hand() -> None:
    """("coast", "shore") unknown. zero: cosine 0 (rho 2.25 / 9.5, test_word_similarity);
    mean_vector: both words are the mean of the 8 known words, (4.68, 4.36) / 8, so their cosine
    is 1: cosines 0.6, 0.96, 0, 0.8, 1 have ranks 2, 4, 1, 3, 5, the gold 5, 3.5, 3.5, 2, 1;
    centred products -2 + 0.5 - 1 + 0 - 4 = -6.5, squares 10 and 9.5: rho = -6.5 / sqrt(95).
    vocabulary {car, automobile, gem, jewel, boy, lad}: pairs 1, 2, 4 with cosines 0.6, 0.96, 0.8
    (ranks 1, 3, 2) against gold ranks 3, 2, 1: rho = 1 - 6 (4 + 1 + 1) / 24 = -0.5."""
    task = mc30_five()
    task.vocabulary = frozenset({"car", "automobile", "gem", "jewel", "boy", "lad"})
    scores = scores_of(static(MC30_VECTORS), task)
    gold = [3.92, 3.84, 3.84, 3.76, 3.70]
    assert float(spearmanr([0.6, 0.96, 0.0, 0.8, 1.0], gold).statistic) == pytest.approx(-6.5 / math.sqrt(95))
    assert scores["cosine_spearman"] == pytest.approx(2.25 / 9.5, abs=1e-12)
    assert scores["mean_vector_cosine_spearman"] == pytest.approx(-6.5 / math.sqrt(95), abs=1e-12)
    assert scores["vocabulary_cosine_spearman"] == pytest.approx(-0.5, abs=1e-12)
    assert scores["vocabulary_n_pairs"] == 3
    assert scores["coverage"] == pytest.approx(4 / 5)
    assert scores["main_score"] == scores["cosine_spearman"]  # the default is unchanged


@pytest.mark.usefixtures("built")
def test_mean_vector_with_one_unknown_word_by_hand() -> None:
    """ "coast" known as (1, 0), "shore" unknown: the mean of the 9 known words is (5.68, 4.36) / 9,
    cosine with (1, 0) = 5.68 / sqrt(5.68² + 4.36²) = 0.793: cosines 0.6, 0.96, 0, 0.8, 0.793 rank
    2, 5, 1, 4, 3;
    centred -1, 2, -2, 1, 0 against the gold's 2, 0.5, 0.5, -1, -2: rho = -3 / sqrt(10 * 9.5)."""
    task = mc30_five()
    task.unknown_words = "mean_vector"
    scores = scores_of(static(MC30_VECTORS | {"coast": [1, 0]}), task)
    assert scores["mean_vector_cosine_spearman"] == pytest.approx(-3 / math.sqrt(95), abs=1e-12)
    assert scores["main_score"] == scores["mean_vector_cosine_spearman"]
    assert "vocabulary_cosine_spearman" not in scores  # no vocabulary given


@pytest.mark.usefixtures("built")
@second_process
def test_the_option_picks_the_main_score_and_bad_options_are_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    words = tmp_path / "vocabulary.txt"
    words.write_text("\ufeffcar\r\nautomobile\r\n\r\ngem\njewel\nboy\nlad\n", encoding="utf-8")
    monkeypatch.setenv(VOCABULARY_ENV, str(words))
    task = mc30_five()
    task.unknown_words = "vocabulary"
    scores = scores_of(static(MC30_VECTORS), task)
    assert scores["main_score"] == scores["vocabulary_cosine_spearman"] == pytest.approx(-0.5, abs=1e-12)
    # the file the vocabulary scores came from is in the result: its name, its bytes' SHA-256, its 6 words
    digest = hashlib.sha256(words.read_bytes()).hexdigest()
    record = {"vocabulary_file": "vocabulary.txt", "vocabulary_sha256": digest, "vocabulary_words": 6}
    assert {key: scores[key] for key in record} == record
    task.unknown_words = "covered"
    scores = scores_of(static(MC30_VECTORS), task)
    assert scores["main_score"] == scores["covered_cosine_spearman"]
    monkeypatch.delenv(VOCABULARY_ENV)
    task.unknown_words = "vocabulary"
    with pytest.raises(ValueError, match=r"WordSimMC30: unknown_words='vocabulary' needs a vocabulary"):
        scores_of(static(MC30_VECTORS), task)
    task.unknown_words = "bogus"
    with pytest.raises(ValueError, match=r"WordSimMC30: unknown_words must be one of"):
        scores_of(static(MC30_VECTORS), task)


# ------------------------------------------------------------------------------- EvalRank
# Background a, b, c, d, e; the model knows a..d (exact binary values: their mean (0.75, 1.25)
# is exact), not e. Pairs a->b, c->e, e->a.
BACKGROUND = ["a", "b", "c", "d", "e"]
KNOWN = {"a": [4.0, 0.0], "b": [3.0, 1.0], "c": [0.0, 4.0], "d": [-4.0, 0.0]}
PAIRS = [(0, 1), (2, 4), (4, 0)]


def metrics_of(rows: np.ndarray, pairs: list[tuple[int, int]], prefix: str) -> dict[str, float]:
    """The rank metrics of the brute-force reference's counts (both similarities)."""
    out: dict[str, float] = {}
    for similarity in ("cosine", "euclidean"):
        q, p = [a for a, _ in pairs], [b for _, b in pairs]
        counts = RankCounts(*brute_force_counts(rows, q, p, similarity))
        out |= rank_metrics(counts, prefix=f"{prefix}{similarity}_")
    return out


def evalrank_task(folder: Path, name: str) -> Any:
    """A word-level EvalRank task on ``BACKGROUND`` and ``PAIRS`` (files in ``folder``)."""
    (folder / "pairs.tsv").write_text("".join(f"{BACKGROUND[q]}\t{BACKGROUND[p]}\n" for q, p in PAIRS))
    (folder / "background.txt").write_text("\n".join(BACKGROUND) + "\n")
    task = mteb_evalrank.evalrank_task_from_files(folder / "pairs.tsv", folder / "background.txt", name)
    task.word_level = True
    return task


def test_evalrank_conventions_match_brute_force_and_hand(tmp_path: Path) -> None:
    """covered: a..d only (centred on their mean), the one pair a->b: b is nearest (rank 1).
    mean_vector: e = the known mean, i.e. zero after centring: a->b rank 1; c->e: s(c, e) = 0 and
    only d has a positive cosine with c (centred c.d = 3.5625 - 3.4375 = 0.125): rank 2; e->a: every
    cosine 0, a tied with b, c, d: expected RR (1 + 1/2 + 1/3 + 1/4) / 4 = 25/48."""
    task = evalrank_task(tmp_path, "Conv")
    task.vocabulary = frozenset({"a", "b", "c", "e"})
    scores = scores_of(static(KNOWN), task)

    zero = np.array([*KNOWN.values(), [0.0, 0.0]])
    filled = np.array([*KNOWN.values(), [0.75, 1.25]])  # centred by the reference: e exactly 0
    expected = metrics_of(zero, PAIRS, "") | metrics_of(zero[:4], [(0, 1)], "covered_")
    expected |= metrics_of(filled, PAIRS, "mean_vector_")
    expected |= metrics_of(zero[[0, 1, 2, 4]], [(0, 1), (2, 3), (3, 0)], "vocabulary_")
    for key, value in expected.items():
        assert scores[key] == pytest.approx(value, abs=1e-12), key
    assert scores["covered_cosine_mrr"] == 1.0
    assert scores["mean_vector_cosine_mrr"] == pytest.approx((1 + 1 / 2 + 25 / 48) / 3, abs=1e-12)
    assert scores["coverage"] == pytest.approx(1 / 3)
    assert scores["background_coverage"] == pytest.approx(4 / 5)
    assert (scores["covered_n_pairs"], scores["covered_n_background"]) == (1, 4)
    assert (scores["vocabulary_n_pairs"], scores["vocabulary_n_background"]) == (3, 4)
    assert scores["vocabulary_words"] == 4 and "vocabulary_file" not in scores  # the task's own words
    assert scores["main_score"] == scores["cosine_mrr"]
    task.unknown_words = "covered"
    assert scores_of(static(KNOWN), task)["main_score"] == 1.0


def test_a_model_that_knows_every_word_scores_alike_under_every_convention(tmp_path: Path) -> None:
    task = evalrank_task(tmp_path, "Conv2")
    scores = scores_of(static(KNOWN | {"e": [1.0, 1.0]}), task)
    expected = metrics_of(np.array([*KNOWN.values(), [1.0, 1.0]]), PAIRS, "")
    for key, value in expected.items():
        assert scores[key] == pytest.approx(value, abs=1e-12)
        assert scores[f"covered_{key}"] == scores[f"mean_vector_{key}"] == scores[key]
    assert scores["coverage"] == scores["background_coverage"] == 1.0
    assert not any(key.startswith("vocabulary_") for key in scores)


# ----------------------------------------------------------------- vocabulary file, study
@second_process
def test_a_bad_vocabulary_file_is_named(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from mteb_evalrank.data.sources import SourceFormatError
    from mteb_evalrank.settings import Settings

    task = evalrank_task(tmp_path, "Voc")  # what its evaluate does first: take the settings
    monkeypatch.setenv(VOCABULARY_ENV, str(tmp_path / "missing.txt"))
    with pytest.raises(FileNotFoundError, match=r"missing\.txt not found"):
        task.use_settings(Settings.from_environment())
    bad = tmp_path / "latin1.txt"
    bad.write_bytes(b"car\ncaf\xe9\n")
    monkeypatch.setenv(VOCABULARY_ENV, str(bad))
    with pytest.raises(SourceFormatError, match=r"latin1\.txt:2: invalid UTF-8 byte 0xe9"):
        task.use_settings(Settings.from_environment())
    empty = tmp_path / "empty.txt"
    empty.write_text("\n \n")
    monkeypatch.setenv(VOCABULARY_ENV, str(empty))
    with pytest.raises(SourceFormatError, match=r"empty\.txt: the file holds no words"):
        task.use_settings(Settings.from_environment())


@second_process
def test_a_study_redoes_a_word_result_written_before_the_conventions(tmp_path: Path) -> None:
    """A result without ``mean_vector_cosine_spearman`` (as written before the conventions) is moved
    aside (``.outdated``) and its job runs again; with the score it is done; other tasks require
    nothing new."""

    def write(task: str, entry: dict[str, Any]) -> Path:
        revision = mteb.get_task(task).metadata.dataset["revision"]
        data = {
            "dataset_revision": revision, "task_name": task, "mteb_version": "2.26.24",
            "evaluation_time": 1.0, "kg_co2_emissions": None,
            "scores": {"test": [{"hf_subset": "default", "languages": ["eng-Latn"]} | entry]},
        }  # fmt: skip
        path = tmp_path / f"{task}.json"
        path.write_text(json.dumps(data))
        return path

    old = {"main_score": 0.3, "cosine_spearman": 0.3, "coverage": 1.0, "covered_cosine_spearman": 0.3}
    path = write("WordSimSimLex999", old)
    with pytest.warns(OutdatedResultWarning, match="no mean_vector_cosine_spearman score"):
        assert not result_is_done(path)
    assert (tmp_path / "WordSimSimLex999.json.outdated").is_file() and not path.exists()
    path = write("WordSimSimLex999", old | {"mean_vector_cosine_spearman": 0.5})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert result_is_done(path)
        assert result_is_done(write("SentEvalMR", {"main_score": 0.7, "lr_accuracy": 0.7}))
