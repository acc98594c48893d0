"""Tagged corpora for the sequence-labelling recipes: one token per line, its fields separated by a tab
(CoNLL-U) or a space (CoNLL), a blank line after each sentence; each family builds config ``default``,
one split per raw file, one row per sentence (``tokens``, ``tags``: lists of the same length)."""

from __future__ import annotations

import re
import zipfile
from collections import Counter
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

from datasets import Dataset, DatasetDict, Features, Value
from datasets import Sequence as SequenceFeature

from .layout import BuiltDataset
from .sources import SourceFormatError, invalid_utf8

TAGGED_FEATURES = Features(
    {"tokens": SequenceFeature(Value("string")), "tags": SequenceFeature(Value("string"))}
)
#: A chunk or entity tag in the IOB notation: ``O``, or ``B-`` / ``I-`` and a type.
IOB_TAG = re.compile(r"O|[BI]-[A-Za-z]+")

Block = list[tuple[int, str]]
"""The lines of one sentence: ``(line number, line)``, line ends stripped."""
Sentence = tuple[list[str], list[str]]
"""``(tokens, tags)`` of one sentence."""


def split_blocks(lines: Iterable[str]) -> Iterator[Block]:
    """The runs of non-blank lines of ``lines`` (numbered from 1), split at blank lines."""
    block: Block = []
    for line_no, raw in enumerate(lines, start=1):
        line = raw.rstrip("\r\n")
        if line.strip():
            block.append((line_no, line))
        elif block:
            yield block
            block = []
    if block:
        yield block


def read_blocks(path: Path, member: str | None = None) -> tuple[Path, list[Block]]:
    """The sentences of a UTF-8 file (or of the zip ``path``'s ``member``; a :class:`SourceFormatError`
    if none), and the path to name in errors (``<zip>/<member>`` for a member)."""
    if member is None:
        where = path
        try:
            text = path.read_text(encoding="utf-8-sig")
        except UnicodeDecodeError as error:
            raise invalid_utf8(path, error) from None
    else:
        where = path / member
        with zipfile.ZipFile(path) as archive:
            try:
                data = archive.read(member)
            except KeyError:
                raise SourceFormatError(path, None, f"the archive holds no member {member!r}") from None
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise SourceFormatError(where, None, f"not valid UTF-8 ({error.reason})") from None
    blocks = list(split_blocks(text.splitlines()))
    if not blocks:
        raise SourceFormatError(where, None, "the file holds no sentence")
    return where, blocks


def column_fields(where: Path, line_no: int, line: str, n_fields: int, separator: str) -> list[str]:
    """``line`` split on ``separator`` into exactly ``n_fields`` non-empty fields (else an error)."""
    fields = line.split(separator)
    if len(fields) != n_fields or not all(field.strip() for field in fields):
        shown = "tab" if separator == "\t" else "space"
        raise SourceFormatError(
            where, line_no, f"expected {n_fields} non-empty {shown}-separated fields, got {line!r}"
        )
    return fields


def check_iob(where: Path, line_no: int, tag: str) -> str:
    """``tag`` if it is an IOB chunk tag (:data:`IOB_TAG`), else an error naming the line."""
    if not IOB_TAG.fullmatch(tag):
        raise SourceFormatError(where, line_no, f"{tag!r} is not a chunk tag (O, B-TYPE or I-TYPE)")
    return tag


def tagged_build(splits: Mapping[str, Sequence[Sentence]]) -> BuiltDataset:
    """Config ``default`` with the given splits, one row per sentence (:data:`TAGGED_FEATURES`), and
    each split's build statistics: sentences, tokens, distinct lower-cased forms, tag counts."""
    data, stats = DatasetDict(), dict[str, Any]()
    for split, sentences in splits.items():
        tokens = [sentence_tokens for sentence_tokens, _ in sentences]
        tags = [sentence_tags for _, sentence_tags in sentences]
        data[split] = Dataset.from_dict({"tokens": tokens, "tags": tags}, features=TAGGED_FEATURES)
        stats[split] = {
            "n_sentences": len(sentences),
            "n_tokens": sum(map(len, tokens)),
            "n_lowercased_forms": len({token.lower() for sentence in tokens for token in sentence}),
            "tags": dict(sorted(Counter(tag for sentence in tags for tag in sentence).items())),
        }
    return BuiltDataset({"default": data}, stats)
