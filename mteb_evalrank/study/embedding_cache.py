"""Deprecated: the study's embedding cache is now the plugin's one cache,
:mod:`mteb_evalrank.embedding_cache`; this alias will be removed in a later release.

``StudyEmbeddingCache(model, root)`` is ``CachedEncoder(model, EmbeddingCache(root))`` and
``ShardStore`` is ``VectorStore``.
"""

from __future__ import annotations

import warnings
from pathlib import Path
from typing import Any

from mteb_evalrank.embedding_cache import (
    DIGEST_SIZE,
    EmbeddingCache,
    EncodeStats,
    VectorStore,
    model_dir_name,
    text_digest,
)
from mteb_evalrank.models.cached import CachedEncoder

warnings.warn(
    "mteb_evalrank.study.embedding_cache is replaced by mteb_evalrank.embedding_cache "
    "and mteb_evalrank.models.cached (CachedEncoder); import from there.",
    DeprecationWarning,
    stacklevel=2,
)

ShardStore = VectorStore


def StudyEmbeddingCache(model: Any, root: str | Path) -> CachedEncoder:
    """``CachedEncoder(model, EmbeddingCache(root))``: a disk cache under ``root``."""
    return CachedEncoder(model, EmbeddingCache(root))


__all__ = [
    "DIGEST_SIZE",
    "EncodeStats",
    "ShardStore",
    "StudyEmbeddingCache",
    "model_dir_name",
    "text_digest",
]
