"""The tests' own layout: shared helpers live in ``tests/support/``; no test module imports another test module or
a conftest (conftests hold fixtures only, built from ``tests/support``), so a test file can be read, moved or
deleted on its own."""

from __future__ import annotations

import pytest

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent


def _test_files() -> list[Path]:
    return [p for p in sorted(TESTS.rglob("*.py")) if "fixtures" not in p.relative_to(TESTS).parts]


def _imported(path: Path) -> set[str]:
    """Every ``tests…`` module ``path`` imports (``from tests.x import y`` counts ``tests.x.y`` when that is a module)."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names if a.name.split(".")[0] == "tests")
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.split(".")[0] == "tests":
            names.add(node.module)
            for a in node.names:
                if (TESTS.parent / (node.module.replace(".", "/") + f"/{a.name}.py")).exists():
                    names.add(f"{node.module}.{a.name}")
    return names


@pytest.mark.slow
def test_tests_import_only_the_support_package():
    bad = {
        str(p.relative_to(TESTS)): sorted(n for n in found if not n.startswith("tests.support") and n != "tests")
        for p in _test_files()
        if (found := _imported(p))
    }
    assert not {k: v for k, v in bad.items() if v}, bad


def test_the_support_package_imports_no_test_module():
    for p in sorted((TESTS / "support").rglob("*.py")):
        assert all(n.startswith("tests.support") for n in _imported(p)), p


def test_the_walk_sees_a_forbidden_import(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("from tests.conftest import home\nfrom tests.ingest import test_claude\n")
    assert _imported(probe) == {"tests.conftest", "tests.ingest", "tests.ingest.test_claude"}
