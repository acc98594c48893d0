"""Shared pieces of the word-similarity task files (one mteb STS task per set).

Conventions of every ``WordSim*`` task:

* data: config ``<set>`` of the Hub dataset ``mteb-evalrank/word-similarity`` (recipe and
  card in ``tasks/word-similarity/``), split ``test``, columns ``sentence1`` / ``sentence2``
  (one lower-cased word each) and ``score`` (the human rating on the set's own scale);
* ``min_score`` / ``max_score``: that scale (only used by mteb to normalise the ratings,
  which changes neither Pearson nor Spearman);
* main score ``cosine_spearman``: Spearman correlation between the cosine similarity of
  the two words' embeddings and the ratings, as in the EvalRank paper (section 5);
* ``date``: the publication year of the set (annotation dates are not reported);
* **unknown words** (``WordSimilarityTask``): a pair is *covered* when both words have a
  non-zero embedding. An encoder that knows nothing about a word embeds it as the zero
  vector (a static encoder with the word outside its vocabulary; post-processing keeps such
  rows zero, see ``models.wrappers``), and a zero vector has cosine similarity **0** with
  every vector, another zero vector included. Uncovered pairs therefore stay in the set
  with similarity 0 (every model is scored on the same pairs; a model is not rewarded for
  what it does not know), and the share of covered pairs is reported as ``coverage``.
  ``covered_cosine_spearman`` is the other convention of the literature (score only the
  covered pairs; NaN when fewer than two pairs are covered). EvalRankWord keeps the EvalRank
  protocol instead: it centres the background first, so unknown words share the vector
  ``-mean(E)`` and tie with each other (see ``evaluation.ranking``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np
from mteb.abstasks.sts import AbsTaskSTS, STSMetrics
from numpy.typing import NDArray
from scipy.stats import pearsonr, spearmanr

from mteb_evalrank.data.registry import WORD_SIMILARITY
from mteb_evalrank.tasks._loading import PluginDatasetLoading

if TYPE_CHECKING:
    from datasets import Dataset
    from mteb.abstasks.task_metadata import MetadataDatasetDict
    from mteb.models import MTEBModels


def word_similarity_dataset(config: str) -> MetadataDatasetDict:
    """The ``dataset`` field of a task's metadata: Hub id, revision and config ``name``.

    mteb loads a monolingual task with ``datasets.load_dataset(**metadata.dataset)``, so the
    ``name`` key selects the set's config.
    """
    return WORD_SIMILARITY.mteb_dataset(config)


EVALRANK_NOTE = (
    " One of the 13 word-similarity baselines of EvalRank (Wang et al., 2022); each word is "
    "embedded on its own and the main score is the Spearman correlation of cosine similarity "
    "with the human ratings."
)


def covered_cosine(
    embeddings1: NDArray[np.floating], embeddings2: NDArray[np.floating]
) -> tuple[NDArray[np.float64], NDArray[np.bool_]]:
    """Row-wise cosine in float64 and the coverage mask of ``WordSimilarityTask``.

    ``cos_i = a_i . b_i / (|a_i| |b_i|)`` when both rows are non-zero (the pair is covered),
    else ``0``. (mteb's STS cosine, ``1 - paired_cosine_distances``, gives 0.5 when one side
    is zero and 1.0 when both are.)
    """
    a = np.asarray(embeddings1, dtype=np.float64)
    b = np.asarray(embeddings2, dtype=np.float64)
    na, nb = np.linalg.norm(a, axis=1), np.linalg.norm(b, axis=1)
    covered = (na > 0) & (nb > 0)
    dots = np.einsum("ij,ij->i", a, b)
    cos = np.divide(dots, na * nb, out=np.zeros_like(dots), where=covered)
    return cos, covered


class _EmbeddingRecorder:
    """Forwards everything to ``model`` and keeps the arrays its ``encode`` returns.

    The members of mteb's ``EncoderProtocol`` are defined explicitly (a runtime protocol
    check may look them up statically); anything else is forwarded by ``__getattr__``.
    """

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


class WordSimilarityMetrics(STSMetrics):
    """mteb's STS metrics (``cosine_*`` recomputed by ``covered_cosine``) plus the coverage scores."""

    coverage: float
    covered_cosine_spearman: float


class WordSimilarityTask(PluginDatasetLoading, AbsTaskSTS):
    """mteb's STS task with the unknown-word convention of this module (see its docstring).

    ``cosine_pearson`` / ``cosine_spearman`` (the main score) are recomputed from the two
    embedding matrices with ``covered_cosine``; the other STS metrics (model similarity,
    Manhattan, Euclidean) are mteb's. Added scores: ``coverage`` (share of covered pairs) and
    ``covered_cosine_spearman`` (Spearman on the covered pairs only).
    """

    def _evaluate_subset(
        self, model: MTEBModels, data_split: Dataset, **kwargs: Any
    ) -> WordSimilarityMetrics:
        recorder = _EmbeddingRecorder(model)
        sts = super()._evaluate_subset(recorder, data_split, **kwargs)
        if len(recorder.embeddings) != 2:
            raise RuntimeError(f"expected two encode calls (one per column), got {len(recorder.embeddings)}.")
        cos, covered = covered_cosine(*recorder.embeddings)
        gold = np.array([self._normalize(score) for score in data_split["score"]], dtype=np.float64)
        covered_spearman = (
            float(spearmanr(cos[covered], gold[covered]).statistic) if covered.sum() >= 2 else float("nan")
        )
        metrics = WordSimilarityMetrics(
            **sts, coverage=float(covered.mean()), covered_cosine_spearman=covered_spearman
        )
        metrics["cosine_pearson"] = float(pearsonr(cos, gold).statistic)
        metrics["cosine_spearman"] = float(spearmanr(cos, gold).statistic)
        return metrics
