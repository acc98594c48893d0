"""The code's shape: docs/architecture.md's layer table agrees with the import contract, the
dataset recipes import only the data layer and below, and no function is longer than
:data:`MAX_BODY_LINES` (ruff's C901 / PLR0915 bound complexity and statements, not length: a long
flat function such as a report renderer passes those).

Imports within the package are checked by ``lint-imports`` (scripts/test.sh) against the contracts
in pyproject.toml: the layers, every import pointing down, every module in one layer; no import
cycle among siblings at any depth. grimp reads every ``import`` statement, at module level, inside
functions (lazy imports) and under ``if TYPE_CHECKING:``.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "mteb_evalrank"

#: Lines of a function's body (from its first statement after the docstring to its end) allowed.
MAX_BODY_LINES = 60
#: Functions still longer, each to be split (the test fails once one is short enough, so that
#: the entry is removed). Empty: every function of the package is within the limit.
LONG_FUNCTIONS_TO_SPLIT: frozenset[str] = frozenset()


# ----------------------------------------------------------------------------- layers
ARCHITECTURE_DOC = REPO / "docs" / "architecture.md"


def contract_layers() -> list[list[str]]:
    """The layers of pyproject.toml's import contract, from the base up, each a list of module names."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    return [[name.strip() for name in re.split(r"[|:]", layer)] for layer in reversed(contract["layers"])]


def test_the_layer_table_lists_the_contract_s_layers_in_its_order() -> None:
    """docs/architecture.md's table names every module of the contract, base first, layer by layer."""
    table = ARCHITECTURE_DOC.read_text(encoding="utf-8").split("\n## ")[1]
    positions = []
    for layer in contract_layers():
        found = [table.find(f"`mteb_evalrank/{name}{suffix}`") for name in layer for suffix in (".py", "/")]
        assert sum(f >= 0 for f in found) == len(layer), f"{layer}: not all in the layer table"
        positions.append(min(f for f in found if f >= 0))
    assert positions == sorted(positions)


def test_the_dataset_recipes_import_only_the_data_layer_and_below() -> None:
    """The recipes (``tasks/<family>/recipe.py``, outside the package, so outside the contract)."""
    layers = contract_layers()
    allowed = {f"mteb_evalrank.{name}" for layer in layers[: layers.index(["data"]) + 1] for name in layer}
    recipes = sorted((REPO / "tasks").glob("*/recipe.py"))
    assert len(recipes) >= 9
    for recipe in recipes:
        tree = ast.parse(recipe.read_text(encoding="utf-8"))
        imported = {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
        imported |= {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
        ours = {".".join(m.split(".")[:2]) for m in imported if m.startswith("mteb_evalrank")}
        assert ours and ours <= allowed, f"{recipe.relative_to(REPO)}: {sorted(ours - allowed)}"


def test_the_study_results_stay_out_of_the_docs_build() -> None:
    """docs/study/run holds the study's result files (issue 28): committed, but no part of the site."""
    assert (REPO / "docs" / "study" / "run" / "results").is_dir()
    config = (REPO / "mkdocs.yml").read_text(encoding="utf-8")
    block = re.search(r"^exclude_docs: \|\n((?:  .*\n)+)", config, re.MULTILINE)
    assert block is not None and "study/run/" in block.group(1).split()


def test_no_heading_of_the_readme_or_docs_names_a_tracker_number() -> None:
    """Headings (and so the anchors that link to them) say what a section is about; a tracker
    number ("(issue 15)", "(issues 27 and 33)") means nothing to a reader: history is the CHANGELOG's."""
    pages = [REPO / "README.md", *(p for p in (REPO / "docs").rglob("*.md") if "run" not in p.parts)]
    numbered = [
        f"{page.relative_to(REPO)}:{number}: {line}"
        for page in pages
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), 1)
        if re.match(r"#+ .*\bissues? \d+", line, flags=re.IGNORECASE)
    ]
    assert numbered == []
    linked = "".join(page.read_text(encoding="utf-8") for page in pages)
    assert not re.search(r"#[\w-]*-issues?-\d+", linked)  # no link to an anchor made of one


# ----------------------------------------------------------------------------- function length
def body_lines(source: str) -> dict[str, int]:
    """Function (qualified by its enclosing functions and classes) -> lines of its body after the
    docstring; comments and blank lines inside the body count."""
    lengths: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef):
                body = child.body
                if isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                    body = body[1:]  # the docstring
                if body:
                    lengths[prefix + child.name] = (child.end_lineno or child.lineno) - body[0].lineno + 1
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(ast.parse(source), "")
    return lengths


def test_body_lines_counts_from_the_first_statement_after_the_docstring() -> None:
    source = 'def f():\n    """Doc\n    string."""\n    a = 1\n\n    # note\n    return a\n'
    source += "class C:\n    def m(self):\n        def inner():\n            pass\n        return inner\n"
    assert body_lines(source) == {"f": 4, "C.m": 3, "C.m.inner": 1}  # counted by hand


def test_no_function_is_longer_than_the_limit() -> None:
    files = [*PACKAGE.rglob("*.py"), *(REPO / "benchmarks").glob("*.py"), *(REPO / "scripts").glob("*.py")]
    files += (REPO / "tasks").rglob("*.py")
    lengths = {
        f"{path.relative_to(REPO).as_posix()}:{name}": n
        for path in files
        for name, n in body_lines(path.read_text(encoding="utf-8")).items()
    }
    assert len(lengths) > 500  # every file was read
    too_long = {name: n for name, n in lengths.items() if n > MAX_BODY_LINES}
    new = sorted(f"{name} ({too_long[name]} lines)" for name in set(too_long) - LONG_FUNCTIONS_TO_SPLIT)
    assert not new, f"split these along the steps they perform (at most {MAX_BODY_LINES} lines): {new}"
    done = sorted(LONG_FUNCTIONS_TO_SPLIT - set(too_long))
    assert not done, f"short enough now (or gone): remove from LONG_FUNCTIONS_TO_SPLIT: {done}"


# ----------------------------------------------------------------------------- mteb's private names
#: The one module allowed to name mteb's internals (it checks them all: ``_mteb_adapter.check``).
ADAPTER = PACKAGE / "_mteb_adapter.py"
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")


def _private(dotted: str) -> bool:
    """Whether a dotted path of mteb's has a part starting with ``_`` (dunders are not private)."""
    parts = dotted.split(".")
    return parts[0] == "mteb" and any(p.startswith("_") and not p.endswith("__") for p in parts[1:])


def _is_mteb(module: str) -> bool:
    return module.split(".")[0] == "mteb"


def _attribute_path(node: ast.Attribute) -> tuple[str, list[str]] | None:
    """``a.b.c`` as (``a``, [``b``, ``c``]) when the chain starts at a plain name, else ``None``."""
    parts: list[str] = []
    value: ast.expr = node
    while isinstance(value, ast.Attribute):
        parts.insert(0, value.attr)
        value = value.value
    return (value.id, parts) if isinstance(value, ast.Name) else None


def private_mteb_names(source: str) -> set[str]:
    """The private mteb names a module's source uses: imported (``from mteb._x import y``,
    ``from mteb.x import _y``, ``import mteb._x``), reached as an attribute of a name bound to an
    mteb import (``mteb._x``, ``module._y``) or spelled as a whole string (``"mteb.x._y"``, for
    ``importlib``)."""
    tree = ast.parse(source)
    bound: dict[str, str] = {}  # local name -> the dotted mteb path it is bound to
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if _is_mteb(alias.name):
                    found.add(alias.name)
                    bound[alias.asname or "mteb"] = alias.name if alias.asname else "mteb"
        elif (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and (node.module or "").split(".")[0] == "mteb"
        ):
            for alias in node.names:
                found.add(f"{node.module}.{alias.name}")
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str) and _DOTTED.fullmatch(node.value):
            found.add(node.value)
    for node in ast.walk(tree):
        path = _attribute_path(node) if isinstance(node, ast.Attribute) else None
        if path is not None and path[0] in bound:
            found.add(".".join([bound[path[0]], *path[1]]))
    return {name for name in found if _private(name)}


def test_private_mteb_names_are_found() -> None:
    source = (
        "import mteb\nimport mteb.cache.result_cache as rc\nfrom mteb import get_task, _create_dataloaders\n"
        "from mteb._evaluators.x import Scores\n"
        "from mteb.models.cache_wrappers import CachedEmbeddingWrapper\n"
        "from .mteb._local import fine\nimport importlib\n"
        "def f(w):\n    mteb.get_task('x')\n    rc._write_and_merge_keyed_json(1, 2)\n"
        "    w._model = 1\n    CachedEmbeddingWrapper.__init__\n    mteb._evaluators.y\n"
        "    importlib.import_module('mteb.get_tasks._TASKS_REGISTRY')\n    'see mteb._x in the text'\n"
        "    mteb.__version__\n"
    )
    assert private_mteb_names(source) == {
        "mteb._create_dataloaders",
        "mteb._evaluators.x.Scores",
        "mteb.cache.result_cache._write_and_merge_keyed_json",
        "mteb._evaluators.y",
        "mteb._evaluators",
        "mteb.get_tasks._TASKS_REGISTRY",
    }


def test_only_the_adapter_names_private_mteb_names() -> None:
    """mteb's private names (a dotted path with a part starting with ``_``) appear in
    ``_mteb_adapter.py`` only (or are a task hook or flag it declares), so that its ``check()``
    covers every internal the plugin relies on (issue 28). Read: the package, the dataset recipes,
    benchmarks/, scripts/ and the CLI hook; the tests name internals on purpose (they break them
    to see ``check()`` name them)."""
    from mteb_evalrank._mteb_adapter import TASK_FLAGS, TASK_HOOKS

    files = [*PACKAGE.rglob("*.py"), *(REPO / "tasks").rglob("*.py"), REPO / "_mteb_evalrank_hook.py"]
    files += [*(REPO / "benchmarks").glob("*.py"), *(REPO / "scripts").glob("*.py")]

    # the private task hooks and flags are declared in the adapter and checked there; a benchmark
    # may call one by its class (bench_evalrank: the stock retrieval scoring)
    declared = {".".join(hook[:3]) for hook in TASK_HOOKS} | {".".join(flag) for flag in TASK_FLAGS}
    assert private_mteb_names(ADAPTER.read_text(encoding="utf-8"))  # the check sees the adapter's names
    outside = {
        f"{path.relative_to(REPO).as_posix()}: {name}"
        for path in files
        if path != ADAPTER
        for name in private_mteb_names(path.read_text(encoding="utf-8")) - declared
    }
    assert not outside, f"private mteb names outside _mteb_adapter.py (move them there): {sorted(outside)}"


# ----------------------------------------------------------------------------- file writes
FILES = PACKAGE / "_files.py"
#: the calls that move a file or folder into place by name
_RENAMES = frozenset({"os.replace", "os.rename", "os.renames", "shutil.move"})


def renames_and_locks(source: str) -> list[str]:
    """``line: what`` for each rename in ``source``: a call of :data:`_RENAMES` (or an import of
    one), a ``<path>.rename(x)`` / ``<path>.replace(x)`` (one positional argument and no keyword:
    not ``str.replace(a, b)`` nor ``DataFrame.rename(columns=...)``), and each ``fcntl`` import."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [
                f"{node.lineno}: import {a.name}" for a in node.names if a.name.split(".")[0] == "fcntl"
            ]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [f"{node.module}.{a.name}" for a in node.names]
            found += [f"{node.lineno}: {n}" for n in names if n in _RENAMES or node.module == "fcntl"]
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            one_path = len(node.args) == 1 and not node.keywords
            if _dotted(node.func) in _RENAMES or (node.func.attr in {"rename", "replace"} and one_path):
                found.append(f"{node.lineno}: {ast.unparse(node.func)}")
    return found


def test_renames_and_locks_are_found() -> None:
    source = (
        "import os, fcntl\nimport shutil\nfrom os import rename\nfrom fcntl import flock\n"
        "def f(p, q, frame):\n    os.replace(p, q)\n    shutil.move(p, q)\n    p.rename(q)\n"
        "    p.with_name('x').replace(q)\n    'a-b'.replace('-', '_')\n    frame.rename(columns={})\n"
        "    frame.replace(1, 2)\n    q.unlink()\n"
    )
    assert renames_and_locks(source) == [
        "1: import fcntl",
        "3: os.rename",
        "4: fcntl.flock",
        "6: os.replace",
        "7: shutil.move",
        "8: p.rename",
        "9: p.with_name('x').replace",
    ]


def test_every_rename_and_lock_is_in_the_files_module() -> None:
    """A file or folder another process or a user reads is moved into place by ``_files.py``'s
    helpers only (``replacing``, ``write_text``, ``save_figure``, ``move_into_place``,
    ``publishing``, ``move_aside``), and every lock across processes is ``filelock``'s
    (``folder_lock``, ``file_lock``): no rename elsewhere in the package, no ``fcntl`` anywhere."""
    outside = [
        f"{path.relative_to(REPO).as_posix()}:{where}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for where in renames_and_locks(path.read_text(encoding="utf-8"))
        if path != FILES or "fcntl" in where
    ]
    assert not outside, f"renames or fcntl outside mteb_evalrank/_files.py (use its helpers): {outside}"
    assert renames_and_locks(FILES.read_text(encoding="utf-8"))  # the check sees the helpers' renames


# ----------------------------------------------------------------------------- module state
#: Methods that change a list, dict or set in place.
_MUTATORS = frozenset(
    {"append", "extend", "insert", "add", "update", "setdefault", "pop", "popitem", "clear", "remove"}
    | {"discard"}
)
_MEMO_DECORATORS = frozenset({"cache", "lru_cache", "functools.cache", "functools.lru_cache"})
STATE_KINDS = ("global", "contextvar", "memo", "mutated", "patched")


def module_names(package: Path) -> dict[str, Path]:
    """Dotted module name -> file, for every ``.py`` file under ``package`` (packages by ``__init__``)."""
    names: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names[".".join(parts)] = path
    return names


def _imported(node: ast.Import | ast.ImportFrom, module: str, is_package: bool) -> list[str]:
    """The dotted names an import statement in ``module`` reaches (candidates, not yet resolved)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:  # relative: ``from .x import y`` in a.b.c (module) means a.b.x; in a package a.b, a.b.x
        anchor = module.split(".") if is_package else module.split(".")[:-1]
        anchor = anchor[: len(anchor) - node.level + 1]
        base = ".".join([*anchor, *([node.module] if node.module else [])])
    else:
        base = node.module or ""
    return [f"{base}.{alias.name}" for alias in node.names] + [base]


def _dotted(node: ast.expr) -> str | None:
    """``a.b.c`` of a chain of attributes on a plain name (a call's function for a decorator)."""
    if isinstance(node, ast.Call):
        node = node.func
    path = _attribute_path(node) if isinstance(node, ast.Attribute) else None
    if path is not None:
        return ".".join([path[0], *path[1]])
    return node.id if isinstance(node, ast.Name) else None


def _imported_names(tree: ast.Module, module: str) -> dict[str, str]:
    """Name bound by an import anywhere in the module -> what it names (dotted, relative resolved)."""
    names: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                top = alias.name.split(".")[0]
                names[alias.asname or top] = alias.name if alias.asname else top
        elif isinstance(node, ast.ImportFrom):
            base = _imported(node, module, False)[-1]
            names |= {alias.asname or alias.name: f"{base}.{alias.name}" for alias in node.names}
    return names


def _assigned(node: ast.AST) -> list[ast.expr]:
    """The targets an assignment or ``del`` statement binds, tuples unpacked."""
    targets: list[ast.expr] = []
    if isinstance(node, ast.Assign | ast.Delete):
        targets = list(node.targets)
    elif isinstance(node, ast.AnnAssign | ast.AugAssign):
        targets = [node.target]
    return [
        item for target in targets for item in (target.elts if isinstance(target, ast.Tuple) else [target])
    ]


def _top_level(tree: ast.Module) -> dict[str, ast.expr | None]:
    """Module-level names bound by an assignment -> the value bound."""
    return {
        target.id: node.value
        for node in tree.body
        if isinstance(node, ast.Assign | ast.AnnAssign)
        for target in _assigned(node)
        if isinstance(target, ast.Name)
    }


def _changed_in_functions(tree: ast.Module, top_level: set[str], state: dict[str, set[str]]) -> None:
    """``global`` statements, memos, and module-level containers (or ``sys.modules``) changed in place."""
    for function in [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]:
        if any(_dotted(d) in _MEMO_DECORATORS for d in function.decorator_list):
            state["memo"].add(function.name)
        for node in ast.walk(function):
            if isinstance(node, ast.Global):
                state["global"] |= set(node.names)
            owners = [_dotted(t.value) for t in _assigned(node) if isinstance(t, ast.Subscript)]
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in _MUTATORS
            ):
                owners.append(_dotted(node.func.value))
            state["mutated"] |= {owner for owner in owners if owner in top_level}
            state["patched"] |= {owner for owner in owners if owner == "sys.modules"}


def module_state(source: str, module: str) -> dict[str, set[str]]:
    """The module-level state a module's source keeps or changes, by kind:

    * ``global``: names a ``global`` statement rebinds;
    * ``contextvar``: module-level names bound to a ``ContextVar(...)``;
    * ``memo``: functions decorated with ``functools.cache`` / ``lru_cache`` (a memo per process);
    * ``mutated``: module-level names whose container a function changes in place
      (``X[k] = v``, ``del X[k]``, ``X.append(...)``, ...);
    * ``patched``: attributes of an imported module or class assigned anywhere
      (``_postponed.pending = f``), and ``sys.modules`` changed in a function.
    """
    tree = ast.parse(source)
    top_level = _top_level(tree)
    state: dict[str, set[str]] = {kind: set() for kind in STATE_KINDS}
    state["contextvar"] = {
        name
        for name, value in top_level.items()
        if value is not None and _dotted(value) in {"ContextVar", "contextvars.ContextVar"}
    }
    _changed_in_functions(tree, set(top_level), state)
    imported = _imported_names(tree, module)
    for node in ast.walk(tree):
        for target in _assigned(node):
            path = _attribute_path(target) if isinstance(target, ast.Attribute) else None
            if path is not None and path[0] in imported:
                state["patched"].add(".".join([imported[path[0]], *path[1]]))
    return state


def module_state_table(markdown: str) -> list[tuple[frozenset[str], frozenset[str]]]:
    """docs/architecture.md's "Module state" table: per row, the modules (``where``, relative to
    the package) and the state it names (backticked)."""
    section = markdown.split("\n## Module state\n", 1)[1].split("\n## ", 1)[0]
    rows = [line.strip().strip("|").split("|") for line in section.splitlines() if line.startswith("| `")]
    return [
        (frozenset(re.findall(r"`([^`]+)`", where)), frozenset(re.findall(r"`([^`]+)`", state)))
        for where, state, *_ in rows
    ]


def package_state() -> dict[tuple[str, str], str]:
    """(module relative to the package, name) -> kind, for every piece of state of the package."""
    found = {}
    for name, path in module_names(PACKAGE).items():
        relative = name.removeprefix("mteb_evalrank.")
        for kind, names in module_state(path.read_text(encoding="utf-8"), name).items():
            found |= {(relative, item.removeprefix("mteb_evalrank.")): kind for item in names}
    return found


def test_module_state_is_found() -> None:
    source = (
        "import sys\nfrom contextvars import ContextVar\nfrom functools import cache\nfrom . import other\n"
        "import torch\n_SEEN: dict[str, int] = {}\n_FIXED = {'a': 1}\n"
        "CURRENT: ContextVar[int] = ContextVar('c')\n"
        "@cache\ndef load() -> int:\n    return 1\n"
        "def f(key: str) -> None:\n    global _FIXED\n    _SEEN[key] = 1\n    _SEEN.setdefault(key, 2)\n"
        "    sys.modules['x'] = other\n    other.pending = f\n    torch.backends.flag = False\n"
        "    local = {}\n    local['k'] = 1\n"
    )
    assert module_state(source, "pkg.mod") == {
        "global": {"_FIXED"},
        "contextvar": {"CURRENT"},
        "memo": {"load"},
        "mutated": {"_SEEN"},
        "patched": {"sys.modules", "pkg.other.pending", "torch.backends.flag"},
    }


def test_no_global_statement_and_the_module_state_table_names_every_piece_of_state() -> None:
    """Issue 28: no module-level mutable cache swapped at run time. No ``global`` in the package;
    every context variable, ``functools.cache`` memo, module-level container changed by a function
    and attribute of another module set is named in docs/architecture.md's "Module state" table
    with why it is safe, and every row names state that exists."""
    state = package_state()
    assert len(state) > 20  # every module was read
    globals_ = sorted(
        f"{module}: global {name}" for (module, name), kind in state.items() if kind == "global"
    )
    assert not globals_, f"module state rebound at run time (use a ContextVar or pass it): {globals_}"
    table = module_state_table(ARCHITECTURE_DOC.read_text(encoding="utf-8"))
    unnamed = sorted(
        f"{module}: {name} ({kind})"
        for (module, name), kind in state.items()
        if not any(module in where and name in names for where, names in table)
    )
    assert not unnamed, f"state not in docs/architecture.md's Module state table (add a row): {unnamed}"
    stale = [
        f"{sorted(where)}: {sorted(names)}"
        for where, names in table
        if not all(any((m, n) in state for n in names) for m in where)
        or not all(any((m, n) in state for m in where) for n in names)
    ]
    assert not stale, f"Module state rows naming no such state: {stale}"
