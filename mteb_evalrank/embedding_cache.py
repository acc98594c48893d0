"""The plugin's one embedding cache: ``(model, revision, encoding context, text) -> vector``.

Every place that keeps embeddings uses it: the tasks (a text encoded once per model across a
task's hf_subsets, :class:`mteb_evalrank.tasks._encoding.TaskEmbeddings`), the model zoo
(one forward pass per text per *family*: the variants of a family pool, truncate or
post-process the same cached base output) and the study (the same, persisted on disk and
shared by every worker). This module is numpy only (it imports neither mteb nor torch); the
mteb encoder over it is :class:`mteb_evalrank.models.cached.CachedEncoder`, which keeps the
interface of mteb's ``CachedEmbeddingWrapper`` (one ``NumpyCache`` per *task*, its whole
index rewritten on every save) and replaces the storage with this one.

**Key.** A :class:`StoreKey` names one store: the model's mteb name and revision and the
*encoding context*, i.e. what besides the text changes the embedding (prompt type, the
model's prompt name for the task, the task itself for instruction-following models,
precision; see ``CachedEncoder.key``). Inside a store a text is a 16-byte BLAKE2b
digest of its UTF-8 bytes (:func:`text_digest`). A store keyed by ``instance`` (an object
id) serves one model *object* only and is never written to disk: that is how a task caches
an arbitrary encoder whose name may not identify its weights.

**Storage.** A :class:`VectorStore` is a matrix of rows plus a ``digest -> row`` index. With
a folder (an :class:`EmbeddingCache` with a ``root``) every batch of new rows is also
written as one append-only shard ``shard-<ns>-<pid>.npz`` (digests as ``uint8[n, 16]``, the
vectors in the model's dtype) under ``<root>/<org__model>/<revision>/<context>/``: written
to a temporary name and ``os.replace``-d into place, so a killed process leaves whole shards
only, and a save costs O(new rows). Before encoding, a store takes an exclusive ``flock``
on its folder and reads the shards other processes wrote meanwhile, so concurrent workers
encode a text once between them.

**Memory.** An :class:`EmbeddingCache` bounds the bytes its stores hold in memory
(``max_bytes``); past it, whole least-recently-used stores are dropped (a persisted store
reloads its shards when asked again). The most recently used store is never dropped.

**Process cache.** :func:`process_cache` is the cache the zoo's family base encoders share
in a process: in memory, bounded by ``$MTEB_EVALRANK_CACHE_MIB`` (default 4096 MiB), and
persisted under ``$MTEB_EVALRANK_EMBEDDING_CACHE`` when that names a folder (the study sets
it for its workers). Embeddings of models whose weights cannot change (the zoo's, loaded
from installed packages) are keyed by name; a model you train and evaluate in one process
is never cached across evaluations unless you wrap it yourself.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

DIGEST_SIZE = 16
CACHE_DIR_ENV = "MTEB_EVALRANK_EMBEDDING_CACHE"
CACHE_MIB_ENV = "MTEB_EVALRANK_CACHE_MIB"
DEFAULT_MAX_MIB = 4096

Encode = Callable[[list[str]], Any]
"""``texts -> (len(texts), dim)`` array: what a store calls for the texts it lacks."""


def text_digest(text: str) -> bytes:
    """The key of a text inside a store: 16 bytes of BLAKE2b over its UTF-8 encoding."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=DIGEST_SIZE).digest()


def model_dir_name(name: str) -> str:
    """``org/model`` -> ``org__model`` (mteb's ResultCache convention)."""
    return name.replace("/", "__").replace(" ", "_")


def as_numpy(vectors: Any) -> NDArray[Any]:
    """An encoder's output as a numpy array (torch tensors leave the device; half precision -> float32)."""
    if hasattr(vectors, "detach"):  # torch tensor
        vectors = vectors.detach().cpu()
        if vectors.is_floating_point() and str(vectors.dtype) not in {"torch.float32", "torch.float64"}:
            vectors = vectors.float()
        vectors = vectors.numpy()
    return np.asarray(vectors)


@dataclass(frozen=True)
class StoreKey:
    """Everything but the text that identifies a cached embedding.

    ``model`` and ``revision``: the mteb model name and revision; ``context``: the encoding
    context (a folder-safe string); ``instance``: an object id for a store that serves one
    model object only (never persisted).
    """

    model: str
    revision: str
    context: str = "none"
    instance: int | None = None

    def folder(self) -> Path:
        """``<org__model>/<revision>/<context>``: where the store's shards live under a root."""
        return Path(model_dir_name(self.model)) / model_dir_name(self.revision) / self.context


@dataclass
class EncodeStats:
    """What a cache did for one model.

    ``requested``: rows asked for; ``cached``: rows found in the cache; ``encoded``: unique
    texts passed to the encoder (a row repeating a missing text of the same call counts in
    neither); ``encode_seconds``: time inside the encoder; ``uncached_calls``: encode calls
    passed through uncached (non-text inputs).
    """

    requested: int = 0
    cached: int = 0
    encoded: int = 0
    encode_seconds: float = 0.0
    encode_calls: int = 0
    uncached_calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class VectorStore:
    """``digest -> vector`` for one :class:`StoreKey`, in memory and, with ``directory``, on disk."""

    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory
        self.index: dict[bytes, int] = {}
        self._blocks: list[NDArray[Any]] = []
        self._matrix: NDArray[Any] | None = None
        self._shards: set[str] = set()
        self.refresh()

    def __len__(self) -> int:
        return len(self.index)

    @property
    def nbytes(self) -> int:
        return sum(block.nbytes for block in self._blocks)

    def refresh(self) -> None:
        """Read the shards of the folder that this store has not read yet (other processes' work)."""
        if self.directory is None or not self.directory.is_dir():
            return
        for shard in sorted(self.directory.glob("shard-*.npz")):
            if shard.name in self._shards:
                continue
            with np.load(shard) as data:
                keys, vectors = data["keys"], data["vectors"]
            raw = np.ascontiguousarray(keys, dtype=np.uint8).tobytes()
            self._append([raw[i : i + DIGEST_SIZE] for i in range(0, len(raw), DIGEST_SIZE)], vectors)
            self._shards.add(shard.name)

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive access across processes (``flock`` on ``<directory>/.lock``); a no-op in memory."""
        if self.directory is None:
            yield
            return
        self.directory.mkdir(parents=True, exist_ok=True)
        with (self.directory / ".lock").open("a") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                self.refresh()
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _append(self, digests: list[bytes], vectors: NDArray[Any]) -> None:
        start = sum(len(block) for block in self._blocks)
        for offset, digest in enumerate(digests):
            self.index.setdefault(digest, start + offset)
        self._blocks.append(vectors)
        self._matrix = None

    def matrix(self) -> NDArray[Any]:
        """All rows, in insertion order (row ``index[digest]`` is that text's vector)."""
        if self._matrix is None:
            self._matrix = self._blocks[0] if len(self._blocks) == 1 else np.concatenate(self._blocks)
            self._blocks = [self._matrix]
        return self._matrix

    def add(self, digests: list[bytes], vectors: NDArray[Any]) -> None:
        """Add rows (persisted first as one atomic shard when the store has a folder)."""
        if len(digests) != len(vectors):
            raise ValueError(f"{len(digests)} keys for {len(vectors)} vectors")
        if self.directory is not None:
            self.directory.mkdir(parents=True, exist_ok=True)
            name = f"shard-{time.time_ns():020d}-{os.getpid()}"
            tmp = self.directory / f".{name}.tmp.npz"
            keys = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), DIGEST_SIZE)
            np.savez(tmp, keys=keys, vectors=vectors)
            tmp.replace(self.directory / f"{name}.npz")  # atomic: a reader sees whole shards only
            self._shards.add(f"{name}.npz")
        self._append(digests, vectors)

    def take(self, digests: Sequence[bytes]) -> NDArray[Any]:
        """The rows of ``digests``, in order (a ``KeyError`` for a digest not stored)."""
        rows = np.fromiter((self.index[d] for d in digests), dtype=np.int64, count=len(digests))
        return self.matrix()[rows]


class EmbeddingCache:
    """Stores of text embeddings by :class:`StoreKey`, bounded in memory, optionally on disk.

    Args:
        root: folder of persisted stores (``None``: memory only).
        max_bytes: memory bound over all stores; least recently used stores are dropped past it.
    """

    def __init__(self, root: str | Path | None = None, *, max_bytes: int | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self.max_bytes = max_bytes if max_bytes is not None else DEFAULT_MAX_MIB << 20
        self._stores: OrderedDict[StoreKey, VectorStore] = OrderedDict()
        self._lock = threading.RLock()

    def __repr__(self) -> str:
        return f"EmbeddingCache(root={self.root}, stores={len(self._stores)}, bytes={self.nbytes})"

    @property
    def nbytes(self) -> int:
        return sum(store.nbytes for store in self._stores.values())

    def clear(self) -> None:
        """Forget every store held in memory (persisted shards stay on disk)."""
        with self._lock:
            self._stores.clear()

    def drop(self, instance: int) -> None:
        """Forget the stores of one model object (keys with this ``instance``)."""
        with self._lock:
            for key in [key for key in self._stores if key.instance == instance]:
                del self._stores[key]

    def store(self, key: StoreKey) -> VectorStore:
        """The store of ``key`` (created, or loaded from its shards, on first use)."""
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                persisted = self.root is not None and key.instance is None
                store = VectorStore(self.root / key.folder() if persisted and self.root else None)
                self._stores[key] = store
            self._stores.move_to_end(key)
            return store

    def _evict(self) -> None:
        while len(self._stores) > 1 and self.nbytes > self.max_bytes:
            self._stores.popitem(last=False)

    def ensure(
        self,
        key: StoreKey,
        texts: Sequence[str],
        encode: Encode,
        *,
        stats: EncodeStats | None = None,
        where: str = "",
    ) -> VectorStore:
        """Make the store of ``key`` hold every text of ``texts``; return the store.

        Texts it lacks are passed to ``encode`` once each, longest first (similar lengths
        share a batch, as sentence-transformers orders them); with a folder this happens
        under the store's lock, after reading what other processes added meanwhile.

        Raises:
            ValueError: if ``encode`` returns a wrong number of rows or not a matrix (names ``where``).
        """
        return self._ensure(key, texts, encode, stats, where)[0]

    def _ensure(
        self, key: StoreKey, texts: Sequence[str], encode: Encode, stats: EncodeStats | None, where: str
    ) -> tuple[VectorStore, list[bytes]]:
        digests = [text_digest(text) for text in texts]
        with self._lock:
            store = self.store(key)
            if stats is not None:
                stats.requested += len(texts)
                stats.cached += sum(1 for d in digests if d in store.index)
            if any(d not in store.index for d in digests):
                with store.locked():
                    self._fill(store, digests, texts, encode, stats or EncodeStats(), where or key.model)
            return store, digests

    def embed(
        self,
        key: StoreKey,
        texts: Sequence[str],
        encode: Encode,
        *,
        stats: EncodeStats | None = None,
        where: str = "",
    ) -> NDArray[Any]:
        """The embeddings of ``texts`` under ``key``, one row each, in order (see :meth:`ensure`)."""
        with self._lock:
            store, digests = self._ensure(key, texts, encode, stats, where)
            out = store.take(digests)
            self._evict()
        return out

    @staticmethod
    def _fill(
        store: VectorStore,
        digests: list[bytes],
        texts: Sequence[str],
        encode: Encode,
        stats: EncodeStats,
        where: str,
    ) -> None:
        first: dict[bytes, int] = {}
        for position, digest in enumerate(digests):
            if digest not in store.index and digest not in first:
                first[digest] = position
        if not first:  # another process encoded them meanwhile
            return
        order = sorted(first.values(), key=lambda i: -len(texts[i]))
        start = time.perf_counter()
        try:
            vectors = as_numpy(encode([texts[i] for i in order]))
        finally:
            stats.encode_seconds += time.perf_counter() - start
            stats.encode_calls += 1
        if vectors.ndim != 2 or len(vectors) != len(order):
            raise ValueError(f"{where}: the encoder returned shape {vectors.shape} for {len(order)} texts.")
        store.add([digests[i] for i in order], vectors)
        stats.encoded += len(order)


_PROCESS_CACHE: EmbeddingCache | None = None
_PROCESS_LOCK = threading.Lock()


def process_cache() -> EmbeddingCache:
    """This process's shared cache (see the module docstring for its environment variables)."""
    global _PROCESS_CACHE
    with _PROCESS_LOCK:
        if _PROCESS_CACHE is None:
            root = os.environ.get(CACHE_DIR_ENV) or None
            mib = int(os.environ.get(CACHE_MIB_ENV, DEFAULT_MAX_MIB))
            _PROCESS_CACHE = EmbeddingCache(root, max_bytes=mib << 20)
        return _PROCESS_CACHE


def reset_process_cache() -> None:
    """Forget the process cache; the next :func:`process_cache` reads the environment again."""
    global _PROCESS_CACHE
    with _PROCESS_LOCK:
        _PROCESS_CACHE = None


@contextmanager
def using_process_cache(cache: EmbeddingCache) -> Iterator[EmbeddingCache]:
    """Make ``cache`` this process's cache inside the block (the study's workers: on disk)."""
    global _PROCESS_CACHE
    with _PROCESS_LOCK:
        previous, _PROCESS_CACHE = _PROCESS_CACHE, cache
    try:
        yield cache
    finally:
        with _PROCESS_LOCK:
            _PROCESS_CACHE = previous
