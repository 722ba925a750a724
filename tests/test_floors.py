"""The floors of the house, as an allow-list: each module group names the groups it may import.

From the bottom up (docs/architecture.md):

* the **bottom** — ``voyager_sessions`` itself and the ``voyager_sessions/core/`` folder (``model``, ``errors``,
  ``paths``, ``textsafe``, ``lock``, ``isotime``, ``plural``, ``lastsearch``, ``wire``, ``remote``, ``jsontext``,
  ``toolnames``, ``toolview``, ``digest``) — the vocabulary every layer shares; it imports nothing of Voyager's above it;
* ``ingest`` (agents' formats), ``search`` (Tantivy, the query language), ``store`` (Voyager's SQL) —
  each the bottom and itself, never one another;
* ``export``: the renderers of an exported session (Markdown, HTML, redaction), on the bottom alone;
* ``scan`` (moves data between those three) and ``api`` (the one door every front end calls: reading,
  browsing, sessions, exports, resume plans, and the writer's freshness);
* the front ends (``cli``, ``serve``, ``mcp``, ``tui``, ``web``, ``demo``): the API, the export renderers and
  the bottom, never ``search``, ``store``, ``ingest`` or ``scan`` themselves.

Every import form counts: ``import``, ``from … import`` (a name that is a module counts as that module),
relative imports, and imports inside functions. A top-level ``search``/``ingest``/``store`` import is
never allowed: those folders are installed as ``voyager_sessions.search`` and so on, and importing them by
their folder name would load a second copy of every module.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

#: Import package -> the folder it is installed from (pyproject's package-dir mapping).
FOLDERS = {
    "voyager_sessions": ROOT / "voyager_sessions",
    "voyager_sessions.search": ROOT / "search",
    "voyager_sessions.ingest": ROOT / "ingest",
    "voyager_sessions.store": ROOT / "store",
}

#: The bottom floor's folder, and the modules it holds (a module added there is a decision: name it here).
CORE = "core"
BOTTOM = (
    "model",
    "errors",
    "paths",
    "textsafe",
    "lock",
    "isotime",
    "plural",
    "lastsearch",
    "wire",
    "remote",
    "jsontext",
    "reports",
    "toolnames",
    "toolview",
    "filters",
    "digest",
)
LAYERS = ("ingest", "search", "store")

#: group -> the groups it may import (itself always).
ALLOWED: dict[str, frozenset[str]] = {
    "bottom": frozenset({"bottom"}),
    **{layer: frozenset({"bottom"}) for layer in LAYERS},
    "scan": frozenset({"bottom", *LAYERS}),
    # The renderers of an exported session (Markdown, HTML, redaction): presentation every front end shares.
    "export": frozenset({"bottom"}),
    "api": frozenset({"bottom", *LAYERS, "scan", "export"}),
    # The front ends (cli, serve, mcp, tui, web, demo) reach the engines only through the API: one front door.
    "front": frozenset({"bottom", "api", "export"}),
}

#: Edges across the floors that the design makes on purpose, and why (none today: the server's wire protocol and
#: its client, which ``api.call`` uses, sit on the bottom floor, so the API no longer reaches into ``serve``).
EXCEPTIONS: dict[tuple[str, str], str] = {}

#: The folder names a module must never import as top-level packages.
FOLDER_NAMES = ("search", "ingest", "store")


def module_name(path: Path) -> str:
    """The dotted name ``path`` is installed as."""
    for package, folder in sorted(FOLDERS.items(), key=lambda kv: -len(kv[0])):
        if path.is_relative_to(folder):
            parts = list(path.relative_to(folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            return ".".join([package, *parts])
    raise ValueError(path)


def group_of(module: str) -> str:
    """The floor a module of Voyager's stands on."""
    parts = module.split(".")
    if len(parts) == 1 or parts[1] == CORE:
        return "bottom"
    if parts[1] in (*LAYERS, "scan", "api", "export"):
        return parts[1]
    return "front"


def all_modules() -> dict[str, Path]:
    out = {}
    for folder in FOLDERS.values():
        for path in folder.rglob("*.py"):
            if "__pycache__" not in path.parts:
                out[module_name(path)] = path
    return out


MODULES = all_modules()


def imported(module: str, source: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, module) for every import in ``source``, wherever it stands, relative ones resolved."""
    out: list[tuple[int, str]] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                here = module.split(".") if is_package else module.split(".")[:-1]
                here = here[: len(here) - (node.level - 1)]
                base = ".".join(here + ([node.module] if node.module else []))
            for alias in node.names:
                name = f"{base}.{alias.name}"
                out.append((node.lineno, name if name in MODULES else base))
    return out


def violations(module: str, source: str, is_package: bool = False) -> list[str]:
    """What ``module`` (with ``source``) imports that its floor does not allow."""
    mine = group_of(module)
    bad = []
    for line, name in imported(module, source, is_package):
        top = name.split(".")[0]
        if top in FOLDER_NAMES:
            bad.append(f"line {line}: imports {name} by its folder name (use voyager_sessions.{name})")
        elif top == "voyager_sessions":
            theirs = group_of(name)
            if theirs != mine and theirs not in ALLOWED[mine] and (mine, name) not in EXCEPTIONS:
                bad.append(f"line {line}: {mine} imports {name} ({theirs})")
    return bad


@pytest.mark.parametrize("module", sorted(MODULES))
def test_every_module_imports_only_the_floors_below_it(module: str) -> None:
    path = MODULES[module]
    assert not violations(module, path.read_text("utf-8"), path.name == "__init__.py")


@pytest.mark.parametrize(
    "module, source",
    [
        ("voyager_sessions.core.model", "from voyager_sessions.search import syntax"),  # the bottom reaching up
        ("voyager_sessions.ingest.adapters.claude", "def f():\n    from voyager_sessions.store import state"),
        ("voyager_sessions.search.engine", "from ..store import state"),  # relative, sideways
        ("voyager_sessions.search.engine", "from voyager_sessions import scan"),  # a module named as a name
        ("voyager_sessions.store.state", "import voyager_sessions.api"),
        ("voyager_sessions.scan.run", "from voyager_sessions.cli.app import main"),
        ("voyager_sessions.cli.app", "from search.index import SearchIndex"),  # the folder name: a second copy
    ],
)
def test_an_upward_import_is_caught(module: str, source: str) -> None:
    assert violations(module, source), source


def test_every_group_is_known() -> None:
    """Every module lands on a floor, and the bottom is the modules the design names."""
    groups = {group_of(m) for m in MODULES}
    assert groups <= set(ALLOWED), groups
    assert {m for m in MODULES if group_of(m) == "bottom"} == {
        "voyager_sessions",
        f"voyager_sessions.{CORE}",
        *(f"voyager_sessions.{CORE}.{b}" for b in BOTTOM),
    }


@pytest.mark.parametrize("name", ["search", "ingest.adapters", "store.state"])
def test_a_folder_cannot_be_imported_by_its_folder_name(name: str) -> None:
    """From the repository root ``import search`` would load a second copy of ``voyager_sessions.search``."""
    import importlib

    with pytest.raises(ImportError, match="voyager_sessions"):
        importlib.import_module(name)
