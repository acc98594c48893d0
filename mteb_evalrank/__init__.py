"""mteb-evalrank: EvalRank and related intrinsic evaluations as MTEB tasks.

``mteb_evalrank.register()`` makes the plugin's tasks (``EvalRankWord``, ``EvalRankSent``,
...), benchmarks (``EvalRank``, ...) and models (``evalrank/...``) visible to
``mteb.get_task`` / ``mteb.get_benchmark`` / ``mteb.get_model`` and ``mteb.evaluate``; it is
idempotent. Importing the package also registers, as soon as mteb is imported, turning any
failure into a warning; importing a submodule that needs neither (e.g.
``mteb_evalrank.evaluation.ranking``) imports neither mteb nor torch.
"""

from ._registration import RegistrationError, RegistrationWarning, register, register_when_mteb_is_imported

__version__ = "0.1.0"

register_when_mteb_is_imported()

__all__ = ["RegistrationError", "RegistrationWarning", "__version__", "register"]
