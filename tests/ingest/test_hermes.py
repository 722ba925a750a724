"""The Hermes Agent adapter against state databases built here in Hermes 0.19's schema.

The capture Hermes 0.19.0 wrote is checked by ``test_captures.py`` (its second turn only
in the ``-wal``); these tests cover compaction (archived originals, copies, rewinds), a
session continued after compression, a delegated subagent, per-session change detection,
bad rows, unknown schemas, profiles and environment variables, hostile ids in the resume
command, and that nothing is written beside the database.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.shell import option_words
from tests.support.items import events, notices
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Cursor, Partial, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.hermes import ADAPTER, probe, render_call, resume_command, tool_output

SCHEMA = """
CREATE TABLE schema_version (version INTEGER NOT NULL);
INSERT INTO schema_version VALUES (22);
CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, model TEXT, model_config TEXT, system_prompt TEXT,
    parent_session_id TEXT, started_at REAL NOT NULL, ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, cwd TEXT, git_branch TEXT, git_repo_root TEXT, title TEXT,
    profile_name TEXT, archived INTEGER NOT NULL DEFAULT 0);
CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, timestamp REAL NOT NULL, token_count INTEGER,
    finish_reason TEXT, reasoning TEXT, reasoning_content TEXT, observed INTEGER DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0);
"""
SID = "20261201_080724_fd5789"
CWD = "/home/dev/proj"
T0 = 1796112456.0


class Db:
    """A Hermes state.db being written, as the agent writes it (WAL mode)."""

    def __init__(self, path: Path, *, wal: bool = True) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None)
        if wal:
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA wal_autocheckpoint=0")  # keep the rows in the -wal, as Hermes leaves them
        self.conn.executescript(SCHEMA)
        self.t = T0

    def session(self, sid: str = SID, **cols: Any) -> str:
        row = {
            "id": sid,
            "source": "cli",
            "model": "hermes-4",
            "system_prompt": "You are Hermes Agent SYSPROMPT_ONLY",
            "started_at": T0,
            "cwd": CWD,
            "input_tokens": 300,
            "output_tokens": 60,
            "cache_read_tokens": 5,
            **cols,
        }
        self.conn.execute(
            f"INSERT INTO sessions ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
        )
        return sid

    def add(self, role: str, content: str | None, sid: str = SID, **cols: Any) -> int:
        self.t += 1
        row = {"session_id": sid, "role": role, "content": content, "timestamp": self.t, **cols}
        cur = self.conn.execute(
            f"INSERT INTO messages ({', '.join(row)}) VALUES ({', '.join('?' * len(row))})", tuple(row.values())
        )
        return int(cur.lastrowid)

    def source(self) -> Source:
        return Source(provider="hermes", path=str(self.path), fingerprint=fingerprint(self.path, wal=True))

    def read(self, cursor: Cursor | None = None) -> list[Any]:
        return list(ADAPTER.read(self.source(), cursor))


def calls(*pairs: tuple[str, str, dict[str, Any]]) -> str:
    # Hermes stores arguments as a JSON string with non-ASCII escaped (\uXXXX).
    return json.dumps(
        [
            {"id": cid, "call_id": cid, "type": "function", "function": {"name": name, "arguments": json.dumps(args)}}
            for cid, name, args in pairs
        ]
    )


def turn(db: Db, sid: str = SID, prompt: str = "请运行 make test PROMPT_H1") -> None:
    db.add("user", prompt, sid)
    db.add(
        "assistant",
        "我来运行测试。",
        sid,
        reasoning="Run the suite first",
        reasoning_content="Run the suite first",
        tool_calls=calls(("call_1", "terminal", {"command": "make test 输出"})),
        finish_reason="tool_calls",
    )
    db.add(
        "tool",
        json.dumps({"output": "2 failed 失败", "exit_code": 2, "error": None}),
        sid,
        tool_call_id="call_1",
        tool_name="terminal",
    )
    db.add("assistant", "两个测试失败了 REPLY_H1。", sid, finish_reason="stop")


def kinds(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in events(items)]


@pytest.fixture
def db(tmp_path: Path):
    d = Db(tmp_path / ".hermes" / "state.db")
    yield d
    d.conn.close()


# -- mapping -------------------------------------------------------------------------------------


def test_a_turn_maps_to_one_event_each_and_the_system_prompt_is_not_indexed(db: Db) -> None:
    db.session()
    turn(db)
    items = db.read()
    assert kinds(items) == [
        ("user", "human", "请运行 make test PROMPT_H1"),
        ("reasoning", "agent", "Run the suite first"),
        ("assistant", "agent", "我来运行测试。"),
        ("tool_call", "agent", "make test 输出"),
        ("tool_result", "tool", "2 failed 失败"),
        ("assistant", "agent", "两个测试失败了 REPLY_H1。"),
    ]
    result = events(items)[4]
    assert (result.exit_code, result.is_error, result.call_id, result.tool) == (2, True, "call_1", "terminal")
    assert events(items)[0].ts == pytest.approx(T0 + 1)
    assert not any("SYSPROMPT_ONLY" in e.text for e in events(items))
    [s] = [i for i in items if isinstance(i, Session)]
    assert s.id == f"hermes:{SID}" and s.cwd == CWD and s.model == "hermes-4" and s.started == T0
    assert s.updated == pytest.approx(T0 + 4) and (s.tokens_in, s.tokens_out) == (305, 60)
    assert s.resume == f"cd {CWD} && hermes chat --resume {SID}" and s.title is None


def test_distinct_reasoning_fields_are_both_kept(db: Db) -> None:
    db.session()
    db.add("assistant", "ok", reasoning="first thought", reasoning_content="a different thought")
    assert [e.text for e in events(db.read()) if e.kind == "reasoning"] == ["first thought", "a different thought"]


def test_render_call_and_tool_output() -> None:
    assert render_call("terminal", json.dumps({"command": "echo 输出完成"})) == "echo 输出完成"
    assert (
        render_call("write_file", json.dumps({"path": "a.md", "content": "数据"})) == '{"path":"a.md","content":"数据"}'
    )
    assert render_call("terminal", "{not json") == "{not json"
    assert tool_output('{"output": "x", "exit_code": 0, "error": null}') == ("x", 0, False)
    assert tool_output('{"output": "", "exit_code": 1, "error": "boom"}') == ("boom", 1, True)
    assert tool_output("plain text result") == ("plain text result", None, False)
    assert tool_output('{"results": [1]}') == ('{"results": [1]}', None, False)


def test_compaction_keeps_the_originals_and_skips_its_copies_and_rewound_rows(db: Db) -> None:
    db.session()
    turn(db)
    rewound = db.add("user", "this prompt was undone REWOUND_H1")
    db.conn.execute("UPDATE messages SET active = 0, compacted = 0 WHERE id = ?", (rewound,))
    # archive_and_compact: every active row archived, the compressed transcript inserted as new rows.
    db.conn.execute("UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ? AND active = 1", (SID,))
    db.add("user", "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted. SUMMARY_H1")
    db.add("assistant", "两个测试失败了 REPLY_H1。", finish_reason="stop")  # a kept copy
    db.add("user", "now fix them PROMPT_H2")
    got = kinds(db.read())
    assert got.count(("user", "human", "请运行 make test PROMPT_H1")) == 1
    assert [t for k, o, t in got if "REPLY_H1" in t] == ["两个测试失败了 REPLY_H1。"], "the copy is skipped"
    assert ("meta", "provider", "[CONTEXT COMPACTION — REFERENCE ONLY] Earlier turns were compacted. SUMMARY_H1") in got
    assert got[-1] == ("user", "human", "now fix them PROMPT_H2")
    assert not any("REWOUND_H1" in t for _, _, t in got)


def test_a_session_continued_after_compression_skips_the_parents_copies(db: Db) -> None:
    db.session(ended_at=T0 + 50, end_reason="compression")
    turn(db)
    child = db.session("20261201_090000_aaaaaa", parent_session_id=SID, started_at=T0 + 60)
    db.add("user", "[CONTEXT COMPACTION] summary of the first window SUMMARY_H2", child)
    db.add("user", "请运行 make test PROMPT_H1", child)  # a kept copy of the parent's prompt
    db.add("user", "continue with the fix PROMPT_H3", child)
    items = db.read()
    by_session: dict[str, list[tuple[str, str, str]]] = {}
    for e in events(items):
        by_session.setdefault(e.session, []).append((e.kind, e.origin, e.text))
    assert by_session[f"hermes:{child}"] == [
        ("meta", "provider", "[CONTEXT COMPACTION] summary of the first window SUMMARY_H2"),
        ("user", "human", "continue with the fix PROMPT_H3"),
    ]
    [s] = [i for i in items if isinstance(i, Session) and i.native_id == child]
    assert s.parent == f"hermes:{SID}" and s.resume.endswith(f"--resume {child}")


def test_a_delegated_subagent_links_to_its_parent_and_its_task_is_not_a_persons(db: Db) -> None:
    db.session()
    turn(db)
    sub = db.session(
        "20261201_080800_bbbbbb", source="tool", parent_session_id=SID, model_config=json.dumps({"_delegate_from": SID})
    )
    db.add("user", "Summarise the failures SUBTASK_H1", sub)
    db.add("assistant", "Both fail on 数据库 fixtures SUBREPLY_H1", sub)
    items = db.read()
    sub_events = [(e.kind, e.origin) for e in events(items) if e.session == f"hermes:{sub}"]
    assert sub_events == [("user", "provider"), ("assistant", "agent")]
    [s] = [i for i in items if isinstance(i, Session) and i.native_id == sub]
    assert s.parent == f"hermes:{SID}" and s.resume == f"cd {CWD} && hermes chat --resume {SID}"


def test_bad_rows_cost_only_themselves_and_unknown_roles_are_named(db: Db) -> None:
    db.session()
    db.add("assistant", "before", tool_calls="[{broken json")
    db.add("critic", "who is this")
    db.add(
        "assistant", None, tool_calls=json.dumps([{"id": "c9", "function": {"name": "read_file", "arguments": "{bad"}}])
    )
    db.add(
        "user", '[{"type": "text", "text": "multimodal 提示"}, {"type": "image_url", "image_url": {"url": "data:x"}}]'
    )
    items = db.read()
    assert kinds(items) == [
        ("assistant", "agent", "before"),
        ("tool_call", "agent", "{bad"),
        ("user", "human", "multimodal 提示"),
    ]
    [notice] = notices(items)
    assert "role:critic" in notice.reason and "state schema 22" in notice.reason and not notice.fatal


def test_a_title_is_kept(db: Db) -> None:
    db.session(title="Fix the flaky 测试")
    db.add("user", "hello")
    [s] = [i for i in db.read() if isinstance(i, Session)]
    assert s.title == "Fix the flaky 测试" and s.title_source is None


# -- change detection -----------------------------------------------------------------------------


def _state(items: list[Any]) -> Cursor:
    [cursor] = [i for i in items if isinstance(i, Cursor)]
    return cursor


def test_untouched_sessions_are_unchanged_and_a_grown_one_is_read_from_its_last_row(db: Db) -> None:
    other = db.session("20261201_070000_cccccc")
    db.add("user", "another session", other)
    db.session()
    turn(db)
    cursor = _state(db.read())
    again = db.read(cursor)
    assert {i.session for i in again if isinstance(i, Unchanged)} == {f"hermes:{other}", f"hermes:{SID}"}
    assert not events(again)

    db.add("user", "第二轮 PROMPT2_H1")
    grown = db.read(cursor)
    assert [i for i in grown if isinstance(i, Partial)] == [Partial(session=f"hermes:{SID}", from_seq=6)]
    assert [(e.seq, e.text) for e in events(grown)] == [(6, "第二轮 PROMPT2_H1")]
    assert [i.session for i in grown if isinstance(i, Unchanged)] == [f"hermes:{other}"]

    # Compaction rewrites flags: that session is read whole again.
    db.conn.execute("UPDATE messages SET active = 0, compacted = 1 WHERE session_id = ?", (SID,))
    whole = db.read(_state(grown))
    assert not [i for i in whole if isinstance(i, Partial)]
    assert [e.seq for e in events(whole)] == list(range(7))


def test_a_title_set_later_updates_the_session_without_reading_its_rows(db: Db) -> None:
    db.session()
    turn(db)
    cursor = _state(db.read())
    db.conn.execute("UPDATE sessions SET title = 'Named later', ended_at = ? WHERE id = ?", (T0 + 99, SID))
    items = db.read(cursor)
    assert [i for i in items if isinstance(i, Partial)] == [Partial(session=f"hermes:{SID}", from_seq=6)]
    assert not events(items) and [i.title for i in items if isinstance(i, Session)] == ["Named later"]


def test_a_second_scan_reads_only_the_new_turn_through_the_cli(home: Path, run) -> None:
    db = Db(home / ".hermes" / "state.db")
    try:
        other = db.session("20261201_070000_cccccc")
        db.add("user", "another session", other)
        db.session()
        turn(db)
        first = run.json("scan", "--json")
        assert (first["new"], first["events_added"], first["sessions"]) == (1, 7, 2)
        db.add("user", "第二轮 请总结 PROMPT2_HCLI")
        second = run.json("scan", "--json")
        assert (second["changed"], second["events_added"], second["events_removed"]) == (1, 1, 0)
        hits = run.json("search", "PROMPT2_HCLI", "--json", "--no-refresh")["hits"]
        assert [(h["kind"], h["origin"], h["session_id"]) for h in hits] == [("user", "human", f"hermes:{SID}")]
        assert run.json("search", "another", "--json", "--no-refresh")["hits"], "the untouched session kept its events"
        assert run.json("stats", "--json")["providers"]["hermes"]["events"] == 8
    finally:
        db.conn.close()


# -- stores: empty, foreign, unreadable; where they are ----------------------------------------------


def test_an_unknown_schema_and_a_non_database_are_fatal_notices(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (id INTEGER)")
    conn.close()
    [notice] = list(ADAPTER.read(Source(provider="hermes", path=str(other), fingerprint=fingerprint(other))))
    assert notice.fatal and "unknown-schema" in notice.reason and probe(other) == "unknown-schema"
    junk = tmp_path / "junk.db"
    junk.write_bytes(b"not a database at all" * 100)
    [notice] = list(ADAPTER.read(Source(provider="hermes", path=str(junk), fingerprint=fingerprint(junk))))
    assert notice.fatal and probe(junk) == "unreadable"


def test_an_empty_store_yields_no_session(db: Db) -> None:
    db.session()  # a session row without a message: nothing to find
    items = db.read()
    assert [type(i).__name__ for i in items] == ["Cursor"]


def _found(env: dict[str, str]) -> list[str]:
    return [s.path for s in ADAPTER.discover(env) if isinstance(s, Source)]


def test_homes_profiles_and_their_precedence(tmp_path: Path) -> None:
    home = tmp_path / "h"
    for d in (home / ".hermes", home / ".hermes" / "profiles" / "work", tmp_path / "custom", tmp_path / "voyager"):
        Db(d / "state.db", wal=False).conn.close()
    assert _found({"HOME": str(home)}) == [
        str(home / ".hermes" / "state.db"),
        str(home / ".hermes" / "profiles" / "work" / "state.db"),
    ]
    assert _found({"HOME": str(home), "HERMES_HOME": str(tmp_path / "custom")}) == [
        str(tmp_path / "custom" / "state.db")
    ]
    assert _found(
        {"HOME": str(home), "HERMES_HOME": str(tmp_path / "custom"), "VOYAGER_HERMES_HOME": str(tmp_path / "voyager")}
    ) == [str(tmp_path / "voyager" / "state.db")]


def test_a_profiles_sessions_resume_in_that_profile(tmp_path: Path) -> None:
    db = Db(tmp_path / ".hermes" / "profiles" / "work" / "state.db")
    db.session()
    db.add("user", "hi")
    [s] = [i for i in db.read() if isinstance(i, Session)]
    db.conn.close()
    assert s.resume == f"cd {CWD} && hermes --profile work chat --resume {SID}"


def test_gateway_transcripts_without_a_database_are_named(tmp_path: Path) -> None:
    sessions = tmp_path / ".hermes" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "20260101_000000_abc.jsonl").write_text('{"role": "user", "content": "hi"}\n')
    [notice] = list(ADAPTER.discover({"HOME": str(tmp_path)}))
    assert "gateway transcript" in notice.reason and not notice.fatal


HOSTILE = ["x; rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "two words", "line\nbreak", "-rf"]


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_ids_cwds_and_profiles_are_quoted(evil: str) -> None:
    command = resume_command(f"/tmp/{evil}", evil, evil)
    assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0
    assert shlex.split(command) == [
        "cd",
        f"/tmp/{evil}",
        "&&",
        "hermes",
        *option_words("--profile", evil),
        "chat",
        *option_words("--resume", evil),
    ]


# -- read-only ---------------------------------------------------------------------------------------


def _tree(root: Path) -> dict[str, str]:
    return {
        p.name: hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(root.iterdir())
        if not p.name.endswith("-shm")
    }


def test_a_database_without_a_wal_gets_none(tmp_path: Path) -> None:
    db = Db(tmp_path / "state.db", wal=False)
    db.session()
    turn(db)
    db.conn.close()
    before = _tree(tmp_path)
    assert len(events(Db.read(db))) == 6
    assert _tree(tmp_path) == before and sorted(p.name for p in tmp_path.iterdir()) == ["state.db"]


def test_rows_only_in_the_wal_are_read_and_nothing_changes(db: Db, tmp_path: Path) -> None:
    db.session()
    turn(db)
    folder = db.path.parent
    assert (folder / "state.db-wal").stat().st_size > 0
    before = _tree(folder)
    assert len(events(db.read())) == 6
    assert _tree(folder) == before
    assert sorted(p.name for p in folder.iterdir()) == ["state.db", "state.db-shm", "state.db-wal"]


def test_lone_surrogate_escapes_in_json_cells_are_replaced(db: Db) -> None:
    # json.loads passed "\ud83d" through: compact_json raised UnicodeEncodeError out of the read (adapter
    # error), and a tool output's text reached the index, which cannot encode it.
    db.session()
    db.add(
        "assistant",
        None,
        tool_calls='[{"id": "c1", "function": {"name": "read_file", "arguments": {"path": "cut \\ud83d"}}}]',
    )
    db.add("tool", '{"output": "half \\ud83d emoji", "exit_code": 0}', tool_call_id="c1", tool_name="read_file")
    db.add("user", '[{"type": "text", "text": "multimodal \\ud83d"}]')
    texts = [t for _, _, t in kinds(db.read())]
    assert texts == ['{"path":"cut \ufffd"}', "half \ufffd emoji", "multimodal \ufffd"]


def test_a_corrupt_schema_version_page_is_a_fatal_notice(tmp_path: Path) -> None:
    # The state schema's version was queried outside the read's guard: "database disk image is
    # malformed" escaped the read (adapter error) instead of naming the store.
    d = Db(tmp_path / ".hermes" / "state.db", wal=False)
    d.session()
    turn(d)
    d.conn.close()
    data = bytearray(d.path.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    data[size : 2 * size] = bytes(range(256)) * (size // 256)  # page 2: schema_version, the first table made
    d.path.write_bytes(bytes(data))
    items = d.read()
    assert len(items) == 1 and items[0].fatal and items[0].reason.startswith("unreadable:"), items
