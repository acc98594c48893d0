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


def aside_name(path: Path, suffix: str = ".corrupt") -> Path:
    """A free name beside ``path`` to move a damaged file or folder to: ``<name><suffix>``, else
    ``<name><suffix>-1``, ``-2``, ... (an existing one, even a dangling symlink, is never reused)."""
    target = path.with_name(path.name + suffix)
    n = 0
    while target.exists() or target.is_symlink():
        n += 1
        target = path.with_name(f"{path.name}{suffix}-{n}")
    return target
