from .._citations import SICK_CITATION
from ._base import AbsTaskSentEvalPair, senteval_metadata, senteval_protocol


class SICKEClassification(AbsTaskSentEvalPair):
    metadata = senteval_metadata(
        name="SICKEClassification",
        description=(
            "SICK entailment (Marelli et al., 2014): 4,500 / 500 / 4,927 sentence pairs, entailment, "
            "neutral or contradiction. Official splits. Classified on the pair features [u, v, |u-v|, u*v]."
        ),
        reference="https://marcobaroni.org/composes/sick.html",
        config="sick-e",
        year=2014,
        domains=["Written"],
        task_subtypes=["Textual Entailment"],
        citation=SICK_CITATION,
    )


SentEvalSICKE = senteval_protocol(SICKEClassification)
