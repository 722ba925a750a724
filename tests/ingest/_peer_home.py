"""Scanning a peer project's sample store (``shared/fixtures/peers/<agent>/``) and holding it to its truth.json.

The samples are second-hand evidence for agents that cannot be run here (their README says
where each comes from). A sample's ``home/`` is copied into the test's fake HOME (never
into the repository), scanned through the real CLI, and every marker of every turn is
looked up: a prompt is exactly one ``user`` event of a person (or of the parent agent, for
a subagent's turn), a reply an ``assistant`` event, a tool marker a call or its result,
thinking ``reasoning``; a meta marker is indexed but never as a person's prompt; a stale
marker (text a later write overwrote) is never found; and the markers of one turn share a
session. The copy is hashed before and after: the scan may change nothing in it.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import Run
from tests.ingest.test_captures import shared_dir

#: The kinds each marker must be found as (at least one hit of one of them).
KINDS = {"reply_marker": {"assistant"}, "tool_marker": {"tool_call", "tool_result"}, "thinking_marker": {"reasoning"}}


def peer_sample(agent: str) -> Path:
    shared = shared_dir()
    folder = shared / "fixtures" / "peers" / agent if shared else None
    if folder is None or not (folder / "truth.json").is_file():
        pytest.skip(f"shared/fixtures/peers/{agent} not found beside the checkout")
    return folder


def tree(root: Path, *, skip: str = "voyager-data") -> dict[str, str]:
    """Relative path -> sha256 of every file under ``root`` ("dir" for directories), Voyager's own data left out."""
    out = {}
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        if rel == skip or rel.startswith(skip + "/"):
            continue
        out[rel] = "dir" if p.is_dir() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


class PeerScan:
    """A peer sample copied into ``home`` and scanned once through the CLI."""

    def __init__(self, agent: str, home: Path, run: Run) -> None:
        folder = peer_sample(agent)
        self.truth: dict[str, Any] = json.loads((folder / "truth.json").read_text(encoding="utf-8"))
        shutil.copytree(folder / "home", home, dirs_exist_ok=True)
        for p in home.rglob("*"):
            p.chmod(p.stat().st_mode | 0o200)  # the shared copy may be read-only; the fake HOME is the test's
        self.home = home
        self.run = run
        self.before = tree(home)
        res = run("scan", "--json")
        assert res.exit_code == 0, res.stderr
        self.summary = json.loads(res.stdout)
        self.stderr = res.stderr

    def hits(self, text: str) -> list[dict[str, Any]]:
        res = self.run("search", json.dumps(text), "--json", "--no-refresh", "--limit", "200")
        assert res.exit_code in (0, 1), res.stderr
        return json.loads(res.stdout)["hits"]

    def sessions(self) -> dict[str, dict[str, Any]]:
        return {s["session_id"]: s for s in self.run.json("list", "--json", "--limit", "1000")["sessions"]}

    def check(self, provider: str, *, subagent_turns: tuple[str, ...] = ()) -> None:
        """Every marker of every turn (``subagent_turns``: substrings of the turns whose prompt a parent agent wrote)."""
        assert self.summary["failed"] == 0, self.summary
        for turn in self.truth["turns"]:
            person = "provider" if any(s in turn["session"] for s in subagent_turns) else "human"
            shared: list[set[str]] = []
            for key, marker in turn.items():
                if not key.endswith("_marker"):
                    continue
                hits = self.hits(marker)
                where = f"{marker!r} ({key}, {turn['session']})"
                if key == "stale_marker":
                    assert not hits, f"{where}: overwritten text was indexed: {hits}"
                    continue
                assert hits, f"{where} not found"
                assert {h["provider"] for h in hits} == {provider}, (where, hits)
                if key == "prompt_marker":
                    prompts = [h for h in hits if h["kind"] == "user"]
                    assert len(prompts) == 1 and prompts[0]["origin"] == person, (where, hits)
                    shared.append({prompts[0]["session_id"]})
                elif key == "meta_marker":
                    assert not [h for h in hits if h["kind"] == "user" and h["origin"] == "human"], (where, hits)
                else:
                    found = [h for h in hits if h["kind"] in KINDS[key]]
                    assert found, (where, hits)
                    shared.append({h["session_id"] for h in found})
            if shared:
                assert set.intersection(*shared), f"{turn['session']}: markers in different sessions: {shared}"
        assert tree(self.home) == self.before, "the scan changed or created files in the agent's store"
