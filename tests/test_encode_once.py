"""Each distinct text encoded once per model in a run, for any model (``tasks/_encoding.py``).

Encoders are real or count what they are asked: a user's encoder the plugin does not know
(hash-seeded vectors, ``benchmarks/bench_encode_once.py``'s :class:`HashCounter`), the bundled
all-MiniLM-L6-v2 loaded as a user loads it (``mteb.get_model``, sentence-transformers) and the
zoo's static GloVe. Expected counts are independent of the code: the 75,144 distinct texts of
the intrinsic tasks of ``EvalRank-Study`` were measured by the issue's reporter at a737678.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import mteb
import numpy as np
import pytest
from datasets import Dataset

import mteb_evalrank  # noqa: F401
from mteb_evalrank._mteb_adapter import create_dataloader
from mteb_evalrank.embedding_cache import EmbeddingCache, using_process_cache
from mteb_evalrank.settings import REUSE_ENV, Settings
from mteb_evalrank.suites import STUDY_STS_TASKS
from mteb_evalrank.tasks._encoding import CachedEncoder, EncodeOnce, reusing

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from bench_encode_once import HashCounter, suite

RUN = Settings.from_environment({})  # reuse on, the cache in memory


@pytest.fixture
def run_cache() -> Iterator[EmbeddingCache]:
    """A fresh process cache for the test (a run of its own)."""
    with using_process_cache(EmbeddingCache()) as cache:
        yield cache


@pytest.fixture(scope="module")
def sts_mirrors(source: Path) -> None:
    from mteb_evalrank.data.mirrors import install_sts_mirrors

    states = install_sts_mirrors(source)
    assert {state.state for state in states.values()} == {"mirror"}


def _evaluate(model: Any, tasks: list[Any]) -> dict[str, Any]:
    results = mteb.evaluate(model, tasks, cache=None, overwrite_strategy="always", show_progress_bar=False)
    return {result.task_name: result.scores for result in results.task_results}


def _encode(model: Any, texts: list[str], task: str = "WordSimWS353All", **kwargs: Any) -> Any:
    """``model.encode`` as an mteb task calls it (mteb's dataloader, the task's metadata)."""
    metadata = mteb.get_task(task).metadata
    loader = create_dataloader(Dataset.from_dict({"text": texts}), task_metadata=metadata, batch_size=32)
    return model.encode(loader, task_metadata=metadata, hf_split="test", hf_subset="default", **kwargs)


# ------------------------------------------------------------------------ counts over a run
@pytest.mark.slow
@pytest.mark.usefixtures("built", "sts_mirrors", "run_cache")
def test_the_intrinsic_study_encodes_each_distinct_text_once() -> None:
    """The issue's measurement: a user's encoder over the 27 intrinsic tasks of EvalRank-Study in
    one run. At a737678: 199,856 texts encoded for 75,144 distinct ones; now each once. Every
    task is in it (AccSent, STR2021, mteb's STS tasks, the EvalRank parts and word sets)."""
    model = HashCounter()
    tasks = suite("intrinsic")
    assert len(tasks) == 27
    _evaluate(model, tasks)
    assert len(model.texts) == 75_144
    assert sum(model.texts.values()) == 75_144


#: the downstream tasks checked one by one: a cross-validated set, a set with a validation split
#: and a pair set under the SentEval protocol, and mteb's protocol (its evaluator samples rows);
#: all 20 together encode each text once in ``benchmarks/encode_once.md``
DOWNSTREAM_CHECKED = (
    "SentEvalMR",
    "SentEvalSST2",
    "SentEvalSICKE",
    "MRClassification",
    "SICKEClassification",
)


@pytest.mark.slow
@pytest.mark.usefixtures("built")
def test_every_other_task_encodes_each_distinct_text_once() -> None:
    """The plugin's tasks outside the intrinsic study (the diagnostics slices, downstream tasks
    of both protocols), each in a run of its own: no text reaches the model twice."""
    from mteb_evalrank.tasks import TASKS

    study = {task.metadata.name for task in suite("intrinsic")}
    tasks = [cls() for cls in TASKS]
    # (type Classification: the downstream tasks below, and the sequence-labelling tasks, left out:
    # their word forms go through the same TaskEmbeddings, and each trains three taggers)
    others = [t for t in tasks if t.metadata.name not in study and t.metadata.type != "Classification"]
    others += [t for t in tasks if t.metadata.name in DOWNSTREAM_CHECKED]
    assert len(others) == 6 + len(DOWNSTREAM_CHECKED)
    for task in others:
        if task.hf_subsets and "fold0" in task.hf_subsets:
            task.hf_subsets = ["fold0"]  # one cross-validation fold: its subsets share every text
        if hasattr(task, "classifiers"):
            task.classifiers = ("lr",)
        model = HashCounter()
        with using_process_cache(EmbeddingCache()):
            _evaluate(model, [task])
        assert model.texts and max(model.texts.values()) == 1, (
            task.metadata.name,
            model.texts.most_common(1),
        )


# ----------------------------------------------------------------- scores without reuse
@pytest.mark.slow
@pytest.mark.usefixtures("built", "sts_mirrors", "offline_models")
@pytest.mark.parametrize("name", ["sentence-transformers/all-MiniLM-L6-v2", "evalrank/glove.6B.50d"])
def test_scores_are_the_same_with_and_without_reuse(name: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Tasks sharing texts (STS-B's sentences in mteb's STSBenchmark and the plugin's granularity
    slices; words in two word sets), run with reuse and with ``MTEB_EVALRANK_REUSE_EMBEDDINGS=0``;
    with reuse each distinct text reaches the model once.

    The static model's output for a text does not depend on the other texts of its batch: every
    score is bit-identical. MiniLM's does (padding; a row moves by up to ~2e-7, measured), so its
    scores agree to 1e-4 (Pearson by ~1e-9; a Spearman over a granularity slice's 100-odd pairs
    moved by 5e-6 when two near-tied similarities swapped); no reuse can be bit-identical there
    unless every text is encoded alone."""

    from mteb_evalrank.suites import EVALRANK_STUDY

    (stsb,) = [task for task in EVALRANK_STUDY.tasks if task.metadata.name == "STSBenchmark"]
    tasks = [stsb, *mteb.get_tasks(tasks=["STSBenchmarkGranularity", "WordSimWS353All", "WordSimWS353Sim"])]
    scores, counts = {}, {}
    for reuse in ("1", "0"):
        monkeypatch.setenv(REUSE_ENV, reuse)
        model: Any = mteb.get_model(name)
        seen: Counter[str] = Counter()
        original = model.encode

        def encode(inputs: Any, _original: Any = original, _seen: Counter[str] = seen, **kwargs: Any) -> Any:
            _seen.update(text for batch in inputs for text in batch["text"])
            return _original(inputs, **kwargs)

        model.encode = encode
        with using_process_cache(EmbeddingCache()):
            scores[reuse] = _evaluate(model, tasks)
        counts[reuse] = seen
    if name.startswith("evalrank/"):
        assert scores["1"] == scores["0"]
    for task in tasks:
        pairs = zip(
            scores["1"][task.metadata.name]["test"], scores["0"][task.metadata.name]["test"], strict=True
        )
        for reused, alone in pairs:
            assert reused.keys() == alone.keys()
            for key, value in reused.items():
                expected = (
                    pytest.approx(alone[key], abs=1e-4, nan_ok=True)
                    if isinstance(value, float)
                    else alone[key]
                )
                assert value == expected, (task.metadata.name, reused["hf_subset"], key)
    assert max(counts["1"].values()) == 1 and set(counts["1"]) == set(counts["0"])
    assert sum(counts["0"].values()) > len(counts["0"])  # without reuse, shared texts are encoded again


# ------------------------------------------------------------------------------ the key
class _Prompted(HashCounter):
    """A user's encoder with a prompt per task type (as sentence-transformers models declare)."""

    def get_prompt_name(self, task_metadata: Any, prompt_type: Any) -> str | None:
        return "sts" if task_metadata.type == "STS" else None


def test_rows_are_never_shared_across_prompts_or_settings(run_cache: EmbeddingCache) -> None:
    """The key holds what changes an embedding: the prompt applied (by task type), the prompt
    type, and encode settings (``precision``); not the batch size or the progress bar."""
    from mteb.types import PromptType

    model = _Prompted()
    texts = ["a man plays a guitar", "a dog runs"]
    _encode(reusing(model, RUN), texts)  # an STS task: prompt "sts"
    _encode(reusing(model, RUN), texts, task="EvalRankSent")  # a retrieval task: no prompt
    _encode(reusing(model, RUN), texts, task="EvalRankSent", prompt_type=PromptType.query)
    _encode(reusing(model, RUN), texts, task="EvalRankSent", prompt_type=PromptType.query, precision="int8")
    assert model.texts == Counter({text: 4 for text in texts})
    _encode(reusing(model, RUN), texts, batch_size=1, show_progress_bar=True)  # the first context again
    _encode(reusing(model, RUN), texts, task="WordSimSimLex999")  # another STS task, the same prompt
    assert model.texts == Counter({text: 4 for text in texts})
    for setting in ("x" * 300, "x" * 299 + "y"):  # long settings: bounded folder names, still apart
        _encode(reusing(model, RUN), texts, setting=setting)
    assert model.texts == Counter({text: 6 for text in texts})
    assert len(run_cache._stores) == 6 and max(len(key.context) for key in run_cache._stores) <= 120


def test_a_model_whose_weights_change_is_encoded_again(run_cache: EmbeddingCache) -> None:
    """A model trained between two evaluations in one process (weights changed in place, as an
    optimizer step does) is never served the rows of its old weights."""
    import torch

    class Linear:
        """A user's torch encoder: a linear map of hashed character counts."""

        def __init__(self) -> None:
            self.layer = torch.nn.Linear(26, 4, bias=False)
            self.mteb_model_meta = HashCounter().mteb_model_meta
            self.calls = 0

        def encode(self, inputs: Any, **kwargs: Any) -> Any:
            self.calls += 1
            texts = [text for batch in inputs for text in batch["text"]]
            counts = torch.tensor(
                [[text.count(chr(97 + i)) for i in range(26)] for text in texts], dtype=torch.float32
            )
            with torch.no_grad():
                return self.layer(counts).numpy()

        similarity = HashCounter.similarity
        similarity_pairwise = HashCounter.similarity_pairwise

    model = Linear()
    texts = ["a cat", "the dog barks"]
    before = _encode(reusing(model, RUN), texts)
    np.testing.assert_array_equal(_encode(reusing(model, RUN), texts), before)
    assert model.calls == 1
    with torch.no_grad():
        model.layer.weight.add_(1.0)  # in place, as an optimizer step
    after = _encode(reusing(model, RUN), texts)
    assert model.calls == 2
    # every weight + 1 adds each text's letter count (4 and 11) to every component
    np.testing.assert_allclose(after - before, [[4.0] * 4, [11.0] * 4], rtol=0, atol=1e-5)


# -------------------------------------------------------------------- across runs, on disk
def test_a_named_model_is_served_from_disk_across_runs(tmp_path: Path) -> None:
    """With a cache folder, a user's model with a name and a revision is persisted: a second
    run (another cache on the folder) encodes nothing; a model without a revision stays in memory."""
    texts = ["a man plays a guitar", "a dog runs", "a man plays a guitar"]
    first, second = HashCounter(), HashCounter()
    with using_process_cache(EmbeddingCache(tmp_path)):
        rows = _encode(reusing(first, RUN), texts)
    with using_process_cache(EmbeddingCache(tmp_path)):
        np.testing.assert_array_equal(_encode(reusing(second, RUN), texts), rows)
    assert first.texts == Counter(set(texts)) and second.texts == Counter()
    assert len(list(tmp_path.glob("format-1/bench__hash-counter/1/*/shard-*.npz"))) == 1
    anonymous = HashCounter()
    anonymous.mteb_model_meta = anonymous.mteb_model_meta.model_copy(update={"revision": None})
    with using_process_cache(EmbeddingCache(tmp_path / "other")):
        _encode(reusing(anonymous, RUN), texts)
    assert not (tmp_path / "other").exists()


# ------------------------------------------------------------------------- the switch and mteb
def test_the_switch_and_what_is_wrapped(monkeypatch: pytest.MonkeyPatch) -> None:
    """``MTEB_EVALRANK_REUSE_EMBEDDINGS=0`` gives tasks the model itself; a study's wrapper and
    a model that is not an mteb encoder are passed through; mteb's registered STS classes stay
    mteb's, only the plugin's benchmark holds the encode-once variants (same metadata)."""
    from mteb_evalrank.suites import EVALRANK_STUDY

    model = HashCounter()
    assert isinstance(reusing(model, RUN), CachedEncoder)
    wrapped = CachedEncoder(model)
    assert reusing(wrapped, RUN) is wrapped
    assert reusing(object(), RUN) is not None and not isinstance(reusing(object(), RUN), CachedEncoder)
    monkeypatch.setenv(REUSE_ENV, "0")
    assert reusing(model, Settings.from_environment()) is model
    variants = {
        task.metadata.name: task for task in EVALRANK_STUDY.tasks if task.metadata.name in STUDY_STS_TASKS
    }
    assert set(variants) == set(STUDY_STS_TASKS)
    for name, variant in variants.items():
        own = mteb.get_task(name)
        assert (
            not isinstance(own, EncodeOnce)
            and isinstance(variant, EncodeOnce)
            and isinstance(variant, type(own))
        )
        assert variant.metadata == own.metadata and variant.eval_splits == ["test"]
