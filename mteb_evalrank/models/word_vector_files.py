"""Readers of static word-vector files, numpy and the standard library only (docs/zoo.md, "Readers").

* word2vec binary: header ``"<rows> <dims>\\n"``, then per row the UTF-8 word, a space and ``dims``
  little-endian float32 (one leading ``"\\n"`` of a word dropped); streamed (``.gz``: gzip).
* gensim 3 KeyedVectors pickle: state ``vectors`` and ``vocab`` (``{word: Vocab(count, index)}``),
  read by an unpickler that allows only numpy's reconstruction and inert stand-ins of gensim's classes.
* spaCy table: ``vectors`` (``.npy``) and ``key2row`` (msgpack ``{spacy_hash(word): row}``).
* text: :func:`read_text_vectors` (from :mod:`.static`).
"""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .static import count_dim_header, open_vectors
from .static import read_text_vectors as read_text_vectors  # re-exported: every reader here

_M = 0xC6A4A7935BD1E995
_MASK = (1 << 64) - 1
SPACY_HASH_SEED = 1
"""spaCy's ``hash_string`` is ``MurmurHash64A(utf8, len, seed=1)`` (``spacy/strings.pyx``)."""


def murmurhash64a(data: bytes, seed: int = SPACY_HASH_SEED) -> int:
    """Austin Appleby's MurmurHash2 64-bit ``MurmurHash64A`` of ``data``, as an unsigned int.

    ``m = 0xc6a4a7935bd1e995``, ``r = 47``, ``h = seed ^ (len * m)``; per 8-byte
    little-endian block ``k``: ``k *= m; k ^= k >> r; k *= m; h ^= k; h *= m``; the 1-7
    remaining bytes, little-endian, are xored into ``h`` and ``h *= m``; finally
    ``h ^= h >> r; h *= m; h ^= h >> r``; all arithmetic modulo 2**64 (no PyPI package exposes it).
    """
    n = len(data)
    h = seed ^ ((n * _M) & _MASK)
    full = n - n % 8
    for start in range(0, full, 8):
        k = (int.from_bytes(data[start : start + 8], "little") * _M) & _MASK
        k = ((k ^ (k >> 47)) * _M) & _MASK
        h = ((h ^ k) * _M) & _MASK
    if n % 8:
        h = ((h ^ int.from_bytes(data[full:], "little")) * _M) & _MASK
    h = ((h ^ (h >> 47)) * _M) & _MASK
    return h ^ (h >> 47)


def spacy_hash(word: str) -> int:
    """spaCy's key of ``word``: :func:`murmurhash64a` of its UTF-8 bytes with seed 1."""
    return murmurhash64a(word.encode("utf-8"))


# ------------------------------------------------------------------ word2vec binary
def read_word2vec_binary(path: Path) -> tuple[list[str], NDArray[np.float32]]:
    """``(words, (rows, dims) float32)`` of a word2vec binary file, streamed (``.gz``: gzip)."""
    with open_vectors(path) as handle:
        header = count_dim_header(handle.readline())
        if header is None:
            raise ValueError(f"{path}: not a word2vec binary file (no '<rows> <dims>' header line).")
        rows, dims = header
        width = 4 * dims
        words: list[str] = []
        vectors = np.empty((rows, dims), dtype=np.float32)
        buffer, pos = b"", 0
        for row in range(rows):
            while (space := buffer.find(b" ", pos)) < 0 or len(buffer) < space + 1 + width:
                more = handle.read(1 << 20)
                if not more:
                    raise ValueError(f"{path}: truncated at row {row} of {rows} (byte {pos}).")
                buffer, pos = buffer[pos:] + more, 0
            words.append(buffer[pos:space].removeprefix(b"\n").decode("utf-8"))
            vectors[row] = np.frombuffer(buffer, dtype="<f4", count=dims, offset=space + 1)
            pos = space + 1 + width
        if rest := len((buffer[pos:] + handle.read()).strip()):
            raise ValueError(f"{path}: {rest} bytes after the {rows} rows of the header.")
    return words, vectors


# ------------------------------------------------------------------ gensim pickle
_MULTIARRAY = "numpy._core.multiarray" if int(np.__version__.split(".")[0]) >= 2 else "numpy.core.multiarray"
"""Where numpy's ``_reconstruct`` and ``scalar`` live (numpy 2 renamed ``numpy.core``)."""


class _PickledObject:
    """Inert stand-in for a pickled gensim object: ``BUILD`` stores the state, nothing runs."""

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)


class _KeyedVectorsUnpickler(pickle.Unpickler):
    """An unpickler that builds only numpy arrays and scalars (what ``ndarray.__reduce__`` emits),
    builtin containers and inert stand-ins of gensim's classes; any other global is refused."""

    GENSIM = frozenset({"Word2VecKeyedVectors", "KeyedVectors", "Vocab"})
    NUMPY_MODULES = frozenset({"numpy", "numpy.core.multiarray", "numpy._core.multiarray"})
    NUMPY_NAMES = frozenset({"_reconstruct", "ndarray", "dtype", "scalar"})

    def find_class(self, module: str, name: str) -> Any:
        if module == "gensim.models.keyedvectors" and name in self.GENSIM:
            return type(name, (_PickledObject,), {})
        if module in self.NUMPY_MODULES and name in self.NUMPY_NAMES:
            return super().find_class("numpy" if module == "numpy" else _MULTIARRAY, name)
        raise pickle.UnpicklingError(f"refused to load {module}.{name}: not a gensim KeyedVectors pickle.")


def read_keyedvectors_pickle(path: Path) -> tuple[list[str], NDArray[np.float32]]:
    """``(words, (rows, dims) float32)`` of a gensim 3 KeyedVectors pickle, words in row order."""
    with path.open("rb") as handle:
        state = _KeyedVectorsUnpickler(handle).load()
    vectors = getattr(state, "vectors", None)
    vocab = getattr(state, "vocab", None)
    if not isinstance(vectors, np.ndarray) or vectors.ndim != 2 or not isinstance(vocab, dict):
        raise ValueError(f"{path}: no 'vectors' matrix and 'vocab' map in the KeyedVectors state.")
    words = [""] * vectors.shape[0]
    for word, entry in vocab.items():
        words[int(entry.index)] = str(word)
    if len(vocab) != vectors.shape[0] or not all(words):
        raise ValueError(f"{path}: {len(vocab)} words for {vectors.shape[0]} rows (not one word per row).")
    return words, np.ascontiguousarray(vectors, dtype=np.float32)


# ------------------------------------------------------------------ spaCy table
def read_spacy_table(vectors: Path, key2row: Path) -> tuple[NDArray[np.float32], dict[int, int]]:
    """``((rows, dims) float32, {key: row})`` of a spaCy ``Vectors`` folder's two files."""
    import msgpack  # type: ignore[import-untyped]  # installed with distributed, no type hints

    matrix = np.load(vectors, allow_pickle=False)
    mapping = msgpack.unpackb(key2row.read_bytes(), strict_map_key=False)
    if matrix.ndim != 2 or not isinstance(mapping, dict):
        raise ValueError(f"{vectors}, {key2row}: not a spaCy vectors table.")
    table = {int(key): int(row) for key, row in mapping.items()}
    if table and not 0 <= min(table.values()) <= max(table.values()) < matrix.shape[0]:
        raise ValueError(f"{key2row}: a row outside the {matrix.shape[0]} rows of {vectors}.")
    return np.ascontiguousarray(matrix, dtype=np.float32), table
