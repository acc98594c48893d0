"""SST5: a SentEval transfer task (config ``sst5`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import SST_CITATION, cite
from ._base import SENTEVAL_CITATION, SENTEVAL_METADATA, AbsTaskSentEval, senteval_protocol_metadata


class SST5Classification(AbsTaskSentEval):
    metadata = PluginTaskMetadata(
        name="SST5Classification",
        description=(
            "Stanford Sentiment Treebank, fine-grained (Socher et al., 2013): 8,544 / 1,101 / 2,210 "
            "sentences, five sentiment classes. Official splits. SentEval transfer task (Conneau and "
            "Kiela, 2018), a downstream task of EvalRank (Wang et al., 2022). Protocol mteb: the "
            "classification evaluator of mteb."
        ),
        reference="https://nlp.stanford.edu/sentiment/",
        dataset=SENTEVAL.mteb_dataset("sst5"),
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


class SentEvalSST5(SST5Classification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(SST5Classification.metadata, "SentEvalSST5")
