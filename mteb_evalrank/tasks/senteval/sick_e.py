"""SICKE: a SentEval transfer task (config ``sick-e`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import SICK_CITATION, cite
from ._base import SENTEVAL_CITATION, SENTEVAL_METADATA, AbsTaskSentEvalPair, senteval_protocol_metadata


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
        dataset=SENTEVAL.mteb_dataset("sick-e"),
        **SENTEVAL_METADATA,
        eval_langs=["eng-Latn"],
        date=("2014-01-01", "2014-12-31"),
        domains=["Written"],
        task_subtypes=["Textual Entailment"],
        annotations_creators="human-annotated",
        bibtex_citation=cite(SICK_CITATION, SENTEVAL_CITATION),
    )


class SentEvalSICKE(SICKEClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(SICKEClassification.metadata, "SentEvalSICKE")
