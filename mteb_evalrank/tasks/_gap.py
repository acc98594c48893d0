"""Shared pieces of the evaluation-gap tasks (Abe et al., 2022): WMT17 DA and the slices.

Conventions of ``WMT17DA``, ``WMT17DALength``, ``WMT17DAVocabCoverage``,
``WMT17DAGranularity`` and ``STSBenchmarkGranularity``:

* type STS, one hf_subset per config of the family's Hub dataset (``tasks/wmt17-da/``,
  ``tasks/stsb-granularity/``), split ``test``, columns ``sentence1`` / ``sentence2`` /
  ``score``;
* main score ``cosine_pearson``: Pearson correlation of the cosine similarity with the gold
  score, the metrics-task convention and the paper's choice for STS-B too; Spearman (mteb's)
  and Kendall's tau-b (``cosine_kendall``, added here: mteb's STS task has no Kendall) are
  reported as well;
* ``min_score`` / ``max_score`` only feed mteb's affine normalisation
  ``(x - min) / (max - min)`` of the gold scores, which leaves Pearson, Spearman and Kendall
  unchanged as long as ``max > min``. For DA z-scores (about -1.8 to 1.5, negative values
  included) we set -3 / 3, a range that covers every score.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

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


def subsets(names: Iterable[str]) -> dict[str, list[str]]:
    """``eval_langs`` of a multi-subset English task: every hf_subset is English."""
    return {name: ["eng-Latn"] for name in names}


def wmt17_metadata(*, name: str, description: str, hf_subsets: Iterable[str]) -> PluginTaskMetadata:
    """A WMT17 DA task's metadata: the fields the five share, the English ``hf_subsets`` of
    ``mteb-evalrank/wmt17-da`` it evaluates, and ``description`` followed by the data's source."""
    return PluginTaskMetadata(
        name=name,
        description=description
        + " Pairs are (reference, machine translation) from the WMT17 metrics task, segment-level "
        "direct assessment, to-English; the gold score is the DA z-score. Main score: Pearson "
        "correlation of cosine similarity with the DA score (the metrics-task convention).",
        eval_langs=subsets(hf_subsets),
        reference=PAPER,
        dataset=WMT17_DA.mteb_dataset(),
        type="STS",
        category="t2t",
        main_score="cosine_pearson",
        date=("2017-01-01", "2017-12-31"),
        domains=["News", "Written"],
        task_subtypes=[],
        license=WMT17_DA.license,
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=cite(WMT17_METRICS_CITATION, ABE2022_CITATION),
    )


class GapSTSMetrics(STSMetrics):
    """mteb's STS metrics plus ``cosine_kendall``."""

    cosine_kendall: float


class AbsTaskGapSTS(EncodeOnce, PluginDatasetLoading, AbsTaskSTS):
    """mteb's STS task plus Kendall's tau-b of the cosine similarity (``cosine_kendall``)."""

    min_score = -3
    max_score = 3

    def _calculate_scores(self, scores: STSEvaluatorScores, normalized_scores: list[float]) -> GapSTSMetrics:
        """mteb's metrics and ``cosine_kendall`` = scipy's tau-b(gold, cosine)."""
        metrics = super()._calculate_scores(scores, normalized_scores)
        tau = float(kendalltau(normalized_scores, scores["cosine_scores"]).statistic)
        return GapSTSMetrics(**metrics, cosine_kendall=tau)
