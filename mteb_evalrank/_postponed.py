"""The hand-off between the plugin's list modules and registration, kept in a module of its own so
that imports go one way.

``mteb_evalrank.tasks``, ``.models`` and ``.suites`` hold the lists that
:func:`mteb_evalrank._registration.register` reads, so registration imports them; they must not
import registration back. When mteb's import (which triggers registration) happens while one of
them is still executing, :mod:`._registration` leaves its continuation in :data:`pending`, and each
list module calls :func:`finish_postponed` on its last line.

Why module state and not a :class:`contextvars.ContextVar`: the continuation is left by whichever
thread imports mteb and must be run by whichever thread finishes executing the list module; they
differ when one thread imports ``mteb`` while another is inside ``import mteb_evalrank.tasks``
(Python's import lock makes the second wait for the module, not for the registration). A context
variable would hide the continuation from the finishing thread and the plugin would stay
unregistered. It is no cache: set once while an import is in progress, cleared by the
registration it runs (which is idempotent, so a second call is harmless).
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
