"""all-MiniLM-L6-v2 (bundled) with other poolings and layers, one forward pass for all of them.

``h_l``: hidden state ``l`` (0: embedding output, 1..6: transformer layers), ``m``: attention mask;
``mean-layer-l = sum_t m_t h_l[t] / sum_t m_t`` (``mean-last`` = ``mean-layer-6``), ``cls = h_6[0]``,
``first-last-avg = (mean-layer-1 + mean-layer-6) / 2``; 256 tokens. Per text, the 7 layer means and
the CLS are one cached row (``FEATURES_KEY``) that every pooling views (docs/zoo.md, "MiniLM poolings").
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey, process_cache

from .base import TextEmbedder, cached_rows
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

    def _forward(self, texts: list[str]) -> NDArray[np.float32]:
        """``(len(texts), 8, 384)``: layer means 0..6 and the last-layer CLS."""
        type(self).forward_calls += 1
        layers = range(N_LAYERS + 1)
        return hidden_features(self.tokenizer, self.model, texts, MAX_SEQ_LENGTH, layers, pooler=False)

    def features(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, 8, 384)`` per-text features: from the cache, or one forward pass per batch of misses."""
        width, where = (CLS_ROW + 1) * DIM, "all-MiniLM-L6-v2"
        rows = cached_rows(
            FEATURES_KEY,
            texts,
            self._forward,
            batch_size=self.batch_size,
            width=width,
            where=where,
            cache=self.cache,
        )
        return rows.reshape(len(texts), CLS_ROW + 1, DIM)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, 384)`` embeddings of ``texts`` under this variant's pooling."""
        feats = self.features(texts)
        if self.pooling == "first-last-avg":
            return (feats[:, 1] + feats[:, N_LAYERS]) / np.float32(2)
        named = {"cls": CLS_ROW, "mean-last": N_LAYERS}
        return feats[:, named.get(self.pooling) or int(self.pooling.rsplit("-", 1)[1])].copy()
