"""The plugin's one embedding cache (``mteb_evalrank.embedding_cache``, ``models.cached``).

Encoders are real: the EvalRank release's toy GloVe (read from the raw data) and the bundled
all-MiniLM-L6-v2. Expected rows are the encoder's own output on the same texts, computed
directly (no cache), and the encode counts are counted at the encoder.
"""

from __future__ import annotations

import gc
import itertools
import multiprocessing
import sys
import time
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import (
    EmbeddingCache,
    EncodeStats,
    StoreKey,
    process_cache,
    text_digest,
    using_process_cache,
)
from mteb_evalrank.models.static import StaticWordEmbeddings

KEY = StoreKey("evalrank/glove-toy-50d", "1.0.0", "none")
SENTENCES = [
    "the cat sat on the mat",
    "a dog",
    "the cat sat on the mat",  # a repeat
    "stock markets fell sharply in early trading",
    "",
    "a dog",
    "zzzz qqqq",  # no known word: a zero row
]


@pytest.fixture(scope="module")
def toy(source: Path) -> StaticWordEmbeddings:
    return StaticWordEmbeddings.from_file(source / "evalrank" / "word_emb" / "toy_emb.txt", name="toy")


class Counting:
    """The toy GloVe's ``embed``, recording each call's texts."""

    def __init__(self, model: StaticWordEmbeddings) -> None:
        self.model = model
        self.calls: list[list[str]] = []

    def __call__(self, texts: list[str]) -> NDArray[np.float32]:
        self.calls.append(list(texts))
        return self.model.embed(texts)

    @property
    def encoded(self) -> Counter[str]:
        return Counter(text for call in self.calls for text in call)


def test_rows_are_the_encoders_and_each_text_is_encoded_once(toy: StaticWordEmbeddings) -> None:
    encode, stats = Counting(toy), EncodeStats()
    cache = EmbeddingCache()
    got = cache.embed(KEY, SENTENCES, encode, stats=stats)
    np.testing.assert_array_equal(got, toy.embed(SENTENCES))
    assert encode.encoded == Counter(set(SENTENCES))  # each distinct text once
    assert [len(t) for t in encode.calls[0]] == sorted(map(len, set(SENTENCES)), reverse=True)
    again = cache.embed(KEY, SENTENCES[::-1], encode, stats=stats)
    np.testing.assert_array_equal(again, toy.embed(SENTENCES[::-1]))
    assert len(encode.calls) == 1
    assert (stats.requested, stats.cached, stats.encoded) == (14, 7, 5)


def test_contexts_are_separate_stores(toy: StaticWordEmbeddings) -> None:
    cache, encode = EmbeddingCache(), Counting(toy)
    cache.embed(KEY, ["a dog"], encode)
    cache.embed(StoreKey(KEY.model, KEY.revision, "query"), ["a dog"], encode)
    cache.embed(StoreKey(KEY.model, "2.0.0", "none"), ["a dog"], encode)
    assert len(encode.calls) == 3


def test_a_wrong_row_count_names_the_model(toy: StaticWordEmbeddings) -> None:
    with pytest.raises(ValueError, match=r"toy-model: the encoder returned shape \(1, 50\) for 2 texts"):
        EmbeddingCache().embed(KEY, ["a", "b"], lambda texts: toy.embed(texts[:1]), where="toy-model")


def test_disk_stores_are_shared_by_caches_on_one_root(toy: StaticWordEmbeddings, tmp_path: Path) -> None:
    first, second = Counting(toy), Counting(toy)
    EmbeddingCache(tmp_path).embed(KEY, SENTENCES[:4], first)
    got = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, second)  # a new process, same root
    np.testing.assert_array_equal(got, toy.embed(SENTENCES))
    assert second.encoded == Counter(set(SENTENCES) - set(SENTENCES[:4]))
    assert len(list((tmp_path / KEY.folder()).glob("shard-*.npz"))) == 2
    # an instance store (one model object) is never written to disk
    EmbeddingCache(tmp_path).embed(StoreKey("x", "1", "none", instance=1), ["a dog"], Counting(toy))
    assert not (tmp_path / "x").exists()


def _worker(root: str, source: str, texts: list[str], out: str) -> None:
    model = StaticWordEmbeddings.from_file(Path(source) / "evalrank" / "word_emb" / "toy_emb.txt")
    encoded: list[str] = []

    def encode(batch: list[str]) -> NDArray[np.float32]:
        encoded.extend(batch)
        time.sleep(0.5)  # a slow encoder: the three processes overlap
        return model.embed(batch)

    EmbeddingCache(root).embed(KEY, texts, encode)
    Path(out).write_text("\n".join(encoded), encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_concurrent_processes_encode_a_text_once_between_them(source: Path, tmp_path: Path) -> None:
    words = [line.split(" ", 1)[0] for line in (source / "evalrank/word_emb/toy_emb.txt").open()][:3000]
    texts = [f"{a} {b}" for a, b in itertools.pairwise(words)]
    context = multiprocessing.get_context("fork")
    workers = [
        context.Process(target=_worker, args=(str(tmp_path), str(source), texts, str(tmp_path / f"{i}.txt")))
        for i in range(3)
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)  # a liveness bound, not a speed target
        assert worker.exitcode == 0
    encoded = [line for i in range(3) for line in (tmp_path / f"{i}.txt").read_text().splitlines() if line]
    assert Counter(encoded) == Counter(set(texts))  # once in all, whichever process it was
    keys = np.concatenate([np.load(s)["keys"] for s in (tmp_path / KEY.folder()).glob("shard-*.npz")])
    assert {bytes(k) for k in keys} == {text_digest(t) for t in texts} and len(keys) == len(set(texts))


def test_memory_bound_drops_the_least_recently_used_store(toy: StaticWordEmbeddings) -> None:
    row_bytes = 50 * 4
    cache = EmbeddingCache(max_bytes=3 * row_bytes)
    keys = [StoreKey(f"m{i}", "1") for i in range(3)]
    cache.embed(keys[0], ["a dog"], toy.embed)
    cache.embed(keys[1], ["a dog", "a cat"], toy.embed)
    assert cache.nbytes == 3 * row_bytes
    cache.embed(keys[0], ["a dog"], toy.embed)  # m0 is now the most recent
    cache.embed(keys[2], ["a dog"], toy.embed)  # 4 rows > 3: m1, least recently used, goes
    assert [k.model for k in cache._stores] == ["m0", "m2"]
    big = EmbeddingCache(max_bytes=1)
    big.embed(keys[0], ["a dog", "a cat"], toy.embed)  # the most recent store always stays
    assert len(big.store(keys[0])) == 2


def test_instance_stores_die_with_their_wrapper(toy: StaticWordEmbeddings) -> None:
    from mteb_evalrank.models.cached import CachedEncoder

    cache = EmbeddingCache()
    wrapper = CachedEncoder(toy, cache, by_instance=True)
    key = StoreKey(wrapper.name, wrapper.revision, "none", wrapper.instance)
    cache.embed(key, ["a dog"], toy.embed)
    assert key in cache._stores
    del wrapper
    gc.collect()
    assert key not in cache._stores


def test_minilm_variants_share_one_forward_pass_across_processes_caches(tmp_path: Path) -> None:
    """Two study workers (two caches on one root): the second runs no forward pass."""
    from mteb_evalrank.models.minilm import MiniLMLayerPooling

    texts = ["A man is playing a guitar.", "A woman is slicing an onion.", "Two dogs run."]
    with using_process_cache(EmbeddingCache(tmp_path)):
        before = MiniLMLayerPooling.forward_calls
        cls = MiniLMLayerPooling("cls").embed(texts)
        assert MiniLMLayerPooling.forward_calls - before == 1
    with using_process_cache(EmbeddingCache(tmp_path)) as second:
        calls = MiniLMLayerPooling.forward_calls
        mean = MiniLMLayerPooling("mean-last").embed(texts[::-1])
        again = MiniLMLayerPooling("cls").embed(texts)
        assert MiniLMLayerPooling.forward_calls == calls
        assert process_cache() is second
    assert process_cache() is not second
    direct = MiniLMLayerPooling("mean-last", cache=EmbeddingCache())  # no cache to read from
    np.testing.assert_allclose(mean, direct.embed(texts[::-1]), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(again, cls)


def test_instance_stores_die_with_their_wrapper_after_a_process_cache_swap(
    toy: StaticWordEmbeddings,
) -> None:
    """A by-instance wrapper keeps the cache it was built with: its finalizer drops from there."""
    from mteb_evalrank.models.cached import CachedEncoder

    wrapper = CachedEncoder(toy, by_instance=True)  # the process cache at construction
    built_with = process_cache()
    with using_process_cache(EmbeddingCache()) as swapped:
        assert wrapper.cache is built_with
        key = StoreKey(wrapper.name, wrapper.revision, "none", wrapper.instance)
        wrapper.cache.embed(key, ["a dog"], toy.embed)
        del wrapper
        gc.collect()
        assert key not in built_with._stores and key not in swapped._stores


def test_a_memory_cache_wrapper_creates_no_folder(
    toy: StaticWordEmbeddings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: with a memory-only cache, mteb's wrapper made an empty ``<model>/<revision>``
    folder under the working directory (the user's files must stay as they were)."""
    from mteb_evalrank.models.cached import CachedEncoder

    monkeypatch.chdir(tmp_path)
    for by_instance in (False, True):
        CachedEncoder(toy, EmbeddingCache(), by_instance=by_instance)
    with using_process_cache(EmbeddingCache()):
        CachedEncoder(toy)
    assert list(tmp_path.iterdir()) == []


def test_task_embeddings_hash_the_task_texts_once_per_model(
    toy: StaticWordEmbeddings, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task's every-text list (``encode_first``) is hashed on its first subset only: later
    subsets hash just their own texts. Rows equal the encoder's own output either way."""
    import mteb
    from mteb.timing import TimingStack

    import mteb_evalrank  # noqa: F401
    from mteb_evalrank import embedding_cache
    from mteb_evalrank.tasks._encoding import TaskEmbeddings

    hashed: list[str] = []

    def counting_digest(text: str) -> bytes:
        hashed.append(text)
        return text_digest(text)

    monkeypatch.setattr(embedding_cache, "text_digest", counting_digest)
    every_text = [sentence for sentence in dict.fromkeys(SENTENCES)]
    embeddings = TaskEmbeddings()
    kwargs = {
        "task_metadata": mteb.get_task("SentEvalMR").metadata,
        "encode_kwargs": {"batch_size": 4},
        "hf_split": "test",
        "timer": TimingStack(),
    }
    for fold, subset in enumerate((SENTENCES[:2], SENTENCES[3:], SENTENCES[1:4])):
        hashed.clear()
        rows = embeddings.embed(toy, subset, encode_first=every_text, hf_subset=f"fold{fold}", **kwargs)
        np.testing.assert_allclose(rows, toy.embed(subset), rtol=1e-6)
        assert len(hashed) == len(subset) + (len(every_text) if fold == 0 else 0), fold
    embeddings.clear()  # another model (or a cleared task) hashes the task texts again
    hashed.clear()
    embeddings.embed(toy, SENTENCES[:2], encode_first=every_text, hf_subset="fold0", **kwargs)
    assert len(hashed) == 2 + len(every_text)
