from mteb_evalrank.data.registry import CONLL2000

from ._citations import CONLL2000_CITATION
from ._sequence_labelling import AbsTaskSequenceLabelling, sequence_labelling_metadata


class CoNLL2000Chunking(AbsTaskSequenceLabelling):
    chunks = True
    metadata = sequence_labelling_metadata(
        name="CoNLL2000Chunking",
        description=(
            "Text chunking of the CoNLL-2000 shared task (WSJ sections 15-18 / 20, IOB2 chunk tags) "
            "with Chiu et al.'s (2016) window tagger over frozen word vectors: each lower-cased word "
            "form embedded once, five-word windows with a capitalisation feature, one hidden layer "
            "of 300 hard-tanh units, 10 epochs of Adam, greedy decoding; main score: chunk F1 as "
            "conlleval computes it, mean over 3 seeds."
        ),
        reference="https://www.clips.uantwerpen.be/conll2000/chunking/",
        dataset=CONLL2000.mteb_dataset(),
        main_score="f1",
        date=("1989-01-01", "1989-12-31"),
        domains=["News", "Written"],
        license="not specified",
        annotations_creators="derived",
        citation=CONLL2000_CITATION,
    )
