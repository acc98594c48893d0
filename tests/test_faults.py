"""Issue 26's fault matrix for the files a user or a recipe hands the plugin (``docs/faults.md``).

Every case writes the damaged file for real and runs the plugin's own reader on it: raw source
files (``data/sources.py``, a dataset recipe), the triplet JSON-lines file. The embedding-cache
rows are in ``test_embedding_cache.py``.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from mteb_evalrank.data.registry import EVALRANK_WORD
from mteb_evalrank.data.sources import SourceFormatError, read_items, read_lines, read_pairs
from mteb_evalrank.tasks._triplet import read_triplet_jsonl

TRIPLETS = [
    {"anchor": "a cat sat", "positive": "a cat was sitting", "negative": "a dog sat"},
    {"anchor": "café au lait", "positive": "coffee with milk", "negatives": ["tea", "milk"]},
]


def _jsonl(rows: list[dict[str, object]]) -> list[str]:
    return [json.dumps(row, ensure_ascii=False) for row in rows]


def _write(path: Path, lines: list[str], *, bom: bool = False, newline: str = "\n") -> Path:
    text = newline.join(lines) + newline
    path.write_bytes((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return path


def _latin1_line(path: Path, line_no: int) -> tuple[int, int]:
    """Re-encode line ``line_no`` (1-based) of a UTF-8 file in Latin-1, as an editor set to
    Latin-1 would: return the column and byte offset of its first non-ASCII byte."""
    lines = path.read_bytes().split(b"\n")
    text = lines[line_no - 1].decode("utf-8")
    column = next(i for i, char in enumerate(text) if ord(char) > 127)
    lines[line_no - 1] = text.encode("latin-1")
    path.write_bytes(b"\n".join(lines))
    offset = sum(len(line) + 1 for line in lines[: line_no - 1]) + len(text[:column].encode("utf-8"))
    return column + 1, offset


# ----------------------------------------------------------------------------- invalid UTF-8
def test_invalid_utf8_in_a_triplet_file_names_file_line_column_and_the_fix(tmp_path: Path) -> None:
    """The issue's case: a bare ``UnicodeDecodeError ... position 14`` before; now file:line."""
    path = _write(tmp_path / "triplets.jsonl", ["", *_jsonl(TRIPLETS)])
    column, offset = _latin1_line(path, 3)
    expected = (
        rf"triplets\.jsonl:3: invalid UTF-8 byte 0xe9 at column {column} \(byte offset {offset}\); "
        r"the file must be UTF-8: save it as UTF-8"
    )
    with pytest.raises(SourceFormatError, match=expected):
        read_triplet_jsonl(path)


def test_invalid_utf8_in_a_raw_pair_file_names_file_and_line(tmp_path: Path) -> None:
    path = _write(tmp_path / "pairs.txt", ["cat\tdog", "", "naïve\tinnocent"])
    column, offset = _latin1_line(path, 3)
    assert (column, offset) == (3, 11)  # "cat\tdog\n" + "\n" + "na"
    with pytest.raises(
        SourceFormatError, match=r"pairs\.txt:3: invalid UTF-8 byte 0xef at column 3 \(byte offset 11\)"
    ):
        read_pairs(path)


def test_a_recipe_stops_at_a_raw_file_that_is_not_utf8(source: Path, tmp_path: Path) -> None:
    """The EvalRank word recipe on the real raw files, one of them with a Latin-1 line: the
    build stops with file:line (nothing is installed: the recipe is a pure function)."""
    recipe = EVALRANK_WORD.recipe()
    for relative in recipe.SOURCES:
        (tmp_path / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / relative, tmp_path / relative)
    damaged = tmp_path / recipe.WIKI_VOCAB
    lines = damaged.read_text(encoding="utf-8").split("\n")
    lines[41] = "résumé"  # line 42
    damaged.write_text("\n".join(lines), encoding="utf-8")
    column, _ = _latin1_line(damaged, 42)
    with pytest.raises(
        SourceFormatError, match=rf"wiki_vocab\.txt:42: invalid UTF-8 byte 0xe9 at column {column} "
    ):
        recipe.build(tmp_path)


# ------------------------------------------------------------ accepted: BOM, CRLF, blank lines
@pytest.mark.parametrize(("bom", "newline"), [(True, "\n"), (False, "\r\n"), (True, "\r\n")])
def test_bom_crlf_and_blank_lines_read_as_the_plain_file(tmp_path: Path, bom: bool, newline: str) -> None:
    plain_lines = _jsonl(TRIPLETS)
    plain = read_triplet_jsonl(_write(tmp_path / "plain.jsonl", plain_lines))
    variant = _write(
        tmp_path / "variant.jsonl", ["", plain_lines[0], "  ", plain_lines[1], ""], bom=bom, newline=newline
    )
    assert read_triplet_jsonl(variant).to_dict() == plain.to_dict()
    pairs = _write(tmp_path / "pairs.txt", ["cat\tdog", "", "naïve\tinnocent"], bom=bom, newline=newline)
    assert read_pairs(pairs) == [("cat", "dog"), ("naïve", "innocent")]
    assert [n for n, _ in read_lines(pairs)] == [1, 3]  # line numbers count the blank lines
    items = _write(tmp_path / "items.txt", ["cat", "", "dog"], bom=bom, newline=newline)
    assert read_items(items) == ["cat", "dog"]


# ----------------------------------------------------------------- repeated rows, empty files
def test_a_repeated_triplet_is_kept_and_scored_as_often_as_it_occurs(tmp_path: Path) -> None:
    lines = _jsonl(TRIPLETS[:1])
    data = read_triplet_jsonl(_write(tmp_path / "twice.jsonl", lines * 2))
    assert data["anchor"] == ["a cat sat", "a cat sat"]


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf\r\n"])
def test_an_empty_triplet_or_pair_file_is_named(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "empty.jsonl").write_bytes(content)
    with pytest.raises(ValueError, match=r"empty\.jsonl: the file holds no triplets"):
        read_triplet_jsonl(tmp_path / "empty.jsonl")
    (tmp_path / "empty.txt").write_bytes(content)
    with pytest.raises(SourceFormatError, match=r"empty\.txt: the file holds no pairs"):
        read_pairs(tmp_path / "empty.txt")


def test_the_error_message_is_one_line_without_a_traceback_chain(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", _jsonl(TRIPLETS))
    _latin1_line(path, 2)
    with pytest.raises(SourceFormatError) as caught:
        read_triplet_jsonl(path)
    assert caught.value.__cause__ is None and caught.value.__suppress_context__
    assert re.fullmatch(r"\S+t\.jsonl:2: [^\n]+", str(caught.value))
