"""The OpenCode adapter: every storage shape, read-only, checked against independent oracles.

Synthetic stores come from ``synth.opencode``; real databases were written by the OpenCode 1.18.33
CLI (``tests/fixtures/opencode-1.18.33`` with its live WAL, the captures in
``tests/fixtures/agents/opencode-1.18.33*`` checked through the CLI, and
``tests/fixtures/opencode/real-1.18.33`` from ``opencode import``). Oracles are plain sqlite3
(or plain file reads for the JSON tree) over the same files and never import the adapter.
"""

from __future__ import annotations

import gc
import hashlib
import json
import math
import os
import shlex
import shutil
import sqlite3
import subprocess
import sys
import textwrap
import tracemalloc
from collections import Counter, defaultdict
from pathlib import Path

import msgspec
import pytest

import synth
from synth import opencode as so
from tests.support.captures import OPENCODE_LIVE_WAL
from tests.support.opencode_family import (
    check_prompts,
    check_title,
    hits,
    install,
    scan_capture,
    sessions,
)
from voyager_sessions.core.model import Event, Session
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import get
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Notice, Partial, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.opencode import ADAPTER, connect_readonly, probe, tree_fingerprint
from voyager_sessions.ingest.toolcall import tool_call_text

ROOT = Path(__file__).resolve().parents[2]
SHARED_FIXTURE = OPENCODE_LIVE_WAL
CLI_FIXTURE = ROOT / "tests" / "fixtures" / "opencode" / "real-1.18.33" / "opencode.db"

# ---------------------------------------------------------------------------
# helpers
# ---------------------------------------------------------------------------


def source(path: Path) -> Source:
    fp = tree_fingerprint(path) if path.is_dir() else fingerprint(path, wal=True)
    return Source(provider="opencode", path=str(path), fingerprint=fp)


class Read:
    """Everything one ``read`` yielded, grouped; checks the Session-then-events order as it goes."""

    def __init__(self, path: Path) -> None:
        self.sessions: dict[str, Session] = {}
        self.events: dict[str, list[Event]] = defaultdict(list)
        self.notices: list[Notice] = []
        self.order: list[str] = []
        self.cursor: Cursor | None = None
        current = None
        for item in ADAPTER.read(source(path)):
            if isinstance(item, Session):
                assert item.native_id not in self.sessions, f"session {item.native_id} read twice"
                self.sessions[item.native_id] = item
                self.order.append(item.native_id)
                current = item.id
            elif isinstance(item, Event):
                assert item.session == current, "an event arrived outside its session"
                self.events[item.session.split(":", 1)[1]].append(item)
            elif isinstance(item, Cursor):
                self.cursor = item  # a database's per-session signatures, for the next scan
            else:
                assert isinstance(item, Notice)
                self.notices.append(item)

    def texts(self) -> list[str]:
        return [e.text for evs in self.events.values() for e in evs]

    def stream(self, sid: str) -> list[tuple]:
        return [(e.seq, e.kind, e.origin, e.text, e.tool, e.call_id, e.exit_code, e.is_error) for e in self.events[sid]]


def convs(n: int = 3, messages: int = 14) -> list[synth.Conversation]:
    out = []
    for i in range(n):
        c = synth.generate(100 + i, messages, session_id=f"ses_{i:04d}synthAAAA", cwd=f"/home/dev/proj {i}")
        c.title = f"标题 {i} 🚀"
        out.append(c)
    return out


def copy_db(src_dir: Path, dst: Path) -> Path:
    """Copy a database with its -wal and -shm together (a db without its WAL is a different database)."""
    dst.mkdir(parents=True, exist_ok=True)
    for f in src_dir.iterdir():
        if f.name.startswith("opencode.db"):
            shutil.copyfile(f, dst / f.name)
    return dst / "opencode.db"


def sha(path: Path) -> str | None:
    return hashlib.sha256(path.read_bytes()).hexdigest() if path.exists() else None


def row_counts(db: Path) -> dict[str, int]:
    """Every table's row count, through a read-only connection so counting cannot change the files."""
    conn = sqlite3.connect(db.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        tables = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        return {t: conn.execute(f'SELECT count(*) FROM "{t}"').fetchone()[0] for t in tables}
    finally:
        conn.close()


# -- independent oracles ------------------------------------------------------

KEYS = ("user", "text", "reasoning", "tool", "result")


def oracle_v1(conn: sqlite3.Connection, where: str = "", params: tuple = ()) -> dict[str, Counter]:
    out: dict[str, Counter] = defaultdict(Counter)
    sql = f"""
        SELECT m.session_id,
          sum(json_extract(m.data,'$.role')='user' AND json_extract(p.data,'$.type')='text'
              AND coalesce(json_extract(p.data,'$.synthetic'),0)=0),
          sum(json_extract(m.data,'$.role')='assistant' AND json_extract(p.data,'$.type')='text'),
          sum(json_extract(p.data,'$.type')='reasoning'),
          sum(json_extract(p.data,'$.type')='tool'),
          sum(json_extract(p.data,'$.type')='tool' AND json_extract(p.data,'$.state.status') IN ('completed','error'))
        FROM part p JOIN message m ON m.id = p.message_id {where} GROUP BY m.session_id"""
    for sid, *vals in conn.execute(sql, params):
        out[sid].update(dict(zip(KEYS, vals, strict=True)))
    return out


def oracle_v2(conn: sqlite3.Connection, parts: bool, where: str = "") -> dict[str, Counter]:
    out: dict[str, Counter] = defaultdict(Counter)
    if parts:
        items = "FROM session_message m JOIN session_part c ON c.message_id = m.id"
        value = "c.data"
    else:
        items = "FROM session_message m, json_each(m.data, '$.content') c"
        value = "c.value"
        for sid, n in conn.execute(
            f"SELECT m.session_id, count(*) FROM session_message m WHERE m.type='user' "
            f"AND coalesce(json_extract(m.data,'$.text'),'') != '' {where.replace('WHERE', 'AND')} "
            f"GROUP BY 1"
        ):
            out[sid]["user"] += n
    sql = f"""
        SELECT m.session_id,
          sum(m.type='user' AND json_extract({value},'$.type')='text'),
          sum(m.type='assistant' AND json_extract({value},'$.type')='text'),
          sum(json_extract({value},'$.type')='reasoning'),
          sum(json_extract({value},'$.type')='tool'),
          sum(json_extract({value},'$.type')='tool' AND json_extract({value},'$.state.status') IN ('completed','error'))
        {items} {where} GROUP BY m.session_id"""
    for sid, *vals in conn.execute(sql):
        out[sid].update({k: v for k, v in zip(KEYS, vals, strict=True) if v})
    return out


def oracle_json(storage: Path) -> dict[str, Counter]:
    out: dict[str, Counter] = defaultdict(Counter)
    for sfile in storage.glob("session/*/*.json"):
        sid = json.loads(sfile.read_text("utf-8"))["id"]
        out[sid]  # a session with no messages still counts as read
        for mfile in (storage / "message" / sid).glob("*.json"):
            msg = json.loads(mfile.read_text("utf-8"))
            for pfile in (storage / "part" / msg["id"]).glob("*.json"):
                part = json.loads(pfile.read_text("utf-8"))
                t = part.get("type")
                if t == "text" and not part.get("synthetic"):
                    out[sid]["user" if msg["role"] == "user" else "text"] += 1
                elif t == "reasoning":
                    out[sid]["reasoning"] += 1
                elif t == "tool":
                    out[sid]["tool"] += 1
                    out[sid]["result"] += part["state"]["status"] in ("completed", "error")
    return out


def oracle(path: Path, shape: str) -> dict[str, Counter]:
    if shape == "json":
        return oracle_json(path)
    conn = sqlite3.connect(path.resolve().as_uri() + "?mode=ro", uri=True)
    try:
        if shape == "v1":
            return oracle_v1(conn)
        if shape in ("v2", "v2-inline"):
            return oracle_v2(conn, parts=shape == "v2")
        # migrating: session_v2 wins; 1.x rows only for sessions not copied (absent from
        # session_v2 and below the cursor) and never after phase=completed.
        got = oracle_v2(conn, parts=False)
        row = conn.execute("SELECT value FROM kv WHERE key='migration.v1-v2'").fetchone()
        state = json.loads(row[0]) if row else {}
        if state.get("phase") != "completed":
            where = "WHERE m.session_id NOT IN (SELECT id FROM session_v2)"
            params: tuple = ()
            if state.get("cursor"):
                where += " AND m.session_id < ?"
                params = (state["cursor"],)
            got.update(oracle_v1(conn, where, params))
        return got
    finally:
        conn.close()


def adapter_counts(read: Read) -> dict[str, Counter]:
    out: dict[str, Counter] = {sid: Counter() for sid in read.sessions}
    for sid, evs in read.events.items():
        for e in evs:
            key = {"user": "user", "reasoning": "reasoning", "tool_call": "tool", "tool_result": "result"}.get(e.kind)
            if e.kind == "assistant" and not e.is_error:
                key = "text"
            if key:
                out[sid][key] += 1
    return out


def build(shape: str, tmp: Path, cs: list[synth.Conversation]) -> Path:
    if shape == "json":
        so.write_json_tree(tmp / "storage", cs)
        return tmp / "storage"
    db = tmp / "opencode.db"
    if shape == "v1":
        so.write_v1(db, cs)
    elif shape == "v2":
        so.write_v2(db, cs)
    elif shape == "v2-inline":
        so.write_v2(db, cs, inline=True)
    else:
        so.write_migrating(db, cs, phase="sessions", cursor=cs[1].id, deleted=[cs[2].id])
    return db


SHAPES = ["json", "v1", "v2", "v2-inline", "migrating"]

# ---------------------------------------------------------------------------
# registry and shape detection
# ---------------------------------------------------------------------------


def test_registered_under_its_name() -> None:
    assert get("opencode") is ADAPTER
    assert ADAPTER.name == "opencode" and manifest.row("opencode").label == "OpenCode"


@pytest.mark.parametrize("shape", SHAPES)
def test_probe_names_each_shape(tmp_path: Path, shape: str) -> None:
    assert probe(build(shape, tmp_path, convs(3, 4))) == shape


def test_v1_with_the_empty_session_message_of_1_18_33_is_still_v1(tmp_path: Path) -> None:
    so.write_v1(tmp_path / "a.db", convs(1, 4))
    assert "session_message" in row_counts(tmp_path / "a.db")
    assert probe(tmp_path / "a.db") == "v1"
    assert probe(CLI_FIXTURE) == "v1"


def test_parts_table_forbids_inline(tmp_path: Path) -> None:
    # A v2 database with session_part must never be read as inline, whatever its rows hold.
    w = so.V2Writer.create(tmp_path / "a.db", parts=True)
    w.conn.close()
    assert probe(tmp_path / "a.db") == "v2"


def test_unknown_and_unreadable(tmp_path: Path) -> None:
    other = tmp_path / "other.db"
    conn = sqlite3.connect(other)
    conn.execute("CREATE TABLE notes (id TEXT, body TEXT)")
    conn.close()
    garbage = tmp_path / "garbage.db"
    garbage.write_bytes(b"this is not a database, it only looks like one" * 100)
    empty = tmp_path / "empty.db"
    empty.write_bytes(b"")
    odd_parts = tmp_path / "odd.db"
    w = so.V2Writer.create(odd_parts, parts=False)
    w.conn.execute("CREATE TABLE session_part (x TEXT)")  # a parts table we do not understand
    w.conn.close()
    assert probe(other) == "unknown-schema"
    assert probe(empty) == "unknown-schema"
    assert probe(odd_parts) == "unknown-schema"
    assert probe(garbage) == "unreadable"
    assert probe(tmp_path / "missing.db") == "unreadable"
    for path, prefix in (
        (other, "unknown-schema:"),
        (empty, "unknown-schema:"),
        (odd_parts, "unknown-schema:"),
        (garbage, "unreadable:"),
    ):
        items = list(ADAPTER.read(source(path)))
        assert len(items) == 1 and isinstance(items[0], Notice), items
        assert items[0].fatal and items[0].reason.startswith(prefix), items[0]


def _corrupt_db(tmp: Path, name: str) -> Path:
    db = tmp / name
    so.write_v1(db, convs(4, 60))
    conn = sqlite3.connect(db)
    conn.execute("PRAGMA journal_mode=DELETE")  # fold the WAL in: one file to damage
    conn.close()
    return db


def test_corruption_behind_an_intact_schema_page_is_a_fatal_notice(tmp_path: Path) -> None:
    scribbled = _corrupt_db(tmp_path, "scribbled.db")
    data = bytearray(scribbled.read_bytes())
    page = int.from_bytes(data[16:18], "big")
    for i in range(page * 2, len(data), 7):  # page 1 (the schema) stays intact
        data[i] = 0xA5
    scribbled.write_bytes(bytes(data))
    truncated = _corrupt_db(tmp_path, "truncated.db")
    truncated.write_bytes(truncated.read_bytes()[: truncated.stat().st_size // 2])
    for db in (scribbled, truncated):
        items = list(ADAPTER.read(source(db)))
        fatal = [i for i in items if isinstance(i, Notice) and i.fatal]
        assert len(fatal) == 1 and fatal[0].reason.startswith("unreadable:"), items[-3:]
        assert items[-1] is fatal[0]  # nothing after the failure pretends the source was complete
    assert probe(truncated) == "unreadable"


# ---------------------------------------------------------------------------
# every shape against the independent oracle
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("shape", SHAPES)
def test_counts_match_independent_oracle(tmp_path: Path, shape: str) -> None:
    cs = convs(3, 30)
    path = build(shape, tmp_path, cs)
    read = Read(path)
    expected = oracle(path, shape)
    assert set(read.sessions) == set(expected)
    assert adapter_counts(read) == {sid: +c for sid, c in expected.items()}
    assert not [n for n in read.notices if n.fatal]


def test_every_shape_yields_the_same_stream(tmp_path: Path) -> None:
    cs = convs(2, 24)
    streams = {}
    for shape in ("json", "v1", "v2", "v2-inline"):
        read = Read(build(shape, tmp_path / shape, cs))
        streams[shape] = {sid: read.stream(sid) for sid in read.sessions}
    assert streams["json"] == streams["v1"] == streams["v2"] == streams["v2-inline"]


@pytest.mark.parametrize("shape", SHAPES)
def test_rescan_is_identical_and_seq_counts_from_zero(tmp_path: Path, shape: str) -> None:
    path = build(shape, tmp_path, convs(3, 20))
    first, second = Read(path), Read(path)
    assert first.order == second.order
    for sid in first.sessions:
        assert first.stream(sid) == second.stream(sid)
        assert [e.seq for e in first.events[sid]] == list(range(len(first.events[sid])))


@pytest.mark.parametrize("shape", SHAPES)
def test_unicode_survives(tmp_path: Path, shape: str) -> None:
    c = synth.Conversation(
        id="ses_0000unicodeAA",
        cwd="/home/dev/项目 ✨",
        title="数据库 迁移 🚀",
        model="m",
        started=1_790_000_000.0,
        turns=[
            synth.Turn(role="user", text="请检查索引 インデックス 인덱스 😀", ts=1_790_000_001.0),
            synth.Turn(
                role="assistant",
                text="完成 ✅",
                ts=1_790_000_002.0,
                reasoning="思考 🤔",
                tool_calls=[
                    synth.ToolCall(
                        call_id="c1", name="bash", input={"command": "ls 目录"}, output="文件.txt 📄", exit_code=0
                    )
                ],
            ),
        ],
    )
    if shape == "migrating":
        so.write_migrating(tmp_path / "opencode.db", [c], phase="completed")
        path = tmp_path / "opencode.db"
    else:
        path = build(shape, tmp_path, [c])
    read = Read(path)
    s = read.sessions["ses_0000unicodeAA"]
    assert (s.title, s.cwd) == ("数据库 迁移 🚀", "/home/dev/项目 ✨")
    assert {"请检查索引 インデックス 인덱스 😀", "完成 ✅", "思考 🤔", "文件.txt 📄", "ls 目录"} <= set(read.texts())


# ---------------------------------------------------------------------------
# the real databases
# ---------------------------------------------------------------------------


def test_real_1_18_33_with_live_wal_every_part_text_is_emitted(tmp_path: Path) -> None:
    db = copy_db(SHARED_FIXTURE, tmp_path / "read")
    # The oracle reads its own copy, so nothing it does can touch the adapter's files.
    ref = copy_db(SHARED_FIXTURE, tmp_path / "oracle")
    conn = sqlite3.connect(ref.resolve().as_uri() + "?mode=ro", uri=True)
    parts = [json.loads(d) for (d,) in conn.execute("SELECT data FROM part")]
    n_sessions, n_messages = (conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("session", "message"))
    conn.close()
    assert (n_sessions, n_messages, len(parts)) == (3, 14, 25)  # the fixture as documented; only the WAL has most rows

    read = Read(db)
    assert probe(db) == "v1" and len(read.sessions) == 3
    emitted = set(read.texts())
    for p in parts:
        if p["type"] in ("text", "reasoning"):
            # `opencode run` wrapped its prompts in quotes; the event holds what the person typed.
            quoted = p["type"] == "text" and len(p["text"]) > 1 and p["text"][0] == p["text"][-1] == '"'
            assert (p["text"][1:-1] if quoted else p["text"]) in emitted
        elif p["type"] == "tool":
            assert p["state"]["output"] in emitted
            assert tool_call_text(p["tool"], p["state"]["input"]) in emitted  # the one rule (docs/json.md)
    assert any("检查 数据库 连接" in t for t in emitted)
    errors = [e for evs in read.events.values() for e in evs if e.is_error]
    assert [(e.kind, e.origin) for e in errors] == [("assistant", "provider")]
    assert errors[0].text.startswith("APIError: Cannot connect to API")
    results = [e for evs in read.events.values() for e in evs if e.kind == "tool_result"]
    assert results and all(e.exit_code == 1 for e in results)
    assert adapter_counts(read) == {sid: +c for sid, c in oracle(ref, "v1").items()}


def test_real_1_18_33_files_are_unchanged_by_reading(tmp_path: Path) -> None:
    db = copy_db(SHARED_FIXTURE, tmp_path)
    wal = Path(f"{db}-wal")
    before = (sha(db), sha(wal), row_counts(db))
    assert before[1] is not None
    Read(db)
    assert probe(db) == "v1"
    assert (sha(db), sha(wal), row_counts(db)) == before


def test_cli_written_edge_cases(tmp_path: Path) -> None:
    """``opencode import`` (1.18.33) wrote these rows; see tests/fixtures/opencode/make_real_fixture.py."""
    db = tmp_path / "opencode.db"
    shutil.copyfile(CLI_FIXTURE, db)
    read = Read(db)
    main, sub = "ses_ee0000000001EdgeMainAAAA", "ses_ee0000000002EdgeSubBBBBB"
    m = read.sessions[main]
    # The CLI left session.model NULL and tokens 0: both come from the messages instead.
    assert m.model == "fake/m1" and (m.tokens_in, m.tokens_out) == (240, 60)
    assert m.cwd == m.git_repo == "/tmp/voyager-opencode-fixture/home/dev/proj"
    assert m.resume == f"opencode {m.cwd} --session {main}"
    assert m.title == "边缘 edge session" and m.parent is None
    assert isinstance(m.started, float) and m.started == pytest.approx(1_796_100_000.0, abs=1e6)
    ev = {e.text: e for e in read.events[main]}
    assert (ev["请检查 edgeuserword 😀 한국어"].kind, ev["请检查 edgeuserword 😀 한국어"].origin) == ("user", "human")
    assert (ev["edgesyntheticword injected context"].kind, ev["edgesyntheticword injected context"].origin) == (
        "meta",
        "provider",
    )
    assert ev["file: notes.txt"].kind == "meta"
    assert ev["agent: plan"].kind == "meta" and ev["agent: plan"].origin == "provider"
    assert ev["edgereasoningword think"].kind == "reasoning"
    assert ev["edgeassistantword done"].kind == "assistant"
    err = ev["APIError: edgeerrorword upstream unavailable"]
    assert (err.kind, err.origin, err.is_error) == ("assistant", "provider", True)
    calls = {e.call_id: e for e in read.events[main] if e.kind == "tool_call"}
    results = {e.call_id: e for e in read.events[main] if e.kind == "tool_result"}
    assert set(calls) == {"call_ok", "call_err", "call_run", "call_noexit"}
    assert set(results) == {"call_ok", "call_err", "call_noexit"}  # the running tool has no invented result
    assert results["call_ok"].exit_code == 0 and results["call_ok"].text == "a.txt\nb.txt 🚀"
    assert results["call_noexit"].exit_code is None
    assert (results["call_err"].is_error, results["call_err"].exit_code, results["call_err"].text) == (
        True,
        None,
        "File not found: /nope",
    )
    s = read.sessions[sub]
    assert s.parent == f"opencode:{main}"
    assert [(e.kind, e.origin) for e in read.events[sub]] == [("user", "provider"), ("assistant", "agent")]
    assert not any(e.kind == "user" and "edge" in e.text and e.origin == "human" for e in read.events[sub])
    # step-start / step-finish are noise, not unknown types.
    assert not read.notices
    assert adapter_counts(read) == {sid: +c for sid, c in oracle(db, "v1").items()}


def test_a_cursor_from_an_older_release_reads_every_session_again(tmp_path: Path) -> None:
    """Marks are typed records; a state of another shape (the positional lists of before) is not trusted."""
    cs = convs(2, 6)
    db = build("v1", tmp_path, cs)
    first = Read(db)
    assert first.cursor is not None
    marks = first.cursor.state["sessions"]
    assert set(marks) == {c.id for c in cs}
    legacy = {
        sid: {"sig": ["v1", "0" * 20, 6, 1, 2, "m", 0, None, None, None], "tail": [["x"], 3, [1, 2, 0, None], None]}
        for sid in marks
    }
    items = list(ADAPTER.read(source(db), Cursor(offset=0, next_seq=0, tail_hash="", state={"sessions": legacy})))
    again = [i for i in items if isinstance(i, Session)]
    assert [s.native_id for s in again] == first.order  # read whole, nothing skipped as unchanged
    assert not [i for i in items if isinstance(i, Notice)]
    same = list(ADAPTER.read(source(db), first.cursor))
    assert not [i for i in same if isinstance(i, (Session, Event))]  # the current marks still skip everything


# ---------------------------------------------------------------------------
# mapping details on hand-written rows
# ---------------------------------------------------------------------------


def test_v2_inline_rows_as_opencode_2_writes_them(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    w = so.V2Writer.create(db, parts=False)
    w.conn.execute(
        "INSERT INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) "
        "VALUES ('prj', '/home/dev/proj', 'git', 0, 0, '[]')"
    )
    sid, child = "ses_aaaa", "ses_bbbb"
    w.session(
        sid,
        directory="/home/dev/proj",
        title=None,
        created=1_000,
        updated=9_000,
        project_id="prj",
        model={"id": "big-pickle", "providerID": "opencode"},
        tokens=(4000, 136),
    )
    w.session(child, directory="/home/dev/proj", title="Look around", created=5_000, updated=6_000, parent_id=sid)
    w.message(sid, "msg_01", "user", {"time": {"created": 1_100}, "text": "Please USE A TOOL", "files": []}, 1_100)
    w.message(
        sid,
        "msg_02",
        "assistant",
        {
            "time": {"created": 1_200},
            "agent": "build",
            "model": {"id": "m1", "providerID": "fake"},
            "content": [
                {"type": "reasoning", "text": "need a tool"},
                {
                    "type": "tool",
                    "id": "call_a",
                    "name": "shell",
                    "state": {
                        "status": "completed",
                        "input": {"command": "echo hi"},
                        "content": [
                            {"type": "text", "text": "hi\n"},
                            {"type": "text", "text": "Command exited with code 0."},
                        ],
                        "metadata": {"status": "completed", "exit": 0},
                    },
                },
                {
                    "type": "tool",
                    "id": "call_b",
                    "name": "read",
                    "state": {
                        "status": "error",
                        "input": {"path": "/nope"},
                        "error": {"type": "tool.execution", "message": "File not found: /nope"},
                    },
                },
                {"type": "tool", "id": "call_c", "name": "read", "state": {"status": "pending", "input": {}}},
                {"type": "hologram", "text": "?"},
                {"type": "text", "text": "done"},
            ],
        },
        1_200,
    )
    w.message(
        sid,
        "msg_03",
        "synthetic",
        {"time": {"created": 1_300}, "text": "<system-reminder>plan mode</system-reminder>"},
        1_300,
    )
    w.message(sid, "msg_04", "system", {"time": {"created": 1_350}, "text": "tool renames noted"}, 1_350)
    w.message(
        sid,
        "msg_05",
        "model-switched",
        {"time": {"created": 1_400}, "model": {"id": "m2", "providerID": "fake"}},
        1_400,
    )
    w.message(sid, "msg_06", "agent-switched", {"time": {"created": 1_450}, "agent": "plan"}, 1_450)
    w.message(sid, "msg_07", "compaction", {"time": {"created": 1_500}, "summary": "summary of earlier work"}, 1_500)
    w.message(
        sid,
        "msg_08",
        "shell",
        {"time": {"created": 1_550}, "command": "git status", "output": "clean", "status": "completed"},
        1_550,
    )
    w.message(
        sid,
        "msg_09",
        "assistant",
        {
            "time": {"created": 1_600},
            "agent": "build",
            "model": {"id": "m1", "providerID": "fake"},
            "content": [],
            "error": {"type": "provider.auth", "message": "bad key"},
        },
        1_600,
    )
    w.message(sid, "msg_10", "idle", {"time": {"created": 1_700}, "outcome": "succeeded"}, 1_700)
    w.message(sid, "msg_11", "teleport", {"time": {"created": 1_800}}, 1_800)
    w.message(child, "msg_20", "user", {"time": {"created": 5_100}, "text": "You are a subagent"}, 5_100)
    w.conn.close()

    read = Read(db)
    s = read.sessions[sid]
    assert (s.title, s.model, s.tokens_in, s.tokens_out, s.git_repo) == (
        None,
        "opencode/big-pickle",
        4000,
        136,
        "/home/dev/proj",
    )
    assert (s.started, s.updated) == (1.0, 9.0)
    got = [(e.kind, e.origin, e.text, e.exit_code, e.is_error) for e in read.events[sid]]
    assert got == [
        ("user", "human", "Please USE A TOOL", None, False),
        ("reasoning", "agent", "need a tool", None, False),
        ("tool_call", "agent", "echo hi", None, False),  # bash: its command line (the one rule)
        ("tool_result", "tool", "hi\n\nCommand exited with code 0.", 0, False),
        ("tool_call", "agent", '{"path":"/nope"}', None, False),
        ("tool_result", "tool", "tool.execution: File not found: /nope", None, True),
        ("tool_call", "agent", "read", None, False),  # no arguments: the tool's name (the one rule)
        ("assistant", "agent", "done", None, False),
        ("meta", "provider", "<system-reminder>plan mode</system-reminder>", None, False),
        ("meta", "provider", "tool renames noted", None, False),
        ("meta", "provider", "model switched: fake/m2", None, False),
        ("meta", "provider", "agent switched: plan", None, False),
        ("meta", "provider", "summary of earlier work", None, False),
        ("tool_call", "human", "git status", None, False),
        ("tool_result", "tool", "clean", None, False),
        ("assistant", "provider", "provider.auth: bad key", None, True),
    ]
    assert [(e.kind, e.origin) for e in read.events[child]] == [("user", "provider")]
    assert read.sessions[child].parent == f"opencode:{sid}"
    (summary,) = read.notices
    assert not summary.fatal and summary.reason.startswith("2 records of a kind Voyager does not know")
    assert "part:hologram" in summary.reason and "message:teleport" in summary.reason and "×" not in summary.reason


def test_seq_order_is_time_created_then_id_not_insertion_order(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    w = so.V1Writer.create(db)
    w.session("ses_x", directory="/d", title="t", created=0, updated=0)
    # Inserted backwards, two messages share a timestamp: order must come from (time_created, id).
    for mid, t, text in (("msg_c", 2_000, "third"), ("msg_b", 1_000, "second"), ("msg_a", 1_000, "first")):
        w.message("ses_x", mid, {"role": "user", "time": {"created": t}}, t)
        w.part("ses_x", mid, f"prt_{mid}_2", {"type": "text", "text": text + " b"}, t)
        w.part("ses_x", mid, f"prt_{mid}_1", {"type": "text", "text": text + " a"}, t)
    w.conn.close()
    assert [e.text for e in Read(db).events["ses_x"]] == [
        "first a",
        "first b",
        "second a",
        "second b",
        "third a",
        "third b",
    ]


def test_malformed_rows_cost_only_themselves(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    w = so.V1Writer.create(db)
    w.session("ses_x", directory="/d", title="t", created=0, updated=0)
    w.message("ses_x", "msg_1", {"role": "user", "time": {"created": 1}}, 1)
    w.part("ses_x", "msg_1", "prt_1a", "{not json", 1)
    w.part("ses_x", "msg_1", "prt_1b", {"type": "text", "text": "kept after a bad part"}, 2)
    w.message("ses_x", "msg_2", "[1, 2", 3)
    w.part("ses_x", "msg_2", "prt_2a", {"type": "text", "text": "orphan of a bad message"}, 3)
    w.message("ses_x", "msg_3", {"role": "assistant", "time": {"created": 4}}, 4)
    w.part("ses_x", "msg_3", "prt_3a", {"type": "text", "text": "kept after a bad message"}, 4)
    w.part("ses_x", "msg_3", "prt_3b", {"type": "mystery"}, 4)
    w.conn.close()
    read = Read(db)
    assert [e.text for e in read.events["ses_x"]] == ["kept after a bad part", "kept after a bad message"]
    wheres = {n.where for n in read.notices if not n.fatal and n.where}
    assert wheres == {"part prt_1a", "message msg_2"}
    assert any(n.reason.startswith("1 record of a kind") and "(part:mystery)" in n.reason for n in read.notices)
    assert not any(n.fatal for n in read.notices)


def test_a_text_cell_that_is_not_utf8_costs_only_its_bad_bytes(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    so.write_v1(db, convs(2, 4))
    conn = sqlite3.connect(db)
    bad = '{"type":"text","text":"caf\xff ok"}'.encode("latin-1")
    conn.execute("UPDATE part SET data = CAST(? AS TEXT) WHERE id = (SELECT min(id) FROM part)", (bad,))
    conn.commit()
    conn.close()
    read = Read(db)
    assert not [n for n in read.notices if n.fatal]
    assert "caf\ufffd ok" in read.texts()
    assert len(read.sessions) == 2 and all(read.events[sid] for sid in read.sessions)


def test_resume_command_quotes_the_directory(tmp_path: Path) -> None:
    cs = convs(1, 2)
    so.write_v1(tmp_path / "opencode.db", cs)
    s = Read(tmp_path / "opencode.db").sessions[cs[0].id]
    assert s.resume == f"opencode '/home/dev/proj 0' --session {cs[0].id}"
    assert s.cwd == "/home/dev/proj 0" and s.model == "synthetic/synthetic-model-1"
    assert s.title == "标题 0 🚀" and s.tokens_in and s.tokens_out
    assert s.started == cs[0].started


def test_json_tree_metadata(tmp_path: Path) -> None:
    cs = convs(2, 6)
    so.write_json_tree(tmp_path / "storage", cs, parents={cs[1].id: cs[0].id}, project=("abc", "/home/dev/repo"))
    read = Read(tmp_path / "storage")
    parent, child = read.sessions[cs[0].id], read.sessions[cs[1].id]
    assert parent.git_repo == "/home/dev/repo" and parent.cwd == "/home/dev/proj 0"
    assert child.parent == f"opencode:{cs[0].id}"
    assert {e.origin for e in read.events[cs[1].id] if e.kind == "user"} == {"provider"}
    assert {e.origin for e in read.events[cs[0].id] if e.kind == "user"} == {"human"}
    assert parent.model == "synthetic/synthetic-model-1" and parent.tokens_in


def test_json_tree_defers_to_the_database_beside_it(tmp_path: Path) -> None:
    cs = convs(3, 4)
    home = tmp_path / "opencode"
    so.write_json_tree(home / "storage", cs)
    so.write_v1(home / "opencode.db", cs[:2])  # OpenCode migrated two of the three
    read = Read(home / "storage")
    assert set(read.sessions) == {cs[2].id}
    assert any("opencode.db also holds" in n.reason for n in read.notices)


# ---------------------------------------------------------------------------
# the migrating shape
# ---------------------------------------------------------------------------


def _mark_v1_stale(db: Path, sids: list[str]) -> None:
    """Make the 1.x copy of ``sids`` say something the v2 copy does not, to see which one was read."""
    conn = sqlite3.connect(db)
    for sid in sids:
        conn.execute(
            "UPDATE part SET data = json_set(data, '$.text', 'STALE-V1-COPY') "
            "WHERE session_id = ? AND json_extract(data, '$.type') = 'text'",
            (sid,),
        )
    conn.commit()
    conn.close()


def test_migrating_mid_copy_reads_each_session_once_from_the_right_tables(tmp_path: Path) -> None:
    cs = convs(5, 6)  # ids ses_0000… < ses_0001… < … ; the copy walks down from the newest
    db = tmp_path / "opencode.db"
    native = synth.generate(7, 4, session_id="ses_9999nativeV2")
    cursor = cs[2].id
    so.write_migrating(db, cs, phase="sessions", cursor=cursor, deleted=[cs[4].id], v2_only=[native])
    _mark_v1_stale(db, [c.id for c in cs if c.id >= cursor])
    read = Read(db)
    # copied (>= cursor) from v2; not yet copied (< cursor) from 1.x; deleted-after-copy stays gone.
    assert set(read.sessions) == {cs[0].id, cs[1].id, cs[2].id, cs[3].id, native.id}
    assert "STALE-V1-COPY" not in read.texts()
    assert adapter_counts(read) == {sid: +c for sid, c in oracle(db, "migrating").items()}


def test_migrating_completed_never_resurrects_a_deleted_session(tmp_path: Path) -> None:
    cs = convs(3, 6)
    db = tmp_path / "opencode.db"
    so.write_migrating(db, cs, phase="completed", deleted=[cs[0].id])
    _mark_v1_stale(db, [c.id for c in cs])
    read = Read(db)
    assert set(read.sessions) == {cs[1].id, cs[2].id}
    assert "STALE-V1-COPY" not in read.texts()


def test_migrating_without_kv_state_reads_the_1x_tables(tmp_path: Path) -> None:
    cs = convs(2, 6)
    native = synth.generate(8, 4, session_id="ses_9999nativeV2")
    db = tmp_path / "opencode.db"
    so.write_migrating(db, cs, phase=None, v2_only=[native])
    assert probe(db) == "migrating"
    assert set(Read(db).sessions) == {cs[0].id, cs[1].id, native.id}


def test_migrating_session_copied_before_the_cursor_moved_is_read_once(tmp_path: Path) -> None:
    cs = convs(3, 6)
    db = tmp_path / "opencode.db"
    # OpenCode committed ses_0001's copy but the kv cursor still points at ses_0002.
    so.write_migrating(db, cs, phase="sessions", cursor=cs[2].id)
    w = so.V2Writer(sqlite3.connect(db, isolation_level=None), parts=False)
    so.add_v2(w, cs[1])
    w.conn.close()
    _mark_v1_stale(db, [cs[1].id])
    read = Read(db)
    assert read.order.count(cs[1].id) == 1 and set(read.sessions) == {c.id for c in cs}
    assert "STALE-V1-COPY" not in read.texts()


def test_migrating_with_parts_and_an_unknown_phase(tmp_path: Path) -> None:
    cs = convs(3, 6)
    db = tmp_path / "opencode.db"
    so.write_migrating(db, cs, phase="events", cursor=cs[1].id, inline=False)
    read = Read(db)
    assert set(read.sessions) == {c.id for c in cs}
    assert any("unknown migration phase" in n.reason and not n.fatal for n in read.notices)


# ---------------------------------------------------------------------------
# databases without the indexes OpenCode creates
# ---------------------------------------------------------------------------


def drop_lookup_indexes(db: Path) -> list[str]:
    """Drop every index that finds a session's messages or a message's parts (what a per-session read needs)."""
    conn = sqlite3.connect(db)
    dropped = []
    for table, column in (
        ("message", "session_id"),
        ("session_message", "session_id"),
        ("part", "message_id"),
        ("session_part", "message_id"),
    ):
        for name, origin in [(r[1], r[3]) for r in conn.execute(f"PRAGMA index_list({table})")]:
            if origin == "c" and conn.execute(f"PRAGMA index_info({name})").fetchone()[2] == column:
                conn.execute(f"DROP INDEX {name}")
                dropped.append(name)
    conn.commit()
    conn.close()
    return dropped


def _twin(shape: str, tmp: Path, cs: list[synth.Conversation]) -> tuple[Path, Path]:
    """The same database twice: as OpenCode indexes it, and without the lookup indexes."""
    with_ix = build(shape, tmp / "indexed", cs)
    without = tmp / "bare" / with_ix.name
    without.parent.mkdir()
    conn = sqlite3.connect(with_ix)
    conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    conn.close()
    shutil.copyfile(with_ix, without)
    assert drop_lookup_indexes(without)
    return with_ix, without


def _traced(path: Path, cursor: Cursor | None = None) -> tuple[list, list[str]]:
    """Everything one read yields, and every SQL statement it ran (on connections the kit's opener made)."""
    from voyager_sessions.ingest import sqlite as dbmod

    statements: list[str] = []
    real = dbmod.connect_readonly

    def tracing(*a, **k):
        conn = real(*a, **k)
        conn.set_trace_callback(statements.append)
        return conn

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(dbmod, "connect_readonly", tracing)
        items = list(ADAPTER.read(source(path), cursor))
    return items, statements


def _sourceless(items: list) -> list:
    """The items without the database path each Session names (the two twins live in two places)."""
    return [
        msgspec.structs.replace(i, source=None) if isinstance(i, Session) else i
        for i in items
        if not isinstance(i, Cursor)
    ]


def _by_session(items: list) -> dict[str, list]:
    out: dict[str, list] = defaultdict(list)
    for it in _sourceless(items):
        if isinstance(it, (Session, Event, Partial, Unchanged)):
            out[it.id if isinstance(it, Session) else it.session].append(it)
    return dict(out)


@pytest.mark.parametrize("shape", ["v1", "v2", "v2-inline", "migrating"])
def test_without_lookup_indexes_one_pass_gives_the_same_sessions_and_events(tmp_path: Path, shape: str) -> None:
    cs = convs(6, 16)
    with_ix, without = _twin(shape, tmp_path, cs)
    # Sessions whose row lacks model and tokens take both from their messages, in either way of reading.
    for d in (with_ix, without):
        conn = sqlite3.connect(d)
        conn.execute(
            f"UPDATE {'session' if shape == 'v1' else 'session_v2'} SET model = NULL, tokens_input = 0, "
            f"tokens_output = 0 WHERE id IN (?, ?)",
            (cs[0].id, cs[3].id),
        )
        conn.commit()
        conn.close()
    indexed, _ = _traced(with_ix)
    bare, statements = _traced(without)
    assert probe(without) == probe(with_ix) == shape
    sessions = {s.native_id: s for s in indexed if isinstance(s, Session)}
    assert sessions[cs[0].id].model == "synthetic/synthetic-model-1" and sessions[cs[0].id].tokens_in
    assert _sourceless(bare) == _sourceless(indexed)
    # One statement reads the rows of all sessions; none asks for one session's messages.
    per_session = [q for q in statements if "m.session_id = ?" in q]
    assert per_session == [], per_session[:3]
    selects = [q for q in statements if q.startswith("SELECT") and "sqlite_master" not in q]
    # Per slice: aggregates (2), projects, workspaces, the sessions, the pass, tokens and model; per session its row by id.
    assert len(selects) <= 8 * 2 + len(cs), selects


@pytest.mark.parametrize("shape", ["v1", "v2", "v2-inline"])
def test_without_lookup_indexes_a_rescan_reads_only_what_changed(tmp_path: Path, shape: str) -> None:
    cs = convs(5, 12)
    with_ix, without = _twin(shape, tmp_path, cs)
    cursors = {d: Read(d).cursor for d in (with_ix, without)}
    msg, part = ("message", "part") if shape == "v1" else ("session_message", "session_part")
    for d in (with_ix, without):
        conn = sqlite3.connect(d)
        # cs[1]: its last message grows (read from there); cs[2]: an old row edited (read whole).
        conn.execute(
            f"UPDATE {msg} SET time_updated = time_updated + 7 WHERE id = "
            f"(SELECT max(id) FROM {msg} WHERE session_id = ?)",
            (cs[1].id,),
        )
        conn.execute(
            f"UPDATE {msg} SET time_updated = time_updated + 7 WHERE id = "
            f"(SELECT min(id) FROM {msg} WHERE session_id = ?)",
            (cs[2].id,),
        )
        if shape != "v2-inline":
            conn.execute(
                f"UPDATE {part} SET data = json_set(data, '$.text', 'edited tail text') WHERE id = "
                f"(SELECT max(p.id) FROM {part} p JOIN {msg} m ON m.id = p.message_id "
                f"WHERE m.session_id = ? AND json_extract(p.data, '$.type') = 'text')",
                (cs[1].id,),
            )
        conn.commit()
        conn.close()
    indexed, _ = _traced(with_ix, cursors[with_ix])
    bare, _ = _traced(without, cursors[without])
    a, b = _by_session(indexed), _by_session(bare)
    assert a == b
    kinds = {sid: {type(i).__name__ for i in items} for sid, items in b.items()}
    assert kinds[f"opencode:{cs[1].id}"] >= {"Session", "Partial", "Event"}
    assert "Partial" not in kinds[f"opencode:{cs[2].id}"] and "Event" in kinds[f"opencode:{cs[2].id}"]
    assert kinds[f"opencode:{cs[0].id}"] == {"Unchanged"}


def test_has_index_counts_only_complete_indexes_led_by_the_column(tmp_path: Path) -> None:
    from voyager_sessions.ingest.sqlite import has_index

    db = tmp_path / "x.db"
    conn = sqlite3.connect(db)
    conn.executescript("""
        CREATE TABLE a (id TEXT PRIMARY KEY, session_id TEXT, seq INT, data TEXT);
        CREATE INDEX a_partial ON a (session_id) WHERE json_valid(data);
        CREATE INDEX a_second ON a (seq, session_id);
        CREATE TABLE b (session_id TEXT, seq INT, PRIMARY KEY (session_id, seq)) WITHOUT ROWID;
        CREATE TABLE c (id TEXT, session_id TEXT);
        CREATE INDEX c_expr ON c (lower(session_id));
        CREATE TABLE d (session_id TEXT, seq INT);
        CREATE UNIQUE INDEX d_seq ON d (session_id, seq);
    """)
    conn.close()
    conn = connect_readonly(db)
    try:
        assert not has_index(conn, "a", "session_id")  # partial, or not the first column
        assert has_index(conn, "a", "id") and has_index(conn, "a", "seq")
        assert has_index(conn, "b", "session_id")  # the primary key of a WITHOUT ROWID table
        assert not has_index(conn, "c", "session_id")  # an expression is not the column
        assert has_index(conn, "d", "session_id")
        assert not has_index(conn, "missing", "session_id")
    finally:
        conn.close()


# ---------------------------------------------------------------------------
# streaming and memory
# ---------------------------------------------------------------------------


@pytest.mark.slow
def test_a_5000_message_session_streams_in_modest_memory(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    c = synth.generate(5, 5000, session_id="ses_big0000000", output_bytes=20_000)
    total_text = sum(len(t.text) + sum(len(tc.output or "") for tc in t.tool_calls) for t in c.turns)
    so.write_v1(db, [c])
    expected = len(c.turns)
    del c
    gc.collect()
    events = users = 0
    tracemalloc.start()
    try:
        for item in ADAPTER.read(source(db)):
            if isinstance(item, Event):
                events += 1
                users += item.kind == "user"
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert users == expected // 2 and events > expected
    assert total_text > 15_000_000
    # Holding the session (or fetchall-ing its parts) would need far more than the text itself.
    assert peak < 4_000_000, f"peak {peak} bytes while streaming {total_text} characters"


# ---------------------------------------------------------------------------
# read-only while OpenCode writes
# ---------------------------------------------------------------------------

WRITER = textwrap.dedent("""
    import json, sqlite3, sys
    db, sid = sys.argv[1], sys.argv[2]
    conn = sqlite3.connect(db, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA wal_autocheckpoint=0")  # keep every new turn in the -wal, as a busy OpenCode does
    for line in sys.stdin:
        n = int(line)
        t = 1_900_000_000_000 + n
        mid = f"msg_zz{n:06d}"
        conn.execute("BEGIN IMMEDIATE")
        conn.execute("INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?,?,?,?,?)",
                     (mid, sid, t, t, json.dumps({"role": "user", "time": {"created": t}})))
        conn.execute("INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) "
                     "VALUES (?,?,?,?,?,?)", (f"prt_zz{n:06d}", mid, sid, t, t,
                     json.dumps({"type": "text", "text": f"writer turn {n} 写入"}, ensure_ascii=False)))
        conn.execute("COMMIT")
        print("committed", flush=True)
""")


def _read_while_writer_appends(db: Path, sid: str) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(db), sid], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        for n in range(3):
            assert proc.stdin and proc.stdout
            proc.stdin.write(f"{n}\n")
            proc.stdin.flush()
            assert proc.stdout.readline().strip() == "committed"
            wal = Path(f"{db}-wal")
            before = (sha(db), sha(wal), row_counts(db))
            read = Read(db)
            after = (sha(db), sha(wal), row_counts(db))
            assert before == after, "reading changed the database or its WAL"
            assert before[1] is not None
            # The writer's committed rows are visible: immutable=1 or a stale snapshot would miss them.
            texts = [e.text for e in read.events[sid]]
            assert [t for t in texts if t.startswith("writer turn")] == [f"writer turn {i} 写入" for i in range(n + 1)]
    finally:
        if proc.stdin:
            proc.stdin.close()
        proc.wait(timeout=30)


def test_reading_changes_nothing_while_a_writer_appends_through_wal(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    cs = convs(2, 8)
    so.write_v1(db, cs)
    _read_while_writer_appends(db, cs[0].id)


def test_real_database_stays_untouched_while_a_writer_appends(tmp_path: Path) -> None:
    db = copy_db(SHARED_FIXTURE, tmp_path)
    _read_while_writer_appends(db, "ses_dda149473cf256dVoyTest00")


def test_the_connection_refuses_writes(tmp_path: Path) -> None:
    so.write_v1(tmp_path / "opencode.db", convs(1, 2))
    conn = connect_readonly(tmp_path / "opencode.db")
    try:
        with pytest.raises(sqlite3.Error):
            conn.execute("CREATE TABLE sneaky (x)")
        with pytest.raises(sqlite3.Error):
            conn.execute("DELETE FROM part")
        assert conn.execute("PRAGMA query_only").fetchone()[0] == 1
    finally:
        conn.close()


# ---------------------------------------------------------------------------
# nothing is created beside a database (issue 15, item 14)
# ---------------------------------------------------------------------------


def listing(d: Path) -> dict[str, str]:
    """Every entry of ``d`` (names, so a created file shows) with the sha256 of each file's bytes."""
    return {p.name: (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir") for p in sorted(d.iterdir())}


def _every_reading_command(run) -> None:
    """What a person runs: a scan, a rescan, a search (which refreshes), list, show, doctor."""
    for args in (("scan",), ("scan",), ("search", "migration", "--json"), ("list", "--json"), ("doctor", "--json")):
        res = run(*args)
        assert res.exit_code in (0, 1), (args, res.exit_code, res.stderr)


def test_a_cleanly_closed_wal_database_gets_no_wal_or_shm_beside_it(home: Path, run, monkeypatch) -> None:
    """OpenCode leaves a WAL-mode database without -wal/-shm after a clean exit; reading must not create them."""
    data = home / ".local" / "share" / "opencode"
    data.mkdir(parents=True)
    so.write_v1(data / "opencode.db", convs(2, 6))  # WAL mode; closing the writer removes -wal and -shm
    conn = sqlite3.connect(data / "opencode.db")
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.close()
    monkeypatch.delenv("VOYAGER_OPENCODE_HOME")
    before = listing(data)
    assert set(before) == {"opencode.db"}
    _every_reading_command(run)
    assert listing(data) == before
    assert run.json("list", "--json")["total"] == 2  # it was read, not skipped


def test_the_real_capture_with_its_wal_keeps_db_and_wal_bytes(home: Path, run, monkeypatch) -> None:
    """A database whose newest rows are only in its -wal: read them all, change neither file."""
    install("opencode-1.18.33", home)
    data = home / ".local" / "share" / "opencode"
    monkeypatch.delenv("VOYAGER_OPENCODE_HOME")
    before = listing(data)
    assert set(before) == {"opencode.db", "opencode.db-wal", "opencode.db-shm"}
    _every_reading_command(run)
    after = listing(data)
    assert set(after) == set(before)
    # SQLite may rebuild the -shm (the WAL index, shared memory by design); the database and its log stay as they were.
    assert (after["opencode.db"], after["opencode.db-wal"]) == (before["opencode.db"], before["opencode.db-wal"])
    hits = run.json("search", "PROMPT_T2OPEN1dd4a8", "--json")["hits"]  # a turn only the -wal holds
    assert [h["kind"] for h in hits] == ["user"]


# ---------------------------------------------------------------------------
# discovery
# ---------------------------------------------------------------------------


def _home(tmp_path: Path) -> tuple[dict[str, str], Path]:
    data = tmp_path / "xdg"
    home = data / "opencode"
    home.mkdir(parents=True)
    so.write_v1(home / "opencode.db", convs(1, 2))
    so.write_json_tree(home / "storage", convs(1, 2))
    return {"HOME": str(tmp_path / "nohome"), "XDG_DATA_HOME": str(data)}, home


def test_discover_default_home_finds_db_and_json_tree(tmp_path: Path) -> None:
    env, home = _home(tmp_path)
    found = list(ADAPTER.discover(env))
    assert all(isinstance(s, Source) for s in found)
    assert [s.path for s in found] == [str(home / "opencode.db"), str(home / "storage")]
    assert found[0].append_only is False
    assert ADAPTER.roots(env) == [home / "opencode.db", home / "storage"]


def test_a_turn_that_only_reached_the_wal_changes_the_fingerprint(tmp_path: Path) -> None:
    env, home = _home(tmp_path)
    db = home / "opencode.db"
    writer = sqlite3.connect(db, isolation_level=None)  # stays open, like a running OpenCode
    try:
        writer.execute("PRAGMA wal_autocheckpoint=0")
        writer.execute("INSERT INTO event_sequence VALUES ('a', 1, NULL)")
        (first,) = [s for s in ADAPTER.discover(env) if isinstance(s, Source) and s.path == str(db)]
        writer.execute("INSERT INTO event_sequence VALUES ('b', 1, NULL)")
        (second,) = [s for s in ADAPTER.discover(env) if isinstance(s, Source) and s.path == str(db)]
    finally:
        writer.close()
    assert first.fingerprint.wal_size > 0
    assert second.fingerprint.wal_size > first.fingerprint.wal_size
    assert (second.fingerprint.size, second.fingerprint.mtime_ns) == (
        first.fingerprint.size,
        first.fingerprint.mtime_ns,
    )


def test_json_tree_fingerprint_changes_when_any_file_changes(tmp_path: Path) -> None:
    env, home = _home(tmp_path)
    storage = home / "storage"
    fp0 = tree_fingerprint(storage)
    part = next(storage.glob("part/*/*.json"))
    part.write_text(part.read_text("utf-8").replace("}", ', "extra": 1}', 1), encoding="utf-8")
    fp1 = tree_fingerprint(storage)
    assert fp1 != fp0
    (part.parent / "prt_zzzz.json").write_text("{}", encoding="utf-8")
    fp2 = tree_fingerprint(storage)
    assert fp2.inode == fp1.inode + 1
    assert isinstance(fp2, Fingerprint)


@pytest.mark.parametrize("var", ["VOYAGER_OPENCODE_DB", "OPENCODE_DB"])
def test_named_database_is_authoritative(tmp_path: Path, var: str) -> None:
    env, _home_dir = _home(tmp_path)
    named = tmp_path / "elsewhere" / "mine.db"
    named.parent.mkdir()
    so.write_v2(named, convs(1, 2), inline=True)
    env[var] = str(named)
    found = list(ADAPTER.discover(env))
    assert [s.path for s in found] == [str(named)]
    assert ADAPTER.roots(env) == [named]
    env[var] = str(tmp_path / "missing.db")
    (notice,) = ADAPTER.discover(env)
    assert isinstance(notice, Notice) and notice.fatal and notice.reason.startswith("unreadable:")


def test_voyager_variable_wins_over_opencodes(tmp_path: Path) -> None:
    a, b = tmp_path / "a.db", tmp_path / "b.db"
    so.write_v1(a, convs(1, 2))
    so.write_v1(b, convs(1, 2))
    found = list(ADAPTER.discover({"VOYAGER_OPENCODE_DB": str(a), "OPENCODE_DB": str(b), "HOME": str(tmp_path)}))
    assert [s.path for s in found] == [str(a)]


def test_nothing_installed_discovers_nothing(tmp_path: Path) -> None:
    assert list(ADAPTER.discover({"HOME": str(tmp_path)})) == []


def test_probe_of_the_json_tree(tmp_path: Path) -> None:
    so.write_json_tree(tmp_path / "storage", convs(1, 2))
    assert probe(tmp_path / "storage") == "json"
    assert probe(tmp_path) == "unknown-schema"


def test_workspace_branch_and_git_project(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    w = so.V1Writer.create(db)
    w.project("prj_git", "/home/dev/repo")
    w.project("global", "/", vcs=None)
    w.conn.execute(
        "INSERT INTO workspace (id, type, branch, directory, project_id, time_used) "
        "VALUES ('wrk_1', 'worktree', 'feature/索引', '/home/dev/repo-wt', 'prj_git', 0)"
    )
    w.session(
        "ses_a",
        directory="/home/dev/repo/sub",
        title="a",
        created=0,
        updated=0,
        project_id="prj_git",
        workspace_id="wrk_1",
    )
    w.session("ses_b", directory="/tmp/x", title="b", created=1, updated=1)
    w.conn.close()
    read = Read(db)
    a, b = read.sessions["ses_a"], read.sessions["ses_b"]
    assert (a.cwd, a.git_repo, a.git_branch) == ("/home/dev/repo/sub", "/home/dev/repo", "feature/索引")
    # The catch-all "global" project (worktree "/", no vcs) is not a repository.
    assert (b.git_repo, b.git_branch) == (None, None)


# ---------------------------------------------------------------------------
# prompts, titles and resume commands as the real CLI leaves them
# ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("stored", "typed"),
    [
        ('"fix the bug"', "fix the bug"),  # `opencode run "fix the bug"`: one argument with a space, quoted
        ('"say \\"hi\\" now"', 'say "hi" now'),  # its quotes escaped inside
        ('"a b" "c d"', '"a b" "c d"'),  # two quoted arguments: not one pair to strip
        ('fix "the bug"', 'fix "the bug"'),
        ('"', '"'),
        ('""', '""'),  # nothing inside: an empty prompt is no event either way; keep the text
        ("plain", "plain"),
    ],
)
def test_run_prompts_lose_the_quotes_the_cli_added(stored: str, typed: str) -> None:
    from voyager_sessions.ingest.adapters.opencode.emit import unwrap_prompt

    assert unwrap_prompt(stored) == (typed if stored != '""' else "")


@pytest.mark.parametrize(
    ("stored", "title"),
    [
        ("New session - 2026-12-01T08:06:43.991Z", None),
        ("Child session - 2026-12-01T08:06:43.991Z", None),
        ("New Session - 2025-01-02T03:04:05.006Z", None),  # early releases capitalised it
        ("迁移 TITLE_OPEN1dd4a8", "迁移 TITLE_OPEN1dd4a8"),
        ("New session - notes on the parser", "New session - notes on the parser"),
        ("New session", "New session"),
        ("  ", None),
    ],
)
def test_the_placeholder_title_is_no_title(tmp_path: Path, stored: str, title: str | None) -> None:
    db = tmp_path / "opencode.db"
    w = so.V1Writer.create(db)
    w.session("ses_t", directory="/d", title=stored, created=0, updated=0)
    w.conn.close()
    (s,) = Read(db).sessions.values()
    assert (s.title, s.title_source) == (title, "agent" if title else None)


def test_hostile_ids_and_directories_resume_quoted(tmp_path: Path) -> None:
    db = tmp_path / "opencode.db"
    w = so.V1Writer.create(db)
    sid, directory = "ses_$(touch /tmp/pwned)`id`;x", '/home/dev/it\'s "here"; rm -rf ~\n'
    w.session(sid, directory=directory, title="t", created=0, updated=0)
    w.session("ses_nodir", directory="", title="t", created=0, updated=0)
    w.conn.close()
    read = Read(db)
    assert shlex.split(read.sessions[sid].resume) == ["opencode", directory, "--session", sid]
    assert read.sessions["ses_nodir"].resume == "opencode --session ses_nodir"


@pytest.mark.parametrize("name", ["opencode-1.18.33", "opencode-1.18.33-subagent"])
def test_real_capture(home: Path, run, monkeypatch, name: str) -> None:
    monkeypatch.delenv("VOYAGER_OPENCODE_HOME")
    truth = install(name, home)
    scan_capture(run, "opencode")
    turns = check_prompts(run, truth)
    main = turns[0]
    check_title(run, truth, main)
    listed = sessions(run)
    assert listed[main]["resume"] == f"opencode /home/dev/proj --session {listed[main]['native_id']}"
    subagent = [i for i, t in enumerate(truth["turns"]) if t.get("subagent")]
    assert len(listed) == 1 + len(subagent)
    for i in subagent:
        child = listed[turns[i]]
        assert child["parent"] == main and child["title_source"] == "agent"
        # The parent's task call names the child's session; its result carries the child's reply.
        results = [h for h in hits(run, truth["turns"][i]["reply_marker"]) if h["session_id"] == main]
        assert [h["kind"] for h in results] == ["tool_result"]


@pytest.mark.parametrize("provider", ["opencode", "kilo"])
@pytest.mark.parametrize("evil", ["x; touch {pwned} #", "$(touch {pwned})", "`touch {pwned}`", 'it\'s "q"\nline'])
def test_resume_commands_run_as_written_with_hostile_ids_and_directories(
    home: Path, run, monkeypatch, tmp_path: Path, provider: str, evil: str
) -> None:
    """The resume command, run by a shell, reaches the agent with the id and directory whole and runs nothing else."""
    pwned = tmp_path / "pwned"
    ident = "ses_" + evil.format(pwned=pwned)
    directory = tmp_path / ("dir " + evil.format(pwned=pwned)).replace("/", "_")
    directory.mkdir()
    monkeypatch.delenv("VOYAGER_OPENCODE_HOME")
    db = home / ".local" / "share" / provider / f"{provider}.db"
    db.parent.mkdir(parents=True)
    w = so.V1Writer.create(db)
    w.session(ident, directory=str(directory), title="hostile zanzibar", created=0, updated=0)
    w.conn.close()
    assert run("scan").exit_code == 0
    (s,) = run.json("list", "--json")["sessions"]
    bin_dir, log = tmp_path / "bin", tmp_path / "argv.log"
    bin_dir.mkdir()
    stub = bin_dir / provider
    stub.write_text(
        f"#!/usr/bin/env python3\nimport json, os, sys\n"
        f"open({str(log)!r}, 'a').write(json.dumps([os.getcwd()] + sys.argv[1:]) + '\\n')\n"
    )
    stub.chmod(0o755)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    proc = subprocess.run(["sh", "-c", s["resume"]], capture_output=True, text=True, env=env, timeout=30, cwd=tmp_path)
    assert proc.returncode == 0, (s["resume"], proc.stderr)
    assert not pwned.exists()
    (call,) = [json.loads(line) for line in log.read_text().splitlines()]
    if provider == "opencode":  # the directory is opencode's project argument
        assert call == [str(tmp_path), str(directory), "--session", ident]
    else:  # kilo runs in the directory
        assert call == [str(directory), "--session", ident]


def test_a_row_nested_too_deeply_is_malformed_json_not_a_crash() -> None:
    from voyager_sessions.ingest.adapters.opencode.emit import loads, model_name

    deep = "[" * 100_000 + "]" * 100_000
    with pytest.raises(ValueError):  # the caller names the row and reads on
        loads(deep)
    assert model_name(deep) == deep


def test_json_cells_nested_too_deeply_or_with_lone_surrogates_cost_only_themselves(tmp_path: Path) -> None:
    """A part or message row nested 1,000 deep is named and skipped (it raised RecursionError out of the
    read); a lone surrogate escape (what JSON.stringify writes for a cut emoji) is read, replaced."""
    db = tmp_path / "opencode.db"
    so.write_v1(db, convs(2, 8))
    deep = "[" * 1000 + "]" * 1000
    conn = sqlite3.connect(db)
    first_part, second_part = [r[0] for r in conn.execute("SELECT id FROM part ORDER BY rowid LIMIT 2")]
    (a_message,) = conn.execute("SELECT id FROM message ORDER BY rowid DESC LIMIT 1").fetchone()
    conn.execute(
        "UPDATE part SET data = ? WHERE id = ?", ('{"type": "text", "text": "kept", "x": ' + deep + "}", first_part)
    )
    conn.execute(
        "UPDATE part SET data = ? WHERE id = ?", ('{"type": "text", "text": "cut \\ud83d emoji"}', second_part)
    )
    conn.execute("UPDATE message SET data = ? WHERE id = ?", (deep, a_message))
    conn.execute("UPDATE session SET model = ?", ('{"id": "m\\ud83d", "providerID": "p"}',))
    conn.commit()
    conn.close()
    got = Read(db)
    assert "cut \ufffd emoji" in got.texts()
    assert all(t.encode("utf-8") for t in got.texts())
    named = " ".join(n.describe() for n in got.notices)
    assert f"part {first_part}" in named and f"message {a_message}" in named and "nested too deeply" in named
    assert {s.model for s in got.sessions.values()} == {"p/m\ufffd"}
    assert sum(len(v) for v in got.events.values()) > 10  # the other rows of both sessions are read


def test_a_time_that_is_nan_or_infinite_is_no_time(tmp_path: Path) -> None:
    # secs() passed NaN and infinities on as event times: the index's date field cannot hold them.
    from voyager_sessions.ingest.adapters.opencode.emit import secs

    assert secs(float("nan")) is None and secs(float("-inf")) is None and secs(1_700_000_000_000) == 1_700_000_000.0
    db = tmp_path / "opencode.db"
    so.write_v1(db, convs(1, 6))
    conn = sqlite3.connect(db)
    conn.execute("UPDATE part SET time_created = ?", (float("inf"),))
    conn.execute("UPDATE message SET time_created = ?", (float("-inf"),))
    conn.commit()
    conn.close()
    got = Read(db)
    assert got.texts() and all(e.ts is None or math.isfinite(e.ts) for evs in got.events.values() for e in evs)


# ---------------------------------------------------------------------------
# JSON columns read as bytes (issue #26): the same as read as text
# ---------------------------------------------------------------------------


def _utf16_copy(src: Path, dst: Path) -> Path:
    """``src`` copied row by row into a new database whose text is UTF-16 (a database may say so)."""
    a, b = sqlite3.connect(src), sqlite3.connect(dst)
    a.text_factory = lambda data: data.decode("utf-8", "replace")  # as the adapter reads invalid UTF-8
    b.execute("PRAGMA encoding='UTF-16le'")
    for name, sql in a.execute("SELECT name, sql FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'"):
        b.execute(sql)
        rows = a.execute(f"SELECT * FROM {name}").fetchall()
        if rows:
            b.executemany(f"INSERT INTO {name} VALUES ({','.join('?' * len(rows[0]))})", rows)
    b.commit()
    a.close(), b.close()
    return dst


def test_json_columns_read_as_bytes_give_what_text_gives(tmp_path: Path) -> None:
    """The walk takes JSON columns as UTF-8 bytes where the database's text is UTF-8; a UTF-16 database (where
    those bytes would be UTF-16) is read as text: the same sessions and events either way, a broken row too."""
    db = build("v1", tmp_path, convs(2, 8))
    conn = sqlite3.connect(db)
    # A row whose JSON holds invalid UTF-8 ('{"text":"caf\xe9"}'): the bytes path must fall back for it.
    conn.execute("UPDATE part SET data = CAST(X'7b2274657874223a2263616fe9227d' AS TEXT) WHERE rowid = 2")
    conn.commit()
    conn.close()
    utf8 = list(ADAPTER.read(source(db)))
    (tmp_path / "u16").mkdir()
    u16 = list(ADAPTER.read(source(_utf16_copy(db, tmp_path / "u16" / "opencode.db"))))
    strip = lambda items: [  # noqa: E731 - the source path differs, nothing else may
        msgspec.structs.replace(i, source=None) if isinstance(i, (Session, Notice)) else i
        for i in items
        if not isinstance(i, Cursor)
    ]
    assert strip(utf8) == strip(u16)
    assert sum(isinstance(i, Event) for i in utf8) >= 8
