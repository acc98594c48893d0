"""Register the plugin's tasks, benchmarks and model metas in mteb's registries (docs/architecture.md,
"Registration"): idempotent, never replacing an object of mteb's (clashes reported together in one
:class:`RegistrationError`); by ``register()``, on ``import mteb_evalrank`` once mteb is imported,
or by the ``mteb`` CLI's start-up hook (the last two warn instead of raising).
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import warnings
from types import ModuleType
from typing import Any

from . import _postponed
from .settings import Settings


class RegistrationError(RuntimeError):
    """A plugin name clashes with an mteb task, benchmark or model (the others were registered)."""


class RegistrationWarning(UserWarning):
    """Registration failed in a context that must not break mteb (the import or the CLI hook)."""


def _add(registry: dict[str, Any], name: str, obj: Any, kind: str, clashes: list[str]) -> bool:
    existing = registry.get(name)
    if existing is obj:
        return False
    if existing is not None:
        clashes.append(f"the {kind} {name!r} (mteb already has {existing!r})")
        return False
    registry[name] = obj
    return True


def register(settings: Settings | None = None) -> None:
    """Make the plugin's tasks, benchmarks and models visible to mteb (idempotent).

    Also, for the process: mteb's result files are written atomically
    (:func:`~mteb_evalrank._mteb_adapter.make_result_writes_atomic`), the default embedding cache is
    made from ``settings`` (:func:`~mteb_evalrank.embedding_cache.process_cache`), and with
    ``MTEB_EVALRANK_OFFLINE`` set the Hugging Face libraries are offline too
    (:func:`~mteb_evalrank._network.switch_libraries_offline`).

    Args:
        settings: default :meth:`Settings.from_environment` (a call from a script is an edge).

    Raises:
        RegistrationError: when some names are already used by mteb for other objects;
            everything else has been registered.
        mteb_evalrank.tasks._evalrank_files.TaskFilesError: (a ``ValueError``) from
            :func:`~mteb_evalrank.tasks.tasks_from_settings`; the plugin's own objects were registered.
        mteb_evalrank._mteb_adapter.MtebInternalsChanged: when the installed mteb lacks a
            registry this plugin needs.
    """
    from . import _mteb_adapter as adapter
    from ._network import switch_libraries_offline
    from .embedding_cache import process_cache
    from .models import MODEL_METAS
    from .suites import BENCHMARKS
    from .tasks import TASKS, tasks_from_settings
    from .tasks._loading import guard_sts_mirrors

    settings = settings or Settings.from_environment()
    switch_libraries_offline(settings)  # MTEB_EVALRANK_OFFLINE: the Hub libraries too
    process_cache(settings)  # the process default embedding cache, if none is yet
    adapter.make_result_writes_atomic()
    clashes: list[str] = []
    tasks = adapter.task_registry()
    guard_sts_mirrors(tasks)  # a damaged STS mirror of the plugin's is named or repaired
    new = tuple(cls for cls in TASKS if _add(tasks, cls.metadata.name, cls, "task", clashes))
    if new:
        adapter.append_task_list(new)

    benchmarks, aliases = adapter.benchmark_registries()
    for benchmark in BENCHMARKS:
        _add(benchmarks, benchmark.name, benchmark, "benchmark", clashes)
        for alias in benchmark.aliases or ():
            _add(aliases, alias, benchmark, "benchmark alias", clashes)

    models = adapter.model_registry()
    for meta in MODEL_METAS:  # populations: only on request (models.hf_variants.enable_population)
        assert meta.name is not None, "every plugin ModelMeta is named"  # mteb types the name Optional
        _add(models, meta.name, meta, "model", clashes)

    # last, so that a bad file of the user's leaves the plugin itself registered
    # (the classes are made once per process: registering again finds the same objects)
    user = tuple(
        cls for cls in tasks_from_settings(settings) if _add(tasks, cls.metadata.name, cls, "task", clashes)
    )
    if user:
        adapter.append_task_list(user)
    if clashes:
        raise RegistrationError(
            f"mteb-evalrank could not register {len(clashes)} object(s) whose names mteb already uses: "
            + "; ".join(clashes)
            + ". The rest of the plugin is registered. Use the mteb version this release supports "
            "(see mteb_evalrank._mteb_adapter.SUPPORTED_MTEB) or rename the clashing object."
        )


def register_quietly(settings: Settings | None = None) -> bool:
    """:func:`register`, any failure as one :class:`RegistrationWarning`: whether all went well."""
    from ._user_errors import show_now
    from .tasks._evalrank_files import TaskFilesError, declared_task_names

    try:
        settings = settings or Settings.from_environment()
        register(settings)
    except Exception as error:  # a plugin failure must never break mteb
        names = declared_task_names(settings) if settings else []
        if isinstance(error, TaskFilesError) and show_now(error, explains=names):
            return False  # the command line: the one message, now; mteb's later KeyError ends quietly
        warnings.warn(
            f"mteb-evalrank: its tasks are not (all) available in mteb: {type(error).__name__}: {error}",
            RegistrationWarning,
            stacklevel=2,
        )
        return False
    return True


#: the modules whose lists :func:`register` reads
_LIST_MODULES = ("mteb_evalrank.tasks", "mteb_evalrank.models", "mteb_evalrank.suites")


def _own_import_in_progress(finishing: str = "") -> bool:
    """True while a module :func:`register` reads (other than ``finishing``, at its last line) executes."""
    return any(
        getattr(getattr(sys.modules.get(name), "__spec__", None), "_initializing", False)
        for name in _LIST_MODULES
        if name != finishing
    )


def _register_or_postpone(finishing: str = "") -> None:
    """Register now, or, when mteb was imported by our own task/model/suite modules (which are
    then half-executed), when the last of them finishes (:func:`._postponed.finish_postponed`)."""
    if _own_import_in_progress(finishing):
        _postponed.pending = _register_or_postpone
    else:
        _postponed.pending = None
        register_quietly()


class _RegisterAfterImport(importlib.abc.MetaPathFinder):
    """One-shot finder: once module ``target`` has finished executing, register the plugin."""

    def __init__(self, target: str) -> None:
        self.target = target

    def find_spec(
        self, fullname: str, path: Any, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if fullname != self.target:
            return None
        # A spec may be found without being executed (runpy's find_spec for ``python -m``), so the
        # finder stays until the module really executes.
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is None or spec.loader is None:
            return spec
        original_exec = spec.loader.exec_module

        def exec_module(module: ModuleType) -> None:
            if self in sys.meta_path:
                sys.meta_path.remove(self)  # one shot
            original_exec(module)
            _register_or_postpone()

        # wrap the loader's method on this one instance (mypy forbids assigning to a method)
        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def register_when_mteb_is_imported(module: str = "mteb") -> None:
    """Register now if ``module`` is fully imported, else right after its import (installed once)."""
    loaded = sys.modules.get(module)
    if loaded is not None and not getattr(loaded.__spec__, "_initializing", False):
        _register_or_postpone()
    elif loaded is None and not any(
        isinstance(f, _RegisterAfterImport) and f.target == module for f in sys.meta_path
    ):
        sys.meta_path.insert(0, _RegisterAfterImport(module))
