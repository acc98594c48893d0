"""Start-up hook that registers mteb-evalrank inside the ``mteb`` CLI only.

``mteb_evalrank_hook.pth`` (installed into site-packages) imports this module only when the
running program is the mteb CLI, so other Python processes pay one ``argv`` check and
nothing else. mteb has no plugin entry point, and importing mteb from a ``.pth`` file would
run before the rest of ``sys.path`` is set up, so registration is deferred: a one-shot
meta-path finder waits for ``mteb.cli`` to finish importing, then calls
``mteb_evalrank.register()`` before the CLI parses its arguments. Installing the hook twice
(a venv's ``lib64`` symlink processes the ``.pth`` twice) is a no-op.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import itertools
import sys
from pathlib import PurePath
from types import ModuleType


def is_mteb_cli(argv: list[str] | None = None, orig_argv: list[str] | None = None) -> bool:
    """True when the process is ``mteb ...`` or ``python -m mteb ...``."""
    argv = sys.argv if argv is None else argv
    orig_argv = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    if argv and PurePath(argv[0]).name == "mteb":
        return True
    return any(a == "-m" and b in ("mteb", "mteb.cli") for a, b in itertools.pairwise(orig_argv))


class _RegisterAfterMtebCli(importlib.abc.MetaPathFinder):
    """Wraps the loader of ``mteb.cli`` so that the plugin registers right after it loads."""

    def find_spec(
        self, fullname: str, path: object, target: object = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != "mteb.cli":
            return None
        sys.meta_path.remove(self)  # one shot; find the real spec without us
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)  # type: ignore[arg-type]
        if spec is None or spec.loader is None:
            return spec
        loader = spec.loader
        original_exec = loader.exec_module

        def exec_module(module: ModuleType) -> None:
            original_exec(module)
            import mteb_evalrank  # noqa: F401  (registers on import)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install() -> None:
    """Install the deferred registration once, in the mteb CLI only."""
    if not is_mteb_cli():
        return
    if "mteb_evalrank" in sys.modules:
        return
    if any(isinstance(finder, _RegisterAfterMtebCli) for finder in sys.meta_path):
        return
    sys.meta_path.insert(0, _RegisterAfterMtebCli())


install()
