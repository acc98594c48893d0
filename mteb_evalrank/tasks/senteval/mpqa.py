"""MPQA: a SentEval transfer task (config ``mpqa`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import cite
from ._base import (
    EVAL_LANGS_FOLDS,
    SENTEVAL_CITATION,
    SENTEVAL_METADATA,
    AbsTaskSentEval,
    senteval_protocol_metadata,
)


class MPQAClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = PluginTaskMetadata(
        name="MPQAClassification",
        description=(
            "MPQA opinion polarity (Wiebe et al., 2005): 10,603 short news phrases, positive or "
            "negative. Ten fixed stratified folds, one hf_subset each (10-fold cross-validation). "
            "SentEval transfer task (Conneau and Kiela, 2018), a downstream task of EvalRank (Wang et "
            "al., 2022). Protocol mteb: the classification evaluator of mteb."
        ),
        reference="https://mpqa.cs.pitt.edu/",
        dataset=SENTEVAL.mteb_dataset("mpqa"),
        **SENTEVAL_METADATA,
        eval_langs=EVAL_LANGS_FOLDS,
        date=("2005-01-01", "2005-12-31"),
        domains=["News", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        annotations_creators="human-annotated",
        bibtex_citation=cite(
            r"""@article{wiebe2005annotating,
  author = {Wiebe, Janyce and Wilson, Theresa and Cardie, Claire},
  journal = {Language Resources and Evaluation},
  number = {2-3},
  pages = {165--210},
  title = {Annotating Expressions of Opinions and Emotions in Language},
  volume = {39},
  year = {2005},
}
""",
            SENTEVAL_CITATION,
        ),
    )


class SentEvalMPQA(MPQAClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(MPQAClassification.metadata, "SentEvalMPQA")
