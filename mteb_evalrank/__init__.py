"""mteb-evalrank: EvalRank and related intrinsic evaluations as MTEB tasks.

``mteb_evalrank.register()`` makes the plugin's tasks (``EvalRankWord``, ``EvalRankSent``,
...), benchmarks (``EvalRank``, ...) and models (``evalrank/...``) visible to
``mteb.get_task`` / ``mteb.get_benchmark`` / ``mteb.get_model`` and ``mteb.evaluate``; it is
idempotent. Importing the package also registers, as soon as mteb is imported, turning any
failure into a warning; importing a submodule that needs neither (e.g.
``mteb_evalrank.evaluation.ranking``) imports neither mteb nor torch.

``mteb_evalrank.evalrank_task_from_files(pairs, background, name)`` makes an EvalRank task of
your own positive pairs and background (imports mteb on first use; see
:mod:`mteb_evalrank.tasks._evalrank_files`).
"""

from typing import TYPE_CHECKING, Any

from ._registration import RegistrationError, RegistrationWarning, register, register_when_mteb_is_imported

if TYPE_CHECKING:
    from .tasks._evalrank_files import evalrank_task_from_files

__version__ = "0.1.0"

register_when_mteb_is_imported()


def __getattr__(name: str) -> Any:
    """``evalrank_task_from_files``, imported on first use (it needs mteb; the package does not)."""
    if name == "evalrank_task_from_files":
        from .tasks._evalrank_files import evalrank_task_from_files

        return evalrank_task_from_files
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["RegistrationError", "RegistrationWarning", "__version__", "evalrank_task_from_files", "register"]
