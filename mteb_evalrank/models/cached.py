"""``CachedEncoder``: an mteb encoder whose ``encode`` serves each text from the embedding cache.

The wrapper side of :mod:`mteb_evalrank.embedding_cache` (the storage and the key): it
subclasses mteb's ``CachedEmbeddingWrapper`` so that mteb sees a cached model of the usual
kind (``mteb_model_meta``, ``similarity`` and any other attribute are the wrapped model's),
and defines the encoding context of a call (:meth:`CachedEncoder.context`).
"""

from __future__ import annotations

import re
import time
import weakref
from typing import TYPE_CHECKING, Any

from mteb.models.cache_wrappers import CachedEmbeddingWrapper
from numpy.typing import NDArray

from mteb_evalrank._mteb_adapter import init_cached_wrapper_in_memory
from mteb_evalrank.embedding_cache import (
    EmbeddingCache,
    EncodeStats,
    StoreKey,
    as_numpy,
    model_dir_name,
    process_cache,
)

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.types import BatchedInput, PromptType
    from torch.utils.data import DataLoader

_NON_TEXT = {"image", "audio", "video"}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


def _loader_texts(inputs: Any) -> list[str] | None:
    """The texts of a DataLoader over a ``datasets`` text column (one Arrow read), else ``None``."""
    from datasets import Dataset

    dataset = getattr(inputs, "dataset", None)
    columns = set(getattr(dataset, "column_names", ()) or ())
    if not isinstance(dataset, Dataset) or "text" not in columns or columns & _NON_TEXT:
        return None
    texts = dataset["text"][:]
    return texts if all(isinstance(t, str) for t in texts) else None  # e.g. conversations: not cached


class CachedEncoder(CachedEmbeddingWrapper):
    """An mteb encoder whose ``encode`` serves each text from an :class:`EmbeddingCache`.

    ``mteb_model_meta``, ``similarity`` and any other attribute are the wrapped model's.

    Args:
        model: the encoder (mteb's ``encode`` signature).
        cache: the cache (default: whatever :func:`process_cache` is at each call; with
            ``by_instance``, the process cache at construction).
        by_instance: key the stores by this wrapper *object* (memory only, dropped with the
            wrapper) instead of the model's name: for models whose name may not identify
            their weights, or whose embeddings are cheap to recompute from a cached base.
        name, revision: the key's model name and revision (default: the model's meta).
    """

    def __init__(
        self,
        model: Any,
        cache: EmbeddingCache | None = None,
        *,
        by_instance: bool = False,
        name: str | None = None,
        revision: str | None = None,
    ) -> None:
        # an instance store must live where its finalizer drops it: pin the cache now
        self._cache = cache if cache is not None or not by_instance else process_cache()
        meta = getattr(model, "mteb_model_meta", None)
        self.name = name or getattr(meta, "name", None) or type(model).__name__
        self.revision = revision or getattr(meta, "revision", None) or "no_revision_available"
        self.instance = id(self) if by_instance else None
        if by_instance:  # the stores die with the wrapper: an id is never reused while they exist
            weakref.finalize(self, self.cache.drop, id(self))
        root = self.cache.root
        folder = None if root is None else root / model_dir_name(self.name) / model_dir_name(self.revision)
        try:
            if folder is not None:  # mteb's wrapper makes this folder (its own NumpyCache is never used)
                super().__init__(model, folder)
        except OSError:  # a folder that cannot be made: the store warns once, when it is used
            folder = None
        if folder is None:  # memory only: its __init__ would make an empty folder under the working
            # directory; what it sets besides is used only by its encode and close, both replaced here
            init_cached_wrapper_in_memory(self, model)
        self.stats = EncodeStats()

    @property
    def cache(self) -> EmbeddingCache:
        """The cache this wrapper reads and fills."""
        return self._cache if self._cache is not None else process_cache()

    def __getattr__(self, name: str) -> Any:  # e.g. get_prompt_name, model_prompts of the wrapped model
        if name.startswith("__") or name == "_model":
            raise AttributeError(name)
        return getattr(self._model, name)

    @property
    def model(self) -> Any:
        """The wrapped encoder."""
        return self._model

    def context(
        self, task_metadata: TaskMetadata, prompt_type: PromptType | None, kwargs: dict[str, Any]
    ) -> str:
        """The encoding context: what, besides the text, changes the embedding (folder-safe)."""
        parts = [prompt_type.value if prompt_type is not None else "none"]
        get_prompt_name = getattr(self._model, "get_prompt_name", None)
        if callable(get_prompt_name):
            prompt = get_prompt_name(task_metadata, prompt_type)
            if prompt:
                parts.append(f"prompt-{prompt}")
        meta = getattr(self._model, "mteb_model_meta", None)
        if meta is not None and meta.use_instructions:  # instructions depend on the task
            parts.append(f"task-{task_metadata.name}")
        if kwargs.get("precision"):
            parts.append(f"precision-{kwargs['precision']}")
        return _UNSAFE.sub("_", "__".join(parts))

    def key(
        self, task_metadata: TaskMetadata, prompt_type: PromptType | None, kwargs: dict[str, Any]
    ) -> StoreKey:
        """The :class:`StoreKey` of an encode call: model, revision, context (and instance)."""
        context = self.context(task_metadata, prompt_type, kwargs)
        return StoreKey(self.name, self.revision, context, self.instance)

    def _encode_model(self, inputs: DataLoader[BatchedInput], **kwargs: Any) -> NDArray[Any]:
        start = time.perf_counter()
        try:
            return as_numpy(self._model.encode(inputs, **kwargs))
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
        """mteb's ``encode``: stored rows from the cache, the others from the wrapped model."""
        call: dict[str, Any] = {"task_metadata": task_metadata, "hf_split": hf_split, "hf_subset": hf_subset}
        call |= {"prompt_type": prompt_type, **kwargs}
        texts = _loader_texts(inputs)
        if texts is None:
            self.stats.uncached_calls += 1
            return self._encode_model(inputs, **call)
        batch_size = getattr(inputs, "batch_size", None) or 32
        collate = getattr(inputs, "collate_fn", None)

        def encode(missing: list[str]) -> Any:
            from datasets import Dataset
            from torch.utils.data import DataLoader

            loader = DataLoader(
                Dataset.from_dict({"text": missing}), batch_size=batch_size, collate_fn=collate, shuffle=False
            )
            return self._model.encode(loader, **call)

        where = f"{task_metadata.name} ({hf_subset}), model {self.name}"
        return self.cache.embed(
            self.key(task_metadata, prompt_type, kwargs), texts, encode, stats=self.stats, where=where
        )

    def close(self) -> None:
        """Nothing to release: the stores belong to the cache."""
