from .._citations import SST_CITATION
from ._base import AbsTaskSentEval, senteval_metadata, senteval_protocol


class SST2Classification(AbsTaskSentEval):
    metadata = senteval_metadata(
        name="SST2Classification",
        description=(
            "Stanford Sentiment Treebank, binary (Socher et al., 2013): 67,349 training phrases, 872 "
            "validation and 1,821 test sentences, positive or negative. Official splits."
        ),
        reference="https://nlp.stanford.edu/sentiment/",
        config="sst2",
        year=2013,
        domains=["Reviews", "Written"],
        task_subtypes=["Sentiment/Hate speech"],
        citation=SST_CITATION,
    )


SentEvalSST2 = senteval_protocol(SST2Classification)
