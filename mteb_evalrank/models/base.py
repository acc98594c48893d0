"""``TextEmbedder``: an mteb encoder defined by ``embed(texts)``; :func:`in_batches`, :func:`cached_rows`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models.abs_encoder import AbsEncoder
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import EmbeddingCache, StoreKey, process_cache

if TYPE_CHECKING:
    from mteb.types import Array, BatchedInput, PromptType
    from torch.utils.data import DataLoader


class TextEmbedder(AbsEncoder):
    """An encoder whose embeddings depend on the text only (no task); subclasses implement :meth:`embed`."""

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(len(texts), dim)`` embeddings of ``texts``, in order."""
        raise NotImplementedError

    def embed_for(self, texts: Sequence[str], prompt_type: PromptType | None) -> NDArray[np.float32]:
        """Embeddings for mteb's ``prompt_type``: :meth:`embed` (prompts do not apply) unless overridden."""
        return self.embed(texts)

    def encode(
        self, inputs: DataLoader[BatchedInput], *, prompt_type: PromptType | None = None, **kwargs: Any
    ) -> Array:
        """Encode every ``batch["text"]`` of ``inputs`` (:meth:`embed_for`; the task is not used)."""
        return self.embed_for([text for batch in inputs for text in batch["text"]], prompt_type)


def in_batches(
    encode_batch: Callable[[list[str]], Any],
    texts: Sequence[str],
    *,
    batch_size: int,
    width: int,
    where: str = "the encoder",
) -> NDArray[np.float32]:
    """``(len(texts), width)`` float32 rows of ``encode_batch`` over ``texts[i : i + batch_size]``, in order
    (reshaped); no text: ``(0, width)``, no call. ``ValueError`` (naming ``where``) for ``batch_size < 1``
    or a batch without ``width`` values per text."""
    if batch_size < 1:
        raise ValueError(f"batch_size must be at least 1, got {batch_size}.")
    if not texts:
        return np.zeros((0, width), dtype=np.float32)
    blocks = []
    for start in range(0, len(texts), batch_size):
        batch = list(texts[start : start + batch_size])
        block = np.asarray(encode_batch(batch), dtype=np.float32)
        if block.size != len(batch) * width or (block.ndim and block.shape[0] != len(batch)):
            raise ValueError(
                f"{where} returned an array of shape {block.shape} for {len(batch)} texts; "
                f"expected {len(batch)} rows of {width} values."
            )
        blocks.append(block.reshape(len(batch), width))
    return np.concatenate(blocks)


def cached_rows(
    key: StoreKey,
    texts: Sequence[str],
    encode_batch: Callable[[list[str]], Any],
    *,
    batch_size: int,
    width: int,
    where: str,
    cache: EmbeddingCache | None = None,
) -> NDArray[np.float32]:
    """``(len(texts), width)`` rows of ``texts`` from ``cache`` (default the process's) under ``key``;
    the missing texts encoded now by ``encode_batch``, ``batch_size`` at a time (:func:`in_batches`)."""
    if not texts:
        return np.zeros((0, width), dtype=np.float32)

    def encode_all(missing: list[str]) -> NDArray[np.float32]:
        return in_batches(encode_batch, missing, batch_size=batch_size, width=width, where=where)

    rows = (process_cache() if cache is None else cache).embed(key, list(texts), encode_all, where=where)
    return np.asarray(rows, dtype=np.float32)
