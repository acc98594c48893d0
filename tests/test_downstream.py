"""Downstream tasks: the classifier maths, both protocols end to end, independent checks."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

import datasets
import mteb
import numpy as np
import pytest
from mteb.models.abs_encoder import AbsEncoder
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import accuracy_score
from sklearn.model_selection import StratifiedKFold
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import mteb_evalrank  # noqa: F401
from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.evaluation.classifiers import (
    FIT_DTYPE,
    INNER_FOLDS,
    L2_GRID,
    pair_features,
    senteval_scores,
)
from mteb_evalrank.evaluation.ranking import NonFiniteEmbeddingsError
from mteb_evalrank.models.static import StaticWordEmbeddings

BIN = Path(sys.executable).parent
GLOVE = "evalrank/glove.6B.50d"
MINILM = "sentence-transformers/all-MiniLM-L6-v2"
SEED = 42  # mteb's default task seed


def load(config: str, split: str) -> datasets.Dataset:
    return datasets.load_dataset(SENTEVAL.hub_id, config, split=split, revision=SENTEVAL.revision)


def mteb_samples(y_train: np.ndarray) -> list[list[int]]:
    """The training rows of mteb's 10 experiments: 8 per label after a seeded reshuffle of one list."""
    order, experiments = list(range(len(y_train))), []
    for _ in range(10):
        np.random.RandomState(SEED).shuffle(order)  # mteb reshuffles the same list each experiment
        taken: dict[int, int] = defaultdict(int)
        chosen = []
        for i in order:
            if taken[int(y_train[i])] < 8:
                chosen.append(i)
                taken[int(y_train[i])] += 1
        experiments.append(chosen)
    return experiments


def mteb_protocol(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray) -> float:
    """mteb's classification protocol written out: LogisticRegression(max_iter=100) per experiment."""
    accuracies = []
    for chosen in mteb_samples(y_train):
        model = LogisticRegression(max_iter=100, random_state=SEED).fit(x_train[chosen], y_train[chosen])
        accuracies.append(accuracy_score(y_test, model.predict(x_test)))
    return float(np.mean(accuracies))


def lr_protocol(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray) -> dict:
    """The senteval protocol's logistic regression written out with explicit loops, scikit-learn
    driven to the optimum (``tol = 1e-8``: its default 1e-4 stops up to 0.3 point of accuracy away)."""
    # as the task: rounded to float32 (FIT_DTYPE), fitted in float64 (scikit-learn fits float32 input
    # in float32 arithmetic, which cannot reach the optimum to the predictions' precision)
    x_train, x_test = (
        np.asarray(x, np.float64).astype(FIT_DTYPE).astype(np.float64) for x in (x_train, x_test)
    )
    with threadpool_limits(limits=1):  # small fits; BLAS threads only slow them down
        return _lr_protocol(x_train, y_train, x_test, y_test)


def _lr_protocol(x_train: np.ndarray, y_train: np.ndarray, x_test: np.ndarray, y_test: np.ndarray) -> dict:
    out = {}
    for name, znorm in (("raw", False), ("znorm", True)):
        best = (-1.0, None)
        for l2 in L2_GRID:
            folds = StratifiedKFold(INNER_FOLDS, shuffle=True, random_state=SEED).split(x_train, y_train)
            accuracies = []
            for inner_train, inner_test in folds:
                a, b = x_train[inner_train], x_train[inner_test]
                if znorm:
                    scaler = StandardScaler().fit(a)
                    a, b = scaler.transform(a), scaler.transform(b)
                model = LogisticRegression(C=1 / (len(inner_train) * l2), tol=1e-8, max_iter=20_000)
                accuracies.append(
                    accuracy_score(y_train[inner_test], model.fit(a, y_train[inner_train]).predict(b))
                )
            if np.mean(accuracies) > best[0]:
                best = (float(np.mean(accuracies)), l2)
        a, b = x_train, x_test
        if znorm:
            scaler = StandardScaler().fit(a)
            a, b = scaler.transform(a), scaler.transform(b)
        model = LogisticRegression(C=1 / (len(y_train) * best[1]), tol=1e-8, max_iter=20_000).fit(a, y_train)
        out[name] = (best[0], best[1], accuracy_score(y_test, model.predict(b)))
    return out


def split_lr_protocol(
    train: tuple[np.ndarray, np.ndarray],
    valid: tuple[np.ndarray, np.ndarray],
    test: tuple[np.ndarray, np.ndarray],
) -> dict:
    """SentEval's ``SplitClassifier`` for the logistic regression, written out.

    Each lambda: fit on the whole training split (``C = 1/(n lambda)``), accuracy on the
    validation split; the best fit (earliest on a tie) is scored on the test split.
    """
    (x_train, y_train), (x_valid, y_valid), (x_test, y_test) = (
        (np.asarray(x, np.float64).astype(FIT_DTYPE).astype(np.float64), y) for x, y in (train, valid, test)
    )
    out = {}
    with threadpool_limits(limits=1):
        for name, znorm in (("raw", False), ("znorm", True)):
            a, b, c = x_train, x_valid, x_test
            if znorm:
                scaler = StandardScaler().fit(a)
                a, b, c = scaler.transform(a), scaler.transform(b), scaler.transform(c)
            best = (-1.0, None, None)
            for l2 in L2_GRID:
                model = LogisticRegression(C=1 / (len(y_train) * l2), tol=1e-8, max_iter=20_000)
                model.fit(a, y_train)
                accuracy = accuracy_score(y_valid, model.predict(b))
                if accuracy > best[0]:
                    best = (accuracy, l2, accuracy_score(y_test, model.predict(c)))
            out[name] = best
    return out


# ---------------------------------------------------------------------------- maths
def test_pair_features_by_hand() -> None:
    u, v = np.array([[1.0, -2.0]]), np.array([[3.0, 0.5]])
    assert pair_features(u, v).tolist() == [[1.0, -2.0, 3.0, 0.5, 2.0, 2.5, 3.0, -1.0]]
    with pytest.raises(ValueError, match="same shape"):
        pair_features(u, v[:, :1])


def test_scores_are_fitted_in_float32_and_overflow_is_named() -> None:
    rng = np.random.default_rng(0)
    x, y = rng.normal(size=(200, 3)), np.arange(200) % 2
    x[5, 1] = 1e39  # finite in float64, infinite in float32
    with pytest.raises(ValueError, match="training features: values beyond the float32 range"):
        senteval_scores(x, y, x[:10], y[:10], kinds=("lr",))


def test_senteval_scores_match_explicit_loops() -> None:
    rng = np.random.default_rng(1)
    x = rng.normal(size=(300, 5)) * [1, 10, 0.1, 1, 3]
    y = (x @ [1, 0.1, 5, 0, 0.2] + rng.normal(size=300) > 0).astype(int)
    scores = senteval_scores(x[:200], y[:200], x[200:], y[200:], seed=SEED)
    expected = lr_protocol(x[:200], y[:200], x[200:], y[200:])
    for name in ("raw", "znorm"):
        assert scores[f"lr_l2_{name}"] == expected[name][1]
        assert scores[f"lr_accuracy_{name}"] == pytest.approx(expected[name][2])
    chosen = "znorm" if expected["znorm"][0] > expected["raw"][0] else "raw"
    assert scores["lr_accuracy"] == scores[f"lr_accuracy_{chosen}"]
    assert scores["lr_znorm"] == float(chosen == "znorm")
    assert {"mlp_accuracy", "mlp_accuracy_raw", "mlp_accuracy_znorm", "n_train", "n_test"} <= scores.keys()
    assert (scores["n_train"], scores["n_test"]) == (200, 100)


def test_senteval_scores_select_on_the_validation_split() -> None:
    """With a validation split the L2 strength is chosen on it (SentEval's SplitClassifier)."""
    rng = np.random.default_rng(3)
    x = rng.normal(size=(400, 6)) * [1, 10, 0.1, 1, 3, 0.5]
    y = (x @ [1, 0.1, 5, 0, 0.2, 1] + 2 * rng.normal(size=400) > 0).astype(int)
    train, valid, test = (x[:150], y[:150]), (x[150:250], y[150:250]), (x[250:], y[250:])
    scores = senteval_scores(*train, *test, x_valid=valid[0], y_valid=valid[1], seed=SEED, kinds=("lr",))
    expected = split_lr_protocol(train, valid, test)
    for name in ("raw", "znorm"):
        assert scores[f"lr_l2_{name}"] == expected[name][1]
        assert scores[f"lr_accuracy_{name}"] == pytest.approx(expected[name][2])
    chosen = "znorm" if expected["znorm"][0] > expected["raw"][0] else "raw"
    assert scores["lr_accuracy"] == scores[f"lr_accuracy_{chosen}"]
    assert (scores["n_train"], scores["n_validation"], scores["n_test"]) == (150, 100, 150)
    with pytest.raises(ValueError, match="both"):
        senteval_scores(*train, *test, x_valid=valid[0])


def test_degenerate_features_do_not_learn() -> None:
    y_train, y_test = np.array([0, 1] * 50 + [1] * 20), np.array([0] * 30 + [1] * 10)
    constant = senteval_scores(np.ones((120, 4)), y_train, np.ones((40, 4)), y_test, seed=SEED)
    assert constant["lr_accuracy"] == pytest.approx(0.25)  # the training majority (1), wrong on 30 of 40
    bad = np.ones((40, 4))
    bad[3, 1] = np.nan
    with pytest.raises(NonFiniteEmbeddingsError, match="test features"):
        senteval_scores(np.ones((120, 4)), y_train, bad, y_test)


# ------------------------------------------------------------------- tasks, GloVe
@pytest.mark.usefixtures("built")
def test_names_protocols_and_benchmarks() -> None:
    mr, senteval_mr = mteb.get_task("MRClassification"), mteb.get_task("SentEvalMR")
    assert mr.hf_subsets == [f"fold-{k}" for k in range(10)] == senteval_mr.hf_subsets
    assert (mr.metadata.main_score, senteval_mr.metadata.main_score) == ("accuracy", "lr_accuracy")
    assert mteb.get_task("SST2Classification").hf_subsets == ["default"]
    benchmark = mteb.get_benchmark("EvalRank-Downstream")
    assert len(benchmark.tasks) == 10 and all(t.protocol == "mteb" for t in benchmark.tasks)
    assert all(t.protocol == "senteval" for t in mteb.get_benchmark("EvalRank-Downstream-SentEval").tasks)


def evaluate(
    model: Any, name: str, classifiers: tuple[str, ...] | None = None, **task_kwargs: Any
) -> list[dict[str, Any]]:
    task = mteb.get_task(name, **task_kwargs)
    if classifiers is not None:  # a SentEval-protocol task's classifiers (the study's --senteval-classifiers)
        task.classifiers = classifiers
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    return result.task_results[0].scores["test"]


@pytest.mark.usefixtures("built")
def test_mteb_protocol_on_a_fold_equals_mtebs_procedure_written_out() -> None:
    glove = mteb.get_model(GLOVE)
    (scores,) = evaluate(glove, "CRClassification", hf_subsets=["fold-3"])
    rows = load("cr", "train")
    fold = np.asarray(rows["fold"])
    x, y = glove.embed(rows["text"]), np.asarray(rows["label"])
    expected = mteb_protocol(x[fold != 3], y[fold != 3], x[fold == 3], y[fold == 3])
    assert scores["hf_subset"] == "fold-3"
    assert scores["accuracy"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.usefixtures("built")
def test_pair_task_mteb_protocol_uses_pair_features() -> None:
    glove = mteb.get_model(GLOVE)
    (scores,) = evaluate(glove, "SICKEClassification")
    train, test = load("sick-e", "train"), load("sick-e", "test")

    def features(rows: datasets.Dataset) -> np.ndarray:
        return pair_features(glove.embed(rows["sentence1"]), glove.embed(rows["sentence2"]))

    expected = mteb_protocol(
        features(train), np.asarray(train["label"]), features(test), np.asarray(test["label"])
    )
    assert scores["accuracy"] == pytest.approx(expected, abs=1e-9)


@pytest.mark.slow
@pytest.mark.usefixtures("built")
def test_senteval_protocol_equals_explicit_loops_on_trec() -> None:
    """The logistic regression alone (the study's ``--senteval-classifiers lr``: no MLP keys, each
    fit's seconds timed); the MLP's protocol is checked on a split in ``tests/test_classifiers_device.py``."""
    glove = mteb.get_model(GLOVE)
    (scores,) = evaluate(glove, "SentEvalTREC", classifiers=("lr",))
    train, test = load("trec", "train"), load("trec", "test")
    expected = lr_protocol(
        glove.embed(train["text"]),
        np.asarray(train["label"]),
        glove.embed(test["text"]),
        np.asarray(test["label"]),
    )
    assert scores["main_score"] == scores["lr_accuracy"]
    for name in ("raw", "znorm"):
        assert scores[f"lr_accuracy_{name}"] == pytest.approx(expected[name][2], abs=1e-9)
    assert not any(key.startswith("mlp_") for key in scores)
    assert scores["lr_seconds"] > 0  # timed (not a score)


@pytest.mark.slow
@pytest.mark.usefixtures("built")
def test_senteval_folds_scored_together_equal_explicit_loops_on_cr() -> None:
    """A cross-validated task's folds (two of CR's ten here) are scored in one batch: each fold's
    logistic regression is the explicit loops' on its own rows, and the batch's time is shared."""
    glove = mteb.get_model(GLOVE)
    scores = evaluate(glove, "SentEvalCR", hf_subsets=["fold-1", "fold-4"], classifiers=("lr",))
    rows = load("cr", "train")
    fold, x, y = np.asarray(rows["fold"]), glove.embed(rows["text"]), np.asarray(rows["label"])
    assert [row["hf_subset"] for row in scores] == ["fold-1", "fold-4"]
    for row, k in zip(scores, (1, 4), strict=True):
        expected = lr_protocol(x[fold != k], y[fold != k], x[fold == k], y[fold == k])
        for name in ("raw", "znorm"):
            assert row[f"lr_accuracy_{name}"] == pytest.approx(expected[name][2], abs=1e-9), (k, name)
            assert row[f"lr_l2_{name}"] == expected[name][1]
        assert (row["n_train"], row["n_test"]) == (np.sum(fold != k), np.sum(fold == k))
    assert scores[0]["lr_seconds"] == scores[1]["lr_seconds"] > 0  # one batch, its time shared


@pytest.mark.usefixtures("built")
def test_senteval_protocol_selects_on_the_validation_split_of_scicite() -> None:
    """SciCite has a validation split: SentEval selects on it, so does the task.

    (With GloVe, 5-fold CV on the training split picks another lambda for the z-normalised
    features, so this fails on the old protocol.)
    """
    glove = mteb.get_model(GLOVE)
    task = mteb.get_task("SentEvalSciCite")
    task.classifiers = ("lr",)
    result = mteb.evaluate(glove, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    (scores,) = result.task_results[0].scores["test"]

    def split(name: str) -> tuple[np.ndarray, np.ndarray]:
        rows = load("scicite", name)
        return glove.embed(rows["text"]), np.asarray(rows["label"])

    expected = split_lr_protocol(split("train"), split("validation"), split("test"))
    for name in ("raw", "znorm"):
        assert scores[f"lr_l2_{name}"] == expected[name][1]
        assert scores[f"lr_accuracy_{name}"] == pytest.approx(expected[name][2], abs=1e-9)
    assert scores["n_validation"] == 916


class _Counting(StaticWordEmbeddings):
    texts = 0

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        out = super().encode(inputs, **kwargs)
        type(self).texts += len(out)
        return out


@pytest.mark.usefixtures("built")
@pytest.mark.slow  # SentEval folds over a real dataset
def test_senteval_folds_encode_each_text_once() -> None:
    glove = mteb.get_model(GLOVE)
    model = _Counting(list(glove.index), glove.vectors, name="counting")
    scores = evaluate(model, "SentEvalCR", hf_subsets=["fold-0", "fold-1", "fold-2"])
    assert [row["hf_subset"] for row in scores] == ["fold-0", "fold-1", "fold-2"]
    assert _Counting.texts == len(set(load("cr", "train")["text"]))


class _Degenerate(AbsEncoder):
    def __init__(self, value: float) -> None:
        self.value = value

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        n = sum(len(batch["text"]) for batch in inputs)
        out = np.full((n, 8), self.value, dtype=np.float32)
        if np.isnan(self.value):
            out[1:] = 0.0
        return out


@pytest.mark.usefixtures("built")
def test_degenerate_encoders_score_at_chance_or_fail() -> None:
    (scores,) = evaluate(_Degenerate(0.0), "SentEvalTREC")
    test_labels = np.asarray(load("trec", "test")["label"])
    majority = np.bincount(np.asarray(load("trec", "train")["label"])).argmax()
    assert scores["lr_accuracy"] == pytest.approx(float(np.mean(test_labels == majority)))
    with pytest.raises(NonFiniteEmbeddingsError, match=r"SentEvalTREC \(default\)"):
        evaluate(_Degenerate(float("nan")), "SentEvalTREC")


@pytest.mark.slow
def test_toy_glove_near_the_reference_toolkit(source: Path, built: dict) -> None:
    """EvalRank toolkit README, toy 5k GloVe bag-of-words: CR 69.8, TREC 66.6 (classifier details differ)."""
    toy = StaticWordEmbeddings.from_file(source / "evalrank" / "word_emb" / "toy_emb.txt")
    for name, published in (("SentEvalCR", 69.8), ("SentEvalTREC", 66.6)):
        rows = evaluate(toy, name, classifiers=("lr",))  # the toolkit's figures are logistic regression's
        ours = 100 * float(np.mean([row["lr_accuracy"] for row in rows]))
        assert abs(ours - published) < 5.0, (name, ours)


# -------------------------------------------------------------------- MiniLM, CLI
@pytest.mark.slow
@pytest.mark.usefixtures("built", "offline_models")
def test_mteb_cli_minilm_trec_matches_sentence_transformers(tmp_path: Path) -> None:
    from sentence_transformers import SentenceTransformer

    run = subprocess.run(
        [str(BIN / "mteb"), "run", "-t", "TRECClassification", "-m", MINILM,
         "--output-folder", str(tmp_path), "--overwrite-strategy", "always"],
        capture_output=True, text=True,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr[-3000:]
    (path,) = (tmp_path / "results").glob("*/*/TRECClassification.json")
    scores = json.loads(path.read_text())["scores"]["test"][0]
    encoder = SentenceTransformer(MINILM)
    train, test = load("trec", "train"), load("trec", "test")
    y_train = np.asarray(train["label"])
    used = sorted({i for chosen in mteb_samples(y_train) for i in chosen})  # encode only the sampled rows
    x_train = np.zeros((len(y_train), 384), dtype=np.float32)
    x_train[used] = encoder.encode([train["text"][i] for i in used], batch_size=64)
    expected = mteb_protocol(
        x_train, y_train, encoder.encode(test["text"], batch_size=64), np.asarray(test["label"])
    )
    assert scores["accuracy"] == pytest.approx(expected, abs=0.01)
    assert scores["accuracy"] > 0.5  # six classes; chance is 0.28 (DESC share of the test)


def test_score_table_averages_folds() -> None:
    from mteb_evalrank.scores_table import mean_over_folds

    base = {"model": "m", "revision": "r", "task": "SentEvalCR", "split": "test"}
    rows = [
        {**base, "hf_subset": f"fold-{k}", "lr_accuracy": k / 10, "languages": ["eng-Latn"]} for k in range(4)
    ]
    other = {**base, "task": "SentEvalTREC", "hf_subset": "default", "lr_accuracy": 0.7}
    kept, mean = mean_over_folds([*rows, other])
    assert kept == other
    assert mean["hf_subset"] == "mean of 4 folds"
    assert mean["lr_accuracy"] == pytest.approx((0 + 0.1 + 0.2 + 0.3) / 4)
    assert "languages" not in mean
