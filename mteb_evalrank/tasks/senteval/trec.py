"""TREC: a SentEval transfer task (config ``trec`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import cite
from ._base import SENTEVAL_CITATION, SENTEVAL_METADATA, AbsTaskSentEval, senteval_protocol_metadata


class TRECClassification(AbsTaskSentEval):
    metadata = PluginTaskMetadata(
        name="TRECClassification",
        description=(
            "TREC question classification (Li and Roth, 2002): 5,452 training and 500 test questions, "
            "six coarse answer types. Official splits. SentEval transfer task (Conneau and Kiela, "
            "2018), a downstream task of EvalRank (Wang et al., 2022). Protocol mteb: the "
            "classification evaluator of mteb."
        ),
        reference="https://cogcomp.seas.upenn.edu/Data/QA/QC/",
        dataset=SENTEVAL.mteb_dataset("trec"),
        **SENTEVAL_METADATA,
        eval_langs=["eng-Latn"],
        date=("2002-01-01", "2002-12-31"),
        domains=["Written"],
        task_subtypes=["Intent classification"],
        annotations_creators="human-annotated",
        bibtex_citation=cite(
            r"""@inproceedings{li2002learning,
  author = {Li, Xin and Roth, Dan},
  booktitle = {COLING 2002: The 19th International Conference on Computational Linguistics},
  title = {Learning Question Classifiers},
  year = {2002},
}
""",
            SENTEVAL_CITATION,
        ),
    )


class SentEvalTREC(TRECClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(TRECClassification.metadata, "SentEvalTREC")
