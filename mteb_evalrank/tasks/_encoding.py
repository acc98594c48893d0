"""The tasks' side of the embedding cache: a text encoded once per model across a task's subsets.

mteb evaluates a task one hf_subset at a time; the subsets of a task often share texts (the
cross-validation folds of the downstream tasks, the parts of an EvalRank background).
:class:`TaskEmbeddings` keeps the embeddings of the model being evaluated in an
:class:`~mteb_evalrank.embedding_cache.EmbeddingCache` of the task's own, keyed by the model
*object* and dropped with the task's data or when another model comes: a model trained
between two evaluations is never served stale embeddings. Sharing texts *across* tasks is
the model's business: wrap it in a :class:`~mteb_evalrank.models.cached.CachedEncoder`
(the study does; the zoo's family encoders share their base output already).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from datasets import Dataset
from numpy.typing import NDArray

from mteb_evalrank._mteb_adapter import create_dataloader
from mteb_evalrank.embedding_cache import EmbeddingCache, StoreKey
from mteb_evalrank.evaluation.ranking import check_embeddings

if TYPE_CHECKING:
    from mteb.abstasks.task_metadata import TaskMetadata
    from mteb.timing import TimingStack


def as_list(column: Any) -> Any:
    """A ``datasets`` column as a list in one Arrow read; lists and arrays are returned as they are.

    ``datasets`` 5 returns lazy ``Column`` objects whose per-row iteration formats every row
    (about 10 us each): a 25k-row corpus column costs ~0.3 s iterated, milliseconds read whole.
    """
    return column if isinstance(column, list | np.ndarray) else column[:]


def model_name(model: object) -> str:
    """A model's mteb name for messages, else its class name."""
    meta = getattr(model, "mteb_model_meta", None)
    return getattr(meta, "name", None) or type(model).__name__


class TaskEmbeddings:
    """A task's embeddings of one model at a time; switching to another model empties them."""

    def __init__(self) -> None:
        self._model: object | None = None
        self._first: Sequence[str] | None = None  # the encode_first list already in the cache
        self._cache = EmbeddingCache()

    def clear(self) -> None:
        self._model = None
        self._first = None
        self._cache.clear()

    def embed(
        self,
        model: Any,
        texts: Sequence[str],
        *,
        encode_first: Sequence[str] = (),
        task_metadata: TaskMetadata,
        encode_kwargs: dict[str, Any],
        hf_split: str,
        hf_subset: str,
        timer: TimingStack,
        num_proc: int | None = None,
    ) -> NDArray[np.float64]:
        """Embeddings of ``texts`` (one row each, in order), validated, as float64.

        ``encode_first`` (e.g. every text of the task, so that later subsets find theirs) is
        encoded in one ``model.encode`` call on first use, each distinct text once, and not
        looked at again while the same list object comes with the same model (later subsets
        hash only their own texts); texts not seen yet are encoded in a call of their own.

        Raises:
            NonFiniteEmbeddingsError: if the encoder returns NaN or infinity (names task and model).
            ValueError: if it returns the wrong number of rows.
        """
        if self._model is not model:
            self.clear()
            self._model = model
        where = f"{task_metadata.name} ({hf_subset}), model {model_name(model)}"

        def encode(missing: list[str]) -> NDArray[np.float64]:
            with timer(
                "Encoding",
                split=hf_split,
                subset=hf_subset,
                log_message=f"{task_metadata.name}: encoding {len(missing)} unique texts...",
            ):
                encoded = model.encode(
                    create_dataloader(
                        Dataset.from_dict({"text": missing}),
                        task_metadata=task_metadata,
                        num_proc=num_proc,
                        **encode_kwargs,
                    ),
                    task_metadata=task_metadata,
                    hf_split=hf_split,
                    hf_subset=hf_subset,
                    prompt_type=None,
                    **encode_kwargs,
                )
            if hasattr(encoded, "detach"):  # torch tensor
                encoded = encoded.detach().cpu().float().numpy()
            block = check_embeddings(encoded, where=where)
            if block.shape[0] != len(missing):
                raise ValueError(
                    f"{where}: the encoder returned {block.shape[0]} embeddings for {len(missing)} texts."
                )
            return block

        key = StoreKey(model_name(model), "", "task", instance=id(model))
        if encode_first and encode_first is not self._first:
            self._cache.ensure(key, encode_first, encode, where=where)
            self._first = encode_first
        return np.asarray(self._cache.embed(key, texts, encode, where=where), dtype=np.float64)
