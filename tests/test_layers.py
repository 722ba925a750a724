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
LAYERS = {"ingest": ROOT / "ingest", "search": ROOT / "search", "store": ROOT / "store", "app": ROOT / "voyager_sessions"}

#: layer -> the voyager_sessions subpackages it must not import.
FORBIDDEN = {
    "ingest": ("voyager_sessions.search", "voyager_sessions.store", "voyager_sessions.scan", "voyager_sessions.api",
               "voyager_sessions.cli"),
    "search": ("voyager_sessions.ingest", "voyager_sessions.store", "voyager_sessions.scan", "voyager_sessions.api",
               "voyager_sessions.cli"),
    "store": ("voyager_sessions.ingest", "voyager_sessions.search", "voyager_sessions.scan", "voyager_sessions.api",
              "voyager_sessions.cli"),
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


def test_only_search_imports_tantivy():
    bad = [str(p.relative_to(ROOT)) for layer in LAYERS if layer != "search" for p in _modules(layer)
           if any(n == "tantivy" or n.startswith("tantivy.") for n in _imports(p))]
    assert not bad, bad


def test_only_store_and_ingest_import_sqlite3():
    bad = [str(p.relative_to(ROOT)) for layer in ("search", "app") for p in _modules(layer)
           if "sqlite3" in _imports(p)]
    assert not bad, bad
