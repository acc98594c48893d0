"""mteb-evalrank: EvalRank and related intrinsic evaluations as MTEB tasks.

Importing the package registers its tasks (``EvalRankWord``, ``EvalRankSent``), benchmarks
(``EvalRank``) and models (``evalrank/glove.6B.50d``) with mteb, so ``mteb.get_task`` /
``mteb.get_benchmark`` / ``mteb.get_model`` and ``mteb.evaluate`` find them.
"""

from ._registry import RegistrationError, register

__version__ = "0.1.0"

register()

__all__ = ["RegistrationError", "__version__", "register"]
