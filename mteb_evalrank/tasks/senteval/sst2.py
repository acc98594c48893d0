"""SST2: a SentEval transfer task (config ``sst2`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import SST_CITATION, cite
from ._base import SENTEVAL_CITATION, SENTEVAL_METADATA, AbsTaskSentEval, senteval_protocol_metadata


class SST2Classification(AbsTaskSentEval):
    metadata = PluginTaskMetadata(
        name="SST2Classification",
        description=(
            "Stanford Sentiment Treebank, binary (Socher et al., 2013): 67,349 training phrases, 872 "
            "validation and 1,821 test sentences, positive or negative. Official splits. SentEval "
            "transfer task (Conneau and Kiela, 2018), a downstream task of EvalRank (Wang et al., "
            "2022). Protocol mteb: the classification evaluator of mteb."
        ),
        reference="https://nlp.stanford.edu/sentiment/",
        dataset=SENTEVAL.mteb_dataset("sst2"),
        **SENTEVAL_METADATA,
        eval_langs=["eng-Latn"],
        date=("2013-01-01", "2013-12-31"),
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        annotations_creators="human-annotated",
        bibtex_citation=cite(
            SST_CITATION,
            SENTEVAL_CITATION,
        ),
    )


class SentEvalSST2(SST2Classification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(SST2Classification.metadata, "SentEvalSST2")
