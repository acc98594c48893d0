from mteb_evalrank.data.registry import UD_ENGLISH_EWT

from ._citations import SILVEIRA2014_CITATION
from ._sequence_labelling import AbsTaskSequenceLabelling, sequence_labelling_metadata


class EWTPOSTagging(AbsTaskSequenceLabelling):
    dev_split = "validation"
    metadata = sequence_labelling_metadata(
        name="EWTPOSTagging",
        description=(
            "Part-of-speech tagging of the English Web Treebank (Universal Dependencies English-EWT, "
            "PTB-style XPOS, 49 tags) with Chiu et al.'s (2016) window tagger over frozen word vectors: "
            "each lower-cased word form embedded once, five-word windows with a capitalisation "
            "feature, one hidden layer of 300 hard-tanh units, 10 epochs of Adam; main score: test "
            "token accuracy, mean over 3 seeds. Stands in for the paper's WSJ Penn Treebank, which "
            "is not public; scores are not comparable with the paper's."
        ),
        reference="https://github.com/UniversalDependencies/UD_English-EWT",
        dataset=UD_ENGLISH_EWT.mteb_dataset(),
        main_score="accuracy",
        date=("2005-01-01", "2012-12-31"),
        domains=["Web", "Blog", "Reviews", "Written"],
        license="cc-by-sa-4.0",
        annotations_creators="expert-annotated",
        citation=SILVEIRA2014_CITATION,
    )
