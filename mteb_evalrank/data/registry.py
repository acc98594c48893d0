"""The plugin's datasets: Hub id, revision, the recipe folder that builds each one (docs/architecture.md,
"Data") and where a build lives in the ``datasets`` cache."""

from __future__ import annotations

import importlib.util
import sys
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # mteb is heavy to import; the annotation alone needs it
    from mteb.abstasks.task_metadata import MetadataDatasetDict

#: Hugging Face organisation that hosts the plugin's datasets.
HUB_ORG = "mteb-evalrank"


_PACKAGE_DIR = Path(__file__).resolve().parents[1]


def cache_root(hub_id: str, cache_dir: Path | None = None) -> Path:
    """``$HF_DATASETS_CACHE/<org>___<name>`` as ``datasets`` names it: where a dataset lives."""
    import datasets
    from datasets.naming import camelcase_to_snakecase

    namespace, name = hub_id.split("/")
    return (
        Path(cache_dir or datasets.config.HF_DATASETS_CACHE) / f"{namespace}___{camelcase_to_snakecase(name)}"
    )


def read_card_configs(card_path: Path) -> dict[str, dict[str, str]]:
    """``{config_name: {split: path}}`` from the YAML header of a dataset card."""
    import yaml

    text = card_path.read_text(encoding="utf-8")
    if not text.startswith("---\n"):
        raise ValueError(f"{card_path}: a dataset card starts with a '---' YAML header.")
    header = yaml.safe_load(text.split("---\n", 2)[1]) or {}
    return {
        entry["config_name"]: {item["split"]: item["path"] for item in entry.get("data_files", [])}
        for entry in header.get("configs", [])
    }


def recipes_root() -> Path:
    """Folder holding one sub-folder per dataset family (wheel copy, else source tree)."""
    for candidate in (_PACKAGE_DIR / "_recipes", _PACKAGE_DIR.parent / "tasks"):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(
        f"dataset recipes not found next to {_PACKAGE_DIR}: reinstall mteb-evalrank "
        "(the wheel ships them as mteb_evalrank/_recipes)."
    )


@dataclass(frozen=True)
class DatasetSpec:
    """One Hub dataset of the plugin."""

    family: str
    """Folder name under ``tasks/`` (also the Hub dataset name)."""
    revision: str
    """Hub revision (a tag created by ``datasets build --push``); bump it when data change."""
    license: str
    """SPDX-style licence id of the built dataset."""

    @property
    def hub_id(self) -> str:
        return f"{HUB_ORG}/{self.family}"

    @property
    def folder(self) -> Path:
        return recipes_root() / self.family

    @property
    def card_path(self) -> Path:
        return self.folder / "README.md"

    @property
    def card_configs(self) -> dict[str, dict[str, str]]:
        """``{config_name: {split: path}}`` that the card declares (:func:`read_card_configs`)."""
        return read_card_configs(self.card_path)

    @property
    def cache_root(self) -> Path:
        """Where a build of the dataset lives: :func:`cache_root` of its Hub id."""
        return cache_root(self.hub_id)

    def mteb_dataset(self, name: str | None = None) -> MetadataDatasetDict:
        """The ``dataset`` field of an mteb ``TaskMetadata``: Hub id, revision and, if given, the
        config ``name`` (mteb loads a monolingual task with ``load_dataset(**metadata.dataset)``)."""
        dataset: MetadataDatasetDict = {"path": self.hub_id, "revision": self.revision}
        if name is not None:
            dataset["name"] = name
        return dataset

    @property
    def recipe(self) -> ModuleType:
        """The family's ``recipe.py``, imported from its file (once)."""
        return _load_recipe(self.folder / "recipe.py")

    @property
    def sources(self) -> tuple[str, ...]:
        """The raw files the recipe reads (its ``SOURCES``: paths in the raw data folder)."""
        return tuple(self.recipe.SOURCES)


@cache
def _load_recipe(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"mteb_evalrank_recipe_{path.parent.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the dataset recipe {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses and pickling resolve names through it
    spec.loader.exec_module(module)
    if not callable(getattr(module, "build", None)):
        raise ImportError(f"{path} defines no build(source) function")
    return module


# --- the dataset families, one declaration each, in the order of the README's task table -------

EVALRANK_WORD = DatasetSpec("evalrank-word", revision="v1.0.0", license="bsd-3-clause")
EVALRANK_SENT = DatasetSpec("evalrank-sent", revision="v1.0.0", license="bsd-3-clause")
WORD_SIMILARITY = DatasetSpec("word-similarity", revision="v1.0.0", license="bsd-3-clause")
STR_2021 = DatasetSpec("str-2021", revision="v1.0.0", license="bsd-3-clause")
SENTEVAL = DatasetSpec("senteval", revision="v1.0.0", license="bsd-3-clause")
"""SentEval transfer (downstream) tasks."""
WMT17_DA = DatasetSpec("wmt17-da", revision="v1.0.0", license="apache-2.0")
"""Evaluation-gap diagnostics: WMT17 DA (MT metrics) and its slices."""
STSB_GRANULARITY = DatasetSpec("stsb-granularity", revision="v1.0.0", license="other")
"""Evaluation-gap diagnostics: STS-B test pairs by gold band."""
ACCSENT = DatasetSpec("accsent", revision="v1.0.0", license="other")
"""AccSent-style triplets: human news paraphrases (MRPC, STS-B news) and keyword swaps."""
UD_ENGLISH_EWT = DatasetSpec("ud-english-ewt", revision="v1.1.0", license="cc-by-sa-4.0")
"""Sequence labelling: English-EWT words and PTB-style POS tags (XPOS)."""
CONLL2000 = DatasetSpec("conll2000", revision="v1.0.0", license="other")
"""Sequence labelling: CoNLL-2000 chunking."""
CONLL2003 = DatasetSpec("conll2003", revision="v1.1.0", license="other")
"""Sequence labelling: CoNLL-2003 English NER."""

DATASETS: dict[str, DatasetSpec] = {
    spec.family: spec
    for spec in (
        EVALRANK_WORD,
        EVALRANK_SENT,
        WORD_SIMILARITY,
        STR_2021,
        SENTEVAL,
        WMT17_DA,
        STSB_GRANULARITY,
        ACCSENT,
        UD_ENGLISH_EWT,
        CONLL2000,
        CONLL2003,
    )
}
"""Every family published as ``mteb-evalrank/<family>`` (the plugin's own tasks load these)."""


class UnknownFamilyError(KeyError):
    """A dataset family name the plugin does not have; the message lists the families."""

    user_facing = True  # the command line shows the message alone (mteb_evalrank._user_errors)

    def __str__(self) -> str:  # KeyError's own would quote the message
        return str(self.args[0])


def get_dataset_spec(family: str) -> DatasetSpec:
    """The spec of a dataset family (``sts-mirrors`` included), or one error listing them."""
    try:
        return {**DATASETS, STS_MIRRORS.family: STS_MIRRORS}[family]
    except KeyError:
        raise UnknownFamilyError(
            f"unknown dataset family {family!r}; the families are: {', '.join(FAMILIES)}."
        ) from None


def spec_for_hub_id(hub_id: str) -> DatasetSpec | None:
    """The family whose Hub id is ``hub_id`` (a task's ``metadata.dataset["path"]``), if ours."""
    return next((spec for spec in DATASETS.values() if spec.hub_id == hub_id), None)


# --- mteb's own STS sets, rebuilt locally (opt-in; see mteb_evalrank.data.mirrors) -------------


@dataclass(frozen=True)
class MirrorSpec:
    """One config of a plugin build installed (locally, never pushed) under the dataset id of mteb's own
    task, which loads it unmodified (:func:`mteb_evalrank.data.mirrors.install_sts_mirrors`)."""

    task: str
    """mteb task name (``mteb.get_task(task)``)."""
    hub_id: str
    """``metadata.dataset["path"]`` of the mteb task."""
    revision: str
    """``metadata.dataset["revision"]`` of the mteb task (not checked by the offline cache)."""
    hub_config: str = "default"
    """Config name mteb's loader asks for."""


STS_MIRRORS = DatasetSpec("sts-mirrors", revision="v1.0.0", license="other")
"""mteb's English STS test sets rebuilt from the EvalRank raw files; not in ``DATASETS`` (never pushed)."""

FAMILIES: tuple[str, ...] = (*DATASETS, STS_MIRRORS.family)
"""Every family a command can name (``--only``): the datasets, then the STS mirrors."""

STS_MIRROR_SPECS: tuple[MirrorSpec, ...] = (
    MirrorSpec("STS12", "mteb/sts12-sts", "a0d554a64d88156834ff5ae9920b964011b16384"),
    MirrorSpec("STS13", "mteb/sts13-sts", "7e90230a92c190f1bf69ae9002b8cea547a64cca"),
    MirrorSpec("STS14", "mteb/sts14-sts", "6031580fec1f6af667f0bd2da0a551cf4f0b2375"),
    MirrorSpec("STS15", "mteb/sts15-sts", "ae752c7c21bf194d8b67fd573edf7ae58183cbe3"),
    MirrorSpec("STS16", "mteb/sts16-sts", "4d8694f8f0e0100860b497b999b3dbed754a0513"),
    MirrorSpec("STSBenchmark", "mteb/stsbenchmark-sts", "b0fddb56ed78048fa8b90373c8a3cfc37b684831"),
    MirrorSpec("SICK-R", "mteb/sickr-sts", "20a6d6f312dd54037fe07a32d58e5e168867909d"),
)
