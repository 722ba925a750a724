"""Agents with nothing on this machine cost a refresh nothing: their adapters are not even imported.

The gate is safe only if an adapter never finds a source outside the places it names
(``roots``): checked here on every real capture and peers' sample. And it must notice a
store that appears later: checked through the CLI.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.captures import CAPTURES, capture_names, peer_homes
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.ingest import adapters
from voyager_sessions.ingest.adapters.base import Hints, Source, discover, uses_hints
from voyager_sessions.ingest.manifest import agent_variables

_IMPORTED = (
    "import sys, json\n"
    "from pathlib import Path\n"
    "from voyager_sessions.scan import scan\n"
    "scan(Path(sys.argv[1]))\n"
    "print(json.dumps(sorted(m.rsplit('.', 1)[-1] for m in sys.modules\n"
    "      if m.startswith('voyager_sessions.ingest.adapters.') and m.count('.') == 3)))\n"
)


def _adapters_imported_by_a_scan(data: Path) -> set[str]:
    out = subprocess.run(
        [sys.executable, "-c", _IMPORTED, str(data)],
        capture_output=True,
        text=True,
        env=dict(os.environ),
        timeout=120,
        check=True,
    )
    return set(json.loads(out.stdout))


@pytest.mark.slow
def test_a_refresh_imports_only_the_agents_that_are_there(home):
    write_claude(home, claude_session_lines())
    data = home / "voyager-data"
    first = _adapters_imported_by_a_scan(data)
    assert {"claude", "codex", "gemini", "cursor", "zed"} <= first  # the first scan asks every adapter
    second = _adapters_imported_by_a_scan(data)
    hinted = {"aider", "cecli", "crush", "dsh"}  # they find stores in the working directories of sessions
    # ... and the chat exports ``voyager import`` recorded, which may lie anywhere.
    hinted |= {"chatgpt", "claude_ai", "gemini_apps", "_exports", "_drafts"}
    assert second <= {"claude", "base", "_common"} | hinted, second
    assert "codex" not in second and "gemini" not in second and "cursor" not in second
    # A store that appears later is found by the next scan (its place's ancestor changed).
    write_codex(home, codex_session_lines())
    assert "codex" in _adapters_imported_by_a_scan(data)
    res = subprocess.run(
        [sys.executable, "-m", "voyager_sessions", "search", "postgres", "--json"],
        capture_output=True,
        text=True,
        timeout=120,
        env=dict(os.environ),
    )
    assert json.loads(res.stdout)["total"] >= 1


def test_other_variables_mean_asking_every_adapter_again(home, monkeypatch):
    write_claude(home, claude_session_lines())
    data = home / "voyager-data"
    _adapters_imported_by_a_scan(data)
    elsewhere = home / "elsewhere-codex"
    write_codex(elsewhere.parent / "x", codex_session_lines())  # not where anything looks yet
    monkeypatch.setenv("CODEX_HOME", str(elsewhere.parent / "x" / ".codex"))
    assert "codex" in _adapters_imported_by_a_scan(data)


def _homes() -> list[Path]:
    return [CAPTURES / name for name in capture_names()] + peer_homes()


@pytest.mark.parametrize("source_home", _homes(), ids=lambda p: p.parent.name if p.name == "home" else p.name)
def test_every_source_lies_where_its_adapter_says_it_looks(source_home, tmp_path):
    home = tmp_path / "home"
    shutil.copytree(source_home, home, symlinks=True, ignore=shutil.ignore_patterns("truth.json"))
    env = {
        k: v for k, v in os.environ.items() if k not in set(agent_variables()) | {"XDG_CONFIG_HOME", "XDG_DATA_HOME"}
    }
    env["HOME"] = str(home)
    for name in adapters.PROVIDERS:
        adapter = adapters.get(name)
        if uses_hints(adapter):
            continue  # not gated: found through working directories
        roots = [Path(r) for r in adapter.roots(env)]
        for item in discover(adapter, env, Hints()):
            if isinstance(item, Source):
                path = Path(item.path)
                assert any(path == r or r in path.parents for r in roots), (name, str(path), [str(r) for r in roots])
