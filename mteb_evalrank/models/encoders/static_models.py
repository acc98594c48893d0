"""Model2Vec-style static models through sentence-transformers' ``StaticEmbedding.from_model2vec``:
``E[t] = embeddings[mapping[t]] * weights[t]``, a text is the mean of ``E`` over its first 512 tokens."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, FamilyEncoder, WeightFile, require

TOKENLEARN = "evalrank/tokenlearn-static-model"
TOKENLEARN_PACKAGE = "tokenlearn-static-model"
TOKENLEARN_REVISION = "tokenlearn-static-model==0.1.1"
TOKENLEARN_SHA256 = "6be5d2830b76c27312e7870df0f7d3c55803fbc6817dfaee0783de319d457c6c"
TOKENLEARN_TOKENIZER_SHA256 = "50ae6ca68a1b0491bf13b123fdf74aad127fd7b8cf9af56ca763b9df20f29bc5"
MODEL2VEC_CITATION = """@software{minishlab2024model2vec,
  author = {Tulkens, Stephan and van Dongen, Thomas},
  doi = {10.5281/zenodo.17270888},
  publisher = {Zenodo},
  title = {Model2Vec: Fast State-of-the-Art Static Embeddings},
  url = {https://github.com/MinishLab/model2vec},
  year = {2024},
}"""


class StaticModel2Vec(FamilyEncoder):
    """A model2vec folder through ``StaticEmbedding.from_model2vec`` (an ``EmbeddingBag``, mean)."""

    batch_size = 1024

    def __init__(self, folder: str, key: StoreKey, *, dim: int) -> None:
        require("model2vec", "model2vec", key.model)
        from sentence_transformers.sentence_transformer.modules import StaticEmbedding

        self.module: Any = StaticEmbedding.from_model2vec(folder)
        self.module.eval()
        self.key, self.dim = key, dim
        if self.module.embedding_dim != dim:
            found = self.module.embedding_dim
            raise ValueError(f"{folder}: {found}-d vectors, expected {dim}-d ({key.model}).")

    def encode_batch(self, texts: list[str]) -> NDArray[np.float32]:
        """Mean of the folded token vectors of each text (a text with no token: zeros)."""
        import torch

        features = self.module.preprocess(texts)
        with torch.inference_mode():
            out = self.module(features)["sentence_embedding"]
        return out.float().numpy()


def tokenlearn_dir() -> Path:
    """``static_model/model`` of the installed ``tokenlearn-static-model``."""
    module = require("static_model", TOKENLEARN_PACKAGE, TOKENLEARN)
    return Path(str(module.__file__)).parent / "model"


@cache
def load_tokenlearn(root: Path) -> StaticModel2Vec:
    """The tokenlearn static model (one per process; an installed package's, ``root`` unused)."""
    return StaticModel2Vec(str(tokenlearn_dir()), StoreKey(TOKENLEARN, TOKENLEARN_REVISION, "none"), dim=64)


TOKENLEARN_FAMILY = EncoderFamily(
    family="tokenlearn-static-model",
    name=TOKENLEARN,
    dim=64,
    what="tokenlearn static model: 276k-token Unigram vocabulary, 10k int8 64-d vectors, weighted mean",
    load=load_tokenlearn,
    weights=(
        WeightFile(TOKENLEARN_PACKAGE, "static_model/model/model.safetensors", TOKENLEARN_SHA256),
        WeightFile(TOKENLEARN_PACKAGE, "static_model/model/tokenizer.json", TOKENLEARN_TOKENIZER_SHA256),
    ),
    cut=(32,),
    meta={
        "revision": TOKENLEARN_REVISION,
        "release_date": "2026-04-01",
        "n_parameters": 916_326,  # 10,000 x 64 vectors + 276,326 token weights
        "n_embedding_parameters": 640_000,
        "memory_usage_mb": 4,
        "max_tokens": 512,
        "license": "not specified",
        "reference": "https://pypi.org/project/tokenlearn-static-model/",
        "framework": ["NumPy", "safetensors"],
        "training_datasets": None,
        "citation": MODEL2VEC_CITATION,
    },
)
