"""Real captures of the agents that keep OpenCode's storage (OpenCode, Kilo Code CLI), checked through the CLI.

``../shared/fixtures/agents/<name>/`` holds what the real CLI wrote under ``HOME=/home/dev``
(SQLite with its ``-wal``/``-shm``) and ``truth.json`` naming each turn's markers. These
helpers install one into the test's fake HOME and check what is particular to this family:
``run`` prompts lose the quotes the CLI wrapped them in, the ``event`` table's copies (and
Kilo's ``kilo_board``) never become events, a subagent is its own session under its parent,
compaction summaries are provider text, and the generated title finds its session.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHARED = next((p / "shared" for p in ROOT.parents if (p / "shared" / "fixtures").is_dir()), ROOT.parent / "shared")
CAPTURES = SHARED / "fixtures" / "agents"

needs_captures = pytest.mark.skipif(not CAPTURES.is_dir(), reason="../shared/fixtures/agents not present")

#: Markers a capture names that no session file holds as a row of its conversation: Kilo deleted
#: its chunk summary from ``message``; it survives only in the ``event`` log, which is not read.
ONLY_IN_EVENT_LOG = {"SUMMARY_T2KILO33d91d"}


def install(name: str, home: Path) -> dict[str, Any]:
    """Copy capture ``name`` into ``home`` (writable, as the agent's own files are) and return its truth."""
    src = CAPTURES / name
    shutil.copytree(src / ".local", home / ".local", copy_function=shutil.copyfile)
    for d, _dirs, _files in os.walk(home / ".local"):
        os.chmod(d, 0o755)  # copytree copied the fixture's read-only directory modes
    return json.loads((src / "truth.json").read_text("utf-8"))


def hits(run, marker: str) -> list[dict[str, Any]]:
    doc = run.json("search", marker, "--json", "--limit", "100", "--no-refresh")
    assert doc["total"] == len(doc["hits"])
    return doc["hits"]


def sessions(run) -> dict[str, dict[str, Any]]:
    return {s["session_id"]: s for s in run.json("list", "--json", "--limit", "1000")["sessions"]}


def scan_capture(run, provider: str) -> dict[str, Any]:
    res = run("scan", "--json")
    assert res.exit_code == 0, res.stderr
    summary = json.loads(res.stdout)
    # Every record kind in a real capture is known: nothing skipped, nothing unknown.
    assert summary["skipped"] == [], summary["skipped"]
    assert set(summary["providers"]) == {provider}, summary["providers"]
    return summary


def check_turns(run, truth: dict[str, Any], provider: str) -> dict[int, str]:
    """The family's checks on every turn; returns the session each turn lives in."""
    listed = sessions(run)
    found = set(truth["marker_files"]) - ONLY_IN_EVENT_LOG
    where: dict[str, set[str]] = {}
    for marker in found:
        got = hits(run, marker)
        assert got, f"{marker} not found"
        assert {h["provider"] for h in got} == {provider}, marker
        where[marker] = {h["session_id"] for h in got}
    turn_session: dict[int, str] = {}
    for i, turn in enumerate(truth["turns"]):
        markers = [m for k, m in turn.items() if k.endswith("_marker") and m in found]
        if not markers:
            continue
        common = set.intersection(*(where[m] for m in markers))
        assert len(common) == 1, (i, {m: where[m] for m in markers})
        sid = turn_session[i] = common.pop()
        prompt = turn.get("prompt_marker")
        if prompt in found:
            users = [h for h in hits(run, prompt) if h["kind"] == "user"]
            assert len(users) == 1, (prompt, users)  # no copy from the event log or kilo_board
            (user,) = users
            assert user["session_id"] == sid
            # A subagent's prompt was written by its parent agent: provider text, never a person's.
            assert user["origin"] == ("provider" if turn.get("subagent") else "human"), user
            assert not [h for h in hits(run, prompt) if h["origin"] == "human" and h["kind"] != "user"]
            text = _event_text(run, sid, user["seq"])
            assert prompt in text and not text.startswith('"') and not text.endswith('"'), text
    main = turn_session.get(0)
    for i, turn in enumerate(truth["turns"]):
        if i in turn_session and turn_session[i] != main:
            assert turn.get("subagent"), f"turn {i} is in {turn_session[i]}, not in the main session {main}"
            assert listed[turn_session[i]]["parent"] == main
        elif i in turn_session:
            assert listed[main]["parent"] is None
    return turn_session


def check_title(run, truth: dict[str, Any], main: str) -> None:
    """The title the agent generated names the main session, is indexed as its title, and finds it."""
    marker = truth["turns"][0]["title_marker"]
    session = sessions(run)[main]
    assert marker in (session["title"] or "") and session["title_source"] == "agent", session
    titles = [h for h in hits(run, marker) if h["kind"] == "title"]
    assert [h["session_id"] for h in titles] == [main]


def _event_text(run, sid: str, seq: int) -> str:
    doc = run.json("show", sid, "--json")
    (event,) = [e for e in doc["events"] if e["seq"] == seq]
    return event["text"]
