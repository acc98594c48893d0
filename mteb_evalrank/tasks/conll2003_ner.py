from mteb_evalrank.data.registry import CONLL2003

from ._citations import CONLL2003_CITATION
from ._sequence_labelling import AbsTaskSequenceLabelling, sequence_labelling_metadata


class CoNLL2003NER(AbsTaskSequenceLabelling):
    chunks = True
    dev_split = "validation"
    metadata = sequence_labelling_metadata(
        name="CoNLL2003NER",
        description=(
            "Named-entity recognition of the CoNLL-2003 English shared task (Reuters news; PER, LOC, "
            "ORG, MISC in IOB2) with Chiu et al.'s (2016) window tagger over frozen word vectors: "
            "each lower-cased word form embedded once, five-word windows with a capitalisation "
            "feature, one hidden layer of 300 hard-tanh units, 10 epochs of Adam, greedy decoding; "
            "main score: entity F1 as conlleval computes it, mean over 3 seeds."
        ),
        reference="https://www.clips.uantwerpen.be/conll2003/ner/",
        dataset=CONLL2003.mteb_dataset(),
        main_score="f1",
        date=("1996-08-01", "1997-08-31"),
        domains=["News", "Written"],
        license="not specified",
        annotations_creators="expert-annotated",
        citation=CONLL2003_CITATION,
    )
