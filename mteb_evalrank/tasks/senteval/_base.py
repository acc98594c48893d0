"""Base classes of the downstream (SentEval transfer) tasks under their two protocols
(docs/downstream.md).

Each dataset file defines ``<Name>Classification`` (protocol ``mteb``: mteb's own
``AbsTaskClassification`` evaluation, main score ``accuracy``) and ``SentEval<Name>`` (protocol
``senteval``: :func:`mteb_evalrank.evaluation.classifiers.senteval_scores` on the whole training
split, main score ``lr_accuracy``). Hyper-parameters are selected on the ``validation`` split where
a subset has one, else by cross-validation on ``train``. MR, CR, SUBJ and MPQA carry a fixed fold
(0-9) per row: hf_subset ``fold-k`` tests fold ``k`` and trains on the nine others. Pair tasks
(MRPC, SICK-E) classify SentEval's pair features ``[u, v, |u - v|, u * v]``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar, Literal, TypeVar

import numpy as np
from datasets import DatasetDict, load_dataset
from mteb.abstasks.classification import AbsTaskClassification
from threadpoolctl import threadpool_limits

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.evaluation.classifiers import Kind, pair_features, senteval_cv_scores, senteval_scores
from mteb_evalrank.tasks._loading import PluginDatasetLoading
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import cite
from .._encoding import EncodeTexts, as_list, torch_device, unwrapped

_Task = TypeVar("_Task", bound="AbsTaskSentEval")

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mteb.timing import TimingStack
    from numpy.typing import NDArray

Protocol = Literal["mteb", "senteval"]

#: hf_subsets of the cross-validated datasets.
N_FOLDS = 10
FOLD_SUBSETS: tuple[str, ...] = tuple(f"fold-{k}" for k in range(N_FOLDS))
EVAL_LANGS_FOLDS: dict[str, list[str]] = {subset: ["eng-Latn"] for subset in FOLD_SUBSETS}

SENTEVAL_CITATION = r"""@inproceedings{conneau2018senteval,
  author = {Conneau, Alexis and Kiela, Douwe},
  booktitle = {Proceedings of the Eleventh International Conference on Language Resources and Evaluation (LREC 2018)},
  title = {{SentEval}: An Evaluation Toolkit for Universal Sentence Representations},
  year = {2018},
}
"""


class AbsTaskSentEval(EncodeTexts, PluginDatasetLoading, AbsTaskClassification):
    """A SentEval transfer task under one of the two protocols (see the module doc)."""

    protocol: ClassVar[Protocol] = "mteb"
    cross_validated: ClassVar[bool] = False
    """True for datasets without an official split (rows carry a ``fold`` column)."""
    text_columns: ClassVar[tuple[str, ...]] = ("text",)
    input_column_name = "text"
    validation_split: ClassVar[str] = "validation"
    """Protocol ``senteval``: the split the hyper-parameters are selected on, where a subset has it."""
    classifiers: tuple[Kind, ...] = ("lr", "mlp")
    """Protocol ``senteval``: the classifiers fitted (``("lr",)``: no ``mlp_*`` scores, ~80% less
    cost, the same ``lr_*`` scores)."""
    device: str | None = None
    """Protocol ``senteval``: where torch fits the classifiers; ``None``: the model's torch device,
    else the CPU."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._all_texts: list[str] | None = None
        self._rows: Any = None  # a cross-validated dataset's rows and their folds (0-9)
        self._folds: NDArray[np.intp] | None = None
        # protocol senteval, cross-validated: the model, the settings and the folds scored ahead
        self._scored_folds: tuple[Any, tuple[Any, ...], dict[str, Mapping[str, Any]]] | None = None

    def _load_plugin_data(self, num_proc: int | None = None, **kwargs: Any) -> None:
        """mteb's loading; a cross-validated dataset's one split becomes ten fold subsets."""
        if not self.cross_validated:
            super()._load_plugin_data(num_proc=num_proc, **kwargs)
        else:
            rows = load_dataset(**self.metadata.dataset, split="train")
            folds = np.asarray(rows["fold"])
            if sorted(set(folds.tolist())) != list(range(N_FOLDS)):
                raise ValueError(
                    f"{self.metadata.name}: expected folds 0-{N_FOLDS - 1} in {self.metadata.dataset}, "
                    f"got {sorted(set(folds.tolist()))}; rebuild it with 'mteb-evalrank datasets build'."
                )
            self.dataset = {
                subset: DatasetDict(
                    train=rows.select(np.flatnonzero(folds != k)),
                    test=rows.select(np.flatnonzero(folds == k)),
                )
                for k, subset in enumerate(FOLD_SUBSETS)
            }
            self._rows, self._folds = rows, folds
            self.data_loaded = True

    def _task_texts(self) -> list[str]:
        """Every distinct text of every subset and split, in order (encoded together on first use)."""
        if self._all_texts is None:
            if self.dataset is None:
                raise RuntimeError(f"{self.metadata.name}: call load_data() before encoding its texts")
            subsets = [self.dataset] if isinstance(self.dataset, DatasetDict) else self.dataset.values()
            columns = (
                split[name] for subset in subsets for split in subset.values() for name in self.text_columns
            )
            self._all_texts = list(dict.fromkeys(text for column in columns for text in as_list(column)))
        return self._all_texts

    def unload_data(self) -> None:
        self._all_texts = self._rows = self._folds = self._scored_folds = None
        super().unload_data()

    def _features(self, model: Any, split: Any, **encode: Any) -> NDArray[np.float64]:
        """One feature row per example: its embedding (pair tasks: SentEval's pair features)."""
        texts = self._task_texts()
        columns = [
            self._embed(model, as_list(split[column]), encode_first=texts, **encode)
            for column in self.text_columns
        ]
        return columns[0] if len(columns) == 1 else pair_features(*columns)

    # protocol "senteval" returns its own metrics (lr_accuracy, ...), not mteb's TypedDict
    def _evaluate_subset(  # type: ignore[override]
        self, model: Any, data_split: DatasetDict, *, hf_split: str, hf_subset: str, timer: TimingStack,
        **kwargs: Any,
    ) -> Mapping[str, Any]:  # fmt: skip
        encode = {"hf_split": hf_split, "hf_subset": hf_subset, "timer": timer, **kwargs}
        if self.protocol == "mteb" and self.text_columns == ("text",):
            # mteb's own evaluation, untouched (it encodes only the rows it samples)
            return super()._evaluate_subset(model, data_split, **encode)
        if self.protocol == "senteval" and (folds := self._folds) is not None:
            with timer("Scoring", split=hf_split, subset=hf_subset):
                return self._fold_scores(model, hf_subset, folds, encode)
        train, test = data_split[self.train_split], data_split[hf_split]
        x_train, x_test = self._features(model, train, **encode), self._features(model, test, **encode)
        y_train = np.asarray(as_list(train[self.label_column_name]))
        y_test = np.asarray(as_list(test[self.label_column_name]))
        # The classifiers fit small dense problems: BLAS/OpenMP threads only add spin-waiting,
        # and on a busy machine they make each fit tens of times slower; one thread is fastest.
        if self.protocol != "senteval":
            with timer("Scoring", split=hf_split, subset=hf_subset), threadpool_limits(limits=1):
                return self._mteb_experiments(train, test, x_train, x_test, timer)
        x_valid = y_valid = None
        if self.validation_split in data_split and self.validation_split not in (self.train_split, hf_split):
            valid = data_split[self.validation_split]
            x_valid = self._features(model, valid, **encode)
            y_valid = np.asarray(as_list(valid[self.label_column_name]))
        with timer("Scoring", split=hf_split, subset=hf_subset):  # torch: its own thread rule
            return senteval_scores(
                x_train, y_train, x_test, y_test, x_valid=x_valid, y_valid=y_valid, seed=self.seed,
                kinds=self.classifiers, device=self.device or torch_device(unwrapped(model)),
            )  # fmt: skip

    def _fold_scores(
        self, model: Any, hf_subset: str, folds: NDArray[np.intp], encode: dict[str, Any]
    ) -> Mapping[str, Any]:
        """Fold subset ``hf_subset``'s scores (``folds``: each row's fold). mteb evaluates one subset per
        call (its results cache is per subset); the first fold asked for scores every fold of
        ``hf_subsets`` from the features of all rows (:func:`senteval_cv_scores`: the logistic
        regressions of all folds one batch), and the next folds asked for by the same model, with the
        same settings, take theirs (each once; a fold asked for again is scored again)."""
        owner, settings = unwrapped(model), (self.seed, tuple(self.classifiers), self.device)
        held = self._scored_folds
        if held is None or held[0] is not owner or held[1] != settings or hf_subset not in held[2]:
            subsets = [s for s in self.hf_subsets if s in FOLD_SUBSETS and s != hf_subset]
            subsets.insert(0, hf_subset)
            tested = [FOLD_SUBSETS.index(subset) for subset in subsets]
            splits = [(np.flatnonzero(folds != k), np.flatnonzero(folds == k)) for k in tested]
            scores = senteval_cv_scores(
                self._features(model, self._rows, **encode), np.asarray(as_list(self._rows[self.label_column_name])),
                splits, seed=self.seed, kinds=self.classifiers, device=self.device or torch_device(owner),
            )  # fmt: skip
            held = self._scored_folds = (owner, settings, dict(zip(subsets, scores, strict=True)))
        return held[2].pop(hf_subset)

    def _mteb_experiments(
        self,
        train: Any,
        test: Any,
        x_train: NDArray[np.float64],
        x_test: NDArray[np.float64],
        timer: TimingStack,
    ) -> dict[str, Any]:
        """mteb's experiment loop (same undersampling, evaluator and averaging) on given features."""
        scores, order = [], None
        for experiment in range(self.n_experiments):
            _, order, selected = self._undersample_data(train, experiment, order)
            result, _ = self._run_experiment(
                train.select(selected), test, x_train[selected], x_test, timer=timer
            )
            scores.append(result)
        return dict(self._calculate_avg_scores(scores))

    # mteb's own algorithms on plain lists (identical results): it reads labels one at a time, and
    # each read of a lazy ``datasets`` >= 4 ``Column`` is an Arrow query (~15 s per fold)
    def _undersample_data(
        self, dataset: Any, experiment_num: int, idxs: list[int] | None = None
    ) -> tuple[Any, list[int], list[int]]:
        return super()._undersample_data(_ListColumns(dataset), experiment_num, idxs)

    def _calculate_scores(self, y_test: Any, y_pred: Any) -> Any:
        return super()._calculate_scores(as_list(y_test), y_pred)


class _ListColumns:
    """A ``Dataset`` view whose ``view[column]`` is a list (rows and ``select`` pass through)."""

    def __init__(self, dataset: Any) -> None:
        self._dataset = dataset

    def __len__(self) -> int:
        return len(self._dataset)

    def __getitem__(self, key: Any) -> Any:
        return as_list(self._dataset[key]) if isinstance(key, str) else self._dataset[key]

    def select(self, indices: Any) -> Any:
        return self._dataset.select(indices)


class AbsTaskSentEvalPair(AbsTaskSentEval):
    """A sentence-pair transfer task (columns ``sentence1``, ``sentence2``, ``label``)."""

    text_columns: ClassVar[tuple[str, ...]] = ("sentence1", "sentence2")
    # mteb types it as one column; the pair tasks read ``text_columns`` themselves
    input_column_name = ("sentence1", "sentence2")  # type: ignore[assignment]

    # mteb's ClassificationDescriptiveStatistics describe one input column; these are pair statistics
    def _calculate_descriptive_statistics_from_split(  # type: ignore[override]
        self, split: str, *, hf_subset: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """mteb's classification statistics for a pair dataset: ``num_samples``, ``samples_in_train``
        (distinct test pairs also in the training split; ``None`` for that split), mteb's pair statistics
        (``text1_statistics``, ``text2_statistics``, ``unique_pairs``) and ``label_statistics``."""
        from mteb_evalrank import _mteb_adapter as adapter

        dataset: Any = self.dataset  # loaded by mteb before it asks
        subset = dataset[hf_subset] if hf_subset else dataset
        data = subset[split]
        first, second = as_list(data["sentence1"]), as_list(data["sentence2"])
        in_train = None
        if split != self.train_split:
            train = subset[self.train_split]
            train_pairs = set(zip(as_list(train["sentence1"]), as_list(train["sentence2"]), strict=True))
            in_train = len(set(zip(first, second, strict=True)) & train_pairs)
        return {
            "num_samples": len(first),
            "samples_in_train": in_train,
            **adapter.pair_statistics(first, second),
            "label_statistics": adapter.label_statistics(as_list(data[self.label_column_name])),
        }


def senteval_protocol(task: type[_Task]) -> type[_Task]:
    """``task``'s dataset under protocol ``senteval``: the subclass ``SentEval<Name>`` of
    ``<Name>Classification``, its metadata ``task``'s with that name, a note and ``lr_accuracy``."""
    name = "SentEval" + task.__name__.removesuffix("Classification")
    metadata = task.metadata.model_copy(
        update={
            "name": name,
            "description": task.metadata.description
            + " Protocol 'senteval': whole training split, logistic regression (main score) and MLP "
            "with L2 strength chosen as SentEval does (on the validation split where there is one, "
            "otherwise by cross-validation on the training split), z-normalisation as a hyper-parameter.",
            "main_score": "lr_accuracy",
        }
    )
    return type(name, (task,), {"protocol": "senteval", "metadata": metadata, "__module__": task.__module__})


def senteval_metadata(
    *, config: str, year: int, description: str, citation: str, **fields: Any
) -> PluginTaskMetadata:
    """A dataset's ``mteb``-protocol metadata: the fields the ten share, ``SENTEVAL.mteb_dataset(config)``,
    the publication ``year``, ``citation`` with SentEval's and ``description`` with the SentEval note."""
    return PluginTaskMetadata(
        **{"eval_langs": ["eng-Latn"], "annotations_creators": "human-annotated", **fields},
        description=description + " SentEval transfer task (Conneau and Kiela, 2018), a downstream task "
        "of EvalRank (Wang et al., 2022). Protocol mteb: the classification evaluator of mteb.",
        dataset=SENTEVAL.mteb_dataset(config),
        date=(f"{year}-01-01", f"{year}-12-31"),
        bibtex_citation=cite(citation, SENTEVAL_CITATION),
        type="Classification",
        category="t2c",
        main_score="accuracy",
        license="bsd-3-clause",
        dialect=[],
        sample_creation="found",
    )
