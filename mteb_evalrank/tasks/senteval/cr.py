"""CR: a SentEval transfer task (config ``cr`` of ``mteb-evalrank/senteval``), two protocols."""

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


class CRClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = PluginTaskMetadata(
        name="CRClassification",
        description=(
            "Customer-review sentence polarity (Hu and Liu, 2004): 3,771 product-review sentences, "
            "positive or negative. Ten fixed stratified folds, one hf_subset each (10-fold cross- "
            "validation). SentEval transfer task (Conneau and Kiela, 2018), a downstream task of "
            "EvalRank (Wang et al., 2022). Protocol mteb: the classification evaluator of mteb."
        ),
        reference="https://www.cs.uic.edu/~liub/FBS/sentiment-analysis.html",
        dataset=SENTEVAL.mteb_dataset("cr"),
        **SENTEVAL_METADATA,
        eval_langs=EVAL_LANGS_FOLDS,
        date=("2004-01-01", "2004-12-31"),
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        annotations_creators="human-annotated",
        bibtex_citation=cite(
            r"""@inproceedings{hu2004mining,
  author = {Hu, Minqing and Liu, Bing},
  booktitle = {Proceedings of the Tenth ACM SIGKDD International Conference on Knowledge Discovery and Data Mining},
  pages = {168--177},
  title = {Mining and Summarizing Customer Reviews},
  year = {2004},
}
""",
            SENTEVAL_CITATION,
        ),
    )


class SentEvalCR(CRClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(CRClassification.metadata, "SentEvalCR")
