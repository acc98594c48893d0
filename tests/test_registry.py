"""Registration with mteb: Python import, idempotence, clashes, the mteb-CLI start-up hook."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import mteb
import pytest
from second_process import in_a_second_process, under_a_file_size_limit

import _mteb_evalrank_hook as hook
import mteb_evalrank
from mteb_evalrank import RegistrationError
from mteb_evalrank.tasks import EvalRankWord


def test_import_registers_tasks_benchmark_and_model() -> None:
    assert isinstance(mteb.get_task("EvalRankSent"), mteb_evalrank.tasks.EvalRankSent)
    assert mteb.get_task("EvalRankWord").hf_subsets == ["default"]  # one task, one headline number
    assert mteb.get_task("EvalRankWordNoWiki").hf_subsets == ["no_wiki"]
    assert mteb.get_task("EvalRankSentSTSB").hf_subsets == ["stsb"]
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
        (["-m"], ["python", "-u", "-m", "mteb", "run"], True),
        (["-m"], ["python", "-X", "dev", "-W", "error", "-m", "mteb", "run"], True),
        (["-m"], ["python", "-mmteb", "run"], True),
        (["-m"], ["python", "-m", "mteb.cli"], True),
        (["-m"], ["python", "-m", "mteb_evalrank"], False),
        (["s.py"], ["python", "s.py", "-m", "mteb"], False),
        (["-c"], ["python", "-c", "pass", "-m", "mteb"], False),
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


@pytest.mark.slow  # spawns python -m mteb
def test_hook_registers_in_python_dash_m_mteb() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "mteb", "available-tasks"], capture_output=True, text=True, check=True
    )
    assert "EvalRankWord" in out.stdout and "EvalRankSent" in out.stdout


def test_hook_installs_once_however_often_it_runs() -> None:
    code = (
        "import sys; sys.argv = ['mteb']; import _mteb_evalrank_hook as h; h.install(); h.install(); "
        "from mteb_evalrank._registration import _RegisterAfterImport as F; "
        "print(sum(isinstance(f, F) for f in sys.meta_path))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "1"


def test_hook_switches_the_hub_offline_before_mteb_imports_it_and_warns_nothing() -> None:
    """``MTEB_EVALRANK_OFFLINE=1`` in the mteb CLI: the hook sets ``HF_HUB_OFFLINE`` before anything
    imports huggingface_hub, without a warning (a hook that fails warns that the tasks are missing)."""
    code = (
        "import sys; sys.argv = ['mteb']; import _mteb_evalrank_hook, os; "
        "print(os.environ.get('HF_HUB_OFFLINE'), 'huggingface_hub' in sys.modules)"
    )
    env = {key: value for key, value in os.environ.items() if key != "HF_HUB_OFFLINE"}
    env["MTEB_EVALRANK_OFFLINE"] = "1"
    out = subprocess.run(
        [sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, check=True, env=env
    )
    assert out.stdout.split() == ["1", "False"]
    assert "could not be loaded" not in out.stderr, out.stderr


# --- registration never breaks mteb, whatever starts it (issue 14) ---------------------------

INTERPRETER_FLAGS = [[], ["-u"], ["-X", "dev"], ["-W", "ignore", "-B"]]


def _installed_pth() -> Path:
    site = Path(mteb.__file__).resolve().parents[1]
    return site / "mteb_evalrank_hook.pth"


def test_the_installed_pth_line_is_the_repository_s() -> None:
    """The subprocess tests below exercise the installed start-up line: it must be this checkout's."""
    repo = Path(__file__).resolve().parents[1] / "mteb_evalrank_hook.pth"
    assert _installed_pth().read_text() == repo.read_text(), (
        "the installed plugin is not this checkout: reinstall it (bash scripts/setup.sh)"
    )


@pytest.mark.slow
@pytest.mark.parametrize("flags", INTERPRETER_FLAGS, ids=lambda f: " ".join(f) or "none")
def test_python_dash_m_mteb_registers_whatever_the_interpreter_flags(flags: list[str]) -> None:
    out = subprocess.run(
        [sys.executable, *flags, "-m", "mteb", "available-tasks"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(mteb.__file__).parents[2],  # not the repository: the installed plugin, not the checkout
    )
    assert "EvalRankSent" in out.stdout and "STSBenchmark" in out.stdout


@pytest.mark.slow  # spawns the mteb CLI
def test_a_broken_plugin_leaves_the_mteb_cli_working(tmp_path: Path) -> None:
    """Forced failure: an mteb_evalrank that raises on import shadows the real one."""
    broken = tmp_path / "mteb_evalrank"
    broken.mkdir()
    (broken / "__init__.py").write_text("raise RuntimeError('forced failure for the test')\n")
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    out = subprocess.run(
        [sys.executable, "-m", "mteb", "available-tasks"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert "STSBenchmark" in out.stdout and "EvalRankSent" not in out.stdout
    assert out.stderr.count("forced failure for the test") == 1
    assert "Traceback" not in out.stderr


def test_a_name_clash_becomes_one_warning_and_the_rest_registers(monkeypatch: pytest.MonkeyPatch) -> None:
    from mteb_evalrank import RegistrationWarning
    from mteb_evalrank._registration import register_quietly

    tasks = dict(importlib.import_module("mteb.get_tasks")._TASKS_REGISTRY)
    foreign = type("FutureMtebTask", (), {})  # a future mteb task that took one of our names
    tasks["EvalRankSent"] = foreign
    del tasks["EvalRankWord"]
    monkeypatch.setattr(importlib.import_module("mteb.get_tasks"), "_TASKS_REGISTRY", tasks)
    monkeypatch.setattr(importlib.import_module("mteb.get_tasks"), "TASK_LIST", ())
    with pytest.warns(RegistrationWarning, match="'EvalRankSent'") as caught:
        assert register_quietly() is False
    assert len(caught) == 1
    assert tasks["EvalRankSent"] is foreign  # mteb's object is never replaced
    assert tasks["EvalRankWord"] is EvalRankWord  # everything else is registered


@pytest.mark.parametrize(
    "statement",
    [
        "import mteb_evalrank, mteb",
        "import mteb, mteb_evalrank",
        "from mteb_evalrank.tasks import EvalRankWord; import mteb",
        "from mteb_evalrank.suites import BENCHMARKS; import mteb",
        "import mteb_evalrank.models; import mteb",
        "import mteb; mteb_evalrank = __import__('mteb_evalrank'); mteb_evalrank.register()",
    ],
)
@pytest.mark.slow
def test_every_way_of_importing_registers(statement: str) -> None:
    code = (
        f"{statement}; print(type(mteb.get_task('EvalRankSent')).__name__, "
        "mteb.get_benchmark('EvalRank').name, mteb.get_model_meta('evalrank/glove.6B.50d').embed_dim)"
    )
    out = subprocess.run(
        [sys.executable, "-W", "error::UserWarning", "-c", code], capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == ["EvalRankSent", "EvalRank", "50"]


def test_the_maths_imports_neither_mteb_nor_torch() -> None:
    code = (
        "import sys, mteb_evalrank.evaluation.ranking, mteb_evalrank.evaluation.triplets; "
        "print(sorted({m.split('.')[0] for m in sys.modules} & {'mteb', 'torch', 'datasets'}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


# --- the adapter around mteb internals ---------------------------------------------------------


def test_every_mteb_internal_the_plugin_uses_is_present() -> None:
    from mteb_evalrank import _mteb_adapter

    _mteb_adapter.check()


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("mteb.get_tasks", "_TASKS_REGISTRY"),
        ("mteb.get_tasks", "TASK_LIST"),
        ("mteb.benchmarks.get_benchmark", "_build_registry"),
        ("mteb.benchmarks.get_benchmark", "_build_aliases_registry"),
        ("mteb.models.model_implementations", "MODEL_REGISTRY"),
        ("mteb._create_dataloaders", "create_dataloader"),
        ("mteb.abstasks._statistics_calculation", "calculate_pair_modality_statistics"),
        ("mteb.abstasks._statistics_calculation", "calculate_label_statistics"),
        ("mteb._evaluators.any_sts_evaluator", "STSEvaluatorScores"),
        ("mteb.results.task_result", "_write_and_merge_keyed_json"),
        ("mteb.models.cache_wrappers.cache_wrapper", "CachedEmbeddingWrapper"),
        ("huggingface_hub.constants", "HF_HUB_OFFLINE"),
        ("datasets.config", "HF_HUB_OFFLINE"),
    ],
)
def test_a_missing_mteb_internal_is_named(monkeypatch: pytest.MonkeyPatch, module: str, name: str) -> None:
    from mteb_evalrank._mteb_adapter import MtebInternalsChanged, check

    monkeypatch.delattr(importlib.import_module(module), name)
    with pytest.raises(MtebInternalsChanged, match=rf"{module}\.{name}.*supports mteb 2\.26"):
        check()


def _hook_ids() -> list[str]:
    from mteb_evalrank._mteb_adapter import TASK_HOOKS

    return [f"{cls}.{method}" for _, cls, method, _ in TASK_HOOKS]


@pytest.mark.parametrize("index", range(len(_hook_ids())), ids=_hook_ids())
def test_a_changed_private_task_hook_is_named(monkeypatch: pytest.MonkeyPatch, index: int) -> None:
    from mteb_evalrank._mteb_adapter import TASK_HOOKS, MtebInternalsChanged, check

    module, cls_name, method, parameters = TASK_HOOKS[index]
    cls = getattr(importlib.import_module(module), cls_name)
    if parameters:  # a renamed keyword
        monkeypatch.setattr(cls, method, lambda self, renamed=None: None)
        expected = "no longer takes the parameter"
    else:
        monkeypatch.setattr(cls, method, None)
        expected = "does not exist"
    with pytest.raises(MtebInternalsChanged, match=rf"{cls_name}\.{method}.*{expected}"):
        check()


@pytest.mark.parametrize("flag", ["_support_cross_encoder", "_support_search"])
def test_a_changed_private_task_flag_is_named(monkeypatch: pytest.MonkeyPatch, flag: str) -> None:
    from mteb.abstasks.abstask import AbsTask

    from mteb_evalrank._mteb_adapter import MtebInternalsChanged, check

    monkeypatch.setattr(AbsTask, flag, None)
    with pytest.raises(MtebInternalsChanged, match=rf"AbsTask\.{flag}.*no longer a bool flag"):
        check()


def test_a_changed_score_type_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    from mteb._evaluators.any_sts_evaluator import STSEvaluatorScores

    from mteb_evalrank._mteb_adapter import MtebInternalsChanged, check

    monkeypatch.setattr(STSEvaluatorScores, "__annotations__", {"renamed": list})
    with pytest.raises(MtebInternalsChanged, match=r"STSEvaluatorScores.*no longer has the key\(s\) cosine_"):
        check()


def test_every_private_mteb_name_a_task_class_overrides_is_declared_in_the_adapter() -> None:
    """A private hook or flag of an mteb base class that a plugin task class redefines is in
    ``TASK_HOOKS`` or ``TASK_FLAGS``, so that ``check()`` covers it (issue 28)."""
    from mteb_evalrank._mteb_adapter import TASK_FLAGS, TASK_HOOKS
    from mteb_evalrank.tasks import TASKS

    declared = {name for _, _, name, _ in TASK_HOOKS} | {name for _, _, name in TASK_FLAGS}
    undeclared = set()
    for task in TASKS:
        ours = [cls for cls in task.__mro__ if cls.__module__.startswith("mteb_evalrank.")]
        mtebs = [cls for cls in task.__mro__ if cls.__module__.startswith("mteb.")]
        for cls in ours:
            for name in vars(cls):
                private = name.startswith("_") and not name.startswith("__") and name != "_abc_impl"
                if private and any(name in vars(base) for base in mtebs) and name not in declared:
                    undeclared.add(f"{cls.__name__}.{name}")
    assert not undeclared, f"mteb internals overridden but not in _mteb_adapter: {sorted(undeclared)}"


def test_a_changed_cached_wrapper_init_is_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """``CachedEncoder`` sets, for a memory-only cache, what ``CachedEmbeddingWrapper.__init__``
    sets without calling it: ``check()`` fails once that ``__init__`` sets something else."""
    from mteb.models.cache_wrappers.cache_wrapper import CachedEmbeddingWrapper

    from mteb_evalrank._mteb_adapter import MtebInternalsChanged, check

    def changed_init(self: Any, model: Any, cache_path: Any) -> None:
        self._model, self.cache_path, self.cache_backend, self.cache_dict = model, cache_path, None, {}
        self.index = {}

    monkeypatch.setattr(CachedEmbeddingWrapper, "__init__", changed_init)
    with pytest.raises(MtebInternalsChanged, match=r"CachedEmbeddingWrapper\.__init__.*sets _model, .*index"):
        check()


def test_a_memory_only_cached_encoder_has_what_mteb_s_init_sets(tmp_path: Path) -> None:
    from mteb.models.cache_wrappers.cache_wrapper import CachedEmbeddingWrapper

    from mteb_evalrank._mteb_adapter import CACHED_WRAPPER_INIT_ATTRIBUTES
    from mteb_evalrank.embedding_cache import EmbeddingCache
    from mteb_evalrank.tasks._encoding import CachedEncoder

    class Model:
        mteb_model_meta = object()

        def encode(self, inputs: Any, **kwargs: Any) -> None: ...

        def similarity(self, a: Any, b: Any) -> str:
            return "the model's"

    model = Model()
    in_memory = CachedEncoder(model, EmbeddingCache())
    on_disk = CachedEncoder(model, EmbeddingCache(tmp_path))
    assert isinstance(in_memory, CachedEmbeddingWrapper)
    # what mteb's wrapper reads besides its encode and close (both replaced); never its folder
    assert set(vars(on_disk)) >= CACHED_WRAPPER_INIT_ATTRIBUTES - {"cache_path", "cache_backend"}
    assert list(tmp_path.iterdir()) == []
    assert in_memory.model is model and in_memory.cache_dict == {}
    # what mteb's own methods read through ``_model``
    assert in_memory.mteb_model_meta is model.mteb_model_meta and in_memory.similarity(1, 2) == "the model's"


def test_the_hub_switch_sets_and_restores_both_flags() -> None:
    import datasets
    from huggingface_hub import constants

    from mteb_evalrank._mteb_adapter import hub_switched_off

    before = constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE
    with pytest.raises(KeyError), hub_switched_off():
        assert constants.HF_HUB_OFFLINE is True and datasets.config.HF_HUB_OFFLINE is True
        raise KeyError("restored on the way out")
    assert before == (constants.HF_HUB_OFFLINE, datasets.config.HF_HUB_OFFLINE)


def test_run_settings_merge_as_mteb_s_result_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The study merges a job's ``run_settings.jsonl`` into the results' with mteb's helper; if
    mteb lacks it, the job's lines are appended (never lost)."""
    import json

    from mteb_evalrank.study.chain_execution import _merge_run_settings

    row = {"task": "T", "splits": ["test"], "subsets": ["default"], "settings": {"batch_size": 8}}
    staged, final = tmp_path / "staged.jsonl", tmp_path / "final.jsonl"
    staged.write_text(json.dumps(row) + "\n", encoding="utf-8")
    _merge_run_settings(staged, final)
    _merge_run_settings(staged, final)  # merged: the same task, split and subset once
    assert len(final.read_text(encoding="utf-8").splitlines()) == 1
    monkeypatch.delattr(importlib.import_module("mteb.results.task_result"), "_write_and_merge_keyed_json")
    _merge_run_settings(staged, final)
    assert len(final.read_text(encoding="utf-8").splitlines()) == 2


def _run_settings_rows(task: str, n: int) -> str:
    import json

    rows = [
        {"task": task, "splits": ["test"], "subsets": [f"s{i}"], "settings": {"batch": i}} for i in range(n)
    ]
    return "".join(json.dumps(row) + "\n" for row in rows)


def test_a_run_settings_merge_cut_by_a_full_disk_leaves_the_former_file(tmp_path: Path) -> None:
    """The study merges a job's ``run_settings.jsonl`` into the results' one: a merge that fails
    midway (a file size limit between the former file's size and the merged one's, as a full
    disk) leaves the former file, byte for byte, and no temporary file."""
    from mteb_evalrank.study.chain_execution import _merge_run_settings

    staged, final = tmp_path / "staged.jsonl", tmp_path / "results" / "run_settings.jsonl"
    staged.write_text(_run_settings_rows("A", 5), encoding="utf-8")
    final.parent.mkdir()
    _merge_run_settings(staged, final)
    former = final.read_bytes()
    staged.write_text(_run_settings_rows("B", 20), encoding="utf-8")
    limit = len(former) + 10
    assert limit < len(former) + len(staged.read_bytes())  # the merged file does not fit
    with pytest.raises(OSError, match="File too large"):
        in_a_second_process(under_a_file_size_limit, limit, _merge_run_settings, staged, final)
    assert final.read_bytes() == former
    assert [p.name for p in final.parent.iterdir() if p.name.endswith(".tmp")] == []
