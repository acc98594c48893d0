"""The plugin's one embedding cache: ``(model, revision, encoding context, text) -> vector``.

Numpy only; the mteb encoder over it is :class:`mteb_evalrank.tasks._encoding.CachedEncoder`. Who
uses it, keyed how, for how long: docs/architecture.md ("One embedding cache"); faults: docs/faults.md.
A text's key is the 16-byte BLAKE2b digest of its UTF-8 bytes; with a root, each batch of new rows is
one append-only shard ``<root>/<StoreKey.folder()>/shard-<ns>-<pid>.npz`` (``keys`` ``uint8[n, 16]``,
``vectors``, ``store`` = the folder), written under the folder's ``.lock``; no index file.
"""

from __future__ import annotations

import hashlib
import os
import pickle
import threading
import time
import warnings
import weakref
import zipfile
from collections import OrderedDict
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager, suppress
from contextvars import ContextVar
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank._files import file_lock, move_aside, replacing
from mteb_evalrank.settings import CACHE_DIR_ENV, DEFAULT_CACHE_MIB, Settings

DIGEST_SIZE = 16
FORMAT_VERSION = 1
"""The shard format (``keys``, ``vectors``, ``store``): the root's first folder is ``format-<it>``."""

Encode = Callable[[list[str]], Any]
"""``texts -> (len(texts), dim)`` array: what a store calls for the texts it lacks."""

_LOAD_ERRORS = (OSError, ValueError, EOFError, KeyError, zipfile.BadZipFile, pickle.UnpicklingError)
"""What ``np.load`` raises on a damaged or foreign file (a directory: ``IsADirectoryError``)."""


class CorruptShardWarning(UserWarning):
    """A shard of the on-disk embedding cache was unusable: moved aside, its rows re-encoded."""


class CacheFolderWarning(UserWarning):
    """A store's folder cannot be created, locked or written, or a shard in it read (its
    permissions): the run goes on, encoding what it cannot read, the store in memory only."""


class BadShardError(Exception):
    """A shard that cannot be used; the message says why."""


class ShardPermissionError(BadShardError):
    """A shard this process may not read (its permissions): skipped, never moved aside."""


def read_shard(
    path: Path, store: str, wanted: set[bytes] | None = None
) -> tuple[list[bytes], NDArray[Any]] | None:
    """The checked ``(digests, vectors)`` of a shard of ``store`` (a :class:`BadShardError` saying why
    not); ``None``, vectors unread, if it holds none of the ``wanted`` digests (``None``: any)."""
    try:  # the file opened here: np.load leaves its own handle open when the zip is bad
        with path.open("rb") as handle, np.load(handle, allow_pickle=False) as data:
            missing = [name for name in ("keys", "vectors", "store") if name not in data.files]
            if missing:
                raise BadShardError(f"no {' and no '.join(missing)} array")
            keys, written_for = data["keys"], str(data["store"])
            if written_for != store:
                raise BadShardError(f"written for the store {written_for!r}, not {store!r}")
            if keys.dtype != np.uint8 or keys.ndim != 2 or keys.shape[1] != DIGEST_SIZE:
                expected = f"expected (n, {DIGEST_SIZE}) uint8"
                raise BadShardError(f"keys of shape {keys.shape} {keys.dtype}, {expected}")
            raw = keys.tobytes()
            digests = [raw[i : i + DIGEST_SIZE] for i in range(0, len(raw), DIGEST_SIZE)]
            if wanted is not None and wanted.isdisjoint(digests):
                return None
            vectors = data["vectors"]
    except PermissionError as error:
        raise ShardPermissionError(f"{error.strerror or error}") from None
    except _LOAD_ERRORS as error:
        raise BadShardError(f"unreadable: {type(error).__name__}: {error}") from None
    if vectors.ndim != 2 or vectors.dtype.kind != "f":
        raise BadShardError(f"vectors of shape {vectors.shape} {vectors.dtype}, expected a float matrix")
    if len(digests) != len(vectors):
        raise BadShardError(f"{len(digests)} digests for {len(vectors)} rows")
    return digests, vectors


def text_digest(text: str) -> bytes:
    """The key of a text inside a store: 16 bytes of BLAKE2b over its UTF-8 encoding."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=DIGEST_SIZE).digest()


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
    """Everything but the text that identifies an embedding; ``instance``: the id of the one model
    object a store serves (never persisted)."""

    model: str
    revision: str
    context: str = "none"
    instance: int | None = None

    def folder(self) -> Path:
        """``format-<FORMAT_VERSION>/<org__model>/<revision>/<context>``: where the store's shards
        live under a root (and the identity they record)."""
        # ``org/model`` -> ``org__model``: mteb's ResultCache convention
        model, revision = (name.replace("/", "__").replace(" ", "_") for name in (self.model, self.revision))
        return Path(f"format-{FORMAT_VERSION}") / model / revision / self.context


@dataclass
class EncodeStats:
    """What a cache did for one model: rows ``requested``, found ``cached``, unique texts ``encoded``;
    ``uncached_calls``: encode calls passed through uncached (non-text inputs)."""

    requested: int = 0
    cached: int = 0
    encoded: int = 0
    encode_seconds: float = 0.0
    encode_calls: int = 0
    uncached_calls: int = 0

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @contextmanager
    def timed(self) -> Iterator[None]:
        """Count one encoder call and the seconds spent inside it."""
        start = time.perf_counter()
        try:
            yield
        finally:
            self.encode_seconds += time.perf_counter() - start
            self.encode_calls += 1


@dataclass(eq=False)
class _Block:
    """Rows added together (one encode call, or one shard read): the unit the memory bound drops."""

    digests: list[bytes]
    vectors: NDArray[Any]
    shard: str | None  # the shard holding these rows on disk (read again when dropped)
    used: int  # the cache's clock when a row of it was last served


class VectorStore:
    """``digest -> vector`` for one :class:`StoreKey`, in memory and, with ``directory``, on disk;
    ``identity`` (the key's ``folder()``) is recorded in its shards."""

    def __init__(self, directory: Path | None = None, identity: str = "", clock: int = 0) -> None:
        self.directory = directory
        self.identity = identity  # recorded in new shards; a shard recording another store is refused
        self.index: dict[bytes, tuple[_Block, int]] = {}
        self.blocks: list[_Block] = []
        self.clock = clock  # the owner's clock: blocks added or served are marked with it
        self._shards: set[str] = set()  # the shards whose rows are in memory
        self._refused: set[str] = set()  # bad shards that could not be moved aside: never read
        self.refresh()

    def __len__(self) -> int:
        return len(self.index)

    @property
    def nbytes(self) -> int:
        return sum(block.vectors.nbytes for block in self.blocks)

    @property
    def dim(self) -> int | None:
        """The vectors' dimension (``None`` while the store holds no row)."""
        return int(self.blocks[0].vectors.shape[1]) if self.blocks else None

    def refresh(self, wanted: set[bytes] | None = None) -> None:
        """Read the folder's shards whose rows are not in memory (with ``wanted``: those holding one
        of those digests); a damaged one, or one of another dimension, is moved aside (:meth:`_skip`)."""
        if self.directory is None or not self.directory.is_dir():
            return
        for shard in sorted(self.directory.glob("shard-*.npz")):
            if shard.name in self._shards or shard.name in self._refused:
                continue
            try:
                rows = read_shard(shard, self.identity, wanted)
            except ShardPermissionError as refused:
                self._refused.add(shard.name)  # perhaps another user's: left where it is
                warnings.warn(
                    f"embedding cache: {shard} cannot be read by this process ({refused}); it is left "
                    "where it is and its texts are encoded again. Check the folder's permissions.",
                    CacheFolderWarning,
                    stacklevel=3,
                )
                continue
            except BadShardError as bad:
                self._skip(shard, str(bad))
                continue
            if rows is None:  # none of the wanted texts
                continue
            digests, vectors = rows
            if self.dim not in (None, vectors.shape[1]):
                self._skip(shard, f"{vectors.shape[1]}-d vectors in a store of {self.dim}-d ones")
                continue
            self._append(digests, vectors, shard.name)

    def _skip(self, shard: Path, reason: str) -> None:
        """Move a bad shard aside to a free ``<name>.corrupt``, one warning; one that cannot be moved
        stays, never read again by this store."""
        try:
            outcome = f"; moved aside to {move_aside(shard).name}, its texts are encoded again."
        except FileNotFoundError:
            return
        except OSError as error:
            self._refused.add(shard.name)
            outcome = (
                f" and could not be moved aside ({error}); it is skipped and its texts are encoded again. "
                "Move it away by hand."
            )
        warnings.warn(
            f"embedding cache: {shard} is unusable ({reason}){outcome}", CorruptShardWarning, stacklevel=2
        )

    def discard(self, reason: str) -> None:
        """Move every shard of the folder aside (they hold another model's rows) and empty the store."""
        if self.directory is not None:
            for shard in sorted(self.directory.glob("shard-*.npz")):
                if shard.name not in self._refused:
                    self._skip(shard, reason)
        self.index.clear()
        self.blocks, self._shards = [], set()

    def drop(self, block: _Block) -> None:
        """Forget a block's rows (a persisted block is read again from its shard when wanted)."""
        self.blocks.remove(block)
        for digest in block.digests:
            if self.index.get(digest, (None,))[0] is block:
                del self.index[digest]
        if block.shard is not None:
            self._shards.discard(block.shard)

    @contextmanager
    def locked(self, wanted: set[bytes] | None = None) -> Iterator[None]:
        """Hold ``<directory>/.lock`` (a no-op in memory), removing killed writers' temporary files
        and reading the new shards holding a ``wanted`` digest."""
        if self.directory is None:
            yield
            return
        lock = file_lock(self.directory / ".lock")
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            lock.acquire()
        except OSError as error:
            self._in_memory_only(error)
            yield
            return
        try:
            for temporary in self.directory.glob(".shard-*.npz.*.tmp"):  # killed writers'
                with suppress(OSError):
                    temporary.unlink()
            self.refresh(wanted)
            yield
        finally:
            lock.release()

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
        for block in self.blocks:  # rows of shards it can no longer read again: never dropped to disk
            block.shard = None

    def _append(self, digests: list[bytes], vectors: NDArray[Any], shard: str | None) -> None:
        block = _Block(digests, vectors, shard, self.clock)
        for row, digest in enumerate(digests):
            self.index.setdefault(digest, (block, row))
        self.blocks.append(block)
        if shard is not None:
            self._shards.add(shard)

    def add(self, digests: list[bytes], vectors: NDArray[Any]) -> None:
        """Add rows, persisted first as one shard with a folder (hold :meth:`locked`); unwritable: the
        store goes on in memory (:meth:`_in_memory_only`)."""
        if len(digests) != len(vectors):
            raise ValueError(f"{len(digests)} keys for {len(vectors)} vectors")
        name = None
        if self.directory is not None:
            name = f"shard-{time.time_ns():020d}-{os.getpid()}.npz"
            keys = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), DIGEST_SIZE)
            try:  # a reader sees whole shards only; a failed write leaves no file
                with replacing(self.directory / name) as staged, staged.open("wb") as handle:
                    np.savez(handle, keys=keys, vectors=vectors, store=np.array(self.identity))
            except OSError as error:  # a read-only folder, a full disk
                self._in_memory_only(error)
                name = None
        self._append(digests, vectors, name)

    def take(self, digests: Sequence[bytes]) -> NDArray[Any]:
        """The rows of ``digests``, in order (a ``KeyError`` for a digest not stored); their
        blocks are marked used at the store's clock."""
        found = [self.index[digest] for digest in digests]
        blocks = {id(block): block for block, _ in found}
        dtype = np.result_type(*(block.vectors.dtype for block in blocks.values())) if blocks else np.float32
        out = np.empty((len(digests), self.dim or 0), dtype=dtype)
        positions: dict[int, tuple[list[int], list[int]]] = {key: ([], []) for key in blocks}
        for position, (block, row) in enumerate(found):
            where, rows = positions[id(block)]
            where.append(position)
            rows.append(row)
        for key, (where, rows) in positions.items():
            blocks[key].used = self.clock
            out[where] = blocks[key].vectors[rows]
        return out


class EmbeddingCache:
    """Stores by :class:`StoreKey` under ``root`` (``None``: memory only); at most ``max_bytes`` of rows
    in memory, least recently used blocks dropped after each call (a call may exceed it by its own rows)."""

    def __init__(self, root: str | Path | None = None, *, max_bytes: int | None = None) -> None:
        self.root = Path(root) if root is not None else None
        self.max_bytes = max_bytes if max_bytes is not None else DEFAULT_CACHE_MIB << 20
        self._stores: OrderedDict[StoreKey, VectorStore] = OrderedDict()
        self._lock = threading.RLock()
        self._clock = 0  # one tick per call: the blocks' last use
        self._watched: set[int] = set()  # ids of the objects whose stores die with them (watch)

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
            self._watched.discard(instance)
            for key in [key for key in self._stores if key.instance == instance]:
                del self._stores[key]

    def watch(self, owner: object) -> int:
        """``id(owner)``, the ``instance`` of stores dropped when ``owner`` is garbage-collected
        (a ``TypeError`` if it cannot be weakly referenced)."""
        with self._lock:
            if id(owner) not in self._watched:
                weakref.finalize(owner, self.drop, id(owner))
                self._watched.add(id(owner))
            return id(owner)

    def store(self, key: StoreKey) -> VectorStore:
        """The store of ``key`` (created, or loaded from its shards, on first use)."""
        with self._lock:
            store = self._stores.get(key)
            if store is None:
                persisted = self.root is not None and key.instance is None
                if persisted and self.root:
                    folder = key.folder()
                    store = VectorStore(self.root / folder, identity=folder.as_posix(), clock=self._clock)
                else:
                    store = VectorStore(clock=self._clock)
                self._stores[key] = store
            self._stores.move_to_end(key)
            return store

    def _evict(self) -> None:
        """Drop the least recently used blocks (oldest first among equals) until within ``max_bytes``."""
        excess = self.nbytes - self.max_bytes
        if excess <= 0:
            return
        blocks = [
            (block.used, n, store, block)
            for store in self._stores.values()
            for n, block in enumerate(store.blocks)
        ]
        for _, _, store, block in sorted(blocks, key=lambda item: item[:2]):
            if excess <= 0:
                break
            store.drop(block)
            excess -= block.vectors.nbytes

    def embed(
        self,
        key: StoreKey,
        texts: Sequence[str],
        encode: Encode,
        *,
        stats: EncodeStats | None = None,
        where: str = "",
    ) -> NDArray[Any]:
        """The embeddings of ``texts`` under ``key``, one row each, in order; the texts the store lacks are
        encoded (:meth:`_fill`) under the store's lock, after reading what other processes added."""
        digests = [text_digest(text) for text in texts]
        with self._lock:
            self._clock += 1
            store = self.store(key)
            store.clock = self._clock
            missing = {d for d in digests if d not in store.index}
            if stats is not None:
                stats.requested += len(texts)
                stats.cached += len(texts) - sum(1 for d in digests if d in missing)
            if missing:
                with store.locked(missing):
                    self._fill(store, digests, texts, encode, stats or EncodeStats(), where or key.model)
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
        """Encode the texts ``store`` lacks, once each, longest first (similar lengths share a batch), and
        add them; a ``ValueError`` naming ``where`` if the encoder returns no matrix of one row each."""
        first: dict[bytes, int] = {}
        for position, digest in enumerate(digests):
            if digest not in store.index and digest not in first:
                first[digest] = position
        if not first:  # another process encoded them meanwhile
            return
        order = sorted(first.values(), key=lambda i: -len(texts[i]))
        with stats.timed():
            vectors = as_numpy(encode([texts[i] for i in order]))
        if vectors.ndim != 2 or len(vectors) != len(order):
            raise ValueError(f"{where}: the encoder returned shape {vectors.shape} for {len(order)} texts.")
        foreign = store.dim is not None and store.dim != vectors.shape[1]
        if foreign:  # the stored rows are another model's: move them aside, encode the rest too
            store.discard(f"{store.dim}-d vectors, the encoder of {where} gives {vectors.shape[1]}-d ones")
        store.add([digests[i] for i in order], vectors)
        stats.encoded += len(order)
        if foreign:
            EmbeddingCache._fill(store, digests, texts, encode, stats, where)


#: The cache :func:`using_process_cache` sets for the current context (a thread, or an asyncio
#: task): a chain of the study sees its own, never another thread's; unset, the process default.
_CURRENT_CACHE: ContextVar[EmbeddingCache | None] = ContextVar("mteb_evalrank_embedding_cache", default=None)
_DEFAULT_LOCK = threading.Lock()
_DEFAULT: list[EmbeddingCache] = []  # the process default: made once, by the first process_cache call


def process_cache(settings: Settings | None = None) -> EmbeddingCache:
    """The cache :func:`using_process_cache` set in this context, else the process default: made by the
    first call from its ``settings`` (``embedding_cache``, ``cache_mib``; ``None``: in memory, the default
    bound), passed by the edges (``register``, a task's ``evaluate``), never replaced (docs/usage.md)."""
    current = _CURRENT_CACHE.get()
    if current is not None:
        return current
    with _DEFAULT_LOCK:  # made once even when two threads ask first
        if not _DEFAULT:
            root, bound = (settings.embedding_cache, settings.cache_mib << 20) if settings else (None, None)
            _DEFAULT.append(EmbeddingCache(root, max_bytes=bound))
        return _DEFAULT[0]


@contextmanager
def using_process_cache(cache: EmbeddingCache) -> Iterator[EmbeddingCache]:
    """Make ``cache`` the current context's (thread's, task's) cache inside the block; blocks nest."""
    token = _CURRENT_CACHE.set(cache)
    try:
        yield cache
    finally:
        _CURRENT_CACHE.reset(token)
