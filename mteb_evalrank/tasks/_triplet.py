"""``AbsTaskTriplet``: AccSent-style triplet accuracy as an mteb task (docs/accsent.md), and
triplets from JSON lines.

Data: one ``datasets.Dataset`` per split, string columns ``anchor`` (X), ``positive`` (X') and
``negative`` (Y), optional label columns (``breakdown_columns``). Each distinct sentence is
encoded once; similarities are the model's (``similarity_pairwise``), accuracies those of
:mod:`mteb_evalrank.evaluation.triplets`. Scores: ``anchor_accuracy`` (main), ``paraphrase_accuracy``,
``n_triplets``, ``n_anchor_ties``, ``n_paraphrase_ties``, ``n_unique_texts``, and the first five
again with the suffix ``[column=value]`` per breakdown value (flat keys, one hf_subset).
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import Counter
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from datasets import Dataset, DatasetDict
from mteb.abstasks.abstask import AbsTask
from mteb.abstasks.task_metadata import TaskMetadata
from mteb.models import EncoderProtocol

from mteb_evalrank.data.sources import read_lines, unique_in_order
from mteb_evalrank.evaluation.triplets import DEFAULT_TOL, grouped_accuracy_scores, triplet_outcomes
from mteb_evalrank.tasks._loading import PluginDatasetLoading

from ._encoding import EncodeTexts

if TYPE_CHECKING:
    from mteb.models import MTEBModels
    from mteb.timing import TimingStack
    from mteb.types import ScoresDict

logger = logging.getLogger(__name__)

TEXT_COLUMNS = ("anchor", "positive", "negative")
#: Optional label columns of a triplet file (JSON lines).
JSONL_LABELS = ("keyword", "group", "length_bucket")
#: Label given to a triplet that lacks a label column other triplets of the file have.
MISSING_LABEL = "(none)"


class AbsTaskTriplet(EncodeTexts, PluginDatasetLoading, AbsTask):
    """Accuracy of ``s(X, X') > s(X, Y)`` (anchor) and ``s(X, X') > s(X', Y)`` (paraphrase); ties within
    ``tol`` fail; ``breakdown_columns`` are scored separately when present."""

    breakdown_columns: ClassVar[tuple[str, ...]] = JSONL_LABELS
    tol: ClassVar[float] = DEFAULT_TOL

    def _get_content_columns(self) -> dict[str, Any]:
        return dict.fromkeys(TEXT_COLUMNS, "text")

    def _check_columns(self, data_split: Dataset, hf_subset: str) -> None:
        missing = [name for name in TEXT_COLUMNS if name not in data_split.column_names]
        if missing:
            raise ValueError(
                f"{self.metadata.name} ({hf_subset}): the data lack the column(s) {missing}; a triplet "
                f"task needs {list(TEXT_COLUMNS)} (got {data_split.column_names})."
            )
        if len(data_split) == 0:
            raise ValueError(f"{self.metadata.name} ({hf_subset}): no triplets.")

    def _evaluate_subset(  # mteb's keywords besides these: encode_kwargs, num_proc, ...
        self, model: MTEBModels, data_split: Dataset, *, hf_split: str, hf_subset: str, timer: TimingStack,
        **kwargs: Any,
    ) -> ScoresDict:  # fmt: skip
        self._check_columns(data_split, hf_subset)
        columns = {name: list(data_split[name]) for name in TEXT_COLUMNS}
        texts = unique_in_order(*columns.values())
        row = {text: i for i, text in enumerate(texts)}
        embeddings = self._embed(model, texts, hf_split=hf_split, hf_subset=hf_subset, timer=timer, **kwargs)
        index = {
            name: np.asarray([row[t] for t in column], dtype=np.intp) for name, column in columns.items()
        }
        anchor, positive, negative = (embeddings[index[name]] for name in TEXT_COLUMNS)
        if not isinstance(model, EncoderProtocol):  # as mteb's own evaluators check
            raise TypeError(f"{self.metadata.name}: expected an encoder model (mteb's EncoderProtocol)")
        with timer("Scoring", split=hf_split, subset=hf_subset):
            outcomes = triplet_outcomes(
                model.similarity_pairwise(anchor, positive),
                model.similarity_pairwise(anchor, negative),
                model.similarity_pairwise(positive, negative),
                tol=self.tol,
            )
            groups = {c: data_split[c] for c in self.breakdown_columns if c in data_split.column_names}
            scores = grouped_accuracy_scores(outcomes, groups)
        scores["n_unique_texts"] = len(texts)
        return scores

    # triplet statistics (texts per column, distinct texts), not one of mteb's TypedDicts
    def _calculate_descriptive_statistics_from_split(  # type: ignore[override]
        self, split: str, *, hf_subset: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        dataset: Any = self.dataset  # loaded by mteb before it asks
        data = dataset[split] if split in dataset else dataset[hf_subset or "default"][split]
        texts = [text for name in TEXT_COLUMNS for text in data[name]]
        stats: dict[str, Any] = {
            "num_samples": len(data),
            "number_of_characters": sum(len(text) for text in texts),
            "unique_texts": len(set(texts)),
        }
        for column in self.breakdown_columns:
            if column in data.column_names:
                stats[f"n_triplets_per_{column}"] = dict(Counter(map(str, data[column])).most_common())
        return stats


# --------------------------------------------------------------------- JSON lines
def read_triplet_jsonl(path: Path | str) -> Dataset:
    """Triplets of a JSON-lines file as a ``Dataset`` (columns ``anchor, positive, negative`` and the
    ``JSONL_LABELS`` any row has; ``MISSING_LABEL`` where a row lacks one).

    Each non-blank line: an object with non-empty strings ``anchor``, ``positive`` and either
    ``negative`` or ``negatives`` (a non-empty list: one triplet each), optional labels ``keyword``,
    ``group``, ``length_bucket``. UTF-8 (BOM, CRLF, blank lines accepted); a repeated line counts again.

    Raises:
        FileNotFoundError: no such file.
        ValueError: naming ``file:line`` for invalid JSON, a missing or empty field, an unknown
            key, both/neither of ``negative`` and ``negatives``, or a byte that is not UTF-8
            (:class:`~mteb_evalrank.data.sources.SourceFormatError`); naming the file when it holds
            no triplet."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"triplet file {path} not found")
    rows: list[dict[str, str]] = []
    for line_no, line in read_lines(path):
        where = f"{path}:{line_no}"
        try:
            record = json.loads(line)
        except json.JSONDecodeError as error:
            raise ValueError(f"{where}: not valid JSON ({error.msg}).") from None
        rows += _triplet_rows(record, where)
    if not rows:
        raise ValueError(f"{path}: the file holds no triplets.")
    present = [key for key in JSONL_LABELS if any(key in row for row in rows)]
    columns = {name: [row[name] for row in rows] for name in TEXT_COLUMNS}
    columns.update({key: [row.get(key, MISSING_LABEL) for row in rows] for key in present})
    return Dataset.from_dict(columns)


def _triplet_rows(record: Any, where: str) -> list[dict[str, str]]:
    """The triplets of one JSON-lines record (validated as :func:`read_triplet_jsonl` states)."""
    allowed = {*TEXT_COLUMNS, "negatives", *JSONL_LABELS}
    if not isinstance(record, dict):
        raise ValueError(f"{where}: expected a JSON object, got {type(record).__name__}.")
    unknown = sorted(set(record) - allowed)
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown}; allowed: {sorted(allowed)}.")
    if ("negative" in record) == ("negatives" in record):
        raise ValueError(f"{where}: give one of 'negative' (a string) or 'negatives' (a list).")
    negatives = record["negatives"] if "negatives" in record else [record["negative"]]
    if not isinstance(negatives, list) or not negatives:
        raise ValueError(f"{where}: 'negatives' must be a non-empty list of strings.")
    for key, value in [("anchor", record.get("anchor")), ("positive", record.get("positive"))] + [
        ("negative", item) for item in negatives
    ]:
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{where}: '{key}' must be a non-empty string, got {value!r}.")
    labels = {key: record[key] for key in JSONL_LABELS if key in record}
    for key, value in labels.items():
        if not isinstance(value, str | int | float) or isinstance(value, bool):
            raise ValueError(f"{where}: '{key}' must be a string or a number, got {value!r}.")
    return [
        {
            "anchor": record["anchor"],
            "positive": record["positive"],
            "negative": negative,
            **{k: str(v) for k, v in labels.items()},
        }
        for negative in negatives
    ]


class JsonlTripletTask(AbsTaskTriplet):
    """A triplet task over a local JSON-lines file (see :func:`triplet_task_from_jsonl`)."""

    path: ClassVar[Path]

    def load_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        if self.data_loaded:
            return
        self.dataset = DatasetDict({"test": read_triplet_jsonl(self.path)})
        self.dataset_transform(num_proc=num_proc)
        self.data_loaded = True


def triplet_task_from_jsonl(path: Path | str, name: str, *, description: str | None = None) -> AbsTaskTriplet:
    """A task instance (usable with ``mteb.evaluate``) scoring the triplets of a JSON-lines file
    (:func:`read_triplet_jsonl`, read and checked here). ``dataset.revision``: the first 16 hex digits
    of the file's SHA-256. Split ``test``, subset ``default``, English."""
    path = Path(path).resolve()
    data = read_triplet_jsonl(path)
    digest = hashlib.sha256(path.read_bytes()).hexdigest()[:16]
    metadata = TaskMetadata(
        name=name,
        description=description
        or f"Triplet accuracy (AccSent protocol) on {len(data)} triplets of {path.name}.",
        dataset={"path": str(path), "revision": digest},
        type="PairClassification",
        category="t2t",
        eval_langs=["eng-Latn"],
        main_score="anchor_accuracy",
        license="not specified",
        sample_creation="found",
        annotations_creators="derived",
        dialect=[],
        task_subtypes=[],
        bibtex_citation="",
    )
    task_class = type(
        f"JsonlTriplet_{digest}",
        (JsonlTripletTask,),
        {"metadata": metadata, "path": path, "__module__": __name__},
    )
    task = task_class()
    task.dataset = DatasetDict({"test": data})
    task.data_loaded = True
    return task
