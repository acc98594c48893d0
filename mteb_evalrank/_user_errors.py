"""Errors meant for the user, shown as one paragraph instead of a traceback on the command line.

In ``mteb`` / ``mteb-evalrank`` processes (:func:`install_excepthook`): ``user_facing = True``
exceptions, Ctrl-C, a request the offline switch refused (:func:`hub_refusal`) and a ``KeyError``
explained by an earlier line (:func:`show_now`) print one line (status 1);
``MTEB_EVALRANK_TRACEBACK=1`` keeps the traceback.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from types import TracebackType

_EXPLAINED: set[str] = set()
"""Names (of tasks) whose absence an error already shown explains: mteb's ``KeyError`` naming one
ends the process quietly (status 1) instead of with a traceback."""


def show_now(error: BaseException, *, explains: Iterable[str]) -> bool:
    """In a command-line process (:func:`install_excepthook` done): print ``error``'s one line now,
    and let a later ``KeyError`` naming one of ``explains`` end quietly. ``False`` elsewhere."""
    if not getattr(sys.excepthook, "_mteb_evalrank", False):
        return False
    print(f"error: {error}", file=sys.stderr)
    _EXPLAINED.update(explains)
    return True


#: what ``huggingface_hub`` raises when offline mode stops a request or a file is not cached
HUB_OFFLINE_ERRORS = ("OfflineModeIsEnabled", "LocalEntryNotFoundError")


def hub_refusal(error: BaseException) -> str | None:
    """The one paragraph for a Hub offline error (maybe wrapped) the offline switch caused, else ``None``."""
    from ._network import refusal
    from .settings import Settings

    flag = Settings.from_environment().offline  # the top-level error printer: an edge
    seen: BaseException | None = error
    while flag is not None and seen is not None:
        if type(seen).__module__.startswith("huggingface_hub") and type(seen).__name__ in HUB_OFFLINE_ERRORS:
            return refusal(str(seen).split(": offline mode is enabled")[0].splitlines()[0], flag)
        seen = seen.__cause__ or seen.__context__
    return None


def install_excepthook() -> None:
    """Wrap ``sys.excepthook`` once (command-line processes only)."""
    previous = sys.excepthook
    if getattr(previous, "_mteb_evalrank", False):
        return

    def excepthook(kind: type[BaseException], value: BaseException, traceback: TracebackType | None) -> None:
        if os.environ.get("MTEB_EVALRANK_TRACEBACK"):
            previous(kind, value, traceback)
        elif getattr(kind, "user_facing", False):
            print(f"error: {value}", file=sys.stderr)
        elif (refused := hub_refusal(value)) is not None:
            print(f"error: {refused}", file=sys.stderr)
        elif issubclass(kind, KeyboardInterrupt):
            print("interrupted (Ctrl-C)", file=sys.stderr)
        elif not (issubclass(kind, KeyError) and any(repr(name) in str(value) for name in _EXPLAINED)):
            previous(kind, value, traceback)

    # a marker on the function object (mypy does not model attributes set on functions)
    excepthook._mteb_evalrank = True  # type: ignore[attr-defined]
    sys.excepthook = excepthook
