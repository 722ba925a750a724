"""OpenClaw (observed 2026.9.6 and 2026.6.35): both generations in one HOME, as a user who upgraded has them.

The captures are read one at a time by tests/ingest/test_captures.py; here they are laid side by side, a
migrated session (in the database and still as JSONL) is indexed once, from the database, and an event
the database keeps zstd-compressed is read.
"""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from tests.support.captures import CAPTURES
from tests.support.run import Run
from voyager_sessions.ingest.adapters.base import Source, discover
from voyager_sessions.ingest.adapters.openclaw import ADAPTER, database_sessions

zstandard = pytest.importorskip("zstandard")
NEW, OLD = "openclaw-2026.9.6", "openclaw-legacy-2026.6.35"
DB = ".openclaw/agents/main/agent/openclaw-agent.sqlite"
JSONL = ".openclaw/agents/main/sessions/c6003d37-214d-4fab-9946-1c5bcfeb58f3.jsonl"


def both(home: Path) -> None:
    for name in (OLD, NEW):
        shutil.copytree(CAPTURES / name, home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json"))


def prompts(run: Run, marker: str) -> list[dict]:
    hits = run.json("search", marker, "--json", "--no-refresh", "--limit", "50")["hits"]
    return [h for h in hits if h["kind"] == "user" and h["origin"] == "human"]


def test_both_generations_at_once(home: Path, run: Run) -> None:
    both(home)
    assert run("scan", "-q").exit_code == 0
    for marker in ("PROMPT_OPENb32012", "PROMPT_T2OPENb32012", "PROMPT_OPEN4b54eb", "PROMPT_T2OPEN4b54eb"):
        assert len(prompts(run, marker)) == 1, marker
    sessions = [s for s in run.json("list", "--json")["sessions"] if s["provider"] == "openclaw"]
    assert len(sessions) == 2 and all(s["resume"] is None for s in sessions)


def test_a_migrated_session_is_read_from_the_database_only(home: Path, run: Run) -> None:
    """``openclaw doctor --fix`` imports a JSONL transcript into the database and may leave the file: one session."""
    both(home)
    jsonl = home / JSONL
    # The legacy transcript under the new session's id: the database holds it, so the file is no source.
    moved = jsonl.with_name("45e0cd2f-9405-4d9a-b44b-f8b526437399.jsonl")
    jsonl.rename(moved)
    sources = [s for s in discover(ADAPTER, {"HOME": str(home)}) if isinstance(s, Source)]
    assert [Path(s.path).name for s in sources] == ["openclaw-agent.sqlite"]
    assert run("scan", "-q").exit_code == 0
    assert len(prompts(run, "PROMPT_OPEN4b54eb")) == 1
    assert prompts(run, "PROMPT_OPENb32012") == []  # the file's words were never read: the database's are the session


def test_a_session_indexed_from_jsonl_then_migrated_stays_one_session(home: Path, run: Run) -> None:
    shutil.copytree(CAPTURES / OLD, home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json"))
    assert run("scan", "-q").exit_code == 0
    assert len(prompts(run, "PROMPT_OPENb32012")) == 1
    # The upgrade: the database arrives holding the same session id (its rows copied from the JSONL).
    shutil.copytree(CAPTURES / NEW, home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json"))
    db = home / DB
    sid = "c6003d37-214d-4fab-9946-1c5bcfeb58f3"
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    conn.execute("PRAGMA foreign_keys = OFF")
    for seq, line in enumerate((home / JSONL).read_text("utf-8").splitlines()):
        conn.execute(
            "INSERT INTO transcript_events(session_id, seq, event_json, created_at) VALUES (?, ?, ?, ?)",
            (sid, seq, line, 1796655690000 + seq),
        )
    conn.commit()
    conn.close()
    assert sid in database_sessions(db)
    assert run("scan", "-q").exit_code == 0
    assert len(prompts(run, "PROMPT_OPENb32012")) == 1
    assert len(prompts(run, "PROMPT_OPEN4b54eb")) == 1


def test_an_event_kept_compressed_is_read(home: Path, run: Run) -> None:
    shutil.copytree(CAPTURES / NEW, home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json"))
    db = home / DB
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA ignore_check_constraints = ON")
    (sid, seq, text) = conn.execute(
        "SELECT session_id, seq, event_json FROM transcript_events WHERE event_json LIKE '%REPLY_OPEN4b54eb%'"
    ).fetchone()
    event = json.loads(text)
    event["message"]["content"][0]["text"] += " 压缩的 ZSTDWORD"
    raw = json.dumps(event, ensure_ascii=False).encode()
    conn.execute(
        "UPDATE transcript_events SET event_json = NULL, event_zstd = ?, event_utf8_bytes = ?, navigation_json = '{}' "
        "WHERE session_id = ? AND seq = ?",
        (zstandard.ZstdCompressor().compress(raw), len(raw), sid, seq),
    )
    conn.commit()
    conn.close()
    assert run("scan", "-q").exit_code == 0
    hits = run.json("search", "ZSTDWORD", "--json", "--no-refresh")["hits"]
    assert [h["kind"] for h in hits] == ["assistant"]


def test_the_database_s_copies_and_the_trace_are_not_read(home: Path) -> None:
    both(home)
    names = sorted(Path(s.path).name for s in discover(ADAPTER, {"HOME": str(home)}) if isinstance(s, Source))
    assert names == ["c6003d37-214d-4fab-9946-1c5bcfeb58f3.jsonl", "openclaw-agent.sqlite"]
