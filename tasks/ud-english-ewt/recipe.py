"""Recipe: Universal Dependencies English-EWT, words and their PTB-style tags (XPOS), for POS tagging.

A pure function of its sources, ``ud-english-ewt/en_ewt-ud-{train,dev,test}.conllu`` (the
repository ``UniversalDependencies/UD_English-EWT`` at commit ``15d613d``, files at its root).

Source format (CoNLL-U): comment lines start with ``#``; every other non-blank line has ten
tab-separated fields (ID, FORM, LEMMA, UPOS, XPOS, ...); a blank line ends a sentence. A
multiword token (ID ``n-m``, e.g. ``don't``) is a line of its own followed by its words
(``do``, ``n't``), and an empty node of the enhanced graph has a decimal ID (``8.1``).

Rows: the syntactic words (integer IDs) of each sentence, FORM as written and XPOS (column 5,
the Penn Treebank tag set); multiword-token lines and empty nodes are left out (they carry no
XPOS), which gives the release's word counts (train 204,577, test 25,094). A line of another
shape, or a word without an XPOS (``_``), raises ``SourceFormatError`` naming ``file:line``.
The development file gives the split ``validation`` (25,147 words): Chiu et al.'s protocol selects
nothing on it; the task's dev-selected variant picks its epoch there (docs/sequence_labelling.md).
"""

from __future__ import annotations

from pathlib import Path

from mteb_evalrank.data.layout import BuiltDataset
from mteb_evalrank.data.sources import SourceFormatError, require_file
from mteb_evalrank.data.tagged import Block, Sentence, column_fields, read_blocks, tagged_build

FOLDER = "ud-english-ewt"
SPLITS = {
    "train": f"{FOLDER}/en_ewt-ud-train.conllu",
    "validation": f"{FOLDER}/en_ewt-ud-dev.conllu",
    "test": f"{FOLDER}/en_ewt-ud-test.conllu",
}
LICENSE_FILE = f"{FOLDER}/LICENSE.txt"
SOURCES = (*SPLITS.values(), LICENSE_FILE)


def read_sentence(where: Path, block: Block) -> Sentence | None:
    """``(words, XPOS tags)`` of one CoNLL-U sentence (``None`` for a block of comments only)."""
    tokens, tags = [], []
    for line_no, line in block:
        if line.startswith("#"):
            continue
        fields = column_fields(where, line_no, line, 10, "\t")
        if "-" in fields[0] or "." in fields[0]:
            continue  # a multiword token or an empty node: not a word of the sentence
        if fields[4] == "_":
            raise SourceFormatError(where, line_no, f"the word {fields[1]!r} has no XPOS tag")
        tokens.append(fields[1])
        tags.append(fields[4])
    return (tokens, tags) if tokens else None


def build(source: Path) -> BuiltDataset:
    """The config ``default``: splits ``train``, ``validation`` (the release's ``dev``) and ``test``, one row
    per sentence."""
    splits: dict[str, list[Sentence]] = {}
    for split, name in SPLITS.items():
        where, blocks = read_blocks(require_file(source, name))
        splits[split] = [s for block in blocks if (s := read_sentence(where, block)) is not None]
    return tagged_build(splits)
