"""The plugin's datasets: Hub id, revision and the recipe folder that builds each one.

Each dataset family lives in ``tasks/<family>/`` of the source tree: ``README.md`` (the
Hugging Face dataset card, with the YAML ``configs`` the build must produce) and
``recipe.py`` (``build(source) -> BuiltDataset``, a pure function of the raw files). A
wheel carries the same folders as ``mteb_evalrank/_recipes/``.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType

#: Hugging Face organisation that hosts the plugin's datasets.
HUB_ORG = "mteb-evalrank"

_PACKAGE_DIR = Path(__file__).resolve().parents[1]


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

    def mteb_dataset(self) -> dict[str, str]:
        """The ``dataset`` field of an mteb ``TaskMetadata``."""
        return {"path": self.hub_id, "revision": self.revision}

    def recipe(self) -> ModuleType:
        """The family's ``recipe.py``, imported from its file."""
        return _load_recipe(self.folder / "recipe.py")


@cache
def _load_recipe(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"mteb_evalrank_recipe_{path.parent.name}", path)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load the dataset recipe {path}")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    if not callable(getattr(module, "build", None)):
        raise ImportError(f"{path} defines no build(source) function")
    return module


EVALRANK_WORD = DatasetSpec("evalrank-word", revision="v1.0.0", license="bsd-3-clause")
EVALRANK_SENT = DatasetSpec("evalrank-sent", revision="v1.0.0", license="bsd-3-clause")

DATASETS: dict[str, DatasetSpec] = {spec.family: spec for spec in (EVALRANK_WORD, EVALRANK_SENT)}


def get_dataset_spec(family: str) -> DatasetSpec:
    """The spec of a dataset family, or an error listing the known ones."""
    try:
        return DATASETS[family]
    except KeyError:
        raise KeyError(f"unknown dataset {family!r}; known: {', '.join(DATASETS)}") from None
