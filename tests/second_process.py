"""Run a test's body, or one call, in a second Python process that starts with nothing in memory.

A fault test that runs in the pytest process can pass on what earlier tests left in memory (a
file's hash checked once per process, a loaded dataset, a registered task). Here each call runs
in a fresh process forked from a ``multiprocessing`` fork server, which imported ``mteb`` and
the plugin once per pytest process (a fresh interpreter costs 4-5 s of imports; a fork from the
server about 0.1 s): the child holds no state of any test.

The child gets the caller's environment at the time of the call (``monkeypatch.setenv`` of a
fixture included) and the ``datasets`` cache location (``datasets`` reads it at import, which
the server did before the test chose its cache). Arguments and the result travel by pickle; an
exception raised in the child is raised again in the caller, with the child's traceback as a
note, and the warnings it gave are given again in the caller (so that ``pytest.warns`` around
the call sees them).
"""

from __future__ import annotations

import functools
import multiprocessing
import os
import sys
import traceback
import warnings
from collections.abc import Callable
from multiprocessing.connection import Connection
from typing import Any, TypeVar

import pytest

T = TypeVar("T")
_SERVER = multiprocessing.get_context("forkserver")
_SERVER.set_forkserver_preload(["mteb", "mteb_evalrank", __name__])
#: the environment the server imports under: the test run's (tests/conftest.py), not that of the
#: test that happens to start it (an offline variable set by a test would be read at import)
_SESSION_ENVIRON = dict(os.environ)


class _FreshMonkeyPatch:
    """Stands for a test's ``MonkeyPatch`` argument: a fresh one in the child (a fixture's own
    patches that set variables reach the child through the environment)."""


def _datasets_cache() -> str | None:
    datasets = sys.modules.get("datasets")
    return None if datasets is None else str(datasets.config.HF_DATASETS_CACHE)


def _child(
    connection: Connection,
    function: Callable[..., Any],
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    environ: dict[str, str],
    cache: str | None,
) -> None:
    os.environ.clear()
    os.environ.update(environ)
    if cache is not None:
        import datasets

        datasets.config.HF_DATASETS_CACHE = cache
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            outcome: tuple[bool, Any] = (True, function(*args, **kwargs))
        except pytest.skip.Exception as skipped:  # pytest's outcomes do not pickle
            outcome = (False, ("skip", str(skipped)))
        except BaseException as error:  # an assertion, an error: raised again in the caller
            text = "".join(traceback.format_exception(error))
            outcome = (False, (error, text))
    given = [(w.category, str(w.message), w.filename, w.lineno) for w in caught]
    try:
        connection.send((outcome, given))
    except Exception:  # an exception or a result that does not pickle
        what, text = (outcome[1], "") if outcome[0] else outcome[1]
        unpickled = AssertionError(f"the second process's answer does not pickle: {what!r:.500}")
        connection.send(((False, (unpickled, text)), given))


def _start_server() -> None:
    from multiprocessing import forkserver

    current = dict(os.environ)
    os.environ.clear()
    os.environ.update(_SESSION_ENVIRON)
    try:
        forkserver.ensure_running()
    finally:
        os.environ.clear()
        os.environ.update(current)


def in_a_second_process(function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` in a fresh process (a module-level function: it is pickled by name)."""
    _start_server()
    receiver, sender = _SERVER.Pipe(duplex=False)
    process = _SERVER.Process(
        target=_child, args=(sender, function, args, kwargs, dict(os.environ), _datasets_cache())
    )
    process.start()
    sender.close()
    try:
        (ok, payload), given = receiver.recv()
    except EOFError:
        process.join()
        pytest.fail(f"the second process died without an answer (exit code {process.exitcode})")
    process.join()
    for category, message, filename, lineno in given:  # the child's warnings, given again here
        warnings.warn_explicit(message, category, filename, lineno)
    if ok:
        return payload
    error, text = payload
    if error == "skip":
        pytest.skip(f"in the second process: {text}")
    error.add_note(f"raised in the second process:\n{text}")
    raise error


def under_a_file_size_limit(limit: int, function: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``function(*args, **kwargs)`` where a write past ``limit`` bytes of a file fails with
    ``OSError`` (EFBIG: ``RLIMIT_FSIZE``, ``SIGXFSZ`` ignored; as a full disk, root too): run it
    through :func:`in_a_second_process`, whose process the limit then stays in."""
    import resource
    import signal

    signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, resource.getrlimit(resource.RLIMIT_FSIZE)[1]))
    return function(*args, **kwargs)


def _run_test(module: str, name: str, fixtures: dict[str, Any]) -> None:
    test = getattr(sys.modules.get(module) or __import__(module), name).__wrapped__
    patch = pytest.MonkeyPatch()
    try:
        test(
            **{
                key: patch if isinstance(value, _FreshMonkeyPatch) else value
                for key, value in fixtures.items()
            }
        )
    finally:
        patch.undo()


def second_process(test: Callable[..., None]) -> Callable[..., None]:
    """Decorator: the test's body runs through :func:`in_a_second_process` (its fixtures are made
    in the pytest process and pickled; a ``MonkeyPatch`` is a fresh one in the child)."""

    @functools.wraps(test)
    def run(**fixtures: Any) -> None:
        sent = {
            k: _FreshMonkeyPatch() if isinstance(v, pytest.MonkeyPatch) else v for k, v in fixtures.items()
        }
        in_a_second_process(_run_test, test.__module__, test.__name__, sent)

    return run
