"""Shared test fixtures: a fake HOME with agent sessions in their real formats, and CLI runners.

Every test runs with HOME, VOYAGER_HOME and the agents' variables pointing into
tmp_path, so nothing can read or write the real user's data.
"""

from __future__ import annotations

import importlib.abc
import sys
from pathlib import Path

import pytest

from tests.support.demo import index_demo
from tests.support.run import Run
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.ingest.adapters.base import LOOK_WITHIN
from voyager_sessions.ingest.manifest import agent_variables

#: The repository's folders that are installed under another name (pyproject's package-dir mapping).
FOLDER_PACKAGES = ("search", "ingest", "store")


class _FolderNameGuard(importlib.abc.MetaPathFinder):
    """While the tests run, the repository root is on ``sys.path``, so ``import search`` would load the
    ``search/`` folder a second time as a package of its own (``search.index is
    voyager_sessions.search.index`` would be False, with two copies of every cache and class). Make that
    import fail, saying which name to use."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> None:  # type: ignore[override]
        if path is None and fullname in FOLDER_PACKAGES:
            raise ImportError(
                f"import voyager_sessions.{fullname}, not {fullname}: the {fullname}/ folder is installed as voyager_sessions.{fullname}"
            )
        return None


sys.meta_path.insert(0, _FolderNameGuard())


@pytest.fixture(autouse=True, scope="session")
def _discovery_stays_in_the_sandbox(tmp_path_factory: pytest.TempPathFactory):
    """Discovery led by a recorded path (a session's working folder, an import, a store a file names) looks
    only inside this run's temporary folders: a capture records ``/home/dev/proj``, and a machine where that
    folder holds an Aider or cecli history must not change what a test finds (``VOYAGER_LOOK_WITHIN``)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv(LOOK_WITHIN, str(tmp_path_factory.getbasetemp()))
        yield


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    """A fake HOME; VOYAGER_HOME inside it; every agent variable cleared or pointed inside."""
    h = tmp_path / "home"
    h.mkdir()
    for var in (*agent_variables(), "XDG_CONFIG_HOME", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(h))
    monkeypatch.setenv("VOYAGER_HOME", str(h / "voyager-data"))
    monkeypatch.setenv("VOYAGER_OPENCODE_HOME", str(h / "no-opencode"))  # nothing there, nothing to report
    return h


@pytest.fixture
def corpus(home) -> dict[str, Path]:
    """A fake HOME holding one Claude Code and one Codex session."""
    return {"claude": write_claude(home, claude_session_lines()), "codex": write_codex(home, codex_session_lines())}


@pytest.fixture
def run() -> Run:
    return Run()


@pytest.fixture
def demo(home, run, monkeypatch) -> None:
    """The bundled demo corpus indexed in the fake HOME's data dir, with a checkpoint saved at a fixed time."""
    index_demo(run, monkeypatch)
