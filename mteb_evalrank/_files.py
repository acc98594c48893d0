"""File helpers shared by the layers (a leaf module: standard library and ``filelock``).

Every rename of the package is here (files: :func:`replacing`; folders: :func:`publishing`), and
every lock across processes is ``filelock``'s; ``tests/test_architecture.py`` checks it.
"""

from __future__ import annotations

import glob
import hashlib
import json
import secrets
import shutil
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from filelock import FileLock

CORRUPT_SUFFIX = ".corrupt"
"""Appended to the name of a damaged file or folder moved aside (:func:`aside_name`)."""


def sha256_file(path: Path) -> str:
    """Hex SHA-256 of a file's bytes."""
    with path.open("rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def read_json_object(path: Path) -> dict[str, Any] | None:
    """The JSON object in ``path``; ``None`` if it is missing, unreadable, not JSON or not an object."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):  # UnicodeDecodeError and JSONDecodeError are ValueErrors
        return None
    return data if isinstance(data, dict) else None


def aside_name(path: Path, suffix: str = CORRUPT_SUFFIX) -> Path:
    """A free name beside ``path`` to move a damaged file or folder to: ``<name><suffix>``, else
    ``<name><suffix>-1``, ``-2``, ... (an existing one, even a dangling symlink, is never reused)."""
    target = path.with_name(path.name + suffix)
    n = 0
    while target.exists() or target.is_symlink():
        n += 1
        target = path.with_name(f"{path.name}{suffix}-{n}")
    return target


def move_aside(path: Path, suffix: str = CORRUPT_SUFFIX) -> Path:
    """Rename ``path`` to a free name beside it (:func:`aside_name`); returns that name."""
    target = aside_name(path, suffix)
    path.rename(target)
    return target


def folder_lock(target: Path) -> FileLock:
    """The lock of ``target`` (the file ``.<name>.lock`` beside it), held by whoever writes or
    repairs ``target``; one object per path in a process, so a holder may take it again."""
    target.parent.mkdir(parents=True, exist_ok=True)
    return FileLock(target.with_name(f".{target.name}.lock"), is_singleton=True)


def file_lock(path: Path) -> FileLock:
    """The exclusive lock held on the file ``path`` (created, never read), across processes and
    threads; one object per path in a process, so a holder may take it again."""
    return FileLock(path, is_singleton=True)


def renew(
    target: Path, check: Callable[[], list[str] | None], write: Callable[[Path | None], bool]
) -> tuple[list[str], Path | None, bool] | None:
    """Under ``target``'s lock (:func:`folder_lock`), look again: ``check()`` is ``None`` if ``target``
    is current (another process renewed it while this one waited): returns ``None``. Else it lists
    ``target``'s damaged files (``[]``: missing or outdated, nothing damaged); a damaged ``target`` is
    kept under a free ``*.corrupt`` name (:func:`aside_name`; never deleted). ``write(aside)``
    publishes a new ``target`` (with :func:`publishing`'s ``displaced=aside``: a reader never finds
    it missing) and returns ``True``, or returns ``False`` (nothing to write from): a damaged
    ``target`` is then renamed aside. Returns ``(damaged files, aside, written)``."""
    with folder_lock(target):
        if (problems := check()) is None:
            return None
        aside = aside_name(target) if problems else None
        if not (written := write(aside)) and aside is not None:
            target.rename(aside)
    return problems, aside, written


def publish_files(
    targets: list[Path], write: Callable[[dict[Path, Path]], None], *, current: Callable[[Path], bool]
) -> list[Path]:
    """Under the lock of ``targets[0]`` (:func:`folder_lock`), after removing what writers killed midway
    left beside each target (:func:`remove_leftovers`): ``write({target: sibling})`` writes the targets
    that are not ``current`` (another process may have written them while this one waited), each into a
    new temporary sibling (:func:`replacing`; scratch files named ``<sibling>.<anything>.tmp`` are
    leftovers too), renamed into place once ``write`` returns. Returns the targets written."""
    with folder_lock(targets[0]):
        for target in targets:
            remove_leftovers(target)
        if todo := [target for target in targets if not current(target)]:
            with ExitStack() as stack:
                write({target: stack.enter_context(replacing(target)) for target in todo})
    return todo


def remove_leftovers(target: Path) -> None:
    """Remove the ``.<name>.*.tmp`` files and folders beside ``target`` that a writer of ``target``
    killed midway left (:func:`replacing`, :func:`publishing`); call it holding ``target``'s lock
    (:func:`folder_lock`), so that no live writer's is among them."""
    for leftover in target.parent.glob(f".{glob.escape(target.name)}.*.tmp"):
        if leftover.is_dir() and not leftover.is_symlink():
            shutil.rmtree(leftover, ignore_errors=True)
        else:
            leftover.unlink(missing_ok=True)


def move_into_place(source: Path, target: Path) -> None:
    """Move the finished file ``source`` to ``target`` (one filesystem) with ``os.replace``: a reader
    sees the former ``target`` or ``source``'s bytes, never a half file."""
    target.parent.mkdir(parents=True, exist_ok=True)
    source.replace(target)


def write_text(target: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``target`` atomically (:func:`replacing`)."""
    with replacing(target) as staged:
        staged.write_text(text, encoding="utf-8")


def save_figure(fig: Any, target: Path, **options: Any) -> None:
    """``fig.savefig(..., **options)`` (matplotlib) to ``target`` atomically (:func:`replacing`), in
    the format its suffix names."""
    with replacing(target) as staged:
        fig.savefig(staged, format=target.suffix.removeprefix("."), **options)


@contextmanager
def replacing(target: Path) -> Iterator[Path]:
    """Write a file through a new temporary sibling of ``target`` (yielded), then ``os.replace`` it.

    Readers see the former ``target`` or the new one whole, never a truncated or half-written file
    (``os.replace`` is atomic within a folder on POSIX); two writers at once leave one of the two
    files whole (the last to finish). An error in the block (Ctrl-C too) removes the sibling
    ``.<name>.<random>.tmp`` and leaves ``target`` as it was.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    staged = target.with_name(f".{target.name}.{secrets.token_hex(8)}.tmp")
    try:
        yield staged
        staged.replace(target)  # os.replace
    except BaseException:
        staged.unlink(missing_ok=True)
        raise


@contextmanager
def publishing(target: Path, *, displaced: Path | None = None) -> Iterator[Path]:
    """Build a folder in a new temporary sibling of ``target`` (yielded), then rename it into place.

    Readers see the former ``target`` or the new one whole, never a half build: the sibling
    ``.<name>.<random>.tmp`` is renamed to ``target`` once the block ends without an error. A
    former ``target`` is first renamed to ``displaced`` (kept: a damaged copy moved aside) or to
    a temporary sibling removed afterwards. An error in the block (Ctrl-C too) removes the
    sibling and leaves ``target`` as it was. The caller holds ``target``'s lock
    (:func:`folder_lock`): the leftovers of a publisher killed midway (``.<name>.*.tmp``) are
    removed first.
    """
    target.parent.mkdir(parents=True, exist_ok=True)
    remove_leftovers(target)
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
