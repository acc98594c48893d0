"""An ONNX encoder (``onnxruntime``) with a Hugging Face ``tokenizers`` tokenizer."""

from __future__ import annotations

from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey

from ._common import FamilyEncoder, n_threads


class OnnxEncoder(FamilyEncoder):
    """Tokenise (truncate at ``max_length`` tokens, pad to the batch's longest), run, pool.

    ``pooling``: ``"output:NAME"`` takes the graph output ``NAME`` as the sentence embedding
    (a graph that pools itself); ``"cls"`` takes ``last_hidden_state[:, 0]``. ``normalize``
    divides by the L2 norm (as the official model's ``Normalize`` module). onnxruntime runs
    with one intra-op thread per core.
    """

    def __init__(
        self,
        onnx_path: str,
        tokenizer_path: str,
        key: StoreKey,
        *,
        dim: int,
        max_length: int,
        pooling: str,
        normalize: bool,
        batch_size: int = 32,
    ) -> None:
        import onnxruntime as ort
        from tokenizers import Tokenizer

        self.key, self.dim, self.batch_size = key, dim, batch_size
        self.pooling, self.normalize = pooling, normalize
        tokenizer = Tokenizer.from_file(tokenizer_path)
        tokenizer.enable_truncation(max_length=max_length)
        pad_id = tokenizer.token_to_id("[PAD]")
        tokenizer.enable_padding(pad_id=0 if pad_id is None else pad_id, pad_token="[PAD]")
        self.tokenizer: Any = tokenizer
        options = ort.SessionOptions()
        options.intra_op_num_threads = n_threads()
        options.inter_op_num_threads = 1
        self.session: Any = ort.InferenceSession(onnx_path, options, providers=["CPUExecutionProvider"])
        self.inputs = [i.name for i in self.session.get_inputs()]
        self.output = pooling.split(":", 1)[1] if pooling.startswith("output:") else "last_hidden_state"

    def encode_batch(self, texts: list[str]) -> NDArray[np.float32]:
        """``(len(texts), dim)`` sentence embeddings of one batch."""
        encodings = self.tokenizer.encode_batch(texts)
        feed = {
            "input_ids": np.array([e.ids for e in encodings], dtype=np.int64),
            "attention_mask": np.array([e.attention_mask for e in encodings], dtype=np.int64),
            "token_type_ids": np.array([e.type_ids for e in encodings], dtype=np.int64),
        }
        (out,) = self.session.run([self.output], {name: feed[name] for name in self.inputs})
        vectors = np.asarray(out[:, 0] if self.pooling == "cls" else out, dtype=np.float32)
        if self.normalize:
            norms = np.linalg.norm(vectors, axis=1, keepdims=True)
            vectors = np.divide(vectors, norms, out=np.zeros_like(vectors), where=norms > 0)
        return vectors
