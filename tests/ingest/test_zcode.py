"""The ZCode adapter (documented): agentsview's sample database, and databases built here in the same schema.

The only evidence of ZCode's store is agentsview's test schema (``session``, ``message``,
``part``, ``model_usage``), kept in ``shared/fixtures/peers/zcode``. The databases below
use that schema with CJK text, a shell call with a recorded exit code, an OpenCode-style
tool part carrying its own result, token rows, per-session change detection, rows still in
the ``-wal``, bad rows, an unknown schema and the environment variable.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import events, notices
from tests.support.peers import PeerHome, check_sample, tree
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Cursor, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.zcode import ADAPTER, probe

SCHEMA = """
CREATE TABLE session (id TEXT PRIMARY KEY NOT NULL, project_id TEXT, workspace_id TEXT, directory TEXT, title TEXT,
                      time_created INTEGER, time_updated INTEGER);
CREATE TABLE model_usage (session_id TEXT NOT NULL, turn_id TEXT, provider_id TEXT, model_id TEXT, status TEXT,
                          input_tokens INTEGER, output_tokens INTEGER, reasoning_tokens INTEGER,
                          cache_creation_input_tokens INTEGER, cache_read_input_tokens INTEGER,
                          computed_total_tokens INTEGER, started_at INTEGER, completed_at INTEGER,
                          duration_ms INTEGER, tool_call_count INTEGER);
CREATE TABLE message (id TEXT PRIMARY KEY NOT NULL, session_id TEXT NOT NULL, time_created TEXT, data TEXT);
CREATE TABLE part (id TEXT PRIMARY KEY NOT NULL, message_id TEXT NOT NULL, session_id TEXT NOT NULL,
                   time_created TEXT, data TEXT);
"""
CWD = "/home/dev/项目"


class Db:
    """A ZCode database being written, optionally keeping its rows in the ``-wal``."""

    def __init__(self, path: Path, *, wal: bool = False) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        if wal:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA wal_autocheckpoint=0")
        self.conn.executescript(SCHEMA)
        self.n = 0

    def session(self, sid: str, **cols: Any) -> None:
        row = {
            "id": sid,
            "directory": CWD,
            "title": "修复登录",
            "time_created": 1796112000000,
            "time_updated": 1796112060000,
            **cols,
        }
        self.conn.execute(
            f"INSERT INTO session ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
        )

    def message(self, sid: str, role: str, *parts: dict[str, Any], at: str, **data: Any) -> str:
        self.n += 1
        mid = f"msg-{self.n:03d}"
        self.conn.execute("INSERT INTO message VALUES (?, ?, ?, ?)", (mid, sid, at, json.dumps({"role": role, **data})))
        for i, part in enumerate(parts):
            # Ids deliberately out of order: a message's parts sort by their time, then id.
            self.conn.execute(
                "INSERT INTO part VALUES (?, ?, ?, ?, ?)",
                (f"part-{self.n:03d}-{9 - i}", mid, sid, f"{at[:-1]}{i}", json.dumps(part, ensure_ascii=False)),
            )
        return mid

    def usage(self, sid: str, model: str, tokens_in: int, tokens_out: int) -> None:
        self.conn.execute(
            "INSERT INTO model_usage (session_id, model_id, input_tokens, output_tokens, "
            "cache_read_input_tokens, started_at) VALUES (?, ?, ?, ?, ?, ?)",
            (sid, model, tokens_in, tokens_out, 5, 1796112000000 + self.n),
        )

    def source(self) -> Source:
        return Source(provider="zcode", path=str(self.path), fingerprint=fingerprint(self.path, wal=True))

    def read(self, cursor: Cursor | None = None) -> list[Any]:
        return list(ADAPTER.read(self.source(), cursor))


def turn(db: Db, sid: str = "s1") -> None:
    db.message(sid, "user", {"type": "text", "text": "登录失败了，帮我看看 ZC_PROMPT"}, at="2026-12-01T08:00:01Z")
    db.message(
        sid,
        "assistant",
        {"type": "thinking", "thinking": "先看认证 ZC_THINK"},
        {"type": "text", "text": "我来运行测试"},
        {"type": "tool_use", "id": "call-1", "name": "Bash", "input": {"command": "go test ./auth 测试"}},
        at="2026-12-01T08:00:02Z",
        model={"modelID": "glm-4.6"},
    )
    db.message(
        sid,
        "user",
        {
            "type": "tool_result",
            "tool_use_id": "call-1",
            "content": "FAIL ログイン ZC_TOOLOUT",
            "is_error": True,
            "exit_code": 1,
        },
        at="2026-12-01T08:00:03Z",
    )
    db.message(
        sid,
        "assistant",
        {
            "type": "tool",
            "name": "Read",
            "id": "call-2",
            "state": {
                "status": "completed",
                "input": {"file_path": "auth.go"},
                "output": "package auth 로그인",
                "metadata": {"exit": 0},
            },
        },
        {"type": "text", "text": "修好了 ZC_REPLY"},
        at="2026-12-01T08:00:04Z",
    )
    db.usage(sid, "glm-4.6", 100, 20)


def drafts(items: list[Any], sid: str = "zcode:s1") -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in events(items) if e.session == sid]


@pytest.fixture
def db(home: Path):
    d = Db(home / ".zcode" / "cli" / "db" / "db.sqlite")
    yield d
    d.conn.close()


def test_the_peers_sample_passes_every_marker(home: Path, run) -> None:
    peer = PeerHome("zcode", home, run)
    check_sample(peer, "zcode")
    report = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["zcode"]
    assert report["shapes"] == {"session+message+part": 1} and report["evidence"] == "documented"


def test_messages_and_parts_map_to_events_with_recorded_exit_codes(db: Db) -> None:
    db.session("s1")
    turn(db)
    items = db.read()
    assert drafts(items) == [
        ("user", "human", "登录失败了，帮我看看 ZC_PROMPT"),
        ("reasoning", "agent", "先看认证 ZC_THINK"),
        ("assistant", "agent", "我来运行测试"),
        ("tool_call", "agent", "go test ./auth 测试"),
        ("tool_result", "tool", "FAIL ログイン ZC_TOOLOUT"),
        ("tool_call", "agent", '{"file_path":"auth.go"}'),
        ("tool_result", "tool", "package auth 로그인"),
        ("assistant", "agent", "修好了 ZC_REPLY"),
    ]
    results = [e for e in events(items) if e.kind == "tool_result"]
    assert [(r.exit_code, r.is_error, r.call_id) for r in results] == [(1, True, "call-1"), (0, False, "call-2")]
    session = [i for i in items if isinstance(i, Session)][0]
    assert (session.cwd, session.title, session.model, session.resume) == (CWD, "修复登录", "glm-4.6", None)
    assert (session.tokens_in, session.tokens_out, session.started) == (105, 20, 1796112000.0)


def test_untouched_sessions_come_back_unchanged_and_a_changed_one_is_read_again(db: Db) -> None:
    db.session("s1")
    turn(db, "s1")
    db.session("s2", title="第二个")
    turn(db, "s2")
    cursor = [i for i in db.read() if isinstance(i, Cursor)][-1]
    assert [i.session for i in db.read(cursor) if isinstance(i, Unchanged)] == ["zcode:s1", "zcode:s2"]
    db.message("s2", "user", {"type": "text", "text": "再检查一次 ZC_AGAIN"}, at="2026-12-01T09:00:00Z")
    again = db.read(cursor)
    assert [i.session for i in again if isinstance(i, Unchanged)] == ["zcode:s1"]
    assert drafts(again, "zcode:s2")[-1] == ("user", "human", "再检查一次 ZC_AGAIN")
    db.conn.execute(
        "UPDATE part SET data = ? WHERE message_id = 'msg-001'",
        (json.dumps({"type": "text", "text": "改过的 ZC_EDITED"}, ensure_ascii=False),),
    )
    edited = db.read(cursor)
    assert "zcode:s1" not in {i.session for i in edited if isinstance(i, Unchanged)}


def test_a_second_scan_reads_only_the_session_that_changed(db: Db, run) -> None:
    db.session("s1")
    turn(db, "s1")
    db.session("s2")
    turn(db, "s2")
    assert run.json("scan", "--json")["events_added"] == 16
    db.message("s2", "assistant", {"type": "text", "text": "补充一句 ZC_MORE"}, at="2026-12-01T09:00:00Z")
    second = run.json("scan", "--json")
    assert (second["changed"], second["events_added"], second["events_removed"]) == (1, 9, 8)
    assert {s["session_id"]: s["events"] for s in run.json("list", "--json")["sessions"]} == {
        "zcode:s1": 8,
        "zcode:s2": 9,
    }


def test_bad_rows_are_named_and_cost_only_themselves(db: Db) -> None:
    db.session("s1")
    db.message("s1", "user", {"type": "text", "text": "好的 ZC_OK"}, at="2026-12-01T08:00:01Z")
    db.conn.execute("INSERT INTO part VALUES ('p-bad', 'msg-001', 's1', '2026-12-01T08:00:09Z', '{broken')")
    db.message(
        "s1",
        "assistant",
        {"type": "hologram", "x": 1},
        {"type": "text", "text": "还在 ZC_STILL"},
        at="2026-12-01T08:00:02Z",
    )
    db.conn.execute("INSERT INTO message VALUES ('m-bad', 's1', '2026-12-01T08:00:03Z', 'nope')")
    items = db.read()
    assert [t for _, _, t in drafts(items)] == ["好的 ZC_OK", "还在 ZC_STILL"]
    reason = notices(items)[0].reason
    assert "part:hologram" in reason and "part:not-json" in reason and "message:not-json" in reason


def test_a_subagent_session_links_its_parent_when_the_table_says_so(tmp_path: Path) -> None:
    d = Db(tmp_path / "db.sqlite")
    d.conn.execute("ALTER TABLE session ADD COLUMN parent_id TEXT")
    d.session("main")
    d.session("child", parent_id="main")
    d.message("child", "user", {"type": "text", "text": "子任务：列出文件"}, at="2026-12-01T08:00:01Z")
    items = d.read()
    child = [i for i in items if isinstance(i, Session) and i.native_id == "child"][0]
    assert child.parent == "zcode:main"
    assert drafts(items, "zcode:child") == [("user", "provider", "子任务：列出文件")]


def test_rows_still_in_the_wal_are_read_and_nothing_is_created(home: Path) -> None:
    d = Db(home / ".zcode" / "cli" / "db" / "db.sqlite", wal=True)
    d.session("s1")
    turn(d)
    folder = d.path.parent
    assert (folder / "db.sqlite-wal").stat().st_size > 0
    listing = sorted(p.name for p in folder.iterdir())
    before = {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if not p.name.endswith("-shm")
    }
    assert len(drafts(d.read())) == 8
    assert sorted(p.name for p in folder.iterdir()) == listing
    assert {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in folder.iterdir() if not p.name.endswith("-shm")
    } == before
    d.conn.close()


def test_a_database_of_another_shape_is_reported_not_read(tmp_path: Path) -> None:
    path = tmp_path / "db.sqlite"
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE chats (id TEXT)")
    conn.commit()
    conn.close()
    items = list(ADAPTER.read(Source(provider="zcode", path=str(path), fingerprint=fingerprint(path))))
    assert notices(items)[0].fatal and "unknown-schema" in notices(items)[0].reason
    assert probe(path) == "unknown-schema"
    (tmp_path / "garbage.sqlite").write_bytes(b"not a database at all" * 100)
    assert probe(tmp_path / "garbage.sqlite") == "unreadable"


def test_the_voyager_variable_is_authoritative(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, db: Db
) -> None:
    db.session("s1")
    monkeypatch.setenv("VOYAGER_ZCODE_HOME", str(tmp_path / "nowhere"))
    found = list(ADAPTER.discover(dict(os.environ)))
    assert len(found) == 1 and not isinstance(found[0], Source) and "nowhere" in found[0].source


def test_an_empty_database_is_no_error(db: Db, run) -> None:
    summary = run.json("scan", "--json")
    assert (summary["failed"], summary["sessions"]) == (0, 0)


def test_nothing_is_written_beside_the_database(db: Db, home: Path, run) -> None:
    db.session("s1")
    turn(db)
    db.conn.close()
    before = tree(home)
    assert run.json("scan", "--json")["sessions"] == 1
    assert tree(home) == before
