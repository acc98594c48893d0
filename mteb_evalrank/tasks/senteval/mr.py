"""MR: a SentEval transfer task (config ``mr`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import cite
from ._base import (
    EVAL_LANGS_FOLDS,
    SENTEVAL_CITATION,
    AbsTaskSentEval,
    senteval_dataset,
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
        dataset=senteval_dataset("mr"),
        type="Classification",
        category="t2c",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=EVAL_LANGS_FOLDS,
        main_score="accuracy",
        date=("2005-01-01", "2005-12-31"),
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        license="bsd-3-clause",
        annotations_creators="derived",
        dialect=[],
        sample_creation="found",
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
