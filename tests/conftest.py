"""Shared fixtures: an isolated Hugging Face home, the raw data, the built datasets.

The environment is set before mteb/datasets are imported (``datasets`` reads its cache
location at import time). ``MTEB_EVALRANK_SOURCE`` overrides the raw data folder
(default ``../shared/data`` beside the repository).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SOURCE = Path(os.environ.get("MTEB_EVALRANK_SOURCE", REPO.parent / "shared" / "data")).resolve()
HF_HOME = Path(os.environ.get("MTEB_EVALRANK_TEST_HF_HOME") or tempfile.mkdtemp(prefix="mteb-evalrank-hf-"))
os.environ["HF_HOME"] = str(HF_HOME)
os.environ.pop("HF_DATASETS_CACHE", None)
os.environ.pop("HF_HUB_CACHE", None)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")

import pytest  # noqa: E402


def pytest_report_header(config: pytest.Config) -> list[str]:
    return [f"raw data: {SOURCE}", f"HF_HOME: {HF_HOME}"]


@pytest.fixture(scope="session")
def source() -> Path:
    if not (SOURCE / "evalrank").is_dir():
        pytest.fail(
            f"raw data not found at {SOURCE}: put the shared data folder beside the repository "
            "or set MTEB_EVALRANK_SOURCE."
        )
    return SOURCE


@pytest.fixture(scope="session")
def hub_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("hub")


@pytest.fixture(scope="session")
def built(source: Path, hub_dir: Path) -> dict[str, object]:
    """Every dataset built once, written as a Hub folder and installed in the datasets cache."""
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import DATASETS

    result = {}
    for family, spec in DATASETS.items():
        data = spec.recipe().build(source)
        hub.write_hub_folder(spec, data, source, hub_dir)
        hub.install_into_cache(spec, data)
        result[family] = data
    return result


@pytest.fixture(scope="session")
def offline_models() -> None:
    from mteb_evalrank.models.offline import install_offline_models

    install_offline_models()
