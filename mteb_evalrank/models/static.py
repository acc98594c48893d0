"""Static word vectors as an mteb encoder (bag of words).

``encode(text)`` = the mean of the known tokens' vectors of ``text.lower().split()``, the zero vector
when none is known; unknown tokens are skipped and counted (``n_unknown_tokens`` of ``n_tokens``).
"""

from __future__ import annotations

import gzip
import io
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from .base import TextEmbedder


class StaticWordEmbeddings(TextEmbedder):
    """Bag-of-words encoder over ``words`` (one per row of ``vectors``; a repeated word keeps its first
    row); ``lowercase`` applies to the text, not the vocabulary; ``name`` labels error messages."""

    def __init__(
        self,
        words: Sequence[str],
        vectors: NDArray[np.floating],
        *,
        lowercase: bool = True,
        name: str = "static word embeddings",
    ) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] != len(words):
            raise ValueError(
                f"{name}: expected one vector per word, got {len(words)} words and "
                f"vectors of shape {vectors.shape}."
            )
        if len(words) == 0:
            raise ValueError(f"{name}: the vocabulary is empty.")
        self.index: dict[str, int] = {}
        for row, word in enumerate(words):
            self.index.setdefault(word, row)
        self._start(vectors, lowercase, name)

    def _start(self, vectors: NDArray[np.float32], lowercase: bool, name: str) -> None:
        """The state every lookup shares: the table, the options and the token counters."""
        self.vectors = vectors
        self.lowercase = lowercase
        self.name = name
        self.n_tokens = 0
        self.n_unknown_tokens = 0

    @property
    def dim(self) -> int:
        return int(self.vectors.shape[1])

    def row(self, token: str) -> int | None:
        """The row of ``token``'s vector, ``None`` if it has none."""
        return self.index.get(token)

    def coverage(self, words: Iterable[str]) -> float:
        """``#{w : every token of w known} / #{w}`` over the distinct non-empty ``words`` (0.0 for none);
        counts nothing into ``n_tokens`` / ``n_unknown_tokens``."""
        distinct = {word for word in words if self.tokenize(word)}
        known = sum(all(self.row(token) is not None for token in self.tokenize(word)) for word in distinct)
        return known / len(distinct) if distinct else 0.0

    # ------------------------------------------------------------------ loading
    @classmethod
    def from_file(
        cls, path: str | Path, vocabulary: str | Path | None = None, **kwargs: Any
    ) -> StaticWordEmbeddings:
        """Text vectors (:func:`read_text_vectors`), or a ``.npy`` matrix with its ``vocabulary`` (a
        one-column ``.parquet`` or one word per line, in row order)."""
        path = Path(path)
        kwargs.setdefault("name", path.name)
        if path.suffix == ".npy":
            if vocabulary is None:
                raise ValueError(f"{path}: a .npy matrix needs vocabulary=<parquet or txt file>.")
            vectors = np.load(path, mmap_mode="r")
            return cls(_read_vocabulary(Path(vocabulary)), np.asarray(vectors), **kwargs)
        words, vectors = read_text_vectors(path)
        return cls(words, vectors, **kwargs)

    # ----------------------------------------------------------------- encoding
    def tokenize(self, text: str) -> list[str]:
        """Whitespace tokens, lower-cased if ``lowercase``."""
        return (text.lower() if self.lowercase else text).split()

    def embed(self, texts: Iterable[str]) -> NDArray[np.float32]:
        """``(n, dim)`` mean of the known tokens' vectors per text (zeros if none)."""
        rows: list[NDArray[np.float32]] = []
        zero = np.zeros(self.dim, dtype=np.float32)
        for text in texts:
            tokens = self.tokenize(text)
            known = [row for row in map(self.row, tokens) if row is not None]
            self.n_tokens += len(tokens)
            self.n_unknown_tokens += len(tokens) - len(known)
            rows.append(self.vectors[known].mean(axis=0) if known else zero)
        return np.stack(rows) if rows else np.zeros((0, self.dim), dtype=np.float32)


def _read_vocabulary(path: Path) -> list[str]:
    if path.suffix == ".parquet":
        import pyarrow.parquet as pq

        table = pq.read_table(path)
        columns = [c for c in table.column_names if not c.startswith("__")]
        if len(columns) != 1:
            raise ValueError(f"{path}: expected one vocabulary column, found {columns}.")
        return [str(word) for word in table.column(columns[0]).to_pylist()]
    return [line.rstrip("\r\n") for line in path.open(encoding="utf-8")]


class HashedWordEmbeddings(StaticWordEmbeddings):
    """Bag-of-words encoder over a table keyed by a hash of the word (spaCy's ``Vectors``):
    ``row(token) = key2row.get(hash_word(token))`` (several keys may share a row; ``index`` is empty)."""

    def __init__(
        self,
        key2row: dict[int, int],
        vectors: NDArray[np.floating],
        hash_word: Callable[[str], int],
        *,
        lowercase: bool = True,
        name: str = "hashed word embeddings",
    ) -> None:
        vectors = np.asarray(vectors, dtype=np.float32)
        if vectors.ndim != 2 or vectors.shape[0] == 0 or not key2row:
            raise ValueError(f"{name}: expected a non-empty (rows, dim) table, got {vectors.shape}.")
        self.key2row = key2row
        self.hash_word = hash_word
        self.rows: dict[str, int | None] = {}  # memo of row per token (hashing is pure Python)
        self.index = {}
        self._start(vectors, lowercase, name)

    def row(self, token: str) -> int | None:
        """``key2row[hash_word(token)]``, ``None`` if the hash is not a key."""
        if token not in self.rows:
            self.rows[token] = self.key2row.get(self.hash_word(token))
        return self.rows[token]


def open_vectors(path: Path) -> io.BufferedIOBase:
    """``path`` opened for binary reading; a ``.gz`` file through ``gzip``."""
    return gzip.open(path, "rb") if path.suffix == ".gz" else path.open("rb")


def count_dim_header(line: bytes) -> tuple[int, int] | None:
    """``(count, dim)`` if ``line`` is word2vec's header (two integers), else ``None``."""
    fields = line.split()
    return (int(fields[0]), int(fields[1])) if len(fields) == 2 and all(f.isdigit() for f in fields) else None


def read_text_vectors(path: Path) -> tuple[list[str], NDArray[np.float32]]:
    """``(words, (rows, dims) float32)`` of a text file (``.gz``: gzip), one ``word v1 ... vd`` line per
    word, streamed into one preallocated matrix. An optional ``count dim`` first line gives the size;
    a line is split at its last ``d`` spaces (a word may contain spaces); empty lines are skipped.
    A bad line raises ``ValueError`` naming the file and line.
    """
    with open_vectors(path) as handle:
        first = handle.readline()
        header = count_dim_header(first)
        if header is None:  # count the lines, then read again from the start
            rows, dim = 1 + sum(1 for _ in handle), len(first.split()) - 1
            handle.seek(0)
        else:
            rows, dim = header
        words: list[str] = []
        vectors = np.empty((rows, max(dim, 0)), dtype=np.float32)
        for line_no, line in enumerate(handle, start=1 if header is None else 2):
            fields = line.rstrip().rsplit(b" ", dim)
            if fields == [b""]:
                continue
            if len(fields) != dim + 1 or dim < 1:
                got = len(fields) - 1
                raise ValueError(f"{path}:{line_no}: expected a word and {dim} numbers, got {got} numbers.")
            if len(words) == rows:
                raise ValueError(f"{path}:{line_no}: more rows than the header's {rows}.")
            try:
                vectors[len(words)] = np.array(fields[1:], dtype=np.float64)
                words.append(fields[0].decode("utf-8"))
            except UnicodeDecodeError as error:
                raise ValueError(f"{path}:{line_no}: the word is not UTF-8 ({error}).") from None
            except ValueError:
                raise ValueError(f"{path}:{line_no}: a vector value is not a number.") from None
    if not words:
        raise ValueError(f"{path}: no word vectors found.")
    return words, vectors[: len(words)]
