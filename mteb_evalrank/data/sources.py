"""Readers for the raw source files, with errors that name the file and line.

Text files are UTF-8: a UTF-8 byte-order mark is dropped, ``\r\n`` line ends are accepted,
blank lines are skipped; an invalid UTF-8 byte is a :class:`SourceFormatError` naming
``file:line``, the column and the byte offset (:func:`invalid_utf8`). Repeated lines are
kept: the readers return what the file holds, and each recipe says what it does with them.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from itertools import chain
from pathlib import Path


class SourceFormatError(ValueError):
    """A raw source file does not have the expected format (the message names ``file:line``)."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)

    def __init__(self, path: Path, line_no: int | None, problem: str) -> None:
        where = f"{path}:{line_no}" if line_no is not None else str(path)
        super().__init__(f"{where}: {problem}")


def require_file(root: Path, relative: str) -> Path:
    """``root / relative``, or a clear error telling what is missing and where."""
    path = root / relative
    if not path.is_file():
        raise FileNotFoundError(
            f"missing source file {path}: pass --source pointing at the folder that holds "
            f"the raw data (it should contain {relative!r})."
        )
    return path


def invalid_utf8(path: Path, error: UnicodeDecodeError | None = None) -> SourceFormatError:
    """The error for a file that is not UTF-8: its first invalid byte's line, column and offset (a
    ``\n`` byte is never inside a UTF-8 sequence); ``error``, the decoder's, if no line fails."""
    advice = "the file must be UTF-8: save it as UTF-8 (e.g. iconv -f latin1 -t utf-8)"
    offset = 0
    with path.open("rb") as handle:
        for line_no, raw in enumerate(handle, start=1):
            try:
                raw.decode("utf-8")
            except UnicodeDecodeError as bad:
                column = len(raw[: bad.start].decode("utf-8")) + 1
                byte = raw[bad.start]
                return SourceFormatError(
                    path,
                    line_no,
                    f"invalid UTF-8 byte 0x{byte:02x} at column {column} (byte offset {offset + bad.start}); "
                    + advice,
                )
            offset += len(raw)
    reason = f" ({error.reason})" if error is not None else ""
    return SourceFormatError(path, None, f"not valid UTF-8{reason}; {advice}")


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_no, line)`` for the non-blank lines of a UTF-8 file, line ends stripped (module docstring)."""
    try:
        with path.open(encoding="utf-8-sig", newline="") as handle:
            for line_no, raw in enumerate(handle, start=1):
                line = raw.rstrip("\r\n")
                if line.strip():
                    yield line_no, line
    except UnicodeDecodeError as error:
        raise invalid_utf8(path, error) from None


def read_items(path: Path, what: str | None = None) -> list[str]:
    """One item per non-blank line, stripped, repeats kept; with ``what`` (e.g. ``"words"``) an empty
    file is a :class:`SourceFormatError` saying it holds no ``what``."""
    items = [line.strip() for _, line in read_lines(path)]
    if what is not None and not items:
        raise SourceFormatError(path, None, f"the file holds no {what} (it is empty or blank)")
    return items


def read_pairs(path: Path) -> list[tuple[str, str]]:
    """Tab-separated ``left<TAB>right`` lines; any other shape is an error naming the line."""
    pairs = []
    for line_no, line in read_lines(path):
        fields = line.split("\t")
        if len(fields) != 2 or not fields[0].strip() or not fields[1].strip():
            raise SourceFormatError(
                path, line_no, f"expected 'left<TAB>right' with two non-empty fields, got {line!r}"
            )
        pairs.append((fields[0].strip(), fields[1].strip()))
    if not pairs:
        raise SourceFormatError(path, None, "the file holds no pairs")
    return pairs


def unique_in_order(*sequences: Iterable[str]) -> list[str]:
    """The items of all sequences, first occurrence kept, in order."""
    return list(dict.fromkeys(chain(*sequences)))
