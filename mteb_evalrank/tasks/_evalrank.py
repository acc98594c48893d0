"""``AbsTaskEvalRank``: EvalRank as an mteb retrieval task scored on the whole background.

mteb's retrieval layout (corpus = background, queries, qrels = positive pairs), so the stock
loader and any encoder work; each pair is ranked exactly against the whole background by
:mod:`mteb_evalrank.evaluation.ranking` instead of mteb's top-k evaluator. The background's
embeddings and the pairs' rank counts are kept across the hf_subsets over one background (mteb
evaluates one subset per call) until ``unload_data()`` or another model.
"""

from __future__ import annotations

import hashlib
import logging
from typing import TYPE_CHECKING, Any, cast

import numpy as np
from mteb.abstasks.retrieval import AbsTaskRetrieval
from mteb.models import EncoderProtocol

from mteb_evalrank.evaluation import unknown_words as conventions
from mteb_evalrank.evaluation.ranking import (
    DEFAULT_CHUNK_BYTES,
    DEFAULT_KS,
    DEFAULT_TOL,
    SIMILARITIES,
    RankCounts,
    Similarity,
    TiePolicy,
    rank_counts_all,
    rank_metrics,
)
from mteb_evalrank.evaluation.scores import Scores

from ._citations import EVALRANK_CITATION
from ._encoding import EncodeTexts, as_list, unwrapped
from ._loading import PluginDatasetLoading
from ._vocabulary import VocabularyOption

if TYPE_CHECKING:
    from mteb.abstasks.retrieval_dataset_loaders import RetrievalSplitData
    from mteb.models import MTEBModels
    from mteb.timing import TimingStack
    from mteb.types import ScoresDict
    from numpy.typing import NDArray

    from mteb_evalrank.settings import Settings

logger = logging.getLogger(__name__)

#: ``TaskMetadata`` fields of every EvalRank task (the release's and those over the user's files)
EVALRANK_METADATA: dict[str, Any] = {
    "type": "Retrieval",
    "category": "t2t",
    "eval_langs": {"default": ["eng-Latn"]},
    "main_score": "cosine_mrr",
    "task_subtypes": [],
    "dialect": [],
    "sample_creation": "found",
    "bibtex_citation": EVALRANK_CITATION,
}


class AbsTaskEvalRank(VocabularyOption, EncodeTexts, PluginDatasetLoading, AbsTaskRetrieval):
    """Retrieval-style intrinsic evaluation: rank of each positive among all background items.

    Scores per hf_subset: ``{cosine,euclidean}_{mrr, hits_at_1, hits_at_3, hits_at_10, mean_rank}``,
    ``n_pairs``, ``n_background``. Word-level tasks (``word_level``) add every unknown-word convention
    (:meth:`_convention_scores`): the same keys prefixed ``covered_``, ``mean_vector_`` and (given a
    vocabulary) ``vocabulary_``, ``coverage`` (pairs whose two words are known), ``background_coverage``
    and ``{covered,vocabulary}_n_{pairs,background}``, and the vocabulary's record
    (``VocabularyOption.vocabulary_record``).

    Class attributes (override in a subclass or set on an instance):
        tie_policy: ``expected`` (default), ``optimistic`` or ``pessimistic``.
        unknown_words, vocabulary: word-level tasks: :class:`~._vocabulary.VocabularyOption`.
        tol: tie tolerance (absolute on the cosine, relative on the euclidean distance).
        chunk_bytes: memory budget of one chunk of the similarity matrix."""

    tie_policy: TiePolicy = "expected"
    tol: float = DEFAULT_TOL
    ks: tuple[int, ...] = DEFAULT_KS
    chunk_bytes: int = DEFAULT_CHUNK_BYTES
    word_level: bool = False
    required_scores: tuple[str, ...] = ()
    """Scores every current result has (an older result without them is redone by a study)."""
    # mteb's private flags, declared and checked in ``_mteb_adapter.TASK_FLAGS``
    _support_cross_encoder: bool = False
    _support_search: bool = False

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._cache_model: object | None = None
        self._counts: dict[str, dict[tuple[int, int], dict[Similarity, tuple[int, int]]]] = {}

    def use_settings(self, settings: Settings) -> None:
        if self.word_level:  # the unknown-word conventions
            super().use_settings(settings)

    def clear_embedding_cache(self) -> None:
        """Drop the cached background embeddings and rank counts."""
        self._cache_model = None
        self._embeddings.clear()
        self._counts.clear()

    def unload_data(self) -> None:
        """mteb's unload, plus the embedding cache (mteb calls it after the last subset)."""
        self.clear_embedding_cache()
        super().unload_data()

    @staticmethod
    def _background_key(texts: list[str]) -> str:
        return hashlib.sha256("".join(f"{text}\0" for text in texts).encode("utf-8")).hexdigest()

    def _pairs(
        self, data_split: RetrievalSplitData, hf_subset: str
    ) -> tuple[NDArray[np.intp], NDArray[np.intp]]:
        ids = as_list(data_split["corpus"]["id"])
        row = {doc_id: i for i, doc_id in enumerate(ids)}
        if len(row) != len(ids):
            raise ValueError(f"{self.metadata.name} ({hf_subset}): duplicate corpus ids.")
        queries, positives, unknown = [], [], set()
        for query_id, relevant in sorted(data_split["relevant_docs"].items()):
            for doc_id, score in sorted(relevant.items()):
                if score <= 0:
                    continue
                if query_id not in row or doc_id not in row:
                    unknown.update({query_id, doc_id} - row.keys())
                    continue
                queries.append(row[query_id])
                positives.append(row[doc_id])
        if unknown:
            raise ValueError(
                f"{self.metadata.name} ({hf_subset}): {len(unknown)} qrels ids are not "
                f"background (corpus) ids, e.g. {sorted(unknown)[:3]}. In EvalRank both sides "
                "of a pair are background items; rebuild the dataset."
            )
        if not queries:
            raise ValueError(f"{self.metadata.name} ({hf_subset}): no positive pairs in the qrels.")
        return np.asarray(queries, dtype=np.intp), np.asarray(positives, dtype=np.intp)

    def _counts_for(
        self, key: str, embeddings: NDArray[np.float64], queries: NDArray[np.intp],
        positives: NDArray[np.intp],
    ) -> dict[Similarity, RankCounts]:  # fmt: skip
        """Rank counts of the pairs per similarity; pairs ranked for an earlier subset are reused."""
        known = self._counts.setdefault(key, {})
        pairs = list(zip(queries.tolist(), positives.tolist(), strict=True))
        todo = [i for i, pair in enumerate(pairs) if pair not in known]
        if todo:
            fresh = rank_counts_all(
                embeddings,
                queries[todo],
                positives[todo],
                similarities=SIMILARITIES,
                tol=self.tol,
                chunk_bytes=self.chunk_bytes,
            )
            for j, i in enumerate(todo):
                known[pairs[i]] = {s: (int(fresh[s].better[j]), int(fresh[s].tied[j])) for s in SIMILARITIES}
        return {
            s: RankCounts(
                np.asarray([known[pair][s][0] for pair in pairs], dtype=np.int64),
                np.asarray([known[pair][s][1] for pair in pairs], dtype=np.int64),
            )
            for s in SIMILARITIES
        }

    def _evaluate_subset(  # mteb's keywords besides these: encode_kwargs, num_proc, ...
        self, model: MTEBModels, data_split: RetrievalSplitData, *, hf_split: str, hf_subset: str,
        timer: TimingStack, **kwargs: Any,
    ) -> ScoresDict:  # fmt: skip
        queries, positives = self._pairs(data_split, hf_subset)
        texts = as_list(data_split["corpus"]["text"])
        if self._cache_model is not unwrapped(model):  # rank counts are per model, across subsets
            self.clear_embedding_cache()
            self._cache_model = unwrapped(model)
        if not isinstance(model, EncoderProtocol):  # as mteb's own evaluators check
            raise TypeError(f"{self.metadata.name}: expected an encoder model (mteb's EncoderProtocol)")
        embeddings = self._embed(model, texts, hf_split=hf_split, hf_subset=hf_subset, timer=timer, **kwargs)
        scores: Scores = {}
        with timer("Scoring", split=hf_split, subset=hf_subset, log_message="EvalRank - ranking pairs..."):
            counts = self._counts_for(self._background_key(texts), embeddings, queries, positives)
            scores.update(self._metrics(counts))
            scores["n_pairs"] = int(queries.size)
            scores["n_background"] = int(embeddings.shape[0])
            if self.word_level:
                scores.update(self._convention_scores(scores, embeddings, queries, positives, texts))
        return {**scores, **self.vocabulary_record} if self.word_level else scores

    def _convention_scores(
        self, scores: Scores, embeddings: NDArray[np.float64], queries: NDArray[np.intp],
        positives: NDArray[np.intp], words: list[str],
    ) -> Scores:  # fmt: skip
        """The scores of the ``covered``, ``mean_vector`` and ``vocabulary`` conventions.

        ``covered``: the known (non-zero) background rows and the pairs of two known words, centred on
        them. ``mean_vector``: an unknown row is the known rows' mean, i.e. exactly zero after centring
        (centred here, ``centre=False``: a float subtraction would leave a noise vector). ``vocabulary``:
        the rows and pairs whose words are in it. A model knowing every word gets the ``zero`` scores
        under ``covered`` and ``mean_vector`` without ranking again."""
        known = conventions.known(embeddings)
        pair_known = known[queries] & known[positives]
        out: Scores = {"coverage": float(pair_known.mean()), "background_coverage": float(known.mean())}
        if known.all():
            same = {k: v for k, v in scores.items() if k.split("_")[0] in SIMILARITIES or k.startswith("n_")}
            out |= {f"covered_{k}": v for k, v in same.items()}
            out |= {f"mean_vector_{k}": v for k, v in same.items() if not k.startswith("n_")}
        else:
            out |= self._restricted(embeddings, known, queries, positives, "covered_")
            centred = np.zeros_like(embeddings)
            if known.any():
                centred[known] = embeddings[known] - embeddings[known].mean(axis=0)
            out |= self._ranked(centred, queries, positives, "mean_vector_", centre=False)
        vocabulary = self.vocabulary_in_use
        if vocabulary is not None:
            inside = np.fromiter((word in vocabulary for word in words), dtype=bool, count=len(words))
            out |= self._restricted(embeddings, inside, queries, positives, "vocabulary_")
        return out

    def _ranked(
        self, embeddings: NDArray[np.float64], queries: NDArray[np.intp], positives: NDArray[np.intp],
        prefix: str, *, centre: bool = True,
    ) -> Scores:  # fmt: skip
        """Rank metrics of the pairs on ``embeddings`` under both similarities, keys ``prefix...``;
        NaN when there is no pair (or fewer than two background items)."""
        if queries.size == 0 or embeddings.shape[0] < 2:
            return dict.fromkeys(self._metrics(dict.fromkeys(SIMILARITIES, _ONE_PAIR), prefix), float("nan"))
        counts = rank_counts_all(
            embeddings, queries, positives, similarities=SIMILARITIES, tol=self.tol,
            chunk_bytes=self.chunk_bytes, centre=centre,
        )  # fmt: skip
        return self._metrics(counts, prefix)

    def _metrics(self, counts: dict[Similarity, RankCounts], prefix: str = "") -> Scores:
        """``{prefix}{similarity}_{metric}`` of the rank counts under both similarities."""
        out: Scores = {}
        for similarity in SIMILARITIES:
            out |= rank_metrics(
                counts[similarity], tie_policy=self.tie_policy, ks=self.ks, prefix=f"{prefix}{similarity}_"
            )
        return out

    def _restricted(
        self, embeddings: NDArray[np.float64], keep: NDArray[np.bool_], queries: NDArray[np.intp],
        positives: NDArray[np.intp], prefix: str,
    ) -> Scores:  # fmt: skip
        """:meth:`_ranked` on the background rows ``keep`` and the pairs whose two items are kept,
        with ``{prefix}n_pairs`` and ``{prefix}n_background``."""
        row = np.full(keep.size, -1, dtype=np.intp)
        row[keep] = np.arange(int(keep.sum()))
        inside = keep[queries] & keep[positives]
        out = self._ranked(embeddings[keep], row[queries[inside]], row[positives[inside]], prefix)
        return out | {f"{prefix}n_pairs": int(inside.sum()), f"{prefix}n_background": int(keep.sum())}

    def _add_main_score(self, scores: ScoresDict) -> None:
        """mteb's main score; for a word-level task, under the convention ``unknown_words`` picks."""
        if not self.word_level:
            super()._add_main_score(scores)
            return
        option = conventions.check_convention(self.metadata.name, self.unknown_words, frozenset())
        key = conventions.main_score_key(self.metadata.main_score, option)
        cast("dict[str, Any]", scores)["main_score"] = scores[key]


_ONE_PAIR = RankCounts(np.zeros(1, dtype=np.int64), np.zeros(1, dtype=np.int64))
"""A one-pair ``RankCounts``, for the names of the rank metrics."""
