"""Shared pieces of the evaluation-gap tasks (Abe et al., 2022; docs/diagnostics.md).

Type STS, one hf_subset per config, split ``test``, columns ``sentence1`` / ``sentence2`` /
``score``; main score ``cosine_pearson`` (the metrics-task convention), with mteb's Spearman and
Kendall's tau-b (``cosine_kendall``). ``min_score`` / ``max_score`` feed only mteb's affine
normalisation, which changes no correlation: -3 / 3 covers every DA z-score.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from mteb.abstasks.sts import AbsTaskSTS, STSMetrics
from scipy.stats import kendalltau

from mteb_evalrank.data.registry import WMT17_DA
from mteb_evalrank.tasks._loading import PluginDatasetLoading
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._citations import ABE2022_CITATION, WMT17_METRICS_CITATION, cite
from ._encoding import EncodeOnce

if TYPE_CHECKING:
    from mteb_evalrank._mteb_adapter import STSEvaluatorScores

WMT17_LANGUAGE_PAIRS = ("cs-en", "de-en", "fi-en", "lv-en", "ru-en", "tr-en", "zh-en")
PAPER = "https://aclanthology.org/2022.eval4nlp-1.8"


def gap_metadata(*, hf_subsets: Iterable[str], **fields: Any) -> PluginTaskMetadata:
    """An evaluation-gap task's metadata: the fields the six share, ``fields`` and its English
    ``hf_subsets``."""
    return PluginTaskMetadata(
        **fields,
        eval_langs={name: ["eng-Latn"] for name in hf_subsets},
        reference=PAPER,
        type="STS",
        category="t2t",
        main_score="cosine_pearson",
        task_subtypes=[],
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="found",
    )


def wmt17_metadata(*, name: str, description: str, hf_subsets: Iterable[str]) -> PluginTaskMetadata:
    """A WMT17 DA task's metadata: the ``hf_subsets`` of ``mteb-evalrank/wmt17-da`` it evaluates and
    ``description`` followed by the data's source."""
    return gap_metadata(
        name=name,
        description=description
        + " Pairs are (reference, machine translation) from the WMT17 metrics task, segment-level "
        "direct assessment, to-English; the gold score is the DA z-score. Main score: Pearson "
        "correlation of cosine similarity with the DA score (the metrics-task convention).",
        hf_subsets=hf_subsets,
        dataset=WMT17_DA.mteb_dataset(),
        date=("2017-01-01", "2017-12-31"),
        domains=["News", "Written"],
        license=WMT17_DA.license,
        bibtex_citation=cite(WMT17_METRICS_CITATION, ABE2022_CITATION),
    )


class GapSTSMetrics(STSMetrics):
    """mteb's STS metrics plus ``cosine_kendall``."""

    cosine_kendall: float


class AbsTaskGapSTS(EncodeOnce, PluginDatasetLoading, AbsTaskSTS):
    """mteb's STS task plus Kendall's tau-b of the cosine similarity (``cosine_kendall``)."""

    min_score, max_score = -3, 3

    def _calculate_scores(self, scores: STSEvaluatorScores, normalized_scores: list[float]) -> GapSTSMetrics:
        """mteb's metrics and ``cosine_kendall`` = scipy's tau-b(gold, cosine)."""
        metrics = super()._calculate_scores(scores, normalized_scores)
        tau = float(kendalltau(normalized_scores, scores["cosine_scores"]).statistic)
        return GapSTSMetrics(**metrics, cosine_kendall=tau)
