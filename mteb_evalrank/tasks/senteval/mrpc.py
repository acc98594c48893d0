"""MRPC: a SentEval transfer task (config ``mrpc`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import cite
from ._base import SENTEVAL_CITATION, SENTEVAL_METADATA, AbsTaskSentEvalPair, senteval_protocol_metadata


class MRPCClassification(AbsTaskSentEvalPair):
    metadata = PluginTaskMetadata(
        name="MRPCClassification",
        description=(
            "Microsoft Research Paraphrase Corpus (Dolan and Brockett, 2005): 4,076 training and "
            "1,725 test news sentence pairs, paraphrase or not. Official splits. Classified on the "
            "pair features [u, v, |u-v|, u*v]. SentEval transfer task (Conneau and Kiela, 2018), a "
            "downstream task of EvalRank (Wang et al., 2022). Protocol mteb: the classification "
            "evaluator of mteb."
        ),
        reference="https://www.microsoft.com/en-us/download/details.aspx?id=52398",
        dataset=SENTEVAL.mteb_dataset("mrpc"),
        **SENTEVAL_METADATA,
        eval_langs=["eng-Latn"],
        date=("2005-01-01", "2005-12-31"),
        domains=["News", "Written"],
        task_subtypes=["Duplicate Detection"],
        annotations_creators="human-annotated",
        bibtex_citation=cite(
            r"""@inproceedings{dolan2005automatically,
  author = {Dolan, William B. and Brockett, Chris},
  booktitle = {Proceedings of the Third International Workshop on Paraphrasing (IWP2005)},
  title = {Automatically Constructing a Corpus of Sentential Paraphrases},
  year = {2005},
}
""",
            SENTEVAL_CITATION,
        ),
    )


class SentEvalMRPC(MRPCClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(MRPCClassification.metadata, "SentEvalMRPC")
