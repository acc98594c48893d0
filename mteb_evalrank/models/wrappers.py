"""``PostProcessedEncoder``: any mteb encoder followed by a post-processing fitted at the first
``encode`` on a fixed **fit corpus** (``FitCorpus``, never a task's texts; docs/zoo.md, "Fit corpora").

A zero row of the wrapped encoder (it knows nothing of the text) stays zero: an affine map would make
every unknown text one shared non-zero vector (cosine 1 between unknown texts).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.models.abs_encoder import AbsEncoder
from numpy.typing import NDArray
from sklearn.base import TransformerMixin

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.types import Array, BatchedInput
    from torch.utils.data import DataLoader


@dataclass(frozen=True)
class FitCorpus:
    """A named recipe for the texts a post-processing is fitted on."""

    name: str
    texts: Callable[[AbsEncoder], Sequence[str]]  # given the wrapped encoder


def vocabulary_head(n: int | None) -> FitCorpus:
    """The first ``n`` words (all if ``None``) of a ``StaticWordEmbeddings`` vocabulary."""

    def texts(encoder: AbsEncoder) -> list[str]:
        index = getattr(encoder, "index", None)
        if not isinstance(index, dict):
            raise TypeError(f"vocabulary fit corpus needs a static word-vector encoder, got {type(encoder)}.")
        return list(index)[:n]

    return FitCorpus("all vocabulary words" if n is None else f"the {n:,} most frequent words", texts)


def wmt17_reference_sentences(limit: int | None = None) -> list[str]:
    """WMT17 DA reference sentences (config ``all``, ``sentence1``), de-duplicated, in file order."""
    from mteb_evalrank.data.ready import load_split
    from mteb_evalrank.data.registry import WMT17_DA
    from mteb_evalrank.settings import Settings

    user = f"the fit corpus {WMT17_DA.hub_id} (config 'all')"
    data = load_split(WMT17_DA, "all", "test", user, Settings.from_environment())
    return list(dict.fromkeys(data["sentence1"]))[:limit]


def wmt17_references(limit: int | None = None) -> FitCorpus:
    """``FitCorpus`` of ``wmt17_reference_sentences`` (the first ``limit`` only, for tests)."""
    name = "WMT17 DA reference sentences (mteb-evalrank/wmt17-da, all, de-duplicated)"
    return FitCorpus(
        name if limit is None else f"{name}, first {limit}", lambda _: wmt17_reference_sentences(limit)
    )


def encode_texts(
    encoder: AbsEncoder, texts: Sequence[str], batch_size: int = 32, **kwargs: Any
) -> NDArray[np.float32]:
    """Encode a plain list of texts through ``encoder.encode`` (a DataLoader of ``{"text": [...]}``)."""
    from datasets import Dataset
    from torch.utils.data import DataLoader

    loader = DataLoader(Dataset.from_dict({"text": list(texts)}), batch_size=batch_size)
    return np.asarray(encoder.encode(loader, **kwargs), dtype=np.float32)


class PostProcessedEncoder(AbsEncoder):
    """``estimator.transform(base.encode(...))``: a scikit-learn transformer fitted at the first
    ``encode`` on ``corpus`` encoded by ``base``, or, without ``corpus``, used as given (fitted or
    stateless); ``is_fitted`` says whether it is ready."""

    def __init__(
        self, base: AbsEncoder, estimator: TransformerMixin, *, corpus: FitCorpus | None = None
    ) -> None:
        self.base = base
        self.estimator = estimator
        self.corpus = corpus
        self.is_fitted = corpus is None

    def fitted(self, task_metadata: TaskMetadata | None = None, **kwargs: Any) -> TransformerMixin:
        """The estimator, fitted now on the fit corpus if not yet."""
        if not self.is_fitted:
            assert self.corpus is not None
            texts = self.corpus.texts(self.base)
            if not texts:
                raise ValueError(f"the fit corpus ({self.corpus.name}) is empty.")
            kwargs.setdefault("hf_split", "fit")
            kwargs.setdefault("hf_subset", "default")
            self.estimator.fit(encode_texts(self.base, texts, task_metadata=task_metadata, **kwargs))
            self.is_fitted = True
        return self.estimator

    def encode(
        self, inputs: DataLoader[BatchedInput], *, task_metadata: TaskMetadata, **kwargs: Any
    ) -> Array:
        """The wrapped encoder's embeddings of ``inputs``, post-processed; zero rows stay zero. The
        first call fits the estimator (the fit corpus encoded with this ``task_metadata``, no prompt)."""
        estimator = self.fitted(task_metadata)
        base = np.asarray(self.base.encode(inputs, task_metadata=task_metadata, **kwargs))
        out = np.asarray(estimator.transform(base), dtype=np.float32)
        out[~base.any(axis=1)] = 0.0
        return out
