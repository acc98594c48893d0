"""SciCite: a SentEval transfer task (config ``scicite`` of ``mteb-evalrank/senteval``), two protocols."""

from __future__ import annotations

from mteb_evalrank.data.registry import SENTEVAL
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from .._citations import cite
from ._base import SENTEVAL_CITATION, SENTEVAL_METADATA, AbsTaskSentEval, senteval_protocol_metadata


class SciCiteClassification(AbsTaskSentEval):
    metadata = PluginTaskMetadata(
        name="SciCiteClassification",
        description=(
            "SciCite citation intent (Cohan et al., 2019): 7,320 / 916 / 1,861 citation contexts from "
            "scientific papers, background, method or result. Official splits. SentEval transfer task "
            "(Conneau and Kiela, 2018), a downstream task of EvalRank (Wang et al., 2022). Protocol "
            "mteb: the classification evaluator of mteb."
        ),
        reference="https://github.com/allenai/scicite",
        dataset=SENTEVAL.mteb_dataset("scicite"),
        **SENTEVAL_METADATA,
        eval_langs=["eng-Latn"],
        date=("2019-01-01", "2019-12-31"),
        domains=["Academic", "Written"],
        task_subtypes=[],
        annotations_creators="human-annotated",
        bibtex_citation=cite(
            r"""@inproceedings{cohan2019structural,
  author = {Cohan, Arman and Ammar, Waleed and van Zuylen, Madeleine and Cady, Field},
  booktitle = {Proceedings of NAACL-HLT 2019},
  pages = {3586--3596},
  title = {Structural Scaffolds for Citation Intent Classification in Scientific Publications},
  year = {2019},
}
""",
            SENTEVAL_CITATION,
        ),
    )


class SentEvalSciCite(SciCiteClassification):
    protocol = "senteval"
    metadata = senteval_protocol_metadata(SciCiteClassification.metadata, "SentEvalSciCite")
