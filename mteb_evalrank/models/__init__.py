"""Encoders and model metas: static word vectors, MiniLM poolings, post-processing, the zoo."""

from .. import _postponed
from .minilm import MiniLMLayerPooling
from .static import StaticWordEmbeddings
from .wrappers import PostProcessedEncoder
from .zoo import MODEL_METAS, ZOO, model_family

__all__ = [
    "MODEL_METAS",
    "ZOO",
    "MiniLMLayerPooling",
    "PostProcessedEncoder",
    "StaticWordEmbeddings",
    "model_family",
]

# completes `import mteb_evalrank`'s registration if mteb was first imported by this module
_postponed.finish_postponed(__name__)
