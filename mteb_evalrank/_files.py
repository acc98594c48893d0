"""File helpers shared by the layers (a leaf module: standard library only)."""

from __future__ import annotations

import hashlib
from pathlib import Path


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex SHA-256 of a file's bytes, read in blocks of ``chunk`` bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()
