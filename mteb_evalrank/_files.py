"""File helpers shared by the layers (a leaf module: standard library only)."""

from __future__ import annotations

import hashlib
import secrets
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

CORRUPT_SUFFIX = ".corrupt"
"""Appended to the name of a damaged file or folder moved aside (:func:`aside_name`)."""


def sha256_file(path: Path, chunk: int = 1 << 22) -> str:
    """Hex SHA-256 of a file's bytes, read in blocks of ``chunk`` bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while block := handle.read(chunk):
            digest.update(block)
    return digest.hexdigest()


def aside_name(path: Path, suffix: str = CORRUPT_SUFFIX) -> Path:
    """A free name beside ``path`` to move a damaged file or folder to: ``<name><suffix>``, else
    ``<name><suffix>-1``, ``-2``, ... (an existing one, even a dangling symlink, is never reused)."""
    target = path.with_name(path.name + suffix)
    n = 0
    while target.exists() or target.is_symlink():
        n += 1
        target = path.with_name(f"{path.name}{suffix}-{n}")
    return target


def lock_path(target: Path) -> Path:
    """``.<name>.lock`` beside ``target``: the file locked by whoever writes or repairs ``target``."""
    return target.with_name(f".{target.name}.lock")


@contextmanager
def publishing(target: Path, *, displaced: Path | None = None) -> Iterator[Path]:
    """Build a folder in a new temporary sibling of ``target`` (yielded), then rename it into place.

    Readers see the former ``target`` or the new one whole, never a half build: the sibling
    ``.<name>.<random>.tmp`` is renamed to ``target`` once the block ends without an error. A
    former ``target`` is first renamed to ``displaced`` (kept: a damaged copy moved aside) or to
    a temporary sibling removed afterwards. An error in the block (Ctrl-C too) removes the
    sibling and leaves ``target`` as it was. The caller holds ``target``'s lock
    (:func:`lock_path`): the leftovers of a publisher killed midway (``.<name>.*.tmp``) are
    removed first.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    for leftover in target.parent.glob(f".{target.name}.*.tmp"):
        shutil.rmtree(leftover, ignore_errors=True)
    build = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
    old = displaced or build.with_name(f"{build.name[:-4]}.old.tmp")
    build.mkdir()
    moved = False
    try:
        yield build
        if target.exists() or target.is_symlink():
            target.rename(old)
            moved = True
        build.rename(target)
    except BaseException:
        if moved and not target.exists():
            old.rename(target)
        shutil.rmtree(build, ignore_errors=True)
        raise
    if moved and displaced is None:
        shutil.rmtree(old, ignore_errors=True)
