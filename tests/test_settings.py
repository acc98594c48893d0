"""The settings object: every variable read from a given environment, once."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from mteb_evalrank.settings import (
    DEFAULT_CACHE_MIB,
    DEFAULT_TIMEOUT,
    OFFLINE_ENVS,
    PREFIX,
    Settings,
    SettingsError,
)


def test_an_empty_environment_gives_the_documented_defaults() -> None:
    settings = Settings.from_environment({"XDG_CACHE_HOME": "/c"})
    assert settings == Settings(home=Path("/c/mteb-evalrank"))
    assert (
        (settings.fetch_timeout, settings.cache_mib) == (DEFAULT_TIMEOUT, DEFAULT_CACHE_MIB) == (30.0, 4096)
    )
    assert settings.offline is None and settings.reuse_embeddings and settings.source is None


def test_every_variable_is_read() -> None:
    env = {
        "MTEB_EVALRANK_HOME": "/h", "MTEB_EVALRANK_SOURCE": "/s", "MTEB_EVALRANK_RAW_URL": "http://m/raw/",
        "MTEB_EVALRANK_VECTORS_URL": "http://m/v", "MTEB_EVALRANK_FETCH_TIMEOUT": "2.5",
        "MTEB_EVALRANK_VOCABULARY": "/w.txt", "MTEB_EVALRANK_REUSE_EMBEDDINGS": " 0 ",
        "MTEB_EVALRANK_EMBEDDING_CACHE": "/e", "MTEB_EVALRANK_CACHE_MIB": "64",
        "MTEB_EVALRANK_TASKS_FROM_FILES": "A=/a", "HF_DATASETS_OFFLINE": "yes",
    }  # fmt: skip
    assert Settings.from_environment(env) == Settings(
        home=Path("/h"), source=Path("/s"), raw_url="http://m/raw", vectors_url="http://m/v",
        fetch_timeout=2.5, offline="HF_DATASETS_OFFLINE", vocabulary=Path("/w.txt"),
        reuse_embeddings=False, embedding_cache=Path("/e"), cache_mib=64, tasks_from_files="A=/a",
    )  # fmt: skip


def test_the_plugins_offline_switch_is_named_first_and_false_values_are_online() -> None:
    both = {"HF_HUB_OFFLINE": "1", "MTEB_EVALRANK_OFFLINE": "ON", "XDG_CACHE_HOME": "/c"}
    assert Settings.from_environment(both).offline == "MTEB_EVALRANK_OFFLINE"
    assert Settings.from_environment({"HF_HUB_OFFLINE": "0", "MTEB_EVALRANK_OFFLINE": ""}).offline is None


@pytest.mark.parametrize("name", ["MTEB_EVALRANK_FETCH_TIMEOUT", "MTEB_EVALRANK_CACHE_MIB"])
def test_a_number_that_is_not_one_names_the_variable(name: str) -> None:
    with pytest.raises(SettingsError, match=f"{name}='soon' is not a number"):
        Settings.from_environment({name: "soon"})


# Modules helper branches still convert to take the settings; the lead removes each when its branch lands.
READ_AT_EXIT = {("mteb_evalrank/_user_errors.py", "MTEB_EVALRANK_TRACEBACK")}
"""The excepthook reads its switch raw: an error in the settings themselves must still be shown."""


def environment_reads(tree: ast.AST) -> list[tuple[int, str | None]]:
    """``(line, variable)`` of every read of one variable (``os.environ.get(...)``,
    ``os.environ[...]``, ``os.getenv(...)``, ``... in os.environ``); ``None``: not a literal name."""

    def is_environ(node: ast.AST) -> bool:
        return isinstance(node, ast.Attribute) and node.attr == "environ" and ast.unparse(node.value) == "os"

    def name(node: ast.AST) -> str | None:
        return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None

    reads: list[tuple[int, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and node.args and isinstance(node.func, ast.Attribute):
            func = node.func
            if (func.attr in ("get", "pop") and is_environ(func.value)) or ast.unparse(func) == "os.getenv":
                reads.append((node.lineno, name(node.args[0])))
        elif isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and is_environ(node.value):
            reads.append((node.lineno, name(node.slice)))
        elif isinstance(node, ast.Compare) and any(is_environ(c) for c in node.comparators):
            reads.append((node.lineno, name(node.left)))
    return reads


def test_no_module_but_settings_reads_a_plugin_variable() -> None:
    """Every ``MTEB_EVALRANK_*`` and offline variable is read by ``Settings.from_environment`` alone
    (a read whose variable is not a literal counts as one)."""
    root = Path(__file__).resolve().parents[1]
    found = []
    for path in sorted((root / "mteb_evalrank").rglob("*.py")):
        module = path.relative_to(root).as_posix()
        if module == "mteb_evalrank/settings.py":
            continue
        for line, variable in environment_reads(ast.parse(path.read_text(encoding="utf-8"))):
            plugin = variable is None or variable.startswith(PREFIX) or variable in OFFLINE_ENVS
            if plugin and (module, variable) not in READ_AT_EXIT:
                found.append(f"{module}:{line}: {variable or 'a variable named by an expression'}")
    assert not found, "read Settings instead:\n" + "\n".join(found)


EDGES = {
    "cli.py": "the command line",
    "_registration.py": "register(), from mteb's import or a script",
    "_user_errors.py": "the top-level error printer",
    "tasks/_loading.py": "a task's load_data",
    "tasks/_encoding.py": "a task's evaluate",
    "models/zoo.py": "the zoo's loader",
    "models/paper_word.py": "the paper word-vector sets' loader and fetch",
    "models/wrappers.py": "the post-processing fit corpus, read by a loader",
    "models/hf_variants.py": "a population variant's loader",
    "study/api.py": "run_study, from a script or the command line",
    "study/chain_execution.py": "run_chain, a worker process's start",
}
"""Where control enters the plugin: the modules that may call ``Settings.from_environment()``."""


def test_only_the_edges_build_the_settings() -> None:
    """Below the edges the settings are a parameter: no other module calls ``from_environment``."""
    package = Path(__file__).resolve().parents[1] / "mteb_evalrank"
    callers = {
        path.relative_to(package).as_posix()
        for path in package.rglob("*.py")
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Attribute)
        and node.attr == "from_environment"
        and isinstance(node.ctx, ast.Load)
    }
    assert callers - {"settings.py"} <= set(EDGES), f"pass the settings down instead: {callers - set(EDGES)}"


def test_the_scan_finds_each_kind_of_read() -> None:
    code = (
        'os.environ.get("MTEB_EVALRANK_HOME")\nos.getenv(NAME)\nx = os.environ["HF_HUB_OFFLINE"]\n'
        '"A" in os.environ\nos.environ["B"] = "1"\ndict(os.environ)\n'
    )
    assert environment_reads(ast.parse(code)) == [
        (1, "MTEB_EVALRANK_HOME"),
        (2, None),
        (3, "HF_HUB_OFFLINE"),
        (4, "A"),
    ]
