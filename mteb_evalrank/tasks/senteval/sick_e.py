"""SICKE: a SentEval transfer task (config ``sick-e`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import SICK_CITATION, cite
from ._base import SENTEVAL_CITATION, AbsTaskSentEvalPair, senteval_dataset, senteval_protocol_metadata


class SICKEClassification(AbsTaskSentEvalPair):
    metadata = PluginTaskMetadata(
        name="SICKEClassification",
        description=(
            "SICK entailment (Marelli et al., 2014): 4,500 / 500 / 4,927 sentence pairs, entailment, "
            "neutral or contradiction. Official splits. Classified on the pair features [u, v, |u-v|, "
            "u*v]. SentEval transfer task (Conneau and Kiela, 2018), a downstream task of EvalRank "
            "(Wang et al., 2022). Protocol mteb: the classification evaluator of mteb."
        ),
        reference="https://marcobaroni.org/composes/sick.html",
        dataset=senteval_dataset("sick-e"),
        type="Classification",
        category="t2c",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score="accuracy",
        date=("2014-01-01", "2014-12-31"),
        domains=["Written"],
        task_subtypes=["Textual Entailment"],
        license="bsd-3-clause",
        annotations_creators="human-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=cite(SICK_CITATION, SENTEVAL_CITATION),
    )


class SentEvalSICKE(SICKEClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(SICKEClassification.metadata, "SentEvalSICKE")
