"""A disk embedding cache keyed by (model, text), shared by every task of a study.

mteb's ``CachedEmbeddingWrapper`` keeps one ``NumpyCache`` per *task*, so a text that two tasks
share is encoded twice. Its storage also scales badly with the number of encode calls: every
``save()`` rewrites the whole index as indented JSON (100k texts: ~6 MB per encode call), and
``encode`` iterates the dataset row by row. Measured (``benchmarks/bench_study.py``, 100k
texts): one call with all texts new costs the same as here (5.1 s, encoder included), all hits
2.0 s vs 1.6 s, but 100 calls adding 1,000 texts each 13.1 s vs 5.5 s. This module keeps the
wrapper's interface (it subclasses it, so ``mteb_model_meta``, ``similarity`` and
``similarity_pairwise`` are the wrapped model's) and replaces the storage:

* one store per model and *encoding context* (prompt type, the model's prompt name for the
  task, the task itself for instruction-following models, precision): texts are shared
  across tasks whenever the model would encode them identically;
* keys: 16-byte BLAKE2b digests of the text (the ``text`` column, read in one Arrow call);
* storage: append-only shards ``shard-<ns>-<pid>.npz`` (digests as ``uint8[n, 16]`` plus the
  vectors in the model's own dtype), each written to a temporary name and ``os.replace``-d
  into place, so a killed process leaves complete shards only and a save costs O(new rows).

Layout: ``<root>/<org__model>/<revision>/<context>/shard-*.npz``. Counters (texts requested,
served from the cache, encoded, seconds inside the wrapped model's ``encode``) are kept per
wrapper in :class:`EncodeStats`.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models.cache_wrappers import CachedEmbeddingWrapper
from numpy.typing import NDArray

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.types import BatchedInput, PromptType
    from torch.utils.data import DataLoader

DIGEST_SIZE = 16
_NON_TEXT = {"image", "audio", "video"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def text_digest(text: str) -> bytes:
    """The cache key of a text: 16 bytes of BLAKE2b over its UTF-8 encoding."""
    return hashlib.blake2b(text.encode("utf-8"), digest_size=DIGEST_SIZE).digest()


@dataclass
class EncodeStats:
    """What one model's cache did.

    ``requested``: rows asked for; ``cached``: rows found in the cache; ``encoded``: unique texts
    passed to the model (a row repeating a missing text of the same call counts in neither);
    ``encode_seconds``: time inside the wrapped model's ``encode``.
    """

    requested: int = 0
    cached: int = 0
    encoded: int = 0
    encode_seconds: float = 0.0
    encode_calls: int = 0
    uncached_calls: int = 0  # encode calls passed through (non-text inputs)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class ShardStore:
    """``digest -> vector`` for one (model, context), persisted as append-only ``.npz`` shards."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.index: dict[bytes, int] = {}
        self._blocks: list[NDArray[Any]] = []
        self._matrix: NDArray[Any] | None = None
        self._load()

    def __len__(self) -> int:
        return len(self.index)

    def _load(self) -> None:
        if not self.directory.is_dir():
            return
        for shard in sorted(self.directory.glob("shard-*.npz")):
            with np.load(shard) as data:
                keys, vectors = data["keys"], data["vectors"]
            raw = np.ascontiguousarray(keys, dtype=np.uint8).tobytes()
            self._append([raw[i : i + DIGEST_SIZE] for i in range(0, len(raw), DIGEST_SIZE)], vectors)

    def _append(self, digests: list[bytes], vectors: NDArray[Any]) -> None:
        start = len(self.index)
        for offset, digest in enumerate(digests):
            self.index.setdefault(digest, start + offset)
        self._blocks.append(vectors)
        self._matrix = None

    def matrix(self) -> NDArray[Any]:
        if self._matrix is None:
            self._matrix = self._blocks[0] if len(self._blocks) == 1 else np.concatenate(self._blocks)
            self._blocks = [self._matrix]
        return self._matrix

    def add(self, digests: list[bytes], vectors: NDArray[Any]) -> None:
        """Persist new rows (one atomic shard) and make them available."""
        if len(digests) != len(vectors):
            raise ValueError(f"{len(digests)} keys for {len(vectors)} vectors")
        self.directory.mkdir(parents=True, exist_ok=True)
        name = f"shard-{time.time_ns():020d}-{os.getpid()}"
        tmp = self.directory / f".{name}.tmp.npz"
        keys = np.frombuffer(b"".join(digests), dtype=np.uint8).reshape(len(digests), DIGEST_SIZE)
        np.savez(tmp, keys=keys, vectors=vectors)
        tmp.replace(self.directory / f"{name}.npz")  # atomic: a reader sees whole shards only
        self._append(digests, vectors)

    def take(self, digests: list[bytes]) -> NDArray[Any]:
        rows = np.fromiter((self.index[d] for d in digests), dtype=np.int64, count=len(digests))
        return self.matrix()[rows]


def _as_numpy(vectors: Any) -> NDArray[Any]:
    if hasattr(vectors, "detach"):  # torch tensor
        vectors = vectors.detach().cpu()
        if vectors.is_floating_point() and str(vectors.dtype) not in {"torch.float32", "torch.float64"}:
            vectors = vectors.float()
        vectors = vectors.numpy()
    return np.asarray(vectors)


def model_dir_name(name: str) -> str:
    """``org/model`` -> ``org__model`` (mteb's ResultCache convention)."""
    return name.replace("/", "__").replace(" ", "_")


class StudyEmbeddingCache(CachedEmbeddingWrapper):
    """Wraps an encoder: each unique text is encoded once per model and context, across tasks.

    Args:
        model: the encoder (anything with mteb's ``encode`` signature and ``mteb_model_meta``).
        root: the study's embedding folder; the store lives under ``root/<org__model>/<revision>``.
    """

    def __init__(self, model: Any, root: str | Path) -> None:
        meta = getattr(model, "mteb_model_meta", None)
        name = getattr(meta, "name", None) or type(model).__name__
        revision = getattr(meta, "revision", None) or "no_revision_available"
        super().__init__(model, Path(root) / model_dir_name(name) / model_dir_name(revision))
        self.stats = EncodeStats()
        self._stores: dict[str, ShardStore] = {}

    def __getattr__(self, name: str) -> Any:  # e.g. get_prompt_name, model_prompts of the wrapped model
        if name.startswith("__") or name == "_model":
            raise AttributeError(name)
        return getattr(self._model, name)

    def context(
        self, task_metadata: TaskMetadata, prompt_type: PromptType | None, kwargs: dict[str, Any]
    ) -> str:
        """The folder name of the encoding context: what, besides the text, changes the embedding."""
        parts = [prompt_type.value if prompt_type is not None else "none"]
        get_prompt_name = getattr(self._model, "get_prompt_name", None)
        if callable(get_prompt_name):
            prompt = get_prompt_name(task_metadata, prompt_type)
            if prompt:
                parts.append(f"prompt-{prompt}")
        meta = self.mteb_model_meta
        if meta is not None and meta.use_instructions:  # instructions depend on the task
            parts.append(f"task-{task_metadata.name}")
        if kwargs.get("precision"):
            parts.append(f"precision-{kwargs['precision']}")
        return _UNSAFE.sub("_", "__".join(parts))

    def _store(self, context: str) -> ShardStore:
        if context not in self._stores:
            self._stores[context] = ShardStore(self.cache_path / context)
        return self._stores[context]

    def _encode_model(self, inputs: DataLoader[BatchedInput], **kwargs: Any) -> NDArray[Any]:
        start = time.perf_counter()
        try:
            return _as_numpy(self._model.encode(inputs, **kwargs))
        finally:
            self.stats.encode_seconds += time.perf_counter() - start
            self.stats.encode_calls += 1

    def encode(
        self,
        inputs: DataLoader[BatchedInput],
        *,
        task_metadata: TaskMetadata,
        hf_split: str,
        hf_subset: str,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> NDArray[Any]:
        """mteb's ``encode``: cached rows come from the store, the rest from the wrapped model."""
        from datasets import Dataset
        from torch.utils.data import DataLoader

        call = {"task_metadata": task_metadata, "hf_split": hf_split, "hf_subset": hf_subset}
        call |= {"prompt_type": prompt_type, **kwargs}
        dataset = getattr(inputs, "dataset", None)
        columns = set(getattr(dataset, "column_names", ()) or ())
        if not isinstance(dataset, Dataset) or "text" not in columns or columns & _NON_TEXT:
            self.stats.uncached_calls += 1
            return self._encode_model(inputs, **call)
        texts = dataset["text"]
        if not all(isinstance(t, str) for t in texts):  # e.g. conversations
            self.stats.uncached_calls += 1
            return self._encode_model(inputs, **call)
        store = self._store(self.context(task_metadata, prompt_type, kwargs))
        digests = [text_digest(t) for t in texts]
        first: dict[bytes, int] = {}
        for position, digest in enumerate(digests):
            if digest not in store.index and digest not in first:
                first[digest] = position
        self.stats.requested += len(texts)
        self.stats.cached += sum(1 for d in digests if d in store.index)
        if first:
            subset = dataset.select(list(first.values()))
            loader = DataLoader(
                subset, batch_size=inputs.batch_size or 32, collate_fn=inputs.collate_fn, shuffle=False
            )
            vectors = self._encode_model(loader, **call)
            if vectors.ndim != 2 or len(vectors) != len(first):
                raise ValueError(
                    f"{task_metadata.name}: the encoder returned shape {vectors.shape} for {len(first)} texts"
                )
            store.add(list(first), vectors)
            self.stats.encoded += len(first)
        return store.take(digests)

    def close(self) -> None:
        self._stores = {}
