"""Documented agents against peers' samples: ``shared/fixtures/peers/<agent>/`` (see its README).

A sample HOME is copied into a fresh temporary HOME (the shared files are read-only input)
and scanned through the real CLI; ``check_markers`` then holds every marker of its
``truth.json`` to the contract: a prompt is exactly one ``user`` event (``human``, or
``provider`` for a subagent's task), a reply, tool or thinking marker is found with its kind,
a meta marker is never a person's prompt, a stale marker (text a later write replaced) is
never found. ``tree`` hashes every file so a test can prove the scan changed nothing.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.captures import NO_PEERS, PEERS
from tests.support.run import Run
from tests.support.scanning import search, sessions


def peer_dir(agent: str) -> Path:
    if PEERS is None or not (PEERS / agent / "truth.json").is_file():
        pytest.skip(f"{agent}: {NO_PEERS}")
    return PEERS / agent


def tree(root: Path) -> dict[str, str]:
    """Relative path -> sha256 of every file under ``root`` ("dir" for directories): the read-only witness.

    Voyager's own data dir (``voyager-data``, which the ``home`` fixture keeps inside HOME) is not the agent's.
    """
    out = {}
    for p in sorted(root.rglob("*")):
        rel = str(p.relative_to(root))
        if rel == "voyager-data" or rel.startswith("voyager-data/"):
            continue
        out[rel] = "dir" if p.is_dir() and not p.is_symlink() else hashlib.sha256(p.read_bytes()).hexdigest()
    return out


class PeerHome:
    """A peer sample copied into ``home`` (the test's fake HOME) and scanned once through the CLI."""

    def __init__(self, agent: str, home: Path, run: Run) -> None:
        src = peer_dir(agent)
        self.truth: dict[str, Any] = json.loads((src / "truth.json").read_text())
        shutil.copytree(src / "home", home, dirs_exist_ok=True)
        for p in home.rglob("*"):  # the shared copies are read-only; the fake HOME is ours
            p.chmod(p.stat().st_mode | 0o200)
        self.home = home
        self.run = run
        self.before = tree(home)
        res = run("scan", "--json")
        assert res.exit_code == 0, res.stderr
        self.scan = json.loads(res.stdout)
        self.stderr = res.stderr

    def hits(self, marker: str) -> list[dict]:
        return search(self.run, json.dumps(marker, ensure_ascii=False), limit=200)

    def sessions(self) -> dict[str, dict]:
        return sessions(self.run)


def check_markers(peer: PeerHome, provider: str, *, subagent_turns: tuple[str, ...] = ()) -> None:
    """Every marker of the sample's ``truth.json`` (``subagent_turns``: substrings of the ``session`` of turns
    whose prompt a parent agent wrote, so ``user`` with origin ``provider``)."""
    sessions = peer.sessions()
    for turn in peer.truth["turns"]:
        sub = any(s in turn["session"] for s in subagent_turns)
        for key, marker in turn.items():
            if not key.endswith("_marker"):
                continue
            hits = peer.hits(marker)
            where = f"{marker!r} ({key}, {turn['session']})"
            if key == "stale_marker":
                assert not hits, f"{where}: overwritten text was indexed: {hits}"
                continue
            assert hits, f"{where} not found"
            assert {h["provider"] for h in hits} == {provider}, (where, hits)
            kinds = {h["kind"] for h in hits}
            if key == "prompt_marker":
                users = [h for h in hits if h["kind"] == "user"]
                assert len(users) == 1, f"{where}: {len(users)} prompts, want 1: {hits}"
                assert users[0]["origin"] == ("provider" if sub else "human"), (where, users)
                if sub:
                    parent = sessions[users[0]["session_id"]].get("parent")
                    assert parent and parent in sessions, f"{where}: subagent session without its parent"
            elif key == "reply_marker":
                assert "assistant" in kinds, (where, kinds)
            elif key == "tool_marker":
                assert kinds & {"tool_call", "tool_result"}, (where, kinds)
            elif key == "thinking_marker":
                assert "reasoning" in kinds, (where, kinds)
            elif key == "meta_marker":
                assert not any(h["kind"] == "user" and h["origin"] == "human" for h in hits), (where, hits)


def check_turns_share_a_session(peer: PeerHome) -> None:
    """The prompt, reply, tool and thinking markers of one turn were said in one session (a turn split
    across sessions means an adapter put part of a conversation under another id)."""
    kinds = {
        "prompt_marker": {"user"},
        "reply_marker": {"assistant"},
        "tool_marker": {"tool_call", "tool_result"},
        "thinking_marker": {"reasoning"},
    }
    for turn in peer.truth["turns"]:
        found = [
            {h["session_id"] for h in peer.hits(turn[key]) if h["kind"] in wanted}
            for key, wanted in kinds.items()
            if key in turn
        ]
        if found:
            assert set.intersection(*found), f"{turn['session']}: its markers are in different sessions: {found}"


def check_sample(peer: PeerHome, provider: str, *, subagent_turns: tuple[str, ...] = ()) -> None:
    """All of the above: nothing failed, every marker, each turn in one session, and the sample byte-identical."""
    assert peer.scan["failed"] == 0, peer.scan
    check_markers(peer, provider, subagent_turns=subagent_turns)
    check_turns_share_a_session(peer)
    assert tree(peer.home) == peer.before, "the scan changed or created files in the agent's store"
