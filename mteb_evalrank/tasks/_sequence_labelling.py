"""``AbsTaskSequenceLabelling``: Chiu et al.'s (2016) POS, chunking and NER tasks as mteb tasks
(the protocol, and why the type is ``Classification``: docs/sequence_labelling.md).

Data: config ``default`` of a tagged family, splits ``train`` / ``test``, columns ``tokens`` and
``tags`` (:mod:`mteb_evalrank.data.tagged`). Each distinct lower-cased word form is encoded once as
a text; zero vectors (unknown words) stay zero and frozen; the known vectors are centred; the
window tagger of :mod:`mteb_evalrank.evaluation.tagging` trains once per seed of ``seeds``.

Scores (means over the seeds; ``<score>[seed=k]`` each seed's): ``accuracy``; chunk tasks also
``precision``, ``recall``, ``f1`` and ``f1[type=X]``; plus ``n_train_tokens``, ``n_test_tokens``,
``n_test_sentences``, ``n_word_forms``, ``coverage`` (test tokens with a non-zero vector) and
``train_coverage``; with a ``dev_split``, the dev-selected epoch's (:meth:`_scores`).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from mteb.abstasks.abstask import AbsTask
from numpy.typing import NDArray

from mteb_evalrank.evaluation.tagging import (
    TaggerConfig,
    TaggerInput,
    capitalisation,
    centred,
    chunk_scores,
    token_accuracy,
    train_and_select,
)
from mteb_evalrank.tasks._loading import PluginDatasetLoading
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._citations import CHIU_CITATION, cite
from ._encoding import EncodeTexts, as_list, torch_device, unwrapped

if TYPE_CHECKING:
    from datasets import Dataset
    from mteb.models import MTEBModels
    from mteb.timing import TimingStack
    from mteb.types import ScoresDict


class AbsTaskSequenceLabelling(EncodeTexts, PluginDatasetLoading, AbsTask):
    """A sequence-labelling task over frozen word vectors (see the module doc)."""

    chunks: ClassVar[bool] = False
    """Tags are IOB chunk tags: score chunks (conlleval), not only tokens."""
    seeds: ClassVar[tuple[int, ...]] = (0, 1, 2)
    tagger: ClassVar[TaggerConfig] = TaggerConfig()
    train_split: ClassVar[str] = "train"
    dev_split: ClassVar[str | None] = None
    """The split of the dev-selected variant's epoch (docs/sequence_labelling.md); ``None``: none."""
    device: str | None = None
    """Where the tagger trains; ``None``: the model's torch device, else the CPU."""

    def _split(self, hf_subset: str, split: str) -> Dataset:
        dataset: Any = self.dataset
        return dataset[split] if hf_subset not in dataset else dataset[hf_subset][split]

    def _evaluate_subset(  # mteb's keywords besides these: encode_kwargs, num_proc, ...
        self, model: MTEBModels, data_split: Dataset, *, hf_split: str, hf_subset: str, timer: TimingStack,
        **kwargs: Any,
    ) -> ScoresDict:  # fmt: skip
        splits = {"train": self._split(hf_subset, self.train_split), "test": data_split}
        splits |= {"dev": self._split(hf_subset, self.dev_split)} if self.dev_split else {}
        sentences = {name: as_list(split["tokens"]) for name, split in splits.items()}
        gold = {name: as_list(split["tags"]) for name, split in splits.items()}
        lower = {name: [token.lower() for s in split for token in s] for name, split in sentences.items()}
        first = dict.fromkeys(lower["train"] + lower["test"])  # Chiu's: encoded and centred as before
        forms = list(first)
        extra = [form for form in dict.fromkeys(lower.get("dev", [])) if form not in first]
        vectors = self._embed(model, forms, hf_split=hf_split, hf_subset=hf_subset, timer=timer, **kwargs)
        known = np.linalg.norm(vectors, axis=1) > 0
        if extra:  # the dev split's other forms, after the others (centred by the others' mean)
            more = self._embed(model, extra, hf_split=hf_split, hf_subset=hf_subset, timer=timer, **kwargs)
            vectors = np.vstack([vectors, more])
        row = {form: i for i, form in enumerate(forms + extra)}
        inputs, rows = {}, {}
        for name, split in sentences.items():
            rows[name] = np.fromiter(map(row.__getitem__, lower[name]), dtype=np.intp, count=len(lower[name]))
            caps = [capitalisation(token) for sentence in split for token in sentence]
            inputs[name] = TaggerInput.of(rows[name], np.asarray(caps, dtype=np.intp), list(map(len, split)))
        config = replace(self.tagger, device=self.device or torch_device(unwrapped(model)))
        with timer("Scoring", split=hf_split, subset=hf_subset):
            scores = self._scores(centred(vectors, len(forms)).astype(np.float32), inputs, gold, config)
        scores.update(
            n_train_tokens=len(rows["train"]),
            n_test_tokens=len(rows["test"]),
            n_test_sentences=len(sentences["test"]),
            n_word_forms=len(forms),
            coverage=float(known[rows["test"]].mean()),
            train_coverage=float(known[rows["train"]].mean()),
        )
        return scores

    def _scores(
        self, vectors: NDArray[np.float32], inputs: dict[str, TaggerInput], gold: dict[str, list[list[str]]],
        config: TaggerConfig,
    ) -> dict[str, Any]:  # fmt: skip
        """Train and score one tagger per seed; each seed's scores and their means; with a dev split, the
        main score of the epoch chosen on it (``dev_selected_<main score>``, ``dev_epoch[seed=k]``)."""
        labels = np.asarray(sorted({tag for sentence in gold["train"] for tag in sentence}), dtype=object)
        index = {tag: i for i, tag in enumerate(labels)}
        targets = np.fromiter((index[t] for s in gold["train"] for t in s), dtype=np.intp)

        def scored(split: str, predicted: NDArray[np.intp]) -> dict[str, float]:
            tags = np.split(labels[predicted], np.cumsum([len(sentence) for sentence in gold[split]])[:-1])
            return self._score_predictions(gold[split], [list(sentence) for sentence in tags])

        main = self.metadata.main_score
        dev = (inputs["dev"], lambda predicted: scored("dev", predicted)[main]) if "dev" in inputs else None
        data, per_seed, selected = (vectors, inputs["train"], targets, inputs["test"], len(labels)), [], {}
        runs = train_and_select(*data, seeds=self.seeds, config=config, dev=dev)
        for seed, (final, chosen, epoch) in zip(self.seeds, runs, strict=True):
            per_seed.append(scored("test", final))
            if dev:
                selected[seed] = (scored("test", chosen)[main], epoch)
        keys = list(dict.fromkeys(key for seed_scores in per_seed for key in seed_scores))
        scores: dict[str, Any] = {
            key: float(np.mean([seed_scores.get(key, 0.0) for seed_scores in per_seed])) for key in keys
        }
        named = ("precision", "recall", "f1", "accuracy")  # each seed's, besides the means
        for seed, seed_scores in zip(self.seeds, per_seed, strict=True):
            scores |= {f"{key}[seed={seed}]": seed_scores[key] for key in named if key in seed_scores}
        scores |= {f"dev_selected_{main}": float(np.mean([v for v, _ in selected.values()]))} if dev else {}
        for seed, (value, epoch) in selected.items():
            scores |= {f"dev_selected_{main}[seed={seed}]": value, f"dev_epoch[seed={seed}]": epoch}
        return scores

    def _score_predictions(self, gold: list[list[str]], predicted: list[list[str]]) -> dict[str, float]:
        if self.chunks:
            return chunk_scores(gold, predicted)
        return {"accuracy": token_accuracy([t for s in gold for t in s], [t for s in predicted for t in s])}

    # token statistics (sentences, tokens, forms, tags), not one of mteb's TypedDicts
    def _calculate_descriptive_statistics_from_split(  # type: ignore[override]
        self, split: str, *, hf_subset: str | None = None, **kwargs: Any
    ) -> dict[str, Any]:
        """``num_samples`` (sentences), ``number_of_tokens``, ``unique_lowercased_forms``,
        ``max_sentence_length``, ``tags`` (count per tag) of one split."""
        data = self._split(hf_subset or "default", split)  # loaded by mteb before it asks
        tokens, tags = as_list(data["tokens"]), as_list(data["tags"])
        return {
            "num_samples": len(tokens),
            "number_of_tokens": sum(len(sentence) for sentence in tokens),
            "unique_lowercased_forms": len({token.lower() for sentence in tokens for token in sentence}),
            "max_sentence_length": max(len(sentence) for sentence in tokens),
            "tags": dict(Counter(tag for sentence in tags for tag in sentence).most_common()),
        }


def sequence_labelling_metadata(*, citation: str, **fields: Any) -> PluginTaskMetadata:
    """A sequence-labelling task's metadata: the fields the three share (English, split ``test``,
    type ``Classification``: see the module docstring) and the dataset's ``citation`` with Chiu et al.'s."""
    return PluginTaskMetadata(
        **fields,
        bibtex_citation=cite(citation, CHIU_CITATION),
        type="Classification",
        category="t2c",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        task_subtypes=[],
        dialect=[],
        sample_creation="found",
    )
