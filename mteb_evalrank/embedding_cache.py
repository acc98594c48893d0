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
vectors in the model's dtype, and, since issue 26, the store's ``StoreKey.folder()`` as
``store``) under ``<root>/<org__model>/<revision>/<context>/``: written
to a temporary name and ``os.replace``-d into place, so a killed process leaves whole shards
only (and a ``.shard-*.tmp.npz``, removed by the next process that takes the store's lock to
write), and a save costs O(new rows). Before encoding, a store takes an exclusive ``flock``
on its folder and reads the shards other processes wrote meanwhile, so concurrent workers
encode a text once between them.

**Damaged shards.** A shard that cannot be used (truncated, empty, not a zip, a missing
array, keys that are not ``uint8[n, 16]``, vectors that are not a float matrix, key and row
counts that differ, written for another store, or vectors of another dimension than the
store's) is moved aside to ``<shard>.corrupt`` (never deleted), one
:class:`CorruptShardWarning` names the file and what was wrong, and its texts are encoded
again when asked for. The shards hold their own digests: there is no index file to damage
(``.lock`` is only ``flock``-ed, never read). See ``docs/faults.md``.

**Old-format shards.** A shard that records no store (written before issue 26) may be another
model's, even of the same dimension: its rows are not served until it is checked. When a text
it holds is asked for, up to :data:`VERIFY_TEXTS` of the asked texts it holds are encoded again
(under the store's lock) and compared with its rows (:data:`VERIFY_TOLERANCE`): if they agree,
the store is recorded in the shard (rewritten atomically: no process checks it again); if not,
it is moved aside with one :class:`CorruptShardWarning` and its texts are encoded again. A shard
none of whose texts is asked for costs nothing.

**A folder that cannot be used.** If a store's folder cannot be created, locked or written (a
read-only folder, a full disk, a path through a file), one :class:`CacheFolderWarning` names it
and the store is kept in memory for the process: the run completes with the encoder's rows. A
shard this process may not read (its permissions) is left where it is (it may be another
user's), with one :class:`CacheFolderWarning`, and its texts are encoded again.

**Memory.** An :class:`EmbeddingCache` bounds the bytes its stores hold in memory
(``max_bytes``); past it, whole least-recently-used stores are dropped (a persisted store
reloads its shards when asked again). The most recently used store is never dropped.

**Process cache.** :func:`process_cache` is the cache the zoo's family base encoders share
in a process (or the one :func:`using_process_cache` sets for the current thread: a study's
chain, on disk): in memory, bounded by ``$MTEB_EVALRANK_CACHE_MIB`` (default 4096 MiB), and
persisted under ``$MTEB_EVALRANK_EMBEDDING_CACHE`` when that names a folder (the study sets
it for its workers). Embeddings of models whose weights cannot change (the zoo's, loaded
from installed packages) are keyed by name; a model you train and evaluate in one process
is never cached across evaluations unless you wrap it yourself.
"""

from __future__ import annotations

import bisect
import fcntl
import hashlib
import os
import pickle
import threading
import time
import warnings
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank._files import aside_name

DIGEST_SIZE = 16
CACHE_DIR_ENV = "MTEB_EVALRANK_EMBEDDING_CACHE"
CACHE_MIB_ENV = "MTEB_EVALRANK_CACHE_MIB"
DEFAULT_MAX_MIB = 4096

Encode = Callable[[list[str]], Any]
"""``texts -> (len(texts), dim)`` array: what a store calls for the texts it lacks."""

VERIFY_TEXTS = 3
"""Texts per old-format shard encoded again to check it (see :meth:`EmbeddingCache.ensure`)."""
VERIFY_TOLERANCE = 1e-3
"""Largest difference, relative to the largest component, of a re-encoded row that still agrees."""

CORRUPT_SUFFIX = ".corrupt"
"""Appended to the name of a shard moved aside (``shard-<ns>-<pid>.npz.corrupt``)."""

_LOAD_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, pickle.UnpicklingError)
"""What ``np.load`` raises on a damaged or foreign file (a directory: ``IsADirectoryError``)."""


class CorruptShardWarning(UserWarning):
    """A shard of the on-disk embedding cache was unusable: moved aside, its rows re-encoded."""


class CacheFolderWarning(UserWarning):
    """A store's folder cannot be created, locked or written, or a shard in it cannot be read
    with this process's permissions: the run goes on, encoding what it cannot read and keeping
    that store in memory only."""


class BadShardError(Exception):
    """A shard that cannot be used; the message says why."""


class ShardPermissionError(BadShardError):
    """A shard this process may not read (its permissions): skipped, never moved aside."""


def read_shard(path: Path, store: str | None = None) -> tuple[NDArray[np.uint8], NDArray[Any], str | None]:
    """The ``(keys, vectors, written_for)`` of one shard file, checked.

    ``written_for`` is the store the shard records (``None``: an old-format shard, written
    before shards recorded it).

    Args:
        path: the ``shard-*.npz`` file.
        store: the store's identity (``StoreKey.folder()``); a shard recording another is refused.

    Raises:
        BadShardError: the file is unreadable or not a shard of this store (the message says why).
    """
    try:  # the file opened here: np.load leaves its own handle open when the zip is bad
        handle = path.open("rb")
    except PermissionError as error:
        raise ShardPermissionError(f"{error.strerror or error}") from None
    except _LOAD_ERRORS as error:
        raise BadShardError(f"unreadable: {type(error).__name__}: {error}") from None
    try:
        with handle, np.load(handle, allow_pickle=False) as data:
            missing = sorted({"keys", "vectors"} - set(data.files))
            if missing:
                raise BadShardError(f"no {' and no '.join(missing)} array")
            keys, vectors = data["keys"], data["vectors"]
            written_for = str(data["store"]) if "store" in data.files else None
    except _LOAD_ERRORS as error:
        raise BadShardError(f"unreadable: {type(error).__name__}: {error}") from None
    if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != DIGEST_SIZE:
        raise BadShardError(f"keys of shape {keys.shape} {keys.dtype}, expected (n, {DIGEST_SIZE}) uint8")
    if vectors.ndim != 2 or vectors.dtype.kind != "f":
        raise BadShardError(f"vectors of shape {vectors.shape} {vectors.dtype}, expected a float matrix")
    if len(keys) != len(vectors):
        raise BadShardError(f"{len(keys)} digests for {len(vectors)} rows")
    if store is not None and written_for is not None and written_for != store:
        raise BadShardError(f"written for the store {written_for!r}, not {store!r}")
    return keys, vectors, written_for


def set_aside(shard: Path, reason: str) -> Path | None:
    """Rename a bad shard to ``<name>.corrupt`` (a free name; never deleted) and warn once.

    Returns the new path, or ``None`` if another process moved it first (it warned then).
    If the rename fails (a read-only folder), the warning says so and the shard stays.
    """
    target = aside_name(shard, CORRUPT_SUFFIX)
    try:
        shard.rename(target)
    except FileNotFoundError:
        return None
    except OSError as error:
        warnings.warn(
            f"embedding cache: {shard} is unusable ({reason}) and could not be moved aside ({error}); "
            "it is skipped and its texts are encoded again. Move it away by hand.",
            CorruptShardWarning,
            stacklevel=3,
        )
        return shard
    warnings.warn(
        f"embedding cache: {shard} is unusable ({reason}); moved aside to {target.name}, "
        "its texts are encoded again.",
        CorruptShardWarning,
        stacklevel=3,
    )
    return target


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
    """``digest -> vector`` for one :class:`StoreKey`, in memory and, with ``directory``, on disk.

    ``identity`` (the key's ``folder()``) is recorded in the shards it writes; a shard that
    records another store is moved aside when read.
    """

    def __init__(self, directory: Path | None = None, identity: str | None = None) -> None:
        self.directory = directory
        self.identity = identity  # recorded in new shards; a shard recording another store is refused
        self.index: dict[bytes, int] = {}
        self._blocks: list[NDArray[Any]] = []
        self._matrix: NDArray[Any] | None = None
        self._shards: set[str] = set()
        self._unverified: dict[int, tuple[int, str]] = {}  # old-format shards: first row -> (end, name)
        self._refused: set[str] = set()  # bad shards that could not be moved aside: never read
        self.refresh()

    def __len__(self) -> int:
        return len(self.index)

    @property
    def nbytes(self) -> int:
        return sum(block.nbytes for block in self._blocks)

    @property
    def dim(self) -> int | None:
        """The vectors' dimension (``None`` while the store is empty)."""
        return int(self._blocks[0].shape[1]) if self._blocks else None

    def refresh(self) -> None:
        """Read the shards of the folder that this store has not read yet (other processes' work).

        A damaged shard, or one of another dimension than the store's, is moved aside
        (:func:`set_aside`, one :class:`CorruptShardWarning`); its texts are then missing.
        """
        if self.directory is None or not self.directory.is_dir():
            return
        read: list[tuple[Path, NDArray[np.uint8], NDArray[Any], str | None]] = []
        for shard in sorted(self.directory.glob("shard-*.npz")):
            if shard.name in self._shards or shard.name in self._refused:
                continue
            try:
                read.append((shard, *read_shard(shard, self.identity)))
            except ShardPermissionError as refused:
                self._refused.add(shard.name)  # perhaps another user's: left where it is
                warnings.warn(
                    f"embedding cache: {shard} cannot be read by this process ({refused}); it is left "
                    "where it is and its texts are encoded again. Check the folder's permissions.",
                    CacheFolderWarning,
                    stacklevel=3,
                )
            except BadShardError as bad:
                self._skip(shard, str(bad))
        dim = self.dim if self.dim is not None else _majority_dim([vectors for _, _, vectors, _ in read])
        for shard, keys, vectors, written_for in read:
            if vectors.shape[1] != dim:
                self._skip(shard, f"{vectors.shape[1]}-d vectors in a store of {dim}-d ones: another model's")
                continue
            raw = keys.tobytes()
            start = self._append([raw[i : i + DIGEST_SIZE] for i in range(0, len(raw), DIGEST_SIZE)], vectors)
            self._shards.add(shard.name)
            if written_for is None and self.identity is not None:
                self._unverified[start] = (start + len(vectors), shard.name)

    def _skip(self, shard: Path, reason: str) -> None:
        """Move a bad shard aside; if it stays (a read-only folder), never read it again."""
        if set_aside(shard, reason) == shard:
            self._refused.add(shard.name)

    def discard(self, reason: str) -> None:
        """Move every shard this store read aside (they hold another model's rows) and empty it."""
        if self.directory is not None:
            for name in sorted(self._shards):
                if (self.directory / name).exists():
                    self._skip(self.directory / name, reason)
        self._forget()

    def reload(self) -> None:
        """Forget every row and read the folder's shards again (but those refused)."""
        self._forget()
        self.refresh()

    def _forget(self) -> None:
        self.index.clear()
        self._blocks, self._matrix, self._shards, self._unverified = [], None, set(), {}

    @contextmanager
    def locked(self) -> Iterator[None]:
        """Exclusive access across processes (``flock`` on ``<directory>/.lock``); a no-op in memory.

        Holding it, the store removes killed writers' temporary files, then reads new shards.
        """
        if self.directory is None:
            yield
            return
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            handle = (self.directory / ".lock").open("a")
        except OSError as error:
            self._in_memory_only(error)
            yield
            return
        with handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            try:
                self._remove_temporaries()
                self.refresh()
                yield
            finally:
                fcntl.flock(handle, fcntl.LOCK_UN)

    def _in_memory_only(self, error: OSError) -> None:
        """The folder cannot be used (created, locked, written): warn once, keep this store in memory."""
        warnings.warn(
            f"embedding cache: the folder {self.directory} cannot be used ({type(error).__name__}: "
            f"{error.strerror or error}); its embeddings are kept in memory for this process only and "
            f"nothing more is written there. Check its permissions and free space, or set {CACHE_DIR_ENV} "
            "to another folder.",
            CacheFolderWarning,
            stacklevel=5,
        )
        self.directory = None

    def _remove_temporaries(self) -> None:
        """Remove the ``.shard-*.tmp.npz`` of killed writers; call it holding the store's lock only.

        Every write (:meth:`add`, from ``EmbeddingCache._fill``) happens under that lock, so no
        live writer can be inside ``np.savez`` now: a temporary file left is a killed one's. A
        file that cannot be removed (a read-only folder) stays; it is never read.
        """
        if self.directory is None:
            return
        for temporary in self.directory.glob(".shard-*.tmp.npz"):
            with suppress(OSError):
                temporary.unlink()

    def _append(self, digests: list[bytes], vectors: NDArray[Any]) -> int:
        """Append rows; returns the first one's number."""
        start = sum(len(block) for block in self._blocks)
        for offset, digest in enumerate(digests):
            self.index.setdefault(digest, start + offset)
        self._blocks.append(vectors)
        self._matrix = None
        return start

    def unverified(self, digests: Sequence[bytes]) -> dict[str, list[int]]:
        """``{old-format shard: positions in digests}`` of the digests served from a shard that
        records no store and is not verified yet (see :meth:`EmbeddingCache.ensure`)."""
        if not self._unverified:
            return {}
        starts = sorted(self._unverified)
        served: dict[str, list[int]] = {}
        for position, digest in enumerate(digests):
            row = self.index.get(digest)
            if row is None or (k := bisect.bisect_right(starts, row) - 1) < 0:
                continue
            end, name = self._unverified[starts[k]]
            if row < end:
                served.setdefault(name, []).append(position)
        return served

    def confirm(self, name: str) -> None:
        """An old-format shard found to hold this store's rows: serve it, and record the store in
        it (rewritten atomically, under :meth:`locked`) so that no process checks it again; a
        folder that cannot be written keeps the old file (checked again by the next process)."""
        self._unverified = {start: v for start, v in self._unverified.items() if v[1] != name}
        if self.directory is None:
            return
        with suppress(OSError, BadShardError):
            keys, vectors, _ = read_shard(self.directory / name, self.identity)
            self._write_shard(name, keys, vectors)

    def _write_shard(self, name: str, keys: NDArray[np.uint8], vectors: NDArray[Any]) -> None:
        """``<directory>/<name>`` with this store's record: a temporary file ``os.replace``-d into place."""
        assert self.directory is not None
        tmp = self.directory / f".{name.removesuffix('.npz')}.tmp.npz"
        arrays: dict[str, Any] = {"keys": keys, "vectors": vectors}
        if self.identity is not None:
            arrays["store"] = np.array(self.identity)
        try:
            np.savez(tmp, **arrays)
            tmp.replace(self.directory / name)  # atomic: a reader sees whole shards only
        except OSError:
            with suppress(OSError):
                tmp.unlink()  # a full disk: no half file left
            raise

    def matrix(self) -> NDArray[Any]:
        """All rows, in insertion order (row ``index[digest]`` is that text's vector)."""
        if self._matrix is None:
            self._matrix = self._blocks[0] if len(self._blocks) == 1 else np.concatenate(self._blocks)
            self._blocks = [self._matrix]
        return self._matrix

    def add(self, digests: list[bytes], vectors: NDArray[Any]) -> None:
        """Add rows (persisted first as one atomic shard when the store has a folder: hold :meth:`locked`).

        If the shard cannot be written (a read-only folder, a full disk), the rows are kept in
        memory, one :class:`CacheFolderWarning` names the folder and the store stays in memory.
        """
        if len(digests) != len(vectors):
            raise ValueError(f"{len(digests)} keys for {len(vectors)} vectors")
        if self.directory is not None:
            name = f"shard-{time.time_ns():020d}-{os.getpid()}.npz"
            keys = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), DIGEST_SIZE)
            try:
                self.directory.mkdir(parents=True, exist_ok=True)
                self._write_shard(name, keys, vectors)
            except OSError as error:  # a read-only folder, a full disk
                self._in_memory_only(error)
            else:
                self._shards.add(name)
        self._append(digests, vectors)

    def take(self, digests: Sequence[bytes]) -> NDArray[Any]:
        """The rows of ``digests``, in order (a ``KeyError`` for a digest not stored)."""
        rows = np.fromiter((self.index[d] for d in digests), dtype=np.int64, count=len(digests))
        return self.matrix()[rows]


@dataclass
class _Request:
    """One :meth:`EmbeddingCache.ensure` call: the asked texts and their digests, the encoder,
    the counters and the label errors name."""

    digests: list[bytes]
    texts: Sequence[str]
    encode: Encode
    stats: EncodeStats
    where: str

    def run(self, texts: list[str]) -> NDArray[Any]:
        """``encode(texts)`` as a matrix, timed and counted in ``stats``.

        Raises:
            ValueError: the encoder returned a wrong number of rows or not a matrix (names ``where``).
        """
        start = time.perf_counter()
        try:
            vectors = as_numpy(self.encode(texts))
        finally:
            self.stats.encode_seconds += time.perf_counter() - start
            self.stats.encode_calls += 1
        if vectors.ndim != 2 or len(vectors) != len(texts):
            raise ValueError(
                f"{self.where}: the encoder returned shape {vectors.shape} for {len(texts)} texts."
            )
        return vectors


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
                if persisted and self.root:
                    store = VectorStore(self.root / key.folder(), identity=key.folder().as_posix())
                else:
                    store = VectorStore()
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
        under the store's lock, after reading what other processes added meanwhile, and after
        checking the old-format shards that would serve a text (module docstring).

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
            if any(d not in store.index for d in digests) or store.unverified(digests):
                with store.locked():
                    request = _Request(digests, texts, encode, stats or EncodeStats(), where or key.model)
                    self._verify(store, request)
                    self._fill(store, request)
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
    def _verify(store: VectorStore, request: _Request) -> None:
        """Check the old-format shards that would serve the request's texts against its encoder.

        Per such shard, the :data:`VERIFY_TEXTS` asked texts whose stored rows are the longest
        (a zero row, e.g. a static model's unknown word, tells little) are encoded and compared
        with those rows (:func:`_mismatch`). A shard that agrees is confirmed (its store
        recorded in it); one that does not (another model's, of any dimension) is moved aside
        with one :class:`CorruptShardWarning`, and the fresh rows replace it.
        """
        digests, texts, where = request.digests, request.texts, request.where
        pending: dict[str, list[int]] = {}
        for name, served in store.unverified(digests).items():
            first: dict[bytes, int] = {}
            for position in served:
                first.setdefault(digests[position], position)
            distinct = list(first.values())
            norms = np.linalg.norm(store.take([digests[i] for i in distinct]).astype(np.float64), axis=1)
            pending[name] = [distinct[k] for k in np.argsort(-norms, kind="stable")[:VERIFY_TEXTS]]
        if not pending:
            return
        order = [position for positions in pending.values() for position in positions]
        fresh = request.run([texts[i] for i in order])
        stored = store.take([digests[i] for i in order])
        bad: dict[str, str] = {}
        offset = 0
        for name, positions in pending.items():
            problem = _mismatch(
                stored[offset : offset + len(positions)], fresh[offset : offset + len(positions)], where
            )
            offset += len(positions)
            if problem is None:
                store.confirm(name)
            else:
                bad[name] = problem
        if not bad:
            return
        assert store.directory is not None  # old-format shards are read from a folder
        for name, problem in bad.items():
            store._skip(store.directory / name, problem)
        store.reload()
        rows = {digests[i]: fresh[k] for k, i in enumerate(order) if digests[i] not in store.index}
        if rows and store.dim in (None, fresh.shape[1]):  # the check's rows: not encoded twice
            store.add(list(rows), np.stack(list(rows.values())))
            request.stats.encoded += len(rows)

    @staticmethod
    def _fill(store: VectorStore, request: _Request) -> None:
        """Encode the request's texts that ``store`` lacks, once each, longest first, and add them."""
        digests, texts, stats, where = request.digests, request.texts, request.stats, request.where
        first: dict[bytes, int] = {}
        for position, digest in enumerate(digests):
            if digest not in store.index and digest not in first:
                first[digest] = position
        if not first:  # another process encoded them meanwhile
            return
        order = sorted(first.values(), key=lambda i: -len(texts[i]))
        vectors = request.run([texts[i] for i in order])
        foreign = store.dim is not None and store.dim != vectors.shape[1]
        if foreign:  # the stored rows are another model's: move them aside, encode the rest too
            store.discard(f"{store.dim}-d vectors, the encoder of {where} gives {vectors.shape[1]}-d ones")
        store.add([digests[i] for i in order], vectors)
        stats.encoded += len(order)
        if foreign:
            EmbeddingCache._fill(store, request)


def _mismatch(stored: NDArray[Any], fresh: NDArray[Any], where: str) -> str | None:
    """Why an old-format shard's rows are not those of ``where``'s encoder (``None``: they are).

    The rows agree when no component differs by more than :data:`VERIFY_TOLERANCE` times the
    largest component of the fresh rows: re-encoding the same text in another batch moves a
    float32 embedding by about 1e-6 of its scale, another model's embedding by its whole scale.
    """
    if stored.shape[1] != fresh.shape[1]:
        return f"{stored.shape[1]}-d vectors, the encoder of {where} gives {fresh.shape[1]}-d ones"
    scale = float(np.abs(fresh).max()) or 1.0
    difference = float(np.abs(stored.astype(np.float64) - fresh.astype(np.float64)).max())
    if difference <= VERIFY_TOLERANCE * scale:
        return None
    return (
        f"an old-format shard (no store recorded) whose rows are not {where}'s: re-encoded, "
        f"its texts differ by up to {difference:.3g} (scale {scale:.3g}): another model's"
    )


def _majority_dim(blocks: Sequence[NDArray[Any]]) -> int | None:
    """The dimension holding the most rows (ties: the oldest shard's); ``None`` without rows."""
    rows: dict[int, int] = {}
    for block in blocks:
        rows[int(block.shape[1])] = rows.get(int(block.shape[1]), 0) + len(block)
    return max(rows, key=lambda dim: rows[dim]) if rows else None


#: The cache :func:`using_process_cache` sets for the current context (a thread, or an asyncio
#: task): a chain of the study sees its own, never another thread's; unset, the process default.
_CURRENT_CACHE: ContextVar[EmbeddingCache | None] = ContextVar("mteb_evalrank_embedding_cache", default=None)
_DEFAULT_LOCK = threading.Lock()


@cache
def _default_cache() -> EmbeddingCache:
    """The process default, built once from the environment (the module docstring), never replaced."""
    root = os.environ.get(CACHE_DIR_ENV) or None
    mib = int(os.environ.get(CACHE_MIB_ENV, DEFAULT_MAX_MIB))
    return EmbeddingCache(root, max_bytes=mib << 20)


def process_cache() -> EmbeddingCache:
    """The cache of the current context: the one :func:`using_process_cache` set in this thread
    (or task), else the process default (see the module docstring for its environment variables)."""
    current = _CURRENT_CACHE.get()
    if current is not None:
        return current
    with _DEFAULT_LOCK:  # built once even when two threads ask first
        return _default_cache()


@contextmanager
def using_process_cache(cache: EmbeddingCache) -> Iterator[EmbeddingCache]:
    """Make ``cache`` the current context's cache inside the block (the study's chains: on disk).

    A :class:`contextvars.ContextVar`, not a module global: another thread (its own context)
    keeps its cache, and blocks nest.
    """
    token = _CURRENT_CACHE.set(cache)
    try:
        yield cache
    finally:
        _CURRENT_CACHE.reset(token)
