from .._citations import SST_CITATION
from ._base import AbsTaskSentEval, senteval_metadata, senteval_protocol


class SST5Classification(AbsTaskSentEval):
    metadata = senteval_metadata(
        name="SST5Classification",
        description=(
            "Stanford Sentiment Treebank, fine-grained (Socher et al., 2013): 8,544 / 1,101 / 2,210 "
            "sentences, five sentiment classes. Official splits."
        ),
        reference="https://nlp.stanford.edu/sentiment/",
        config="sst5",
        year=2013,
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        citation=SST_CITATION,
    )


SentEvalSST5 = senteval_protocol(SST5Classification)
