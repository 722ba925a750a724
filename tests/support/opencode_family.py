"""Real captures of the agents that keep OpenCode's storage (OpenCode, Kilo Code CLI), checked through the CLI.

``tests/fixtures/agents/<name>/`` holds what the real CLI wrote under ``HOME=/home/dev``
(SQLite with its ``-wal``/``-shm``) and ``truth.json`` naming each turn's markers. These
helpers install one into the test's fake HOME and check what is particular to this family:
``run`` prompts lose the quotes the CLI wrapped them in, the ``event`` table's copies (and
Kilo's ``kilo_board``) never become events, a subagent is its own session under its parent,
compaction summaries are provider text, and the generated title finds its session. What every
agent's capture must show (markers found, a turn in one session, read-only files) is
``test_captures.py``'s.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from tests.support.captures import CAPTURES


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


def check_prompts(run, truth: dict[str, Any]) -> dict[int, str]:
    """Each turn's prompt: one ``user`` event, as typed (without ``run``'s quotes); returns turn -> session.

    (That every marker is found, a turn's markers share a session and a subagent's sit
    under the main session is checked for every agent by ``test_captures.py``.)
    """
    turn_session: dict[int, str] = {}
    for i, turn in enumerate(truth["turns"]):
        prompt = turn.get("prompt_marker")
        if prompt not in truth["marker_files"]:
            continue
        users = [h for h in hits(run, prompt) if h["kind"] == "user"]
        assert len(users) == 1, (prompt, users)  # no copy from the event log or kilo_board
        (user,) = users
        # A subagent's prompt was written by its parent agent: provider text, never a person's.
        assert user["origin"] == ("provider" if turn.get("subagent") else "human"), user
        text = _event_text(run, user["session_id"], user["seq"])
        assert prompt in text and not text.startswith('"') and not text.endswith('"'), text
        turn_session[i] = user["session_id"]
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
