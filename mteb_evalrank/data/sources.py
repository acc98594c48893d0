"""Readers for the raw source files, with errors that name the file and line."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path


class SourceFormatError(ValueError):
    """A raw source file does not have the expected format."""

    def __init__(self, path: Path, line_no: int | None, problem: str) -> None:
        where = f"{path}:{line_no}" if line_no is not None else str(path)
        super().__init__(f"{where}: {problem}")
        self.path = path
        self.line_no = line_no


def require_file(root: Path, relative: str) -> Path:
    """``root / relative``, or a clear error telling what is missing and where."""
    path = root / relative
    if not path.is_file():
        raise FileNotFoundError(
            f"missing source file {path}: pass --source pointing at the folder that holds "
            f"the raw data (it should contain {relative!r})."
        )
    return path


def read_lines(path: Path) -> Iterator[tuple[int, str]]:
    """``(line_no, line)`` for the non-blank lines of a UTF-8 file, line ends stripped."""
    with path.open(encoding="utf-8", newline="") as handle:
        for line_no, raw in enumerate(handle, start=1):
            line = raw.rstrip("\r\n")
            if line.strip():
                yield line_no, line


def read_items(path: Path) -> list[str]:
    """One item per non-blank line (surrounding whitespace stripped)."""
    return [line.strip() for _, line in read_lines(path)]


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
    seen: dict[str, None] = {}
    for sequence in sequences:
        for item in sequence:
            seen.setdefault(item, None)
    return list(seen)
