"""CoNLL2003NER: Chiu et al.'s named-entity protocol on the CoNLL-2003 English data."""

from __future__ import annotations

from mteb_evalrank.data.registry import CONLL2003
from mteb_evalrank.tasks._metadata import PluginTaskMetadata

from ._citations import CHIU_CITATION, CONLL2003_CITATION, cite
from ._sequence_labelling import AbsTaskSequenceLabelling


class CoNLL2003NER(AbsTaskSequenceLabelling):
    chunks = True
    metadata = PluginTaskMetadata(
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
        type="Classification",
        category="t2c",
        modalities=["text"],
        eval_splits=["test"],
        eval_langs=["eng-Latn"],
        main_score="f1",
        date=("1996-08-01", "1997-08-31"),
        domains=["News", "Written"],
        task_subtypes=[],
        license="not specified",
        annotations_creators="expert-annotated",
        dialect=[],
        sample_creation="found",
        bibtex_citation=cite(CONLL2003_CITATION, CHIU_CITATION),
    )
