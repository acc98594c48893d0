"""The code's shape: imports between ``mteb_evalrank`` modules go one way (no cycle), and no
function is longer than :data:`MAX_BODY_LINES` (ruff's C901 / PLR0915 bound complexity and
statements, not length: a long flat function such as a report renderer passes those).

Imports.

The import graph is read from the source with :mod:`ast`, not by importing anything: every
``import`` / ``from ... import`` statement counts, at module level, inside functions (lazy imports)
and under ``if TYPE_CHECKING:``. ``from package import name`` is an edge to ``package.name`` when
that is a module of the package, else to ``package`` (its ``__init__``). The implicit import of a
module's parent packages is not an edge (Python runs a package's ``__init__`` before its modules;
that is not a cycle). The graph must be acyclic: :class:`graphlib.TopologicalSorter` raises
:class:`graphlib.CycleError` naming a cycle otherwise.
"""

from __future__ import annotations

import ast
import graphlib
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
PACKAGE = REPO / "mteb_evalrank"

#: Lines of a function's body (from its first statement after the docstring to its end) allowed.
MAX_BODY_LINES = 60
#: Functions still longer, each to be split (the test fails once one is short enough, so that
#: the entry is removed). Empty: every function of the package is within the limit.
LONG_FUNCTIONS_TO_SPLIT: frozenset[str] = frozenset()


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


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the package's modules it imports (anywhere in its source)."""
    modules = module_names(package)
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        is_package = path.name == "__init__.py"
        deps: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
            if not isinstance(node, ast.Import | ast.ImportFrom):
                continue
            candidates = _imported(node, name, is_package)
            if isinstance(node, ast.ImportFrom):
                # ``from p import m`` reaches module p.m if it exists, else names of p itself
                submodules = [c for c in candidates[:-1] if c in modules]
                names_of_base = len(submodules) < len(candidates) - 1
                candidates = submodules + ([candidates[-1]] if names_of_base else [])
            for target in candidates:
                while target not in modules and "." in target:  # ``import a.b.c`` of a name: its module
                    target = target.rsplit(".", 1)[0]
                if target in modules and target != name:
                    deps.add(target)
        graph[name] = deps
    return graph


def test_the_graph_sees_every_kind_of_import() -> None:
    """Edges the source plainly has: relative, TYPE_CHECKING-only, lazy (inside a function)."""
    graph = import_graph(PACKAGE)
    assert "mteb_evalrank.correlation.results" in graph["mteb_evalrank.correlation.core"]  # from .results
    assert "mteb_evalrank.correlation.results" in graph["mteb_evalrank.correlation.report"]  # TYPE_CHECKING
    assert "mteb_evalrank.correlation.figures" in graph["mteb_evalrank.correlation.core"]  # in a method
    assert "mteb_evalrank.tasks" in graph["mteb_evalrank._registration"]  # in a function: the package
    assert "mteb_evalrank.correlation.stats" in graph["mteb_evalrank.correlation.core"]  # from . import stats


def test_a_cycle_is_found(tmp_path: Path) -> None:
    """The check fails on a package whose two modules refer to each other (one only for typing)."""
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "sub" / "__init__.py").write_text("from .a import A\n", encoding="utf-8")
    (package / "sub" / "a.py").write_text("from ..b import helper\nclass A: ...\n", encoding="utf-8")
    (package / "b.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import a\n"
        "def helper() -> None: ...\n",
        encoding="utf-8",
    )
    graph = import_graph(package)
    assert graph == {"pkg": set(), "pkg.b": {"pkg.sub.a"}, "pkg.sub": {"pkg.sub.a"}, "pkg.sub.a": {"pkg.b"}}
    with pytest.raises(graphlib.CycleError):
        tuple(graphlib.TopologicalSorter(graph).static_order())


def test_no_import_cycle_among_the_package_s_modules() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 100  # every module was read
    try:
        order = list(graphlib.TopologicalSorter(graph).static_order())
    except graphlib.CycleError as error:
        cycle = " -> ".join(error.args[1])
        pytest.fail(f"import cycle: {cycle}; move what both sides need into a module below them")
    assert set(order) == set(graph)


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
