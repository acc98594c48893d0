"""A sentence-transformers model folder shipped by a package, as a family base encoder."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey

from ._common import FamilyEncoder


class SentenceTransformerFolder(FamilyEncoder):
    """``SentenceTransformer(path).encode`` on CPU: the model's own modules (pooling, normalisation).

    sentence-transformers sorts a batch's texts by length and runs under ``torch.inference_mode``.
    """

    def __init__(self, path: str, key: StoreKey, *, dim: int) -> None:
        from sentence_transformers import SentenceTransformer

        self.key, self.dim = key, dim
        self.model: Any = SentenceTransformer(path, device="cpu", local_files_only=True)
        self.model.eval()
        found = self.model.get_embedding_dimension()
        if found != dim:
            raise ValueError(f"{path}: a {found}-d model, expected {dim}-d ({key.model}).")

    def encode_batch(self, texts: list[str]) -> NDArray[np.float32]:
        """The model's sentence embeddings of one batch (as the official pipeline outputs them)."""
        out = self.model.encode(
            texts, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False
        )
        return np.asarray(out, dtype=np.float32)
