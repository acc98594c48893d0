"""What every PyPI-packaged encoder shares: the install hint, the plugin's folder, batching.

* :func:`require` imports a package's module or raises ``ModuleNotFoundError`` naming the
  pip command (:data:`INSTALL_HINT`).
* :func:`home` is the plugin's own folder for files it derives from installed packages
  (``$MTEB_EVALRANK_HOME``, else ``$XDG_CACHE_HOME/mteb-evalrank``, else
  ``~/.cache/mteb-evalrank``); the encoders' files live under ``<home>/encoders/``, each folder
  marked by :data:`MARKER` (see :mod:`.install`).
* :class:`FamilyEncoder` is a family's *base* encoder: ``embed(texts)`` serves each text from
  the process's embedding cache (:func:`mteb_evalrank.embedding_cache.process_cache`) under
  the key ``(meta name, revision, context)``, and encodes the texts it lacks, longest first,
  ``batch_size`` at a time. Every zoo variant of the family wraps the one object
  :func:`functools.cache` keeps per process, so a text is encoded once per family (in a
  study the cache is on disk, shared by the workers).
"""

from __future__ import annotations

import importlib
import os
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank._home import home
from mteb_evalrank.embedding_cache import StoreKey, process_cache

from ..base import TextEmbedder, in_batches

INSTALL_HINT = "bash scripts/install_encoders.sh (in a checkout; or pip install 'mteb-evalrank[encoders]')"
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

    def _encode_all(
        self, texts: list[str], encode_batch: Callable[[list[str]], NDArray[np.float32]] | None = None
    ) -> NDArray[np.float32]:
        """Every text, ``batch_size`` at a time (the cache passes them longest first)."""
        run = encode_batch or self.encode_batch
        return in_batches(run, texts, batch_size=self.batch_size, width=self.dim, where=self.key.model)

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        """``(n, dim)`` embeddings of ``texts``: cached rows, the others encoded now."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        rows = process_cache().embed(self.key, list(texts), self._encode_all, where=self.key.model)
        return np.asarray(rows, dtype=np.float32)
