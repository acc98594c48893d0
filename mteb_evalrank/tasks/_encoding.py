"""Encode each unique text once per model, across the hf_subsets of a task.

mteb evaluates a task one hf_subset at a time; tasks whose subsets share texts (the
cross-validation folds of the downstream tasks) keep the embeddings here so that a text is
encoded once per model. mteb has no such cache (its ``CachedEmbeddingWrapper`` wraps a
*model* and writes to disk); this one lives on the task and is dropped with its data.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import numpy as np
from datasets import Dataset
from numpy.typing import NDArray

from mteb_evalrank._mteb_adapter import create_dataloader
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


class TextEmbeddingCache:
    """``text -> embedding`` of one model; switching to another model empties it."""

    def __init__(self) -> None:
        self._model: object | None = None
        self._rows: dict[str, int] = {}
        self._matrix: NDArray[np.float64] | None = None

    def clear(self) -> None:
        self._model = None
        self._rows = {}
        self._matrix = None

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
        """Embeddings of ``texts`` (one row each, in order).

        Texts not seen yet for this model, together with ``encode_first`` (e.g. every text of
        the task, so that later subsets find theirs), are encoded in one ``model.encode`` call.

        Raises:
            NonFiniteEmbeddingsError: if the encoder returns NaN or infinity (names task and model).
            ValueError: if it returns the wrong number of rows.
        """
        if self._model is not model:
            self.clear()
            self._model = model
        missing = list(dict.fromkeys(t for t in (*encode_first, *texts) if t not in self._rows))
        where = f"{task_metadata.name} ({hf_subset}), model {model_name(model)}"
        if missing:
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
            start = 0 if self._matrix is None else self._matrix.shape[0]
            self._matrix = block if self._matrix is None else np.vstack([self._matrix, block])
            self._rows.update({text: start + i for i, text in enumerate(missing)})
        assert self._matrix is not None
        return self._matrix[[self._rows[t] for t in texts]]
