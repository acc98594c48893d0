"""The one place where mteb-evalrank touches mteb's internals (docs/architecture.md, "Registration").

mteb 2.26 has no plugin API: the private names the plugin needs (registries, dataloader factory,
task hooks and flags, a score type, the ``run_settings.jsonl`` merge, ``CachedEmbeddingWrapper``'s
attributes, the Hub's offline flags, the result writers) are reached or declared here only
(``tests/test_architecture.py``), and :func:`check` verifies them all, raising
:class:`MtebInternalsChanged` naming the internal and the supported mteb version.
"""

from __future__ import annotations

import ast
import functools
import importlib
import importlib.metadata
import inspect
import shutil
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ._network import HUB_OFFLINE_FLAGS

if TYPE_CHECKING:
    # the scores ``AbsTaskSTS._calculate_scores`` receives (for the type checker only; see ``check``)
    from mteb._evaluators.any_sts_evaluator import STSEvaluatorScores as STSEvaluatorScores

#: The mteb release line these internals were written against.
SUPPORTED_MTEB = "2.26"


class MtebInternalsChanged(RuntimeError):
    """An mteb internal the plugin relies on is missing or has changed shape."""

    def __init__(self, internal: str, problem: str) -> None:
        try:
            installed = importlib.metadata.version("mteb")
        except importlib.metadata.PackageNotFoundError:  # the version is only for the message
            installed = "unknown"
        super().__init__(
            f"mteb-evalrank relies on the mteb internal {internal}, which {problem} in the installed "
            f"mteb {installed}. This mteb-evalrank release supports mteb {SUPPORTED_MTEB}.x: install "
            f"'mteb>={SUPPORTED_MTEB},<2.27' or an mteb-evalrank release for your mteb."
        )
        self.internal = internal


def _attribute(module_name: str, name: str) -> Any:
    internal = f"{module_name}.{name}"
    try:
        module = importlib.import_module(module_name)
    except ImportError as error:
        raise MtebInternalsChanged(internal, f"cannot be imported ({error})") from error
    if not hasattr(module, name):
        raise MtebInternalsChanged(internal, "does not exist")
    return getattr(module, name)


# --- registries -------------------------------------------------------------------------------


def task_registry() -> dict[str, type]:
    """``mteb.get_tasks._TASKS_REGISTRY``: task name -> task class (read by ``mteb.get_task``)."""
    registry = _attribute("mteb.get_tasks", "_TASKS_REGISTRY")
    if not isinstance(registry, dict):
        raise MtebInternalsChanged("mteb.get_tasks._TASKS_REGISTRY", "is no longer a dict")
    return registry


def append_task_list(classes: tuple[type, ...]) -> None:
    """Append to ``mteb.get_tasks.TASK_LIST`` (the tuple ``mteb.get_tasks()`` filters)."""
    module: Any = importlib.import_module("mteb.get_tasks")  # the package attribute is the function
    current = _attribute("mteb.get_tasks", "TASK_LIST")
    if not isinstance(current, tuple | list):
        raise MtebInternalsChanged("mteb.get_tasks.TASK_LIST", "is no longer a sequence of task classes")
    module.TASK_LIST = (*current, *classes)


def benchmark_registries() -> tuple[dict[str, Any], dict[str, Any]]:
    """The dicts behind ``mteb.get_benchmark``: name -> benchmark, alias -> benchmark."""
    registries = []
    for name in ("_build_registry", "_build_aliases_registry"):
        build: Callable[[], Any] = _attribute("mteb.benchmarks.get_benchmark", name)
        registry = build()
        if not isinstance(registry, dict):
            raise MtebInternalsChanged(f"mteb.benchmarks.get_benchmark.{name}", "no longer returns a dict")
        registries.append(registry)
    return registries[0], registries[1]


def model_registry() -> dict[str, Any]:
    """``mteb.models.model_implementations.MODEL_REGISTRY``: model name -> ``ModelMeta``."""
    registry = _attribute("mteb.models.model_implementations", "MODEL_REGISTRY")
    if not isinstance(registry, dict):
        raise MtebInternalsChanged("mteb.models.model_implementations.MODEL_REGISTRY", "is no longer a dict")
    return registry


# --- encoding ---------------------------------------------------------------------------------


def create_dataloader(dataset: Any, **kwargs: Any) -> Any:
    """``mteb._create_dataloaders.create_dataloader``: batches as mteb's own evaluators build them."""
    factory = _attribute("mteb._create_dataloaders", "create_dataloader")
    return factory(dataset, **kwargs)


# --- result files -----------------------------------------------------------------------------

#: mteb's merge of ``run_settings.jsonl`` entries (``ResultCache`` uses it when it copies results)
RUN_SETTINGS_MERGE = ("mteb.results.task_result", "_write_and_merge_keyed_json")


def merge_run_settings(path: Path, entries: list[dict[str, Any]]) -> None:
    """Write ``entries`` into the ``run_settings.jsonl`` ``path``, merged as mteb's ``ResultCache`` does."""
    merge = _attribute(*RUN_SETTINGS_MERGE)
    merge(path, entries)


# --- atomic result writes ---------------------------------------------------------------------

#: mteb's writers of result files: (module, class, method)
TASK_RESULT_TO_DISK = ("mteb.results.task_result", "TaskResult", "to_disk")
SAVE_TO_CACHE = ("mteb.cache.result_cache", "ResultCache", "save_to_cache")
#: the merge of ``run_settings.jsonl`` as ``save_to_cache`` calls it (imported by name there)
CACHE_MERGE = ("mteb.cache.result_cache", "_write_and_merge_keyed_json")


def make_result_writes_atomic() -> None:
    """Make mteb's result writes in this process atomic and one folder's writers serial (once).

    mteb 2.26 writes results in place (``open("w")``). Wrapped: ``TaskResult.to_disk`` and the merge of
    ``run_settings.jsonl`` write a temporary sibling, then ``os.replace``
    (:func:`~mteb_evalrank._files.replacing`); ``ResultCache.save_to_cache`` holds the revision
    folder's lock (:func:`~mteb_evalrank._files.folder_lock`). ``model_meta.json`` stays in place
    (written under the lock).
    """
    from mteb_evalrank._files import folder_lock, replacing

    task_result = _attribute(*TASK_RESULT_TO_DISK[:2])
    cache = _attribute(*SAVE_TO_CACHE[:2])
    module = importlib.import_module(CACHE_MERGE[0])
    write, save, merge = task_result.to_disk, cache.save_to_cache, _attribute(*CACHE_MERGE)
    if getattr(write, "_mteb_evalrank", False):
        return

    def to_disk(self: Any, path: Path, *args: Any, **kwargs: Any) -> None:
        with replacing(Path(path)) as staged:
            write(self, staged, *args, **kwargs)

    def merge_atomically(path: Path, entries: list[dict[str, Any]]) -> None:
        with replacing(Path(path)) as staged:
            if Path(path).is_file():
                shutil.copyfile(path, staged)
            merge(staged, entries)

    def save_to_cache(
        self: Any, task_result: Any, model_name: Any, model_revision: Any = None, **kwargs: Any
    ) -> None:
        folder = self.get_task_result_path(
            model_name=model_name, model_revision=model_revision, task_name=task_result.task_name
        ).parent
        with folder_lock(folder / "run_settings.jsonl"):
            save(self, task_result, model_name, model_revision, **kwargs)

    for function in (to_disk, merge_atomically, save_to_cache):
        setattr(function, "_mteb_evalrank", True)  # noqa: B010  (mypy does not model function attributes)
    functools.update_wrapper(to_disk, write)
    functools.update_wrapper(save_to_cache, save)
    task_result.to_disk = to_disk
    cache.save_to_cache = save_to_cache
    setattr(module, CACHE_MERGE[1], merge_atomically)


def check_result_writers() -> None:
    """Raise :class:`MtebInternalsChanged` unless the writers :func:`make_result_writes_atomic`
    wraps exist with the parameters it passes."""
    _attribute(*CACHE_MERGE)
    for module_name, class_name, method in (TASK_RESULT_TO_DISK, SAVE_TO_CACHE):
        if not callable(getattr(_attribute(module_name, class_name), method, None)):
            raise MtebInternalsChanged(f"{module_name}.{class_name}.{method}", "does not exist")
    names = list(inspect.signature(_attribute(*SAVE_TO_CACHE[:2]).save_to_cache).parameters)
    if names[1:4] != ["task_result", "model_name", "model_revision"]:
        expected = "(task_result, model_name, model_revision)"
        raise MtebInternalsChanged(".".join(SAVE_TO_CACHE), f"no longer takes {expected}")


# --- mteb's cached-model wrapper -------------------------------------------------------------

#: ``mteb.models.cache_wrappers.cache_wrapper.CachedEmbeddingWrapper``
CACHED_WRAPPER = ("mteb.models.cache_wrappers.cache_wrapper", "CachedEmbeddingWrapper")
#: the instance attributes its ``__init__`` sets: ``_model`` (read by ``mteb_model_meta`` and the
#: ``similarity*`` methods), ``cache_dict`` (by ``close``), ``cache_path``, ``cache_backend`` (by ``encode``)
CACHED_WRAPPER_INIT_ATTRIBUTES = frozenset({"_model", "cache_path", "cache_backend", "cache_dict"})


def init_cached_wrapper_in_memory(wrapper: Any, model: Any) -> None:
    """Set on ``wrapper`` what ``CachedEmbeddingWrapper.__init__`` would (``_model``, ``cache_dict``)."""
    wrapper._model = model
    wrapper.cache_dict = {}


def _assigned_self_attributes(function: Callable[..., Any]) -> set[str]:
    """The ``self.<name>`` a function's source assigns (``self`` = its first parameter)."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(function)))
    definition = tree.body[0]
    assert isinstance(definition, ast.FunctionDef | ast.AsyncFunctionDef)
    this = definition.args.args[0].arg
    names = set()
    for node in ast.walk(definition):
        targets = node.targets if isinstance(node, ast.Assign) else []
        if isinstance(node, ast.AnnAssign | ast.AugAssign):
            targets = [node.target]
        for target in targets:
            for item in target.elts if isinstance(target, ast.Tuple) else [target]:
                if (
                    isinstance(item, ast.Attribute)
                    and isinstance(item.value, ast.Name)
                    and item.value.id == this
                ):
                    names.add(item.attr)
    return names


def check_cached_wrapper() -> None:
    """Raise :class:`MtebInternalsChanged` unless ``CachedEmbeddingWrapper.__init__`` sets exactly
    :data:`CACHED_WRAPPER_INIT_ATTRIBUTES` (what :func:`init_cached_wrapper_in_memory` replaces)."""
    cls = _attribute(*CACHED_WRAPPER)
    internal = f"{CACHED_WRAPPER[0]}.{CACHED_WRAPPER[1]}.__init__"
    try:
        assigned = _assigned_self_attributes(cls.__init__)
    except (OSError, TypeError, SyntaxError, AssertionError, IndexError) as error:
        raise MtebInternalsChanged(internal, f"cannot be read ({error})") from error
    if assigned != CACHED_WRAPPER_INIT_ATTRIBUTES:
        expected = ", ".join(sorted(CACHED_WRAPPER_INIT_ATTRIBUTES))
        raise MtebInternalsChanged(internal, f"sets {', '.join(sorted(assigned))} instead of {expected}")


# --- the Hugging Face Hub switch ---------------------------------------------------------------


@contextmanager
def hub_switched_off() -> Iterator[None]:
    """No request to the Hugging Face Hub during the block, as with ``HF_HUB_OFFLINE=1``.

    For a local build (online, ``datasets.load_dataset`` asks the Hub first: ~23 s of retries per
    config when unreachable). Process state: the libraries' module flags, set for the block, so one
    thread per process loads data this way at a time.
    """
    modules = [importlib.import_module(module_name) for module_name, _ in HUB_OFFLINE_FLAGS]
    before = [getattr(module, name) for module, (_, name) in zip(modules, HUB_OFFLINE_FLAGS, strict=True)]
    for module, (_, name) in zip(modules, HUB_OFFLINE_FLAGS, strict=True):
        setattr(module, name, True)
    try:
        yield
    finally:
        for module, (_, name), value in zip(modules, HUB_OFFLINE_FLAGS, before, strict=True):
            setattr(module, name, value)


# --- descriptive statistics -------------------------------------------------------------------


def pair_statistics(column1: list[str], column2: list[str]) -> dict[str, Any]:
    """mteb's ``calculate_pair_modality_statistics`` on two text columns (as its STS tasks report)."""
    calculate = _attribute("mteb.abstasks._statistics_calculation", "calculate_pair_modality_statistics")
    columns = {"sentence1": column1, "sentence2": column2}
    return dict(calculate({"sentence1": "text"}, {"sentence2": "text"}, columns.__getitem__, len(column1)))


def label_statistics(labels: list[int]) -> dict[str, Any]:
    """``mteb.abstasks._statistics_calculation.calculate_label_statistics``: label counts."""
    calculate = _attribute("mteb.abstasks._statistics_calculation", "calculate_label_statistics")
    return dict(calculate(labels))


# --- private task hooks the plugin's task classes override or call ----------------------------

#: (module, class, method, parameters the plugin passes or receives by name)
TASK_HOOKS: tuple[tuple[str, str, str, tuple[str, ...]], ...] = (
    (
        "mteb.abstasks.abstask",
        "AbsTask",
        "_evaluate_subset",
        ("model", "data_split", "hf_split", "hf_subset", "encode_kwargs", "timer"),
    ),
    (
        "mteb.abstasks.abstask",
        "AbsTask",
        "_calculate_descriptive_statistics_from_split",
        ("split", "hf_subset"),
    ),
    ("mteb.abstasks.abstask", "AbsTask", "_get_content_columns", ()),
    ("mteb.abstasks.abstask", "AbsTask", "_add_main_score", ("scores",)),
    ("mteb.abstasks.retrieval", "AbsTaskRetrieval", "_evaluate_subset", ("model", "data_split")),
    ("mteb.abstasks.classification", "AbsTaskClassification", "_evaluate_subset", ("model", "data_split")),
    ("mteb.abstasks.classification", "AbsTaskClassification", "_run_experiment", ("timer",)),
    ("mteb.abstasks.classification", "AbsTaskClassification", "_undersample_data", ("dataset",)),
    ("mteb.abstasks.classification", "AbsTaskClassification", "_calculate_scores", ("y_test", "y_pred")),
    ("mteb.abstasks.classification", "AbsTaskClassification", "_calculate_avg_scores", ("scores",)),
    ("mteb.abstasks.sts", "AbsTaskSTS", "_calculate_scores", ("scores", "normalized_scores")),
    ("mteb.abstasks.sts", "AbsTaskSTS", "_evaluate_subset", ("model", "data_split")),
    ("mteb.abstasks.sts", "AbsTaskSTS", "_normalize", ("x",)),
)


#: (module, class, flag): private ``bool`` class attributes the plugin's task classes set
#: (``AbsTaskEvalRank``: neither a cross-encoder nor a search model can rank the whole background)
TASK_FLAGS: tuple[tuple[str, str, str], ...] = (
    ("mteb.abstasks.abstask", "AbsTask", "_support_cross_encoder"),
    ("mteb.abstasks.abstask", "AbsTask", "_support_search"),
)

#: (module, TypedDict, keys the plugin reads): private score types the plugin's hooks receive
SCORE_TYPES: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("mteb._evaluators.any_sts_evaluator", "STSEvaluatorScores", ("cosine_scores",)),
)


def check() -> None:
    """Verify every internal above; raises :class:`MtebInternalsChanged` on the first that changed."""
    task_registry()
    _attribute("mteb.get_tasks", "TASK_LIST")
    benchmark_registries()
    model_registry()
    _attribute("mteb._create_dataloaders", "create_dataloader")
    _attribute("mteb.abstasks._statistics_calculation", "calculate_pair_modality_statistics")
    _attribute("mteb.abstasks._statistics_calculation", "calculate_label_statistics")
    _attribute(*RUN_SETTINGS_MERGE)
    check_result_writers()
    check_cached_wrapper()
    for module_name, name in HUB_OFFLINE_FLAGS:
        if not isinstance(_attribute(module_name, name), bool):
            raise MtebInternalsChanged(f"{module_name}.{name}", "is no longer a bool flag")
    for module_name, class_name, method, parameters in TASK_HOOKS:
        internal = f"{module_name}.{class_name}.{method}"
        function = getattr(_attribute(module_name, class_name), method, None)
        if not callable(function):
            raise MtebInternalsChanged(internal, "does not exist")
        names = inspect.signature(function).parameters
        missing = [p for p in parameters if p not in names]
        if missing:
            raise MtebInternalsChanged(internal, f"no longer takes the parameter(s) {', '.join(missing)}")
    for module_name, class_name, flag in TASK_FLAGS:
        if not isinstance(getattr(_attribute(module_name, class_name), flag, None), bool):
            raise MtebInternalsChanged(f"{module_name}.{class_name}.{flag}", "is no longer a bool flag")
    for module_name, type_name, keys in SCORE_TYPES:
        declared = getattr(_attribute(module_name, type_name), "__annotations__", {})
        missing = [key for key in keys if key not in declared]
        if missing:
            internal = f"{module_name}.{type_name}"
            raise MtebInternalsChanged(internal, f"no longer has the key(s) {', '.join(missing)}")
