"""Encoders and model metas: static word vectors, offline model installation."""

from .static import StaticWordEmbeddings
from .zoo import MODEL_METAS

__all__ = ["MODEL_METAS", "StaticWordEmbeddings"]
