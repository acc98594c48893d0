"""The plugin's one embedding cache (``mteb_evalrank.embedding_cache``, ``tasks._encoding``).

Encoders are real: the EvalRank release's toy GloVe (read from the raw data) and the bundled
all-MiniLM-L6-v2. Expected rows are the encoder's own output on the same texts, computed
directly (no cache), and the encode counts are counted at the encoder.
"""

from __future__ import annotations

import gc
import itertools
import json
import multiprocessing
import os
import re
import subprocess
import sys
import time
import warnings
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from second_process import second_process

from mteb_evalrank.embedding_cache import (
    CACHE_DIR_ENV,
    CacheFolderWarning,
    CorruptShardWarning,
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


def test_memory_bound_drops_the_least_recently_used_rows(toy: StaticWordEmbeddings) -> None:
    """Past ``max_bytes``, after a call, the least recently used blocks of rows go, whatever
    their store; a dropped text is encoded again when asked for (memory only)."""
    row_bytes = 50 * 4
    cache = EmbeddingCache(max_bytes=3 * row_bytes)
    keys = [StoreKey(f"m{i}", "1") for i in range(3)]
    cache.embed(keys[0], ["a dog"], toy.embed)
    cache.embed(keys[1], ["a dog", "a cat"], toy.embed)
    assert cache.nbytes == 3 * row_bytes
    cache.embed(keys[0], ["a dog"], toy.embed)  # m0's row is now the most recent
    cache.embed(keys[2], ["a dog"], toy.embed)  # 4 rows > 3: m1's block, least recently used, goes
    assert [len(cache.store(key)) for key in keys] == [1, 0, 1] and cache.nbytes == 2 * row_bytes
    encode = Counting(toy)
    np.testing.assert_array_equal(cache.embed(keys[1], ["a cat"], encode), toy.embed(["a cat"]))
    assert encode.encoded == Counter(["a cat"])
    tiny = EmbeddingCache(max_bytes=1)  # the call's rows are returned, then dropped
    np.testing.assert_array_equal(tiny.embed(keys[0], SENTENCES, toy.embed), toy.embed(SENTENCES))
    assert tiny.nbytes == 0


def test_rows_dropped_from_memory_are_read_again_from_disk(toy: StaticWordEmbeddings, tmp_path: Path) -> None:
    """With a folder, the memory bound spills to disk: a dropped block's texts are read back
    from its shard (only the shards holding an asked text), never encoded again."""
    row_bytes = 50 * 4
    cache = EmbeddingCache(tmp_path, max_bytes=2 * row_bytes)
    first, second = SENTENCES[:2], ["a cat", "stock markets"]
    cache.embed(KEY, first, toy.embed)
    cache.embed(KEY, second, toy.embed)  # 4 rows > 2: the first block goes
    assert len(cache.store(KEY)) == 2 and cache.nbytes == 2 * row_bytes
    encode = Counting(toy)
    np.testing.assert_array_equal(cache.embed(KEY, first, encode), toy.embed(first))
    assert encode.calls == []  # read from its shard
    assert set(cache.store(KEY).index) == {text_digest(t) for t in first}  # the other shard not read


def test_instance_stores_die_with_their_model(toy: StaticWordEmbeddings) -> None:
    """Stores kept by object are the model object's: they go when it is garbage-collected."""
    import copy

    from mteb_evalrank.tasks._encoding import CachedEncoder

    cache = EmbeddingCache()
    model = copy.copy(toy)  # an object of its own (the fixture lives on)
    wrapper = CachedEncoder(model, cache, by_instance=True)
    key = StoreKey(wrapper.name, wrapper.revision, "none", wrapper.instance)
    cache.embed(key, ["a dog"], toy.embed)
    del wrapper
    gc.collect()
    assert key in cache._stores  # the model lives: a later wrapper of it finds its rows
    del model
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
    with using_process_cache(EmbeddingCache()):  # no cache to read from
        direct = MiniLMLayerPooling("mean-last")
    np.testing.assert_allclose(mean, direct.embed(texts[::-1]), rtol=0, atol=1e-6)
    np.testing.assert_array_equal(again, cls)


def test_instance_stores_die_with_their_model_after_a_process_cache_swap(
    toy: StaticWordEmbeddings,
) -> None:
    """A by-instance wrapper keeps the cache it was built with: the finalizer drops from there."""
    import copy

    from mteb_evalrank.tasks._encoding import CachedEncoder

    model = copy.copy(toy)
    wrapper = CachedEncoder(model, by_instance=True)  # the process cache at construction
    built_with = process_cache()
    with using_process_cache(EmbeddingCache()) as swapped:
        assert wrapper.cache is built_with
        key = StoreKey(wrapper.name, wrapper.revision, "none", wrapper.instance)
        wrapper.cache.embed(key, ["a dog"], toy.embed)
        del wrapper, model
        gc.collect()
        assert key not in built_with._stores and key not in swapped._stores


def test_a_memory_cache_wrapper_creates_no_folder(
    toy: StaticWordEmbeddings, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression: with a memory-only cache, mteb's wrapper made an empty ``<model>/<revision>``
    folder under the working directory (the user's files must stay as they were)."""
    from mteb_evalrank.tasks._encoding import CachedEncoder

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


# ------------------------------------------------------------- damaged shards
def _arrays(shard: Path) -> dict[str, NDArray[np.generic]]:
    with np.load(shard) as data:
        return {name: data[name] for name in data.files}


def _rewrite(shard: Path, **changes: NDArray[np.generic] | None) -> None:
    """Write the shard again (as the cache does: a real ``.npz``) with some arrays changed or dropped."""
    arrays = {k: v for k, v in (_arrays(shard) | changes).items() if v is not None}
    with shard.open("wb") as handle:
        np.savez(handle, **arrays)


def _truncate(shard: Path) -> None:
    shard.write_bytes(shard.read_bytes()[:1000])  # as in the issue: a copy cut at 1,000 bytes


def _directory(shard: Path) -> None:
    """Unreadable: a folder where the shard file should be (chmod 000 does not stop root)."""
    shard.unlink()
    shard.mkdir()
    (shard / "keys.npy").write_bytes(b"")


def _flip(shard: Path, offset: int) -> None:
    """One byte inverted (a bad disk sector): the CRC-32 of the zip member catches it."""
    data = bytearray(shard.read_bytes())
    data[offset] ^= 0xFF
    shard.write_bytes(bytes(data))


def _keys(shard: Path) -> NDArray[np.generic]:
    return _arrays(shard)["keys"]


def _vectors(shard: Path) -> NDArray[np.generic]:
    return _arrays(shard)["vectors"]


SHARD_FAULTS: dict[str, tuple[Callable[[Path], None], str]] = {
    "truncated": (_truncate, "BadZipFile"),
    "zero bytes": (lambda s: s.write_bytes(b""), "EOFError"),
    "not a zip": (lambda s: s.write_text("the cat sat on the mat\n", encoding="utf-8"), "unreadable"),
    "a byte flipped": (lambda s: _flip(s, 400), "Bad CRC-32"),
    "unreadable (a folder)": (_directory, "IsADirectoryError"),
    "no vectors": (lambda s: _rewrite(s, vectors=None), "no vectors array"),
    "vectors not a matrix": (
        lambda s: _rewrite(s, vectors=_vectors(s).ravel()),
        r"vectors of shape \(250,\)",
    ),
    "integer vectors": (lambda s: _rewrite(s, vectors=_vectors(s).astype(np.int64)), "int64"),
    "pickled vectors": (
        lambda s: _rewrite(s, vectors=np.array(list(_vectors(s)), dtype=object)),
        "unreadable: ValueError",
    ),
    "short keys": (lambda s: _rewrite(s, keys=_keys(s)[:, :8]), r"keys of shape \(5, 8\) uint8"),
    "float keys": (lambda s: _rewrite(s, keys=_keys(s).astype(np.float32)), "float32"),
    "fewer rows than digests": (lambda s: _rewrite(s, vectors=_vectors(s)[:-1]), "5 digests for 4 rows"),
    "another store's shard": (
        lambda s: _rewrite(s, store=np.array("other__model/1.0.0/none")),
        "written for the store 'other__model/1.0.0/none'",
    ),
    "no store recorded": (lambda s: _rewrite(s, store=None), "no store array"),
}


def _content(path: Path) -> bytes | list[str]:
    return sorted(p.name for p in path.iterdir()) if path.is_dir() else path.read_bytes()


def _corrupt_warnings(
    record: list[warnings.WarningMessage], category: type[Warning] = CorruptShardWarning
) -> list[str]:
    return [str(w.message) for w in record if issubclass(w.category, category)]


def _no_warning_run(
    root: Path, toy: StaticWordEmbeddings, texts: list[str]
) -> tuple[NDArray[np.float32], Counting]:
    """A later run on ``root``: it must neither warn nor encode (everything is on disk, whole)."""
    encode = Counting(toy)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptShardWarning)
        rows = EmbeddingCache(root).embed(KEY, texts, encode)
    assert encode.calls == []
    return rows, encode


@pytest.mark.parametrize("fault", list(SHARD_FAULTS))
@second_process
def test_a_damaged_shard_is_moved_aside_and_its_rows_encoded_again(
    toy: StaticWordEmbeddings, tmp_path: Path, fault: str
) -> None:
    """The issue's case and its kin: one warning names the shard and the fault, the shard is
    kept as ``*.corrupt`` (never deleted), its texts are encoded again, the rows are a clean run's."""
    damage, reason = SHARD_FAULTS[fault]
    clean = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    (shard,) = (tmp_path / KEY.folder()).glob("shard-*.npz")
    damage(shard)
    damaged = _content(shard)
    encode = Counting(toy)
    with pytest.warns(CorruptShardWarning) as record:
        rows = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, encode)
    np.testing.assert_array_equal(rows, clean)
    assert encode.encoded == Counter(set(SENTENCES))  # each lost text once
    (message,) = _corrupt_warnings(record.list)
    assert str(shard) in message and "moved aside" in message
    assert re.search(reason, message), message
    aside = shard.with_name(shard.name + ".corrupt")
    assert _content(aside) == damaged  # the user's file, untouched
    np.testing.assert_array_equal(_no_warning_run(tmp_path, toy, SENTENCES)[0], clean)


def _write_store_shard(folder: Path, name: str, texts: list[str], vectors: NDArray[np.float32]) -> Path:
    """A shard of ``KEY``'s store (as the cache writes one) holding ``vectors`` for ``texts``."""
    folder.mkdir(parents=True, exist_ok=True)
    keys = np.frombuffer(b"".join(map(text_digest, texts)), dtype=np.uint8).reshape(len(texts), 16)
    with (folder / name).open("wb") as handle:
        np.savez(handle, keys=keys, vectors=vectors, store=np.array(KEY.folder().as_posix()))
    return folder / name


@second_process
def test_a_shard_of_another_dimension_beside_good_ones_is_moved_aside(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """A newer shard of the store holding 25-d rows (a model whose output changed under the same
    name and revision) beside the 50-d ones: the oldest shard's dimension is the store's, so it
    is moved aside and the good shard still serves every text."""
    clean = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    texts = ["a dog", "the cat sat on the mat"]
    name = f"shard-{9 * 10**19:020d}-1.npz"  # the newest name: read last
    foreign = _write_store_shard(tmp_path / KEY.folder(), name, texts, toy.embed(texts)[:, :25])
    encode = Counting(toy)
    with pytest.warns(CorruptShardWarning) as record:
        rows = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, encode)
    np.testing.assert_array_equal(rows, clean)
    assert encode.calls == []
    (message,) = _corrupt_warnings(record.list)
    assert str(foreign) in message and "25-d vectors in a store of 50-d ones" in message
    assert foreign.with_name(foreign.name + ".corrupt").is_file()


@second_process
def test_a_store_of_another_model_is_moved_aside_when_the_encoder_meets_it(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """Every shard of the store holds another dimension than the encoder gives (a model whose
    output changed under the same name and revision): the first text to encode shows it; they
    are moved aside and every text re-encoded."""
    texts = SENTENCES[:2]
    _write_store_shard(
        tmp_path / KEY.folder(), f"shard-{1:020d}-1.npz", texts, np.hstack([toy.embed(texts)] * 2)
    )
    encode = Counting(toy)
    with pytest.warns(CorruptShardWarning) as record:
        rows = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, encode)
    np.testing.assert_array_equal(rows, toy.embed(SENTENCES))
    (message,) = _corrupt_warnings(record.list)
    assert "100-d vectors, the encoder of evalrank/glove-toy-50d gives 50-d ones" in message
    assert encode.encoded == Counter(set(SENTENCES))
    np.testing.assert_array_equal(_no_warning_run(tmp_path, toy, SENTENCES)[0], rows)


@second_process
def test_another_format_versions_folders_are_never_read_nor_touched(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """The root's first folder names the shard format: a whole store of another version (a later
    release's ``format-2``, or shards laid out without a version folder) is neither read nor
    changed; this version encodes every text and writes under its own folder."""
    EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    (shard,) = (tmp_path / KEY.folder()).glob("shard-*.npz")
    unversioned = tmp_path / Path(*KEY.folder().parts[1:]) / shard.name
    later = tmp_path / "format-2" / Path(*KEY.folder().parts[1:]) / shard.name
    for other in (unversioned, later):
        other.parent.mkdir(parents=True)
        other.write_bytes(shard.read_bytes())
    shard.parent.joinpath(".lock").unlink()
    shard.unlink()
    before = {p: _content(p) for p in tmp_path.rglob("*") if "format-1" not in p.parts}
    encode = Counting(toy)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        rows = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, encode)
    np.testing.assert_array_equal(rows, toy.embed(SENTENCES))
    assert encode.encoded == Counter(set(SENTENCES))
    assert {p: _content(p) for p in tmp_path.rglob("*") if "format-1" not in p.parts} == before
    assert (
        KEY.folder().parts[0] == "format-1" and len(list((tmp_path / KEY.folder()).glob("shard-*.npz"))) == 1
    )


@second_process
def test_a_corrupt_name_is_never_overwritten(toy: StaticWordEmbeddings, tmp_path: Path) -> None:
    """The same shard name damaged twice (a sync tool restoring it): both damaged copies are kept."""
    EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    (shard,) = (tmp_path / KEY.folder()).glob("shard-*.npz")
    for attempt in (b"first", b"second"):
        shard.write_bytes(attempt)
        with pytest.warns(CorruptShardWarning):
            EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    kept = {p.name: p.read_bytes() for p in shard.parent.glob(f"{shard.name}.corrupt*")}
    assert kept == {f"{shard.name}.corrupt": b"first", f"{shard.name}.corrupt-1": b"second"}


def _damaged_worker(root: str, source: str, texts: list[str], out: str) -> None:
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        _worker(root, source, texts, out)
    Path(out + ".warnings").write_text(json.dumps(_corrupt_warnings(record)), encoding="utf-8")


@pytest.mark.skipif(sys.platform == "win32", reason="flock")
def test_concurrent_processes_meet_a_damaged_shard_once(
    toy: StaticWordEmbeddings, source: Path, tmp_path: Path
) -> None:
    """Three workers start on a folder holding a truncated shard: it is moved aside once, one
    warning in all, its texts encoded once between them, every worker ends well."""
    texts = [f"{a} {b}" for a, b in itertools.pairwise(sorted(toy.index)[:400])]
    EmbeddingCache(tmp_path).embed(KEY, texts[:200], toy.embed)
    (shard,) = (tmp_path / KEY.folder()).glob("shard-*.npz")
    _truncate(shard)
    context = multiprocessing.get_context("fork")
    outs = [str(tmp_path / f"{i}.txt") for i in range(3)]
    workers = [
        context.Process(target=_damaged_worker, args=(str(tmp_path), str(source), texts, o)) for o in outs
    ]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(timeout=120)
        assert worker.exitcode == 0
    encoded = [line for out in outs for line in Path(out).read_text().splitlines() if line]
    assert Counter(encoded) == Counter(set(texts))
    messages = [m for out in outs for m in json.loads(Path(out + ".warnings").read_text())]
    assert len(messages) == 1 and str(shard) in messages[0]
    assert [p.name for p in shard.parent.glob("*.corrupt")] == [shard.name + ".corrupt"]
    np.testing.assert_array_equal(_no_warning_run(tmp_path, toy, texts)[0], toy.embed(texts))


# ------------------------------------------------------- the same score after damage
@pytest.fixture(scope="module")
def word_similarity(source: Path) -> None:
    """The word-similarity sets installed in this process's datasets cache."""
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import WORD_SIMILARITY

    hub.install_into_cache(WORD_SIMILARITY, WORD_SIMILARITY.recipe.build(source))


def _ws353(
    root: Path, monkeypatch: pytest.MonkeyPatch, source: Path, category: type[Warning] = CorruptShardWarning
) -> tuple[float, list[str]]:
    """WordSimWS353All with the toy GloVe over the on-disk cache at ``root``: score and warnings
    (those of ``category``)."""
    import mteb

    import mteb_evalrank  # noqa: F401
    from mteb_evalrank.tasks._encoding import CachedEncoder

    monkeypatch.setenv("MTEB_EVALRANK_SOURCE", str(source))
    model = CachedEncoder(mteb.get_model("evalrank/glove-toy-50d"), EmbeddingCache(root))
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        result = mteb.evaluate(
            model, mteb.get_task("WordSimWS353All"), cache=None, overwrite_strategy="always",
            show_progress_bar=False,
        )  # fmt: skip
    return float(result.task_results[0].get_score()), _corrupt_warnings(record, category)


@pytest.mark.slow
@pytest.mark.parametrize(
    "fault",
    ["truncated", "zero bytes", "another store's shard", "no store recorded"],
)
@second_process
def test_the_score_after_a_damaged_shard_is_a_clean_runs(
    word_similarity: None, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fault: str
) -> None:
    """The issue's case through mteb: a task run, every shard damaged, the run again: one
    warning per shard and the clean run's score."""
    clean, none = _ws353(tmp_path, monkeypatch, source)
    shards = sorted(tmp_path.rglob("shard-*.npz"))
    assert shards and none == []
    for shard in shards:
        SHARD_FAULTS[fault][0](shard)
    score, messages = _ws353(tmp_path, monkeypatch, source)
    assert score == clean
    assert sorted(m.split(" is unusable")[0].removeprefix("embedding cache: ") for m in messages) == [
        str(s) for s in shards
    ]
    assert _ws353(tmp_path, monkeypatch, source) == (clean, [])


@pytest.mark.slow
@pytest.mark.parametrize("model", ["evalrank/all-MiniLM-L6-v2-cls", "sentence-transformers/all-MiniLM-L6-v2"])
def test_mteb_cli_run_after_the_issues_truncated_shard(
    word_similarity: None, tmp_path: Path, model: str, request: pytest.FixtureRequest
) -> None:
    """``mteb run`` with the cache on disk (a zoo model, and a user's sentence-transformers model
    whose rows the run keeps there), a shard cut to 1,000 bytes, ``mteb run`` again: exit 0, one
    warning naming the shard, the same score."""
    if not model.startswith("evalrank/"):
        request.getfixturevalue("offline_models")
    env = os.environ | {CACHE_DIR_ENV: str(tmp_path / "cache")}

    def run(output: str) -> tuple[float, str]:
        folder = str(tmp_path / output)
        mteb_cli = str(Path(sys.executable).parent / "mteb")
        command = [mteb_cli, "run", "-t", "WordSimWS353All", "-m", model, "--output-folder", folder]
        done = subprocess.run(command, capture_output=True, text=True, env=env)
        assert done.returncode == 0, done.stderr[-3000:]
        (result,) = (tmp_path / output).rglob("WordSimWS353All.json")
        return json.loads(result.read_text())["scores"]["test"][0]["main_score"], done.stderr

    clean, _ = run("clean")
    shards = sorted((tmp_path / "cache").rglob("shard-*.npz"))
    assert shards
    _truncate(shards[0])
    score, stderr = run("damaged")
    assert score == clean
    assert stderr.count("CorruptShardWarning") == 1 and str(shards[0]) in stderr


@second_process
def test_a_write_cut_by_sigkill_leaves_a_temporary_file_that_is_never_read(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """A process killed (SIGKILL, Ctrl-C) inside ``np.savez`` leaves its half-written
    ``.shard-*.npz.*.tmp``; only ``os.replace`` makes a shard, so readers never see the half file:
    no warning, nothing re-encoded, the temporary file left as it was."""
    clean = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    folder = tmp_path / KEY.folder()
    (shard,) = folder.glob("shard-*.npz")
    half = folder / f".shard-{time.time_ns():020d}-99999.npz.0123456789abcdef.tmp"
    half.write_bytes(shard.read_bytes()[:700])
    rows, _ = _no_warning_run(tmp_path, toy, SENTENCES)
    np.testing.assert_array_equal(rows, clean)
    assert half.read_bytes() == shard.read_bytes()[:700]


@second_process
def test_a_killed_writers_temporary_file_is_removed_by_the_next_write(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """The next process that writes to the store holds its lock, under which no other writer can
    be inside ``np.savez``: a ``.shard-*.npz.*.tmp`` left then is a killed writer's and is removed."""
    EmbeddingCache(tmp_path).embed(KEY, SENTENCES[:4], toy.embed)
    folder = tmp_path / KEY.folder()
    half = folder / f".shard-{time.time_ns():020d}-99999.npz.0123456789abcdef.tmp"
    half.write_bytes(b"PK\x03\x04 half a shard")
    with warnings.catch_warnings():
        warnings.simplefilter("error", CorruptShardWarning)
        rows = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)  # writes the other rows
    np.testing.assert_array_equal(rows, toy.embed(SENTENCES))
    assert not half.exists()
    assert list(folder.glob(".*.tmp")) == []


@second_process
def test_a_live_writers_temporary_file_is_left_alone(toy: StaticWordEmbeddings, tmp_path: Path) -> None:
    """A writer inside ``np.savez`` holds the store's lock: another cache that needs to write waits
    for it and never removes its temporary file, which then becomes a whole shard."""
    import threading

    EmbeddingCache(tmp_path).embed(KEY, SENTENCES[:2], toy.embed)
    live = EmbeddingCache(tmp_path).store(KEY)
    assert live.directory is not None
    other: dict[str, NDArray[np.float32]] = {}
    with live.locked():  # the live writer, between np.savez's first byte and os.replace
        temporary = live.directory / f".shard-{time.time_ns():020d}-{os.getpid()}.npz.0123456789abcdef.tmp"
        empty = {"keys": np.zeros((0, 16), np.uint8), "vectors": np.zeros((0, 50), np.float32)}
        with temporary.open("wb") as handle:
            np.savez(handle, **empty, store=np.array(KEY.folder().as_posix()))
        waiting = threading.Thread(
            target=lambda: other.update(rows=EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed))
        )
        waiting.start()
        waiting.join(timeout=1.0)
        assert waiting.is_alive() and temporary.exists()  # it waits for the lock
        temporary.replace(live.directory / temporary.name[1:].removesuffix(".0123456789abcdef.tmp"))
    waiting.join(timeout=60)
    assert not waiting.is_alive()
    np.testing.assert_array_equal(other["rows"], toy.embed(SENTENCES))
    assert len(list(live.directory.glob("shard-*.npz"))) == 3  # the first, the live writer's, the other's


# ------------------------------------------------- a cache folder that cannot be used
def _a_path_through_a_file(tmp_path: Path) -> Path:
    """A cache root whose parent is a file (a mistyped ``$MTEB_EVALRANK_EMBEDDING_CACHE``, an
    unmounted disk's mount point replaced): it can be neither created nor read, even by root."""
    (tmp_path / "a-file").write_text("not a folder", encoding="utf-8")
    return tmp_path / "a-file" / "cache"


@second_process
def test_a_cache_folder_that_cannot_be_created_keeps_the_store_in_memory_with_one_warning(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """The run goes on: the encoder's rows, each text encoded once, one warning naming the folder."""
    root = _a_path_through_a_file(tmp_path)
    cache, encode = EmbeddingCache(root), Counting(toy)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rows = cache.embed(KEY, SENTENCES, encode)
        again = cache.embed(KEY, SENTENCES[::-1], encode)
    np.testing.assert_array_equal(rows, toy.embed(SENTENCES))
    np.testing.assert_array_equal(again, toy.embed(SENTENCES[::-1]))
    assert encode.encoded == Counter(set(SENTENCES))
    (message,) = _corrupt_warnings(record, CacheFolderWarning)
    assert f"the folder {root / KEY.folder()} cannot be used (NotADirectoryError" in message
    assert "kept in memory for this process only" in message and CACHE_DIR_ENV in message
    assert _corrupt_warnings(record) == []


_FULL_DISK_RUN = """
import json, resource, signal, sys, warnings
from pathlib import Path
from mteb_evalrank.embedding_cache import CacheFolderWarning, EmbeddingCache, StoreKey
from mteb_evalrank.models.static import StaticWordEmbeddings

root, vectors, texts = Path(sys.argv[1]), Path(sys.argv[2]), json.loads(sys.argv[3])
toy = StaticWordEmbeddings.from_file(vectors, name="toy")
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead
resource.setrlimit(resource.RLIMIT_FSIZE, (256, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
with warnings.catch_warnings(record=True) as record:
    warnings.simplefilter("always")
    rows = EmbeddingCache(root).embed(StoreKey(*sys.argv[4:7]), texts, toy.embed)
print(json.dumps({"rows": rows.tolist(), "warnings": [str(w.message) for w in record]}))
"""


def test_a_full_disk_while_a_shard_is_written_keeps_the_rows_with_one_warning(
    toy: StaticWordEmbeddings, source: Path, tmp_path: Path
) -> None:
    """Writes past 256 bytes fail (``RLIMIT_FSIZE``, as a full disk; root too): the run returns
    the encoder's rows, one warning names the folder, no half shard is left."""
    vectors = source / "evalrank" / "word_emb" / "toy_emb.txt"
    command = [sys.executable, "-c", _FULL_DISK_RUN, str(tmp_path), str(vectors), json.dumps(SENTENCES)]
    env = os.environ | {"PYTHONDONTWRITEBYTECODE": "1"}
    done = subprocess.run(
        [*command, KEY.model, KEY.revision, KEY.context], capture_output=True, text=True, env=env
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out = json.loads(done.stdout)
    np.testing.assert_allclose(np.array(out["rows"]), toy.embed(SENTENCES), rtol=0, atol=0)
    (message,) = out["warnings"]
    assert f"the folder {tmp_path / KEY.folder()} cannot be used (OSError: File too large)" in message
    assert sorted(p.name for p in (tmp_path / KEY.folder()).iterdir()) == [".lock"]


@pytest.mark.skipif(
    hasattr(os, "geteuid") and os.geteuid() == 0,
    reason="root reads and writes whatever the permissions; the path through a file and the full "
    "disk exercise the same code as root",
)
@second_process
def test_a_read_only_store_and_an_unreadable_shard_are_skipped_with_a_warning_each(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """``chmod 0o500`` on the store, ``0o000`` on its shard: the shard is left where it is (it may
    be another user's), its texts encoded again, kept in memory; the encoder's rows."""
    EmbeddingCache(tmp_path).embed(KEY, SENTENCES[:2], toy.embed)
    folder = tmp_path / KEY.folder()
    (shard,) = folder.glob("shard-*.npz")
    shard.chmod(0o000)
    folder.chmod(0o500)
    try:
        with warnings.catch_warnings(record=True) as record:
            warnings.simplefilter("always")
            rows = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    finally:
        folder.chmod(0o700)
        shard.chmod(0o600)
    np.testing.assert_array_equal(rows, toy.embed(SENTENCES))
    unreadable, read_only = _corrupt_warnings(record, CacheFolderWarning)
    assert f"{shard} cannot be read by this process" in unreadable
    assert f"the folder {folder} cannot be used (PermissionError" in read_only
    assert sorted(p.name for p in folder.iterdir()) == [".lock", shard.name]


@contextmanager
def _immutable(folder: Path) -> Iterator[None]:
    """``chattr +i``: no rename, no new file in ``folder``, even for root (ext4, xfs, btrfs);
    skips the test where the attribute cannot be set (another file system, no capability)."""
    import shutil

    chattr = shutil.which("chattr")
    if chattr is None or subprocess.run([chattr, "+i", str(folder)], capture_output=True).returncode:
        pytest.skip(f"cannot make {folder} immutable (chattr +i) on this machine")
    try:
        yield
    finally:
        subprocess.run([chattr, "-i", str(folder)], check=True)


def test_a_damaged_shard_in_a_folder_that_cannot_be_changed_stays_and_is_never_read(
    toy: StaticWordEmbeddings, tmp_path: Path
) -> None:
    """A truncated shard in a folder where nothing can be renamed or written: one warning names
    it and says it could not be moved aside, the rows are the encoder's (kept in memory), the
    shard stays as it was."""
    EmbeddingCache(tmp_path).embed(KEY, SENTENCES[:2], toy.embed)
    folder = tmp_path / KEY.folder()
    (shard,) = folder.glob("shard-*.npz")
    _truncate(shard)
    damaged = shard.read_bytes()
    with _immutable(folder), warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        rows = EmbeddingCache(tmp_path).embed(KEY, SENTENCES, toy.embed)
    np.testing.assert_array_equal(rows, toy.embed(SENTENCES))
    (message,) = _corrupt_warnings(record)
    assert f"{shard} is unusable" in message and "could not be moved aside" in message
    assert shard.read_bytes() == damaged and not list(folder.glob("*.corrupt"))


@pytest.mark.slow
@second_process
def test_the_score_over_a_cache_folder_that_cannot_be_created_is_a_clean_runs(
    word_similarity: None, source: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A task run through mteb with the cache's path running through a file: a clean run's score
    and one warning naming the folder."""
    clean, _ = _ws353(tmp_path / "clean", monkeypatch, source)
    score, messages = _ws353(_a_path_through_a_file(tmp_path), monkeypatch, source, CacheFolderWarning)
    assert score == clean
    (message,) = messages
    assert "cannot be used (NotADirectoryError" in message
