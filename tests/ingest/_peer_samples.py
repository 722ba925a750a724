"""Scanning a peer project's sample store (``shared/fixtures/peers/<agent>/``) and checking its truth.json markers.

The samples are second-hand evidence for agents that cannot be run here (see the
README beside them): each is copied into a fresh HOME (never into the repository),
scanned through the CLI, and every marker its truth names is looked up: a prompt is
exactly one ``user``/``human`` event, a reply an ``assistant`` one, a tool marker a tool
call or result, thinking is ``reasoning``, a meta marker is never a person's prompt, a
stale marker is never found.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run
from tests.ingest.test_captures import shared_dir
from voyager_sessions.paths import agent_variables


def peer_dir(sample: str) -> Path:
    shared = shared_dir()
    folder = shared / "fixtures" / "peers" / sample if shared else None
    if folder is None or not (folder / "truth.json").is_file():
        pytest.skip(f"shared/fixtures/peers/{sample} not found beside the checkout")
    return folder


def scan_peer(sample: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Run, dict[str, Any], Path]:
    """Copy the sample's home into ``tmp_path``, point HOME at it, scan; the CLI runner, the truth and the HOME."""
    folder = peer_dir(sample)
    home = tmp_path / "home"
    shutil.copytree(folder / "home", home, symlinks=True)
    for var in (*agent_variables(), "XDG_CONFIG_HOME", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("VOYAGER_HOME", str(tmp_path / "voyager-data"))
    run = Run()
    res = run("scan", "--json")
    assert res.exit_code == 0, res.stderr
    assert json.loads(res.stdout)["failed"] == 0, res.stdout
    return run, json.loads((folder / "truth.json").read_text()), home


def check_markers(run: Run, truth: dict[str, Any], provider: str) -> None:
    for turn in truth["turns"]:
        def hits(key: str) -> list[dict[str, Any]]:
            found = run.json("search", f'"{turn[key]}"', "--json", "--no-refresh", "--limit", "100")["hits"]
            assert {h["provider"] for h in found} <= {provider}, (turn[key], found)
            return found

        sessions: list[set[str]] = []
        if "prompt_marker" in turn:
            found = hits("prompt_marker")
            human = [h for h in found if (h["kind"], h["origin"]) == ("user", "human")]
            assert len(human) == 1, (turn["prompt_marker"], found)
            sessions.append({human[0]["session_id"]})
        for key, kinds in (("reply_marker", {"assistant"}), ("tool_marker", {"tool_call", "tool_result"}),
                           ("thinking_marker", {"reasoning"})):
            if key in turn:
                found = hits(key)
                assert kinds & {h["kind"] for h in found}, (turn[key], found)
                sessions.append({h["session_id"] for h in found if h["kind"] in kinds})
        if "meta_marker" in turn:
            found = hits("meta_marker")
            assert found and not any(h["kind"] == "user" and h["origin"] == "human" for h in found), (turn, found)
        if "stale_marker" in turn:
            assert not hits("stale_marker"), turn
        if sessions:
            assert set.intersection(*sessions), (turn, sessions)
