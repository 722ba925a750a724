"""Zed (``zed``, documented): the peers' sample, and thread databases written here from Zed's own schema."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.peers import PeerHome, check_markers, tree
from tests.support.scanning import kinds, search
from voyager_sessions.ingest import zstd
from voyager_sessions.ingest.adapters.zed import ADAPTER, first_folder, result_text

zstandard = pytest.importorskip("zstandard")
_C = zstandard.ZstdCompressor(level=3)

SCHEMA = """CREATE TABLE threads (id TEXT PRIMARY KEY, summary TEXT NOT NULL, updated_at TEXT NOT NULL,
            data_type TEXT NOT NULL, data BLOB NOT NULL, parent_id TEXT, folder_paths TEXT,
            folder_paths_order TEXT, created_at TEXT)"""


def modern(prompt: str = "终端里跑一下测试，看看 test_login 为什么失败") -> dict[str, Any]:
    return {
        "version": "0.3.0",
        "title": "登录测试失败",
        "updated_at": "2026-11-02T10:00:05Z",
        "model": {"provider": "zed.dev", "model": "claude-sonnet-4"},
        "cumulative_token_usage": {"input_tokens": 1200, "output_tokens": 340},
        "messages": [
            {
                "User": {
                    "id": "u1",
                    "content": [
                        {"Text": prompt},
                        {
                            "Mention": {
                                "uri": "file:///home/dev/app/tests/test_login.py",
                                "content": "def test_login(): MENTIONED_FILE_BODY",
                            }
                        },
                        {"Image": {"source": "aGVsbG8=", "size": {"width": 1, "height": 1}}},
                    ],
                }
            },
            {
                "Agent": {
                    "content": [
                        {"Thinking": {"text": "先运行 pytest 看错误", "signature": None}},
                        {"RedactedThinking": "opaque"},
                        {"Text": "我先在终端运行测试。"},
                        {
                            "ToolUse": {
                                "id": "tool_1",
                                "name": "terminal",
                                "raw_input": '{"command":"pytest -q tests/test_login.py","cd":"app"}',
                                "input": {"command": "pytest -q tests/test_login.py", "cd": "app"},
                                "is_input_complete": True,
                            }
                        },
                        {"FutureContent": {"x": 1}},
                    ],
                    "tool_results": {
                        "tool_1": {
                            "tool_use_id": "tool_1",
                            "tool_name": "terminal",
                            "is_error": True,
                            "content": {"Text": "FAILED tests/test_login.py::test_login - 密码哈希不匹配 ERR_HASH_9"},
                            "output": None,
                        }
                    },
                    "reasoning_details": None,
                }
            },
            "Resume",
            {"Agent": {"content": [{"Text": "哈希算法改成了 argon2，测试还在用 bcrypt。"}], "tool_results": {}}},
        ],
        "detailed_summary": "The login test fails because the hash algorithm changed (THREAD_SUMMARY_X)",
    }


def subagent(parent: str) -> dict[str, Any]:
    return {
        "version": "0.3.0",
        "title": "查找 bcrypt",
        "updated_at": "2026-11-02T10:01:00Z",
        "subagent_context": {"parent_thread_id": parent, "depth": 1},
        "messages": [
            {"User": {"id": "s1", "content": [{"Text": "在仓库里找出所有 bcrypt 调用 SUBAGENT_TASK_1"}]}},
            {"Agent": {"content": [{"Text": "找到 3 处 bcrypt 调用 SUBAGENT_DONE"}], "tool_results": {}}},
        ],
    }


def legacy() -> dict[str, Any]:
    return {
        "version": "0.2.0",
        "summary": "旧线程",
        "updated_at": "2025-03-01T08:00:00Z",
        "initial_project_snapshot": {"worktree_snapshots": [{"worktree_path": "/home/dev/legacy", "git_state": None}]},
        "messages": [
            {
                "id": 1,
                "role": "user",
                "segments": [{"type": "text", "text": "列出 src 目录 LEGACY_PROMPT"}],
                "context": "<files>src/main.rs LEGACY_CONTEXT</files>",
                "tool_uses": [],
                "tool_results": [],
            },
            {
                "id": 2,
                "role": "assistant",
                "segments": [
                    {"type": "thinking", "text": "用 list_directory", "signature": None},
                    {"type": "text", "text": "好的 LEGACY_REPLY"},
                ],
                "tool_uses": [{"id": "t1", "name": "list_directory", "input": {"path": "src"}}],
                "tool_results": [
                    {
                        "tool_use_id": "t1",
                        "is_error": False,
                        "content": "main.rs\nlib.rs LEGACY_TOOLOUT",
                        "output": None,
                    }
                ],
            },
            {"id": 3, "role": "system", "segments": [{"type": "text", "text": "SYSTEM_PROMPT_NOT_INDEXED"}]},
        ],
    }


def write_db(home: Path, rows: list[tuple], *, base: str = ".local/share/zed") -> Path:
    db = home / base / "threads" / "threads.db"
    db.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(db)
    conn.execute(SCHEMA)
    conn.executemany("INSERT INTO threads VALUES (?,?,?,?,?,?,?,?,?)", rows)
    conn.commit()
    conn.close()
    return db


def row(
    tid: str,
    doc: dict[str, Any] | bytes,
    *,
    compressed: bool = True,
    parent: str | None = None,
    folders: str | None = "/home/dev/app",
    order: str | None = "0",
    updated: str = "2026-11-02T10:00:05+00:00",
) -> tuple:
    raw = doc if isinstance(doc, bytes) else json.dumps(doc, ensure_ascii=False).encode()
    title = doc.get("title") or doc.get("summary") if isinstance(doc, dict) else "broken"
    return (
        tid,
        title,
        updated,
        "zstd" if compressed else "json",
        _C.compress(raw) if compressed else raw.decode(),
        parent,
        folders,
        order,
        updated,
    )


def test_peer_sample(home, run):
    peer = PeerHome("zed", home, run)
    assert peer.scan["failed"] == 0 and peer.scan["sessions"] == 2, peer.scan
    check_markers(peer, "zed")
    assert {(h["kind"], h["origin"]) for h in peer.hits("reasoning is not indexed")} == {("reasoning", "agent")}
    assert {s["title"] for s in peer.sessions().values()} == {"legacy zed thread", "read the zed thread store"}
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "zed")
    assert report["evidence"] == "documented" and report["shapes"] == {"threads": 1} and not report["failed_sources"]
    assert tree(home) == peer.before


def test_documented_shape(home, run, tmp_path):
    write_db(
        home,
        [
            row("t-main", modern()),
            row("t-sub", subagent("t-main"), parent="t-main"),
            row("t-legacy", legacy(), compressed=False, folders=None, order=None, updated="2025-03-01T08:00:00+00:00"),
            row("t-broken", b"\x00 not json at all", updated="2026-11-03T00:00:00+00:00"),
            ("t-odd", "odd", "2026-11-03T00:00:00+00:00", "brotli", b"xx", None, None, None, None),
            row(
                "t-folders",
                {
                    "version": "0.3.0",
                    "title": "多目录",
                    "updated_at": "2026-11-04T00:00:00Z",
                    "messages": [{"User": {"id": "f", "content": [{"Text": "FOLDER_ORDER_PROMPT"}]}}],
                },
                folders="/a/first-sorted\n/b/opened-first",
                order="1,0",
            ),
        ],
    )
    before = tree(home)
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["sessions"] == 4 and doc["failed"] == 0, doc
    assert kinds(run, '"test_login 为什么失败"') == [("user", "human")]
    assert kinds(run, "MENTIONED_FILE_BODY") == [("meta", "provider")]
    assert kinds(run, '"pytest 看错误"') == [("reasoning", "agent")]
    assert kinds(run, "终端运行测试") == [("assistant", "agent")]
    calls = search(run, '"pytest -q tests/test_login.py"')
    assert [(h["kind"], h["tool"]) for h in calls] == [("tool_call", "terminal")]  # the command, not JSON
    out = search(run, "ERR_HASH_9")
    assert [(h["kind"], h["origin"], h["tool"], h["exit_code"]) for h in out] == [
        ("tool_result", "tool", "terminal", None)
    ]
    assert kinds(run, "argon2") == [("assistant", "agent")]
    assert kinds(run, "THREAD_SUMMARY_X") == [("meta", "provider")]
    # The subagent's prompt came from the parent agent, and its thread is linked to the parent.
    assert kinds(run, "SUBAGENT_TASK_1") == [("user", "provider")]
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    assert sessions["zed:t-sub"]["parent"] == "zed:t-main"
    main = sessions["zed:t-main"]
    assert main["title"] == "登录测试失败" and main["cwd"] == "/home/dev/app" and main["resume"] is None
    assert sessions["zed:t-folders"]["cwd"] == "/b/opened-first"  # the folder the person opened first
    # agent-1 threads: segments, tool uses and results, attached context as meta, system prompt skipped.
    assert kinds(run, "LEGACY_PROMPT") == [("user", "human")]
    assert kinds(run, "LEGACY_CONTEXT") == [("meta", "provider")]
    assert kinds(run, "LEGACY_REPLY") == [("assistant", "agent")]
    assert kinds(run, "LEGACY_TOOLOUT") == [("tool_result", "tool")]
    assert search(run, "SYSTEM_PROMPT_NOT_INDEXED") == []
    assert sessions["zed:t-legacy"]["cwd"] == "/home/dev/legacy"
    # The broken rows are named and cost only themselves; the unknown content type is named.
    reasons = " | ".join(f"{s.get('where')}: {s['reason']}" for s in doc["skipped"])
    assert "thread t-broken" in reasons and "thread t-odd" in reasons and "brotli" in reasons, reasons
    assert "agent content FutureContent" in reasons, reasons
    assert tree(home) == before


def test_only_threads_whose_row_changed_are_read_again(home, run, tmp_path):
    db = write_db(home, [row("t-main", modern()), row("t-sub", subagent("t-main"), parent="t-main")])
    first = run.json("scan", "--json")
    assert run.json("scan", "--json")["unchanged"] == 1
    conn = sqlite3.connect(db)  # Zed rewrites the whole row when a thread gets a new turn
    doc = subagent("t-main")
    doc["messages"].append({"User": {"id": "s2", "content": [{"Text": "再确认一次 SUB_FOLLOWUP"}]}})
    conn.execute(
        "UPDATE threads SET data = ?, updated_at = ? WHERE id = 't-sub'",
        (_C.compress(json.dumps(doc, ensure_ascii=False).encode()), "2026-11-02T10:02:00+00:00"),
    )
    conn.commit()
    conn.close()
    again = run.json("scan", "--json")
    assert again["changed"] == 1
    # Only the touched thread was re-read: its 3 events replace its 2; the main thread is kept.
    assert again["events_added"] == 3 and again["events_removed"] == 2, (first, again)
    assert kinds(run, "SUB_FOLLOWUP") == [("user", "provider")]
    assert len(search(run, "ERR_HASH_9")) == 1


def test_without_zstd_plain_threads_are_read_and_compressed_ones_named(home, run, tmp_path):
    write_db(home, [row("t-main", modern()), row("t-legacy", legacy(), compressed=False)])
    saved = (zstd.backend(), zstd._BACKEND[1] if zstd._BACKEND else None)
    zstd.use_backend(None)
    try:
        res = run("scan", "--json")
        assert "`pip install zstandard` to read Zed sessions" in res.stderr
        assert search(run, "LEGACY_REPLY") and not search(run, "ERR_HASH_9")
        assert "`pip install zstandard` to read Zed sessions" in run("doctor").stdout
    finally:
        zstd.use_backend(*saved)
    doc = run.json("scan", "--json")  # nothing changed on disk: the retry reads the rest
    assert doc["sessions"] == 2 and search(run, "ERR_HASH_9") and len(search(run, "LEGACY_REPLY")) == 1


def test_an_unknown_schema_is_named_not_empty(home, run, tmp_path):
    db = home / ".local/share/zed/threads/threads.db"
    db.parent.mkdir(parents=True)
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE conversations (id TEXT, body TEXT)")
    conn.commit()
    conn.close()
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "zed")
    assert report["shapes"] == {"unknown-schema": 1} and any("unknown-schema" in p for p in report["problems"])
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    assert doc["failed"] == 1 and "unknown-schema" in res.stderr and "threads" in res.stderr
    assert sorted(p.name for p in db.parent.iterdir()) == ["threads.db"]  # probed and read, nothing created


def test_voyager_variable_is_authoritative(home, run, tmp_path):
    write_db(home, [row("t-main", modern())])
    other = tmp_path / "zed-data"
    write_db(other, [row("t-sub", subagent("x"))], base=".")
    env = {"HOME": str(home), "VOYAGER_ZED_HOME": str(other), "XDG_DATA_HOME": str(home / ".local/share")}
    assert [s.path for s in ADAPTER.discover(env)] == [str(other / "threads" / "threads.db")]
    env = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg"), "VOYAGER_HOME": "x"}
    assert ADAPTER.roots(env)[0] == tmp_path / "xdg" / "zed" / "threads" / "threads.db"
    env = {"HOME": str(home), "VOYAGER_ZED_HOME": str(tmp_path / "missing")}
    notices = list(ADAPTER.discover(env))
    assert notices and notices[0].fatal  # a named home that is not there is said, not ignored


def test_small_shapes():
    assert result_text([{"type": "text", "text": "a"}, {"Text": "b"}, {"text": "c"}, {"Image": {}}]) == "a\nb\nc"
    assert (
        first_folder("/a\n/b", "1,0") == "/b"
        and first_folder("/a", "garbage") == "/a"
        and first_folder(None, None) is None
    )


def test_a_thread_past_the_blob_cap_is_named_once(home, run, monkeypatch):
    """The notice read "…(VOYAGER_MAX_JSON_BYTES); skipped; skipped": the cap's own wording and Zed's both said it."""
    monkeypatch.setenv("VOYAGER_MAX_JSON_BYTES", str(1 << 16))
    write_db(home, [row("t-main", modern()), row("t-big", b'{"title": "' + b"x" * (1 << 18) + b'"}')])
    res = run("scan", "--json")
    (line,) = [ln for ln in res.stderr.splitlines() if "t-big" in ln]
    assert line.endswith("(VOYAGER_MAX_JSON_BYTES); skipped") and line.count("skipped") == 2, (
        line
    )  # "voyager: skipped …"
