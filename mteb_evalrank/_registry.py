"""Register the plugin's tasks, benchmarks and model metas in mteb's registries.

mteb 2.26 has no plugin entry point: tasks live in ``mteb.get_tasks._TASKS_REGISTRY``
(name -> class) and ``TASK_LIST`` (a tuple), benchmarks in the lru-cached dict of
``mteb.benchmarks.get_benchmark._build_registry()`` and model metas in
``mteb.models.model_implementations.MODEL_REGISTRY``. ``register()`` adds ours to each,
is idempotent, and refuses a name that mteb already uses for something else.
"""

from __future__ import annotations

import importlib
from typing import Any


class RegistrationError(RuntimeError):
    """A plugin name clashes with an mteb task, benchmark or model."""


def _add(registry: dict[str, Any], name: str, obj: Any, kind: str) -> bool:
    existing = registry.get(name)
    if existing is obj:
        return False
    if existing is not None:
        raise RegistrationError(
            f"mteb-evalrank cannot register the {kind} {name!r}: mteb already has a {kind} of "
            f"that name ({existing!r}). Rename one of them or use a matching mteb version."
        )
    registry[name] = obj
    return True


def register() -> None:
    """Make the plugin's tasks, benchmarks and models visible to mteb (safe to call twice)."""
    from mteb.benchmarks.get_benchmark import _build_aliases_registry, _build_registry
    from mteb.models.model_implementations import MODEL_REGISTRY

    from .benchmarks import BENCHMARKS
    from .models import MODEL_METAS
    from .tasks import TASKS

    get_tasks_module = importlib.import_module("mteb.get_tasks")
    registry = get_tasks_module._TASKS_REGISTRY
    new = [cls for cls in TASKS if _add(registry, cls.metadata.name, cls, "task")]
    if new:
        get_tasks_module.TASK_LIST = (*get_tasks_module.TASK_LIST, *new)

    benchmarks, aliases = _build_registry(), _build_aliases_registry()
    for benchmark in BENCHMARKS:
        _add(benchmarks, benchmark.name, benchmark, "benchmark")
        for alias in benchmark.aliases or ():
            _add(aliases, alias, benchmark, "benchmark alias")

    for meta in MODEL_METAS:
        _add(MODEL_REGISTRY, meta.name, meta, "model")
