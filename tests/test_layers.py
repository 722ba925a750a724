"""The layers point one way (docs/architecture.md), checked on every module's imports.

``ingest/`` knows agents' formats and imports neither the index nor the state store nor the
scan; ``search/`` knows Tantivy and is handed what it needs about sessions; ``store/``
holds Voyager's own SQL; only ``search/`` imports ``tantivy``; only ``store/`` (Voyager's
databases) and ``ingest/`` (agents' databases, read-only) import ``sqlite3``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
LAYERS = {
    "ingest": ROOT / "ingest",
    "search": ROOT / "search",
    "store": ROOT / "store",
    "app": ROOT / "voyager_sessions",
}

#: layer -> the voyager_sessions subpackages it must not import.
FORBIDDEN = {
    "ingest": (
        "voyager_sessions.search",
        "voyager_sessions.store",
        "voyager_sessions.scan",
        "voyager_sessions.api",
        "voyager_sessions.cli.app",
    ),
    "search": (
        "voyager_sessions.ingest",
        "voyager_sessions.store",
        "voyager_sessions.scan",
        "voyager_sessions.api",
        "voyager_sessions.cli.app",
    ),
    "store": (
        "voyager_sessions.ingest",
        "voyager_sessions.search",
        "voyager_sessions.scan",
        "voyager_sessions.api",
        "voyager_sessions.cli.app",
    ),
}


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(), str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{alias.name}" for alias in node.names)
    return names


def _modules(layer: str) -> list[Path]:
    return sorted(p for p in LAYERS[layer].rglob("*.py") if "__pycache__" not in p.parts)


@pytest.mark.parametrize("layer", sorted(FORBIDDEN))
def test_a_layer_never_imports_the_layers_above_or_beside_it(layer):
    bad = {}
    for path in _modules(layer):
        hits = sorted(n for n in _imports(path) if n.startswith(FORBIDDEN[layer]))
        if hits:
            bad[str(path.relative_to(ROOT))] = hits
    assert not bad, bad


@pytest.mark.slow
def test_only_search_imports_tantivy():
    bad = [
        str(p.relative_to(ROOT))
        for layer in LAYERS
        if layer != "search"
        for p in _modules(layer)
        if any(n == "tantivy" or n.startswith("tantivy.") for n in _imports(p))
    ]
    assert not bad, bad


def test_only_store_and_ingest_import_sqlite3():
    bad = [str(p.relative_to(ROOT)) for layer in ("search", "app") for p in _modules(layer) if "sqlite3" in _imports(p)]
    assert not bad, bad


# -- the front ends that serve data: the server and the MCP server ------------------------------

#: What draws terminal output or reads argv: a front end that answers with data imports none of it.
CLI_MODULES = (
    "click",
    "voyager_sessions.cli.app",
    "voyager_sessions.cli.render",
    "voyager_sessions.cli.present",
    "voyager_sessions.cli.common",
    "voyager_sessions.cli.reading",
    "voyager_sessions.cli.reading",
    "voyager_sessions.cli.commands",
    "voyager_sessions.cli.argv",
    "voyager_sessions.cli.options",
    "voyager_sessions.cli.main",
    "voyager_sessions.cli.checkpoint",
    "voyager_sessions.cli.handover",
    "voyager_sessions.cli.serve",
    "voyager_sessions.mcp_cli",
)

_PACKAGES = {
    "voyager_sessions.search": ROOT / "search",
    "voyager_sessions.ingest": ROOT / "ingest",
    "voyager_sessions.store": ROOT / "store",
    "voyager_sessions": ROOT / "voyager_sessions",
}


def _module_path(name: str) -> Path | None:
    """The file of Voyager module ``name`` (a package's ``__init__``), or None when it is not one of Voyager's."""
    for prefix, root in sorted(_PACKAGES.items(), key=lambda kv: -len(kv[0])):
        if name == prefix or name.startswith(prefix + "."):
            rel = name[len(prefix) :].lstrip(".").split(".") if name != prefix else []
            base = root.joinpath(*rel)
            for candidate in (base.with_suffix(".py"), base / "__init__.py"):
                if rel and candidate.exists() or not rel and candidate.name == "__init__.py" and candidate.exists():
                    return candidate
    return None


def _closure(start: Path) -> dict[str, list[str]]:
    """Every name ``start`` imports at any depth through Voyager's own modules (imports inside functions too),
    with the chain that reaches it."""
    seen: dict[str, list[str]] = {}
    todo = [(start, [str(start.relative_to(ROOT))])]
    visited: set[Path] = set()
    while todo:
        path, chain = todo.pop()
        if path in visited:
            continue
        visited.add(path)
        for name in _imports(path):
            seen.setdefault(name, chain + [name])
            target = _module_path(name)
            if target is not None and target not in visited:
                todo.append((target, chain + [name]))
    return seen


def _serving_modules() -> list[Path]:
    """The server's and the MCP server's modules: all of ``serve/`` and ``mcp/``."""
    app = LAYERS["app"]
    return sorted({*(app / "serve").rglob("*.py"), *(app / "mcp").rglob("*.py")})


@pytest.mark.slow
def test_the_server_and_the_mcp_server_import_no_cli_code_and_no_click():
    modules = _serving_modules()
    assert any(p.parent.name == "serve" for p in modules) and any(p.parent.name == "mcp" for p in modules)
    bad = {}
    for path in modules:
        chains = [
            chain
            for name, chain in _closure(path).items()
            if any(name == m or name.startswith(m + ".") for m in CLI_MODULES)
        ]
        if chains:
            bad[str(path.relative_to(ROOT))] = chains[:3]
    assert not bad, bad


def test_the_closure_walk_sees_the_cli():
    # The walk itself: the CLI's own entry reaches click and the renderer through Voyager's modules.
    names = _closure(LAYERS["app"] / "cli" / "reading.py")
    assert "voyager_sessions.cli.present" in names and "voyager_sessions.cli.render" in names


def test_the_reading_and_checkpoint_front_ends_reach_the_engine_and_the_store_only_through_the_api():
    app = LAYERS["app"]
    front_ends = (
        [app / "cli" / name for name in ("reading.py", "present.py", "render.py", "common.py", "checkpoint.py")]
        + _serving_modules()
        + sorted((app / "tui").glob("*.py"))
    )
    below = ("voyager_sessions.store", "voyager_sessions.search", "voyager_sessions.ingest")
    bad = {
        str(p.relative_to(ROOT)): hits
        for p in front_ends
        if (hits := sorted(n for n in _imports(p) if n.startswith(below)))
    }
    assert not bad, bad
