"""Recipe: CoNLL-2000 chunking (Tjong Kim Sang and Buchholz, 2000), words and IOB chunk tags.

A pure function of its source, ``conll2000/conll2000.zip`` (NLTK's data package, the
repository ``nltk/nltk_data`` at commit ``5db857e``, ``packages/corpora/conll2000.zip``),
read in place: its members ``conll2000/train.txt`` (WSJ sections 15-18) and
``conll2000/test.txt`` (section 20).

Source format: one token per line, ``word POS chunk`` separated by single spaces; a blank line
ends a sentence; chunk tags in IOB2 (``B-NP``, ``I-NP``, ``O``). Rows: the words as written and
their chunk tags (the gold POS column is not used: the tagger sees words only). Any other line
shape or tag raises ``SourceFormatError`` naming the member and line. Counts: train 8,936
sentences / 211,727 tokens, test 2,012 / 47,377 (Chiu et al., 2016, Table 3).
"""

from __future__ import annotations

from pathlib import Path

from mteb_evalrank.data.layout import BuiltDataset
from mteb_evalrank.data.sources import require_file
from mteb_evalrank.data.tagged import (
    Block,
    Sentence,
    check_iob,
    column_fields,
    read_blocks,
    tagged_build,
)

ARCHIVE = "conll2000/conll2000.zip"
SOURCES = (ARCHIVE,)
MEMBERS = {"train": "conll2000/train.txt", "test": "conll2000/test.txt"}
LICENSE_TEXT = """CoNLL-2000 chunking data (Tjong Kim Sang and Buchholz, 2000)

Derived by the shared task's organisers from sections 15-18 and 20 of the Wall Street Journal
part of the Penn Treebank (Marcus et al., 1993) and distributed by them for research; this copy
is NLTK's data package (nltk/nltk_data at commit 5db857e6f7df11eabb5e5665836db9ec8df07e28,
packages/corpora/conll2000.zip), which states no other licence. The underlying WSJ text is
licensed by the Linguistic Data Consortium: use the data for research only.
"""


def read_sentence(where: Path, block: Block) -> Sentence:
    """``(words, chunk tags)`` of one sentence."""
    rows = [column_fields(where, line_no, line, 3, " ") for line_no, line in block]
    tags = [check_iob(where, line_no, fields[2]) for (line_no, _), fields in zip(block, rows, strict=True)]
    return [fields[0] for fields in rows], tags


def build(source: Path) -> BuiltDataset:
    """The config ``default``: splits ``train`` and ``test``, one row per sentence."""
    archive = require_file(source, ARCHIVE)
    splits: dict[str, list[Sentence]] = {}
    for split, member in MEMBERS.items():
        where, blocks = read_blocks(archive, member)
        splits[split] = [read_sentence(where, block) for block in blocks]
    return tagged_build(splits)
