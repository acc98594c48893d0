"""Errors meant for the user, shown as one paragraph instead of a traceback on the command line.

An exception class with ``user_facing = True`` (e.g.
:class:`mteb_evalrank.data.ready.DatasetNotAvailableError`) already says what is wrong and
what to run; in the ``mteb`` and ``mteb-evalrank`` command-line processes
:func:`install_excepthook` prints just that message (exit status 1). Other exceptions keep
Python's traceback; ``MTEB_EVALRANK_TRACEBACK=1`` keeps it for these too.
"""

from __future__ import annotations

import os
import sys
from types import TracebackType


def install_excepthook() -> None:
    """Wrap ``sys.excepthook`` once (command-line processes only)."""
    previous = sys.excepthook
    if getattr(previous, "_mteb_evalrank", False):
        return

    def excepthook(kind: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
        if getattr(kind, "user_facing", False) and not os.environ.get("MTEB_EVALRANK_TRACEBACK"):
            print(f"error: {value}", file=sys.stderr)
            return
        previous(kind, value, traceback)

    # a marker on the function object (mypy does not model attributes set on functions)
    excepthook._mteb_evalrank = True  # type: ignore[attr-defined]
    sys.excepthook = excepthook
