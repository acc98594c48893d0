"""Start-up hook that registers mteb-evalrank inside the ``mteb`` CLI only.

``mteb_evalrank_hook.pth`` (installed into site-packages) imports this module only when the
command line mentions mteb, so other Python processes pay one cheap ``argv`` scan and nothing
else; :func:`is_mteb_cli` then decides exactly. mteb has no plugin entry point, and importing
mteb from a ``.pth`` file would run before the rest of ``sys.path`` is set up, so
registration is deferred: ``mteb_evalrank`` (a light import: it loads neither mteb nor
torch) installs a one-shot meta-path finder that registers the plugin right after ``mteb``
finishes importing, before the CLI parses its arguments. Any failure there, including a
broken install of the plugin itself, becomes one warning: the mteb CLI always goes on with
its own tasks. Installing the hook twice (a venv's ``lib64`` symlink processes the ``.pth``
twice) is a no-op.
"""

from __future__ import annotations

import sys
import warnings
from pathlib import PurePath

#: what ``python -m`` may name to start mteb's CLI
MTEB_MODULES = ("mteb", "mteb.cli", "mteb.__main__")


#: interpreter options that take the next argument as their value
_OPTIONS_WITH_VALUE = ("-W", "-X", "--check-hash-based-pycs")


def is_mteb_cli(argv: list[str] | None = None, orig_argv: list[str] | None = None) -> bool:
    """True when the process is ``mteb ...`` or ``python [interpreter options] -m mteb ...``."""
    argv = sys.argv if argv is None else argv
    orig_argv = getattr(sys, "orig_argv", []) if orig_argv is None else orig_argv
    if argv and PurePath(argv[0]).name == "mteb":
        return True
    words = iter(orig_argv[1:])
    for word in words:
        if word == "-m":
            return next(words, None) in MTEB_MODULES
        if word.startswith("-m"):  # python -mmteb
            return word[2:] in MTEB_MODULES
        if word in _OPTIONS_WITH_VALUE:
            next(words, None)
        elif not word.startswith("-") or word == "-c":
            return False  # a script or "-c" code: the rest are its own arguments
    return False


def install() -> None:
    """Install the deferred registration once, in the mteb CLI only; never raise."""
    if not is_mteb_cli():
        return
    try:
        import mteb_evalrank  # noqa: F401  (light: installs the deferred registration)
        from mteb_evalrank._network import switch_libraries_offline
        from mteb_evalrank._user_errors import install_excepthook
        from mteb_evalrank.settings import Settings

        install_excepthook()
        switch_libraries_offline(Settings.from_environment())  # before mteb imports huggingface_hub
    except Exception as error:  # a broken plugin must not break mteb
        warnings.warn(
            f"mteb-evalrank could not be loaded; its tasks are not available in mteb "
            f"({type(error).__name__}: {error}). Reinstall it or uninstall it.",
            stacklevel=1,
        )


install()
