"""SUBJ: a SentEval transfer task (config ``subj`` of ``mteb-evalrank/senteval``), two protocols."""

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


class SUBJClassification(AbsTaskSentEval):
    cross_validated = True
    metadata = PluginTaskMetadata(
        name="SUBJClassification",
        description=(
            "Subjectivity (Pang and Lee, 2004): 10,000 movie sentences, objective (plot summaries) or "
            "subjective (review snippets). Ten fixed stratified folds, one hf_subset each (10-fold "
            "cross-validation). SentEval transfer task (Conneau and Kiela, 2018), a downstream task "
            "of EvalRank (Wang et al., 2022). Protocol mteb: the classification evaluator of mteb."
        ),
        reference="https://www.cs.cornell.edu/people/pabo/movie-review-data/",
        dataset=SENTEVAL.mteb_dataset("subj"),
        **SENTEVAL_METADATA,
        eval_langs=EVAL_LANGS_FOLDS,
        date=("2004-01-01", "2004-12-31"),
        domains=["Reviews", "Written"],
        task_subtypes=[],
        annotations_creators="derived",
        bibtex_citation=cite(
            r"""@inproceedings{pang2004sentimental,
  author = {Pang, Bo and Lee, Lillian},
  booktitle = {Proceedings of the 42nd Annual Meeting of the Association for Computational Linguistics},
  pages = {271--278},
  title = {A Sentimental Education: Sentiment Analysis Using Subjectivity Summarization Based on Minimum Cuts},
  year = {2004},
}
""",
            SENTEVAL_CITATION,
        ),
    )


class SentEvalSUBJ(SUBJClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(SUBJClassification.metadata, "SentEvalSUBJ")
