"""No two of Voyager's modules import each other, directly or around a circle, read statically from the AST.

A cycle works until someone moves an import to the top of a file, and then fails at import time
in whichever order the modules happen to load; it also says two modules share one owner. Every
import counts, at the top of a module or inside a function (an import put off until a call is
still a dependency), except those under ``if TYPE_CHECKING:``, which only the type checker runs.
An import names the most specific module it reaches (``from a.b import c`` is ``a.b.c`` when that
is a module, else ``a.b``), as import-linter counts them; a package's ``__init__`` run on the way
to its submodule is not an edge of its own.
"""

from __future__ import annotations

import pytest

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "voyager_sessions"
#: Import name -> the folder it is installed from (pyproject's package-dir).
FOLDERS = {
    PACKAGE: ROOT / "voyager_sessions",
    f"{PACKAGE}.search": ROOT / "search",
    f"{PACKAGE}.ingest": ROOT / "ingest",
    f"{PACKAGE}.store": ROOT / "store",
}


def modules(folders: dict[str, Path]) -> dict[str, Path]:
    """Every module's dotted name -> its file, for packages installed from ``folders``."""
    found: dict[str, Path] = {}
    for prefix, folder in folders.items():
        for path in folder.rglob("*.py"):
            rel = path.relative_to(folder)
            if "__pycache__" in rel.parts or "corpus" in rel.parts:
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([prefix, *parts])] = path
    return found


def _type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def imports(name: str, path: Path, known: dict[str, Path]) -> set[str]:
    """The project's modules ``name`` imports anywhere in its code, save under ``if TYPE_CHECKING:``."""
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    named: set[str] = set()

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _type_checking(child):
                for other in child.orelse:
                    visit_one(other)
            else:
                visit_one(child)

    def visit_one(node: ast.AST) -> None:
        if isinstance(node, ast.Import):
            named.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package[: len(package) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            for alias in node.names:
                full = f"{module}.{alias.name}"
                named.add(full if full in known else module)
        else:
            visit(node)

    visit(ast.parse(path.read_text(encoding="utf-8"), str(path)))
    edges: set[str] = set()
    for target in named:
        while target and target not in known:
            target = target.rpartition(".")[0]
        if target and target != name:
            edges.add(target)
    return edges


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's, without recursion)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def graph_of(folders: dict[str, Path]) -> dict[str, set[str]]:
    known = modules(folders)
    return {name: imports(name, path, known) for name, path in known.items()}


@pytest.mark.slow
def test_no_module_of_voyager_imports_itself_around_a_circle():
    graph = graph_of(FOLDERS)
    assert len(graph) > 150  # the walk found the project (ingest, search and store included)
    assert f"{PACKAGE}.scan.run" in graph[f"{PACKAGE}.scan.refresh"]
    assert cycles(graph) == []


def _write(root: Path, files: dict[str, str]) -> dict[str, Path]:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return {"pkg": root / "pkg"}


def test_a_circle_through_an_import_inside_a_function_is_found(tmp_path):
    folders = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import thing\n",
            "pkg/b.py": "def thing():\n    from pkg import c\n",
            "pkg/c.py": "from . import a\n",
            "pkg/d.py": "import pkg.a\n",
        },
    )
    assert cycles(graph_of(folders)) == [["pkg.a", "pkg.b", "pkg.c"]]


def test_an_import_for_the_type_checker_alone_is_no_circle(tmp_path):
    folders = _write(
        tmp_path,
        {
            "pkg/__init__.py": "",
            "pkg/a.py": "from pkg.b import B\n",
            "pkg/b.py": (
                "from typing import TYPE_CHECKING\nimport typing\n"
                "if TYPE_CHECKING:\n    from pkg.a import A\nelse:\n    A = None\n"
                "if typing.TYPE_CHECKING:\n    import pkg.a\n"
                "class B: ...\n"
            ),
        },
    )
    assert cycles(graph_of(folders)) == []
    folders = _write(tmp_path, {"pkg/b.py": "if TYPE_CHECKING:\n    pass\nelse:\n    from pkg.a import A\n"})
    assert cycles(graph_of(folders)) == [["pkg.a", "pkg.b"]]
