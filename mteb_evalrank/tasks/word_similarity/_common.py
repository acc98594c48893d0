"""Shared pieces of the word-similarity task files (one mteb STS task per set).

Every ``WordSim*`` task: config ``<set>`` of ``mteb-evalrank/word-similarity``, split ``test``,
columns ``sentence1`` / ``sentence2`` (one lower-cased word each) and ``score`` (the set's scale,
``min_score`` / ``max_score``); ``date`` the set's publication year; main score
``cosine_spearman``, Spearman of the two words' cosine with the ratings (EvalRank, section 5).
Unknown words (zero vectors; docs/tasks.md): ``cosine_*`` is the ``zero`` convention (an uncovered
pair has cosine 0); ``covered_``, ``mean_vector_`` and ``vocabulary_cosine_spearman`` (NaN below two
pairs), ``vocabulary_n_pairs`` and ``coverage`` (share of pairs of two known words) are added.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, cast

import numpy as np
from mteb.abstasks.sts import AbsTaskSTS, STSMetrics
from numpy.typing import NDArray
from scipy.stats import pearsonr, spearmanr

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.evaluation import unknown_words as conventions
from mteb_evalrank.tasks._loading import PluginDatasetLoading
from mteb_evalrank.tasks._metadata import PluginTaskMetadata
from mteb_evalrank.tasks._vocabulary import VocabularyOption

if TYPE_CHECKING:
    from datasets import Dataset
    from mteb.models import MTEBModels
    from mteb.types import ScoresDict


def word_similarity_metadata(
    *, config: str, year: int, description: str, **fields: Any
) -> PluginTaskMetadata:
    """A ``WordSim*`` task's metadata: the fields the 13 share, ``WORD_SIMILARITY.mteb_dataset(config)``
    (its ``name`` selects the set's config), the publication ``year`` and the EvalRank note."""
    return PluginTaskMetadata(
        description=description
        + " One of the 13 word-similarity baselines of EvalRank (Wang et al., 2022); each word is "
        "embedded on its own and the main score is the Spearman correlation of cosine similarity "
        "with the human ratings.",
        dataset=WORD_SIMILARITY.mteb_dataset(config),
        date=(f"{year}-01-01", f"{year}-12-31"),
        type="STS",
        category="t2t",
        eval_langs=["eng-Latn"],
        main_score="cosine_spearman",
        domains=["Written"],
        task_subtypes=[],
        license=WORD_SIMILARITY.license,
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="created",
        **fields,
    )


def covered_cosine(
    embeddings1: NDArray[np.floating], embeddings2: NDArray[np.floating]
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Row-wise cosine in float64 and the coverage mask: ``a_i . b_i / (|a_i| |b_i|)`` when both rows
    are non-zero (covered), else 0 (mteb's STS cosine gives 0.5 for one zero side, 1.0 for two)."""
    a = np.asarray(embeddings1, dtype=np.float64)
    b = np.asarray(embeddings2, dtype=np.float64)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    covered = (na > 0) & (nb > 0)
    dots = np.einsum("ij,ij->i", a, b)
    cos = np.divide(dots, na * nb, out=np.zeros_like(dots), where=covered)
    return cos, covered


class _EmbeddingRecorder:
    """Forwards everything to ``model`` and keeps the arrays its ``encode`` returns (mteb's
    ``EncoderProtocol`` members explicit, for a runtime protocol check)."""

    def __init__(self, model: Any) -> None:
        self._model = model
        self.embeddings: list[NDArray[np.floating]] = []

    def encode(self, *args: Any, **kwargs: Any) -> Any:
        embeddings = self._model.encode(*args, **kwargs)
        self.embeddings.append(np.asarray(embeddings))
        return embeddings

    def similarity(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self._model.similarity(embeddings1, embeddings2)

    def similarity_pairwise(self, embeddings1: Any, embeddings2: Any) -> Any:
        return self._model.similarity_pairwise(embeddings1, embeddings2)

    @property
    def mteb_model_meta(self) -> Any:
        return self._model.mteb_model_meta

    def __getattr__(self, name: str) -> Any:
        return getattr(self._model, name)


class WordSimilarityMetrics(STSMetrics, total=False):
    """mteb's STS metrics (``cosine_*`` recomputed by ``covered_cosine``) plus the unknown-word scores."""

    coverage: float
    covered_cosine_spearman: float
    mean_vector_cosine_spearman: float
    vocabulary_cosine_spearman: float
    vocabulary_n_pairs: int
    vocabulary_words: int
    vocabulary_file: str
    vocabulary_sha256: str


def _spearman(cos: NDArray[np.float64], gold: NDArray[np.float64], keep: NDArray[np.bool_]) -> float:
    """Spearman of ``cos`` with ``gold`` on the pairs ``keep``; NaN below two pairs."""
    return float(spearmanr(cos[keep], gold[keep]).statistic) if keep.sum() >= 2 else float("nan")


def unknown_word_scores(
    words1: list[str],
    words2: list[str],
    embeddings1: NDArray[np.floating],
    embeddings2: NDArray[np.floating],
    gold: NDArray[np.float64],
    vocabulary: frozenset[str] | None,
) -> dict[str, float]:
    """The scores of every unknown-word convention but ``cosine_*`` (``mean_vector``: the mean of the
    known words' vectors, each distinct word once)."""
    cos, covered = covered_cosine(embeddings1, embeddings2)
    words = np.asarray([*words1, *words2], dtype=object)
    rows = np.concatenate([np.asarray(embeddings1, np.float64), np.asarray(embeddings2, np.float64)])
    _, first, inverse = np.unique(words, return_index=True, return_inverse=True)
    distinct = rows[first]
    filled = conventions.mean_vector_rows(distinct, conventions.known(distinct))[inverse.reshape(-1)]
    n = len(words1)
    mean_cos, _ = covered_cosine(filled[:n], filled[n:])
    scores: dict[str, float] = {
        "coverage": float(covered.mean()),
        "covered_cosine_spearman": _spearman(cos, gold, covered),
        "mean_vector_cosine_spearman": _spearman(mean_cos, gold, np.ones(n, dtype=bool)),
    }
    if vocabulary is not None:
        inside = np.array([a in vocabulary and b in vocabulary for a, b in zip(words1, words2, strict=True)])
        scores["vocabulary_cosine_spearman"] = _spearman(cos, gold, inside)
        scores["vocabulary_n_pairs"] = int(inside.sum())
    return scores


class WordSimilarityTask(VocabularyOption, PluginDatasetLoading, AbsTaskSTS):
    """mteb's STS task with ``cosine_pearson`` / ``cosine_spearman`` recomputed by :func:`covered_cosine`
    (the ``zero`` convention) and :func:`unknown_word_scores` and the vocabulary's record added;
    options: :class:`~mteb_evalrank.tasks._vocabulary.VocabularyOption`."""

    required_scores: tuple[str, ...] = ("mean_vector_cosine_spearman",)
    """Scores every current result has (an older result without them is redone by a study)."""

    def _evaluate_subset(
        self, model: MTEBModels, data_split: Dataset, **kwargs: Any
    ) -> WordSimilarityMetrics:
        recorder = _EmbeddingRecorder(model)
        sts = super()._evaluate_subset(recorder, data_split, **kwargs)
        if len(recorder.embeddings) != 2:
            raise RuntimeError(f"expected two encode calls (one per column), got {len(recorder.embeddings)}.")
        embeddings1, embeddings2 = recorder.embeddings
        cos, _ = covered_cosine(embeddings1, embeddings2)
        gold = np.array([self._normalize(score) for score in data_split["score"]], dtype=np.float64)
        words1, words2 = list(data_split["sentence1"]), list(data_split["sentence2"])
        extra = unknown_word_scores(words1, words2, embeddings1, embeddings2, gold, self.vocabulary_in_use)
        metrics = WordSimilarityMetrics(**sts, **extra, **self.vocabulary_record)  # type: ignore[typeddict-item]
        metrics["cosine_pearson"] = float(pearsonr(cos, gold).statistic)
        metrics["cosine_spearman"] = float(spearmanr(cos, gold).statistic)
        return metrics

    def _add_main_score(self, scores: ScoresDict) -> None:
        """mteb's main score, under the convention ``unknown_words`` picks."""
        option = conventions.check_convention(self.metadata.name, self.unknown_words, frozenset())
        key = conventions.main_score_key(self.metadata.main_score, option)
        cast("dict[str, Any]", scores)["main_score"] = scores[key]
