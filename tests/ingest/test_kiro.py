"""The Kiro adapter (documented): peers' samples, and each documented store written here from its described shape.

No real Kiro store was available; ``shared/fixtures/peers/kiro`` holds what agentsview and
cli-continues keep as test data (CLI JSONL, kiro-cli's SQLite, the IDE's workspace JSON in
both disputed places, an old ``.chat``). The fixtures below add what those lack: CJK
text, tool calls and results with exit codes, ``ToolResults`` lines, DJ's
``sess_<id>/messages.jsonl`` layout, injected IDE turns, and the hostile and incremental
cases every adapter must survive.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import append, events, notices, write
from tests.support.peers import PeerHome, check_sample, tree
from tests.support.samples.kiro import CWD, SID, T0, cli_lines, write_cli, write_ide
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Cursor, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.kiro import ADAPTER, probe


def source(path: Path, *, append_only: bool | None = None) -> Source:
    return Source(
        provider="kiro",
        path=str(path),
        fingerprint=fingerprint(path),
        append_only=path.suffix == ".jsonl" if append_only is None else append_only,
    )


def drafts(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in events(items)]


# -- peers' samples ---------------------------------------------------------------------------


def test_the_peers_samples_pass_every_marker(home: Path, run) -> None:
    peer = PeerHome("kiro", home, run)
    check_sample(peer, "kiro")
    sessions = peer.sessions()
    # The transcript copy in the SQLite row is never indexed: its prompt is one event, not two.
    assert sessions["kiro:sqlite-session"]["events"] == 4
    assert sessions["kiro:new-session"]["cwd"] == "/home/user/dev/new-app"  # base64url folder name + document agree


def test_probe_names_each_documented_variant(home: Path, run) -> None:
    PeerHome("kiro", home, run)
    shapes = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["kiro"]["shapes"]
    assert shapes == {
        "cli-jsonl": 1,
        "cli-sqlite": 1,
        "ide-workspace-json": 1,
        "app-support-workspace-json": 2,
        "ide-chat": 1,
    }


# -- the CLI's JSONL ----------------------------------------------------------------------------


def test_a_cli_session_maps_every_record_with_the_exit_code_it_states(home: Path) -> None:
    items = list(ADAPTER.read(source(write_cli(home))))
    assert drafts(items) == [
        ("user", "human", "请检查数据库迁移 MIGRATE_KIRO_PROMPT"),
        ("assistant", "agent", "マイグレーションを確認します"),
        ("tool_call", "agent", "alembic upgrade head"),
        ("tool_result", "tool", "relation 없음 KIRO_TOOLOUT"),
        ("assistant", "agent", "迁移失败了 KIRO_REPLY_中文"),
    ]
    result = events(items)[3]
    assert (result.exit_code, result.is_error, result.call_id) == (1, True, "tooluse_1")
    assert events(items)[2].tool == "execute_bash"
    session = [i for i in items if isinstance(i, Session)][-1]
    assert session.cwd == CWD and session.title is None  # kiro-cli's title that is only the id is no title
    assert session.resume == f"cd {shlex.quote(CWD)} && kiro-cli chat --resume-id {SID}"
    assert session.started == T0 and session.updated == T0 + 5


def test_unknown_kinds_are_named_and_malformed_lines_cost_only_themselves(home: Path) -> None:
    lines: list[Any] = [
        cli_lines()[0],
        b'{"kind": "Prompt", "data": \n',
        {"kind": "CompactionSummary", "data": {}},
        {
            "kind": "AssistantMessage",
            "data": {"content": [{"kind": "hologram", "data": 1}, {"kind": "text", "data": "still here"}]},
        },
    ]
    items = list(ADAPTER.read(source(write_cli(home, lines=lines))))
    assert [e.text for e in events(items)] == ["请检查数据库迁移 MIGRATE_KIRO_PROMPT", "still here"]
    reasons = " | ".join(n.reason for n in notices(items))
    assert "malformed" in reasons
    assert "CompactionSummary" in reasons and "block:hologram" in reasons


def test_a_half_written_last_line_is_read_again_and_a_second_scan_reads_only_what_was_added(home: Path, run) -> None:
    path = write_cli(home, lines=cli_lines()[:2])
    with open(path, "ab") as fh:
        fh.write(b'{"kind": "ToolResults", "data": {"content": [')  # the agent is mid-write
    first = run.json("scan", "--json")
    assert first["events_added"] == 3 and first["failed"] == 0
    with open(path, "rb+") as fh:  # the line is finished, and the reply appended
        data = fh.read()
        fh.seek(0)
        fh.truncate()
        fh.write(data[: data.rindex(b"\n") + 1])
    append(path, cli_lines()[2:])
    second = run.json("scan", "--json")
    assert (second["grown"], second["new"], second["events_added"]) == (1, 0, 2)
    hits = run.json("search", "KIRO_TOOLOUT", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["exit_code"]) for h in hits] == [("tool_result", 1)]
    assert run.json("list", "--json")["sessions"][0]["events"] == 5


def test_a_rename_kept_only_in_the_side_file_reaches_the_title(home: Path, run) -> None:
    path = write_cli(home)
    assert run("scan", "-q").exit_code == 0
    before = path.read_bytes()
    (path.with_suffix(".json")).write_text(
        json.dumps(
            {"session_id": SID, "cwd": CWD, "title": "迁移排查 KIRO_RENAMED", "created_at": "2026-12-01T08:00:00Z"},
            ensure_ascii=False,
        )
    )
    assert run("scan", "-q").exit_code == 0
    assert path.read_bytes() == before
    hits = run.json("search", "KIRO_RENAMED", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["title"]) for h in hits] == [("title", "迁移排查 KIRO_RENAMED")]


def test_hostile_ids_and_cwds_come_back_exactly_from_the_resume_command(home: Path) -> None:
    native = "id;$(touch x)`y`'q\" z"
    cwd = "/tmp/a b;$(rm -rf ~)`id`'\"\nnext"
    path = write_cli(home, "hostile", meta={"session_id": native, "cwd": cwd})
    session = [i for i in ADAPTER.read(source(path)) if isinstance(i, Session)][-1]
    assert session.native_id == native
    argv = shlex.split(session.resume)
    assert argv[:2] == ["cd", cwd] and argv[2] == "&&" and argv[3:] == ["kiro-cli", "chat", "--resume-id", native]


# -- DJ's session folders -------------------------------------------------------------------------


def test_a_session_folder_with_messages_jsonl_is_read_in_either_line_shape(home: Path) -> None:
    folder = home / ".kiro" / "sessions" / "shop" / f"sess_{SID}"
    write(
        folder / "messages.jsonl",
        [
            {"role": "user", "content": "整理一下 README DJ_KIRO_PROMPT", "timestamp": T0},
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "了解しました"},
                    {"type": "tool_use", "id": "t1", "name": "shell", "input": {"command": "ls -la"}},
                ],
            },
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": "README.md"}]},
            cli_lines()[3],
        ],
    )
    (folder / "session.json").write_text(json.dumps({"sessionId": SID, "workspacePath": CWD, "title": "整理"}))
    found = [s for s in ADAPTER.discover({"HOME": str(home)}) if isinstance(s, Source)]
    assert [Path(s.path).name for s in found] == ["messages.jsonl"] and probe(found[0].path) == "session-dir-jsonl"
    items = list(ADAPTER.read(found[0]))
    assert drafts(items) == [
        ("user", "human", "整理一下 README DJ_KIRO_PROMPT"),
        ("assistant", "agent", "了解しました"),
        ("tool_call", "agent", "ls -la"),
        ("tool_result", "tool", "README.md"),
        ("assistant", "agent", "迁移失败了 KIRO_REPLY_中文"),
    ]
    session = [i for i in items if isinstance(i, Session)][-1]
    assert (session.native_id, session.cwd, session.title, session.resume) == (SID, CWD, "整理", None)


# -- kiro-cli's SQLite ------------------------------------------------------------------------------


def conversation(cid: str, prompt: str, *, pairs: bool = False) -> dict[str, Any]:
    turns = [
        (
            {
                "content": {"Prompt": {"prompt": prompt}},
                "timestamp": "2026-12-01T08:00:00Z",
                "env_context": {"env_state": {"current_working_directory": CWD}},
            },
            {
                "ToolUse": {
                    "message_id": "a1",
                    "content": "先跑测试",
                    "tool_uses": [{"id": "tu1", "name": "execute_bash", "args": {"command": "pytest -q 测试"}}],
                }
            },
        ),
        (
            {
                "content": {
                    "ToolUseResults": {
                        "tool_use_results": [
                            {
                                "tool_use_id": "tu1",
                                "status": "Success",
                                "content": [
                                    {"Json": {"exit_status": "0", "stdout": "3 passed 通过 DB_TOOLOUT", "stderr": ""}}
                                ],
                            }
                        ]
                    }
                },
                "timestamp": "2026-12-01T08:00:05Z",
            },
            {"Response": {"message_id": "a2", "content": "全部通过 DB_REPLY"}},
        ),
    ]
    history: list[Any] = (
        [list(t) for t in turns]
        if pairs
        else [
            {"user": u, "assistant": a, "request_metadata": {"stream_end_timestamp_ms": 1796112010000}}
            for u, a in turns
        ]
    )
    return {
        "conversation_id": cid,
        "history": history,
        "transcript": [f"> {prompt}", "先跑测试", "全部通过 DB_REPLY"],
        "model_info": {"model_id": "claude-sonnet-4"},
    }


def write_db(home: Path, convs: list[dict[str, Any]], *, wal: bool = False) -> Path:
    path = home / ".local" / "share" / "kiro-cli" / "data.sqlite3"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    if wal:
        conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("CREATE TABLE IF NOT EXISTS auth_kv (key TEXT PRIMARY KEY, value TEXT)")
    conn.execute(
        "CREATE TABLE IF NOT EXISTS conversations_v2 (key TEXT NOT NULL, conversation_id TEXT NOT NULL, "
        "value TEXT NOT NULL, created_at INTEGER NOT NULL, updated_at INTEGER NOT NULL, "
        "PRIMARY KEY (key, conversation_id))"
    )
    for i, conv in enumerate(convs):
        conn.execute(
            "INSERT OR REPLACE INTO conversations_v2 VALUES (?, ?, ?, ?, ?)",
            (CWD, conv["conversation_id"], json.dumps(conv, ensure_ascii=False), 1796112000000 + i, 1796112060000 + i),
        )
    conn.commit()
    conn.close()
    return path


def test_sqlite_history_is_indexed_and_the_transcript_copy_is_not(home: Path) -> None:
    path = write_db(
        home, [conversation("c1", "请修复测试 DB_PROMPT"), conversation("c2", "旧格式 PAIR_PROMPT", pairs=True)]
    )
    items = list(ADAPTER.read(source(path, append_only=False)))
    by_session: dict[str, list[tuple[str, str, str]]] = {}
    for e in events(items):
        by_session.setdefault(e.session, []).append((e.kind, e.origin, e.text))
    expected = [
        ("user", "human", "请修复测试 DB_PROMPT"),
        ("assistant", "agent", "先跑测试"),
        ("tool_call", "agent", "pytest -q 测试"),
        ("tool_result", "tool", "3 passed 通过 DB_TOOLOUT"),
        ("assistant", "agent", "全部通过 DB_REPLY"),
    ]
    assert by_session["kiro:c1"] == expected
    assert [k for k, _, _ in by_session["kiro:c2"]] == [k for k, _, _ in expected]  # [user, assistant] pairs too
    result = [e for e in events(items) if e.kind == "tool_result"][0]
    assert (result.exit_code, result.is_error, result.call_id) == (0, False, "tu1")
    session = [i for i in items if isinstance(i, Session) and i.native_id == "c1"][0]
    assert (session.cwd, session.model, session.resume) == (CWD, "claude-sonnet-4", None)


def test_untouched_conversations_come_back_unchanged(home: Path) -> None:
    path = write_db(home, [conversation("c1", "一 ONE_PROMPT"), conversation("c2", "二 TWO_PROMPT")], wal=True)
    first = list(ADAPTER.read(source(path, append_only=False)))
    cursor = [i for i in first if isinstance(i, Cursor)][-1]
    changed = conversation("c2", "二 TWO_PROMPT")
    changed["history"].append({"user": {"content": {"Prompt": {"prompt": "再来一次 AGAIN_PROMPT"}}}, "assistant": {}})
    write_db(home, [changed], wal=True)
    second = list(
        ADAPTER.read(Source(provider="kiro", path=str(path), fingerprint=fingerprint(path, wal=True)), cursor)
    )
    assert [i.session for i in second if isinstance(i, Unchanged)] == ["kiro:c1"]
    assert {e.session for e in events(second)} == {"kiro:c2"} and events(second)[-1].text == "再来一次 AGAIN_PROMPT"


def test_a_conversation_kept_as_jsonl_too_is_read_once(home: Path, run) -> None:
    write_cli(home, "c1")
    write_db(home, [conversation("c1", "请检查数据库迁移 MIGRATE_KIRO_PROMPT"), conversation("c2", "只在库里 ONLY_DB")])
    summary = run.json("scan", "--json")
    assert (summary["failed"], summary["sessions"]) == (0, 2)
    hits = run.json("search", "MIGRATE_KIRO_PROMPT", "--json", "--no-refresh")["hits"]
    assert [(h["session_id"], h["kind"]) for h in hits] == [("kiro:c1", "user")]
    assert run.json("search", "ONLY_DB", "--json", "--no-refresh")["hits"][0]["session_id"] == "kiro:c2"


def test_a_kiro_cli_database_without_conversations_is_no_error(home: Path, run) -> None:
    path = home / ".local" / "share" / "kiro-cli" / "data.sqlite3"
    path.parent.mkdir(parents=True)
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE auth_kv (key TEXT PRIMARY KEY, value TEXT)")
    conn.commit()
    conn.close()
    assert probe(path) == "cli-sqlite-without-conversations"
    summary = run.json("scan", "--json")
    assert (summary["failed"], summary["sessions"]) == (0, 0)


# -- the IDE -------------------------------------------------------------------------------------------


def test_ide_documents_keep_injected_turns_out_of_the_prompts(home: Path) -> None:
    path = write_ide(home / ".config" / "Kiro" / "User")
    items = list(ADAPTER.read(source(path)))
    assert drafts(items) == [
        ("meta", "provider", "# Conversation Summary\n之前的对话 SUMMARY_KIRO"),
        ("meta", "provider", "<identity>You are Kiro INJECTED_KIRO</identity>"),
        ("user", "human", "修复登录 bug IDE_PROMPT"),
        ("assistant", "agent", "ログインを直しました IDE_REPLY"),
        ("tool_result", "tool", "ok 200 IDE_TOOLOUT"),
    ]
    session = [i for i in items if isinstance(i, Session)][0]
    assert (session.title, session.cwd, session.started) == ("修复登录", CWD, 1796112000.0)
    assert probe(path) == "ide-workspace-json"


def test_an_old_chat_file_finds_its_cwd_through_the_workspace_hash(home: Path) -> None:
    agent = home / ".config" / "Kiro" / "User" / "globalStorage" / "kiro.kiroagent"
    write_ide(home / ".config" / "Kiro" / "User")
    digest = hashlib.sha256(CWD.encode()).hexdigest()[:32]
    chat = agent / digest / ("c" * 32 + ".chat")
    chat.parent.mkdir(parents=True)
    chat.write_text(
        json.dumps(
            {
                "executionId": "e9",
                "chat": [
                    {"role": "human", "content": "# System Prompt\nYou are Kiro"},
                    {"role": "human", "content": "旧版问题 CHAT_PROMPT"},
                    {"role": "bot", "content": "旧版回答 CHAT_REPLY"},
                    {"role": "tool", "content": "exit 0 CHAT_TOOLOUT"},
                    {"role": "narrator", "content": "?"},
                ],
                "metadata": {"modelId": "m", "startTime": 1796112000000},
            },
            ensure_ascii=False,
        )
    )
    # Execution logs under the same workspace folder are not chats and are not walked.
    (agent / digest / "414d1636299d2b9e4ce7e17fb11f63e9").mkdir()
    (agent / digest / "414d1636299d2b9e4ce7e17fb11f63e9" / "abc").write_text("{}")
    found = [s for s in ADAPTER.discover({"HOME": str(home)}) if isinstance(s, Source) and s.path.endswith(".chat")]
    assert [s.path for s in found] == [str(chat)]
    items = list(ADAPTER.read(found[0]))
    assert drafts(items) == [
        ("meta", "provider", "# System Prompt\nYou are Kiro"),
        ("user", "human", "旧版问题 CHAT_PROMPT"),
        ("assistant", "agent", "旧版回答 CHAT_REPLY"),
        ("tool_result", "tool", "exit 0 CHAT_TOOLOUT"),
    ]
    assert [i for i in items if isinstance(i, Session)][0].cwd == CWD
    assert "role:narrator" in notices(items)[0].reason


def test_a_broken_ide_document_is_named_and_its_neighbours_are_read(home: Path, run) -> None:
    good = write_ide(home / ".config" / "Kiro" / "User")
    (good.parent / "broken.json").write_text('{"sessionId": "broken", "history": [')
    summary = run.json("scan", "--json")
    assert summary["sessions"] == 1 and summary["failed"] == 1
    assert any("broken.json" in s["source"] for s in summary["skipped"])


def test_a_message_nested_too_deeply_costs_that_message_only(home: Path) -> None:
    path = write_ide(home / ".config" / "Kiro" / "User")
    deep = "[" * 1000 + "]" * 1000  # json.dumps cannot write it: spliced into the text
    path.write_text(path.read_text().replace('"id": "m1"}', '"id": "m1", "extra": ' + deep + "}"))
    items = list(ADAPTER.read(source(path)))
    assert [text for _, _, text in drafts(items)][2:] == [
        "修复登录 bug IDE_PROMPT",
        "ログインを直しました IDE_REPLY",
        "ok 200 IDE_TOOLOUT",
    ]
    (named,) = notices(items)
    assert "nested more than 128 deep" in named.reason and named.source == str(path) and not named.fatal


# -- where Kiro is looked for ------------------------------------------------------------------------


def test_the_voyager_variables_are_authoritative(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, run
) -> None:
    write_cli(home)  # the default place
    write_ide(home / ".config" / "Kiro" / "User")
    write_db(home, [conversation("c1", "默认 DEFAULT_DB")])
    elsewhere = tmp_path / "elsewhere"
    write_cli(elsewhere, "other-id")
    monkeypatch.setenv("VOYAGER_KIRO_HOME", str(elsewhere / ".kiro"))
    monkeypatch.setenv("VOYAGER_KIRO_APP_DIR", str(tmp_path / "app"))
    monkeypatch.setenv("VOYAGER_KIRO_CLI_HOME", str(tmp_path / "cli"))
    write_ide(tmp_path / "app", sid="app-ide")
    ids = {s.path.rsplit("/", 1)[-1] for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)}
    assert ids == {"other-id.jsonl", "app-ide.json"}
    # A named data dir without a database says so.
    named = [n for n in ADAPTER.discover(dict(os.environ)) if not isinstance(n, Source)]
    assert any("data.sqlite3" in n.source for n in named)


def test_xdg_config_home_moves_the_ide_user_dir(home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    path = write_ide(tmp_path / "xdg" / "Kiro" / "User")
    found = [
        s.path
        for s in ADAPTER.discover({"HOME": str(home), "XDG_CONFIG_HOME": str(tmp_path / "xdg")})
        if isinstance(s, Source)
    ]
    assert found == [str(path)]


def test_an_empty_store_is_no_error(home: Path, run) -> None:
    (home / ".kiro" / "sessions" / "cli").mkdir(parents=True)
    (home / ".config" / "Kiro" / "User" / "globalStorage" / "kiro.kiroagent" / "workspace-sessions").mkdir(parents=True)
    summary = run.json("scan", "--json")
    assert (summary["sources"], summary["failed"], summary["skipped"]) == (0, 0, [])


def test_nothing_is_written_beside_the_stores(home: Path, run) -> None:
    write_cli(home)
    write_ide(home / ".config" / "Kiro" / "User")
    write_db(home, [conversation("c1", "只读 RO_PROMPT")], wal=True)
    before = tree(home)
    assert run.json("scan", "--json")["failed"] == 0
    assert tree(home) == before


def test_a_block_whose_kind_is_a_list_or_an_object_is_named_not_fatal(home: Path) -> None:
    # `kind not in _QUIET_BLOCKS` raised TypeError (unhashable) out of the read: the session lost.
    odd = {"kind": "AssistantMessage", "data": {"content": [{"kind": ["text"], "data": "x"}, {"kind": {"k": 1}}]}}
    prompt = {"kind": "Prompt", "data": {"content": [{"kind": {"k": 1}}, {"kind": "text", "data": "kept 提示"}]}}
    messages = [
        {"role": "user", "content": [{"type": ["text"]}]},
        {"role": "assistant", "content": [{"type": {"t": 1}}]},
    ]
    items = list(ADAPTER.read(source(write_cli(home, lines=[*cli_lines(), odd, prompt]))))
    assert "kept 提示" in [t for _, _, t in drafts(items)] and "block:" in notices(items)[0].reason
    folder = home / ".kiro" / "sessions" / "ws" / "sess_00000000-0000-0000-0000-000000000001"
    write(folder / "messages.jsonl", [*messages, {"role": "user", "content": "还在"}])
    items = [
        i
        for s in ADAPTER.discover({"HOME": str(home)})
        if isinstance(s, Source) and "sess_" in s.path
        for i in ADAPTER.read(s)
    ]
    assert "还在" in [t for _, _, t in drafts(items)]


def test_tool_uses_or_results_that_are_not_lists_cost_only_themselves(home: Path) -> None:
    # `body.get("tool_uses") or ()` iterated a number: TypeError out of the read, every conversation lost.
    odd = conversation("c1", "请修复测试 DB_PROMPT")
    odd["history"][0]["assistant"]["ToolUse"]["tool_uses"] = 7
    odd["history"][1]["user"]["content"]["ToolUseResults"]["tool_use_results"] = True
    path = write_db(home, [odd, conversation("c2", "另一个 OTHER_PROMPT")])
    texts = [t for _, _, t in drafts(list(ADAPTER.read(source(path, append_only=False))))]
    assert "请修复测试 DB_PROMPT" in texts and "全部通过 DB_REPLY" in texts and "另一个 OTHER_PROMPT" in texts
