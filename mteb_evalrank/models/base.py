"""``TextEmbedder``: an mteb encoder defined by ``embed(texts)`` alone."""

from __future__ import annotations

from collections.abc import Sequence
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
