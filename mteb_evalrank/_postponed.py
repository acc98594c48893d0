"""The hand-off between the plugin's list modules and registration, so that imports go one way.

``tasks``, ``models`` and ``suites`` call :func:`finish_postponed` on their last line: a
registration that mteb's import started while one of them executed waits in :data:`pending`.
Module state, not a ``ContextVar``: the thread finishing the list module may not be the one that
imported mteb (docs/architecture.md, module state).
"""

from __future__ import annotations

from collections.abc import Callable

#: set by :mod:`._registration` while a registration waits for a list module to finish executing;
#: called with the name of the module that finishes
pending: Callable[[str], None] | None = None


def finish_postponed(module: str) -> None:
    """Called on the last line of ``mteb_evalrank.tasks``, ``.models`` and ``.suites``
    (``module`` = its ``__name__``): completes a registration that mteb's import postponed."""
    if pending is not None:
        pending(module)
