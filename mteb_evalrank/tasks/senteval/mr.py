"""MR: a SentEval transfer task (config ``mr`` of ``mteb-evalrank/senteval``), two protocols."""

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


class MRClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = PluginTaskMetadata(
        name="MRClassification",
        description=(
            "Movie-review snippet polarity (Pang and Lee, 2005): 10,662 Rotten Tomatoes snippets, "
            "positive or negative. Ten fixed stratified folds, one hf_subset each (10-fold cross- "
            "validation). SentEval transfer task (Conneau and Kiela, 2018), a downstream task of "
            "EvalRank (Wang et al., 2022). Protocol mteb: the classification evaluator of mteb."
        ),
        reference="https://www.cs.cornell.edu/people/pabo/movie-review-data/",
        dataset=SENTEVAL.mteb_dataset("mr"),
        **SENTEVAL_METADATA,
        eval_langs=EVAL_LANGS_FOLDS,
        date=("2005-01-01", "2005-12-31"),
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        annotations_creators="derived",
        bibtex_citation=cite(
            r"""@inproceedings{pang2005seeing,
  author = {Pang, Bo and Lee, Lillian},
  booktitle = {Proceedings of the 43rd Annual Meeting of the Association for Computational Linguistics},
  pages = {115--124},
  title = {Seeing Stars: Exploiting Class Relationships for Sentiment Categorization with Respect to Rating Scales},
  year = {2005},
}
""",
            SENTEVAL_CITATION,
        ),
    )


class SentEvalMR(MRClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(MRClassification.metadata, "SentEvalMR")
