"""``TextEmbedder``: an mteb encoder defined by ``embed(texts)`` alone; :func:`in_batches`."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models.abs_encoder import AbsEncoder
from numpy.typing import NDArray

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.types import Array, BatchedInput, PromptType
    from torch.utils.data import DataLoader


class TextEmbedder(AbsEncoder):
    """An encoder whose embeddings depend on the text only (no prompts, no task).

    Subclasses implement :meth:`embed`; :meth:`encode` is mteb's encoder protocol over it.
    """

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(len(texts), dim)`` embeddings of ``texts``, in order."""
        raise NotImplementedError

    def encode(
        self,
        inputs: DataLoader[BatchedInput],
        *,
        task_metadata: TaskMetadata,
        hf_split: str,
        hf_subset: str,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> Array:
        """Encode every ``batch["text"]`` of ``inputs`` (prompts do not apply)."""
        return self.embed([text for batch in inputs for text in batch["text"]])


def in_batches(
    encode_batch: Callable[[list[str]], Any],
    texts: Sequence[str],
    *,
    batch_size: int,
    width: int,
    where: str = "the encoder",
) -> NDArray[np.float32]:
    """``(len(texts), width)`` float32 rows of ``encode_batch`` over ``texts``, in order.

    ``encode_batch`` is called on ``texts[i : i + batch_size]`` for ``i = 0, batch_size, ...``
    and returns one row per text (any shape with ``width`` values per text; it is reshaped).
    No text gives a ``(0, width)`` array and no call.

    Raises:
        ValueError: if ``batch_size < 1``, or a batch's output does not hold ``width`` values
            per text (the message names ``where``).
    """
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
