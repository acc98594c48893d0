"""The one place where mteb-evalrank touches mteb's internals.

mteb 2.26 has no plugin API, so the plugin needs a few private names: the registries it adds
its tasks, benchmarks and model metas to, mteb's dataloader factory, the private hooks and
class flags that its task classes override (mteb's own tasks extend mteb the same way), and the
type of the scores a hook receives. Each is reached or declared here, nowhere else, and
:func:`check` verifies them all: when a new mteb release renames one, the failure is an
:class:`MtebInternalsChanged` naming the internal and the supported mteb version, not an
``AttributeError`` deep inside a run.

Public mteb API (``mteb.get_task``, ``TaskMetadata``, the ``AbsTask*`` base classes, ...) is
used directly everywhere; only private names live here.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    # the scores ``AbsTaskSTS._calculate_scores`` receives (for the type checker only; see ``check``)
    from mteb._evaluators.any_sts_evaluator import STSEvaluatorScores as STSEvaluatorScores

#: The mteb release line these internals were written against.
SUPPORTED_MTEB = "2.26"


class MtebInternalsChanged(RuntimeError):
    """An mteb internal the plugin relies on is missing or has changed shape."""

    def __init__(self, internal: str, problem: str) -> None:
        try:
            from importlib.metadata import version

            installed = version("mteb")
        except Exception:  # the version is only for the message
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


# --- descriptive statistics -------------------------------------------------------------------


def pair_statistics(column1: list[str], column2: list[str]) -> dict[str, Any]:
    """``mteb.abstasks._statistics_calculation.calculate_pair_modality_statistics`` on two text
    columns: ``text1_statistics``, ``text2_statistics`` (and ``None`` for the other modalities),
    ``unique_pairs``; the statistics mteb's STS and PairClassification tasks report."""
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


def check_task_hook(module_name: str, class_name: str, method: str, parameters: tuple[str, ...]) -> None:
    """Raise :class:`MtebInternalsChanged` unless ``class_name.method`` exists with ``parameters``."""
    cls = _attribute(module_name, class_name)
    internal = f"{module_name}.{class_name}.{method}"
    function = getattr(cls, method, None)
    if not callable(function):
        raise MtebInternalsChanged(internal, "does not exist")
    names = set(inspect.signature(function).parameters)
    missing = [p for p in parameters if p not in names]
    if missing:
        raise MtebInternalsChanged(internal, f"no longer takes the parameter(s) {', '.join(missing)}")


def check_task_flag(module_name: str, class_name: str, flag: str) -> None:
    """Raise :class:`MtebInternalsChanged` unless ``class_name.flag`` is a ``bool`` class attribute."""
    cls = _attribute(module_name, class_name)
    if not isinstance(getattr(cls, flag, None), bool):
        raise MtebInternalsChanged(f"{module_name}.{class_name}.{flag}", "is no longer a bool flag")


def check_score_type(module_name: str, type_name: str, keys: tuple[str, ...]) -> None:
    """Raise :class:`MtebInternalsChanged` unless the TypedDict ``type_name`` declares ``keys``."""
    declared = getattr(_attribute(module_name, type_name), "__annotations__", {})
    missing = [key for key in keys if key not in declared]
    if missing:
        internal = f"{module_name}.{type_name}"
        raise MtebInternalsChanged(internal, f"no longer has the key(s) {', '.join(missing)}")


def check() -> None:
    """Verify every internal above; raises :class:`MtebInternalsChanged` on the first that changed."""
    task_registry()
    _attribute("mteb.get_tasks", "TASK_LIST")
    benchmark_registries()
    model_registry()
    _attribute("mteb._create_dataloaders", "create_dataloader")
    _attribute("mteb.abstasks._statistics_calculation", "calculate_pair_modality_statistics")
    _attribute("mteb.abstasks._statistics_calculation", "calculate_label_statistics")
    for hook in TASK_HOOKS:
        check_task_hook(*hook)
    for flag in TASK_FLAGS:
        check_task_flag(*flag)
    for score_type in SCORE_TYPES:
        check_score_type(*score_type)
