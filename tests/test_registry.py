"""Registration with mteb: Python import, idempotence, clashes, the mteb-CLI start-up hook."""

from __future__ import annotations

import importlib
import subprocess
import sys

import mteb
import pytest

import _mteb_evalrank_hook as hook
import mteb_evalrank
from mteb_evalrank import RegistrationError
from mteb_evalrank.tasks import EvalRankWord


def test_import_registers_tasks_benchmark_and_model() -> None:
    assert isinstance(mteb.get_task("EvalRankSent"), mteb_evalrank.tasks.EvalRankSent)
    assert mteb.get_task("EvalRankWord").hf_subsets == ["default", "no_wiki"]
    assert {t.metadata.name for t in mteb.get_benchmark("EvalRank").tasks} == {"EvalRankWord", "EvalRankSent"}
    assert mteb.get_model_meta("evalrank/glove.6B.50d").embed_dim == 50
    names = [t.metadata.name for t in mteb.get_tasks(task_types=["Retrieval"], languages=["eng"])]
    assert "EvalRankWord" in names and "EvalRankSent" in names


def test_register_is_idempotent() -> None:
    module = importlib.import_module("mteb.get_tasks")
    before = len(module.TASK_LIST)
    mteb_evalrank.register()
    mteb_evalrank.register()
    assert len(module.TASK_LIST) == before
    assert [t.metadata.name for t in module.TASK_LIST].count("EvalRankSent") == 1


def test_name_clash_with_an_mteb_task_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    clash = type("Clash", (EvalRankWord,), {"metadata": mteb.get_task("STSBenchmark").metadata})
    monkeypatch.setattr("mteb_evalrank.tasks.TASKS", (clash,))
    with pytest.raises(RegistrationError, match="'STSBenchmark'"):
        mteb_evalrank.register()


@pytest.mark.parametrize(
    ("argv", "orig_argv", "expected"),
    [
        (["/venv/bin/mteb", "run"], ["/venv/bin/python", "/venv/bin/mteb", "run"], True),
        (["-m"], ["python", "-m", "mteb", "run"], True),
        (["script.py"], ["python", "script.py"], False),
        (["-c"], ["python", "-c", "pass"], False),
        (["/usr/bin/mteb-evalrank"], ["python", "/usr/bin/mteb-evalrank"], False),
    ],
)
def test_hook_recognises_the_mteb_cli(argv: list[str], orig_argv: list[str], expected: bool) -> None:
    assert hook.is_mteb_cli(argv, orig_argv) is expected


def test_hook_costs_nothing_in_other_processes() -> None:
    code = "import sys; print(sorted(m for m in sys.modules if 'evalrank' in m or m.split('.')[0] == 'mteb'))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_hook_registers_in_python_dash_m_mteb() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mteb", "available-tasks"], capture_output=True, text=True, check=True
    )
    assert "EvalRankWord" in out.stdout and "EvalRankSent" in out.stdout


def test_hook_installs_once_however_often_it_runs() -> None:
    code = (
        "import sys; sys.argv = ['mteb']; import _mteb_evalrank_hook as h; h.install(); h.install(); "
        "print(sum(isinstance(f, h._RegisterAfterMtebCli) for f in sys.meta_path))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"
