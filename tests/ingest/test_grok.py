"""The Grok Build adapter (documented): peers' samples, and session folders written here from the described shapes.

``shared/fixtures/peers/grok`` holds agentsview's current-format folder (serialised through
Grok Build's own types), deja-vu's ``updates.jsonl``-only folder and its ``grok.db``;
``grok-legacy`` the version-0 chat history. The fixtures below add CJK text, shell calls,
a subagent and a fork, an ACP stream with a rewind (the rewound text must not be found),
the choice of one transcript per session, the community ``grok-cli`` sharing ``~/.grok``,
and the hostile, incremental and read-only cases.
"""

from __future__ import annotations

import json
import os
import shlex
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import append, events, notices, write
from tests.support.peers import PeerHome, check_sample, tree
from tests.support.samples.grok import CWD, GROUP, SID, folder, history, summary
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Cursor, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.grok import ADAPTER, probe


def update(tag: str, ts: int, *, xai: bool = False, **fields: Any) -> dict[str, Any]:
    return {
        "timestamp": ts,
        "method": "_x.ai/session/update" if xai else "session/update",
        "params": {"sessionId": SID, "update": {"sessionUpdate": tag, **fields}},
    }


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def stream() -> list[dict[str, Any]]:
    """An ACP stream: two prompts, the second rewound away and asked again, an interjection, a host turn, a tool call."""
    t = 1796112000
    return [
        update("user_message_chunk", t, content=text("第一个问题 "), _meta={"promptIndex": 0}),
        update("user_message_chunk", t, content=text("UPD_PROMPT_ONE"), _meta={"promptIndex": 0}),
        update("agent_thought_chunk", t + 1, content=text("想一想 UPD_THINK")),
        update("agent_message_chunk", t + 2, content=text("我先运行")),
        update("agent_message_chunk", t + 2, content=text("命令")),
        update("tool_call", t + 3, toolCallId="tc1", title="bash", kind="execute", rawInput={"command": "ls -la 目录"}),
        update("tool_call_update", t + 4, toolCallId="tc1", status="in_progress"),
        update(
            "tool_call_update",
            t + 5,
            toolCallId="tc1",
            status="completed",
            content=[{"type": "content", "content": text("total 0 UPD_TOOLOUT")}],
        ),
        update("user_message_chunk", t + 5, content=text("继续 UPD_HOST"), _meta={"hostTurn": True}),
        update(
            "user_message_chunk",
            t + 6,
            content=text("<frame>"),
            _meta={"interjection": True, "displayText": "顺便说一句 UPD_INTERJECT"},
        ),
        update("agent_message_chunk", t + 7, content=text("第一个回答 UPD_REPLY_ONE")),
        update("user_message_chunk", t + 8, content=text("被撤回的问题 UPD_STALE_PROMPT"), _meta={"promptIndex": 1}),
        update("agent_message_chunk", t + 9, content=text("被撤回的回答 UPD_STALE_REPLY")),
        update("rewind_marker", t + 10, xai=True, target_prompt_index=1),
        update("user_message_chunk", t + 11, content=text("重新问 UPD_PROMPT_TWO"), _meta={"promptIndex": 1}),
        update("agent_message_chunk", t + 12, content=text("新的回答 UPD_REPLY_TWO")),
        update("available_commands_update", t + 12, availableCommands=[]),
    ]


def read_folder(path: Path) -> list[Any]:
    return list(ADAPTER.read(Source(provider="grok", path=str(path), fingerprint=fingerprint(path))))


def drafts(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in events(items)]


# -- peers' samples ---------------------------------------------------------------------------------


def test_the_peers_samples_pass_every_marker(home: Path, run) -> None:
    peer = PeerHome("grok", home, run)
    check_sample(peer, "grok")
    report = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["grok"]
    assert report["shapes"] == {"chat-history-v1": 1, "updates-jsonl": 1, "grok.db": 1}
    # The synthetic project instructions are context, indexed as meta.
    assert [h["kind"] for h in peer.hits("project policy")] == ["meta"]


def test_the_legacy_chat_format_passes_too(home: Path, run) -> None:
    check_sample(PeerHome("grok-legacy", home, run), "grok")
    assert {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["grok"]["shapes"] == {
        "chat-history-v0": 1
    }


# -- chat_history.jsonl -----------------------------------------------------------------------------


def test_chat_history_items_map_to_events(home: Path) -> None:
    path = folder(home)
    summary(path)
    write(path / "chat_history.jsonl", history())
    items = read_folder(path)
    assert drafts(items) == [
        ("meta", "provider", "项目规则 GROK_RULES"),
        ("user", "human", "支付接口报错了 GROK_PROMPT"),
        ("reasoning", "agent", "先跑测试 GROK_THINK"),
        ("assistant", "agent", "テストを実行します"),
        ("tool_call", "agent", "pytest -q tests/支付"),
        ("tool_result", "tool", "1 failed 실패 GROK_TOOLOUT"),
        ("user", "human", "顺便看看日志 GROK_INTERJECT"),
        ("assistant", "agent", "修好了 GROK_REPLY"),
    ]
    session = [i for i in items if isinstance(i, Session)][0]
    assert (session.native_id, session.cwd, session.title, session.title_source) == (
        SID,
        CWD,
        "支付修复 GROK_TITLE",
        "agent",
    )
    assert (session.model, session.git_branch, session.parent) == ("grok-4.5", "fix/支付", None)
    assert session.resume == f"cd {shlex.quote(CWD)} && grok --resume {SID}"


def test_a_subagent_prompt_is_the_parent_agents_and_links_to_it(home: Path, run) -> None:
    parent, child = folder(home), folder(home, "019f7000-0000-7000-8000-0000000000b2")
    summary(parent)
    write(parent / "chat_history.jsonl", history())
    summary(child, "019f7000-0000-7000-8000-0000000000b2", session_kind="subagent", parent_session_id=SID)
    write(
        child / "chat_history.jsonl",
        [
            {"type": "user", "content": "子任务：检查日志 GROK_SUB_TASK"},
            {"type": "assistant", "content": "日志正常 GROK_SUB_REPLY"},
        ],
    )
    run.json("scan", "--json")
    hits = run.json("search", "GROK_SUB_TASK", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"]) for h in hits] == [("user", "provider")]
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    sub = sessions["grok:019f7000-0000-7000-8000-0000000000b2"]
    assert sub["parent"] == f"grok:{SID}" and sub["resume"].endswith(f"grok --resume {SID}")


def test_a_forks_copy_of_its_parent_is_left_to_the_parent(home: Path, run) -> None:
    parent, fork = folder(home), folder(home, "019f7000-0000-7000-8000-0000000000c3")
    summary(parent)
    write(parent / "chat_history.jsonl", history())
    summary(
        fork,
        "019f7000-0000-7000-8000-0000000000c3",
        parent_session_id=SID,
        inherited_prefix_len=len(history()),
        session_kind="fork",
    )
    write(fork / "chat_history.jsonl", history() + [{"type": "user", "content": "分支上的新问题 GROK_FORK_PROMPT"}])
    run.json("scan", "--json")
    prompts = run.json("search", "GROK_PROMPT", "--json", "--no-refresh")["hits"]
    assert [(h["session_id"], h["kind"]) for h in prompts] == [(f"grok:{SID}", "user")]
    fork_hits = run.json("search", "GROK_FORK_PROMPT", "--json", "--no-refresh")["hits"]
    assert [h["session_id"] for h in fork_hits] == ["grok:019f7000-0000-7000-8000-0000000000c3"]


def test_a_fork_whose_parent_is_gone_keeps_what_it_copied(home: Path) -> None:
    fork = folder(home, "019f7000-0000-7000-8000-0000000000d4")
    summary(fork, "019f7000-0000-7000-8000-0000000000d4", parent_session_id="gone", inherited_prefix_len=3)
    write(fork / "chat_history.jsonl", history())
    assert ("user", "human", "支付接口报错了 GROK_PROMPT") in drafts(read_folder(fork))


def test_unknown_items_are_named_and_a_broken_line_costs_only_itself(home: Path) -> None:
    path = folder(home)
    summary(path)
    write(path / "chat_history.jsonl", [history()[2], b"{oops\n", {"type": "hologram"}, history()[-1]])
    items = read_folder(path)
    assert [t for _, _, t in drafts(items)] == ["支付接口报错了 GROK_PROMPT", "修好了 GROK_REPLY"]
    reasons = " | ".join(n.reason for n in notices(items))
    assert "hologram" in reasons and "chat format v1" in reasons and "malformed" in reasons


# -- updates.jsonl ----------------------------------------------------------------------------------


def test_the_acp_stream_is_merged_and_rewound_text_is_gone(home: Path) -> None:
    path = folder(home)
    summary(path)
    write(path / "updates.jsonl", stream())
    items = read_folder(path)
    assert drafts(items) == [
        ("user", "human", "第一个问题 UPD_PROMPT_ONE"),
        ("reasoning", "agent", "想一想 UPD_THINK"),
        ("assistant", "agent", "我先运行命令"),
        ("tool_call", "agent", "ls -la 目录"),
        ("tool_result", "tool", "total 0 UPD_TOOLOUT"),
        ("meta", "provider", "继续 UPD_HOST"),
        ("user", "human", "顺便说一句 UPD_INTERJECT"),
        ("assistant", "agent", "第一个回答 UPD_REPLY_ONE"),
        ("user", "human", "重新问 UPD_PROMPT_TWO"),
        ("assistant", "agent", "新的回答 UPD_REPLY_TWO"),
    ]
    assert notices(items) == []  # available_commands_update is known and carries nothing
    assert probe(path) == "updates-jsonl"


def test_rewound_text_is_never_found_and_an_appended_turn_is_read(home: Path, run) -> None:
    path = folder(home)
    summary(path)
    write(path / "updates.jsonl", stream())
    assert run.json("scan", "--json")["events_added"] == 10
    for stale in ("UPD_STALE_PROMPT", "UPD_STALE_REPLY"):
        assert run.json("search", stale, "--json", "--no-refresh")["total"] == 0
    append(
        path / "updates.jsonl",
        [update("user_message_chunk", 1796112100, content=text("第三问 UPD_THREE"), _meta={"promptIndex": 2})],
    )
    second = run.json("scan", "--json")
    assert second["changed"] == 1 and run.json("list", "--json")["sessions"][0]["events"] == 11
    assert run.json("search", "UPD_THREE", "--json", "--no-refresh")["hits"][0]["kind"] == "user"


def test_one_transcript_per_session_chat_history_first(home: Path, run) -> None:
    path = folder(home)
    summary(path)
    write(path / "chat_history.jsonl", history())
    write(path / "updates.jsonl", stream())
    run.json("scan", "--json")
    assert run.json("search", "GROK_PROMPT", "--json", "--no-refresh")["total"] == 1
    assert run.json("search", "UPD_PROMPT_ONE", "--json", "--no-refresh")["total"] == 0
    (path / "chat_history.jsonl").write_bytes(b"")  # an empty cache: the stream is what there is
    run.json("scan", "--json")
    assert run.json("search", "UPD_PROMPT_ONE", "--json", "--no-refresh")["total"] == 1
    assert run.json("search", "GROK_PROMPT", "--json", "--no-refresh")["total"] == 0


# -- grok.db ------------------------------------------------------------------------------------------


def write_db(home: Path, ids: list[str]) -> Path:
    path = home / ".grok" / "grok.db"
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path)
    conn.executescript(
        "CREATE TABLE IF NOT EXISTS workspaces (id TEXT PRIMARY KEY, canonical_path TEXT);"
        "CREATE TABLE IF NOT EXISTS sessions (id TEXT PRIMARY KEY, workspace_id TEXT, title TEXT, "
        "cwd_last TEXT, created_at TEXT);"
        "CREATE TABLE IF NOT EXISTS messages (session_id TEXT, seq INTEGER, role TEXT, "
        "message_json TEXT, created_at TEXT);"
    )
    conn.execute("INSERT OR REPLACE INTO workspaces VALUES ('w1', ?)", (CWD,))
    for sid in ids:
        conn.execute(
            "INSERT OR REPLACE INTO sessions VALUES (?, 'w1', '数据库会话', NULL, '2026-12-01T08:00:00Z')", (sid,)
        )
        for seq, (role, body) in enumerate(
            [
                ("user", f"数据库里的问题 DB_PROMPT_{sid[-2:]}"),
                (
                    "assistant",
                    [
                        {"type": "text", "text": "回答"},
                        {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "make 构建"}},
                    ],
                ),
                ("tool", "ok DB_TOOLOUT"),
            ]
        ):
            conn.execute(
                "INSERT INTO messages VALUES (?, ?, ?, ?, '2026-12-01T08:00:01Z')",
                (sid, seq, role, json.dumps({"role": role, "content": body}, ensure_ascii=False)),
            )
    conn.commit()
    conn.close()
    return path


def test_grok_db_sessions_are_read_without_the_folders_copies(home: Path, run) -> None:
    summary(folder(home))
    write(folder(home) / "chat_history.jsonl", history())
    path = write_db(home, [SID, "db-only-01"])
    items = list(ADAPTER.read(Source(provider="grok", path=str(path), fingerprint=fingerprint(path))))
    assert {e.session for e in events(items)} == {"grok:db-only-01"}
    assert drafts(items) == [
        ("user", "human", "数据库里的问题 DB_PROMPT_01"),
        ("assistant", "agent", "回答"),
        ("tool_call", "agent", "make 构建"),
        ("tool_result", "tool", "ok DB_TOOLOUT"),
    ]
    assert notices(items) == []  # a copy is not a loss worth a word
    session = [i for i in items if isinstance(i, Session)][0]
    assert (session.cwd, session.title) == (CWD, "数据库会话")
    cursor = [i for i in items if isinstance(i, Cursor)][-1]
    again = list(ADAPTER.read(Source(provider="grok", path=str(path), fingerprint=fingerprint(path)), cursor))
    assert [i.session for i in again if isinstance(i, Unchanged)] == ["grok:db-only-01"] and not events(again)
    # A database holding nothing but copies is no failure either.
    path.unlink()
    write_db(home, [SID])
    scan = run.json("scan", "--json")
    assert (scan["failed"], scan["sessions"]) == (0, 1)


# -- where Grok is looked for ----------------------------------------------------------------------------


def test_the_community_grok_cli_sharing_the_folder_is_not_a_broken_store(home: Path, run) -> None:
    (home / ".grok").mkdir()
    (home / ".grok" / "user-settings.json").write_text('{"apiKey": "x"}')
    (home / ".grok" / "settings.json").write_text('{"model": "grok-3"}')
    scan = run("scan", "--json")
    assert json.loads(scan.stdout)["sources"] == 0 and "skipped" not in scan.stderr
    report = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["grok"]
    assert (report["problems"], report["sources"]) == ([], 0)


def test_grok_home_moves_the_store_and_the_voyager_variable_overrides_both(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    summary(folder(home))
    write(folder(home) / "chat_history.jsonl", history())
    moved = tmp_path / "grok-home"
    summary(moved / "sessions" / GROUP / "moved")
    write(moved / "sessions" / GROUP / "moved" / "chat_history.jsonl", history())
    monkeypatch.setenv("GROK_HOME", str(moved))
    assert [Path(s.path).name for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)] == ["moved"]
    monkeypatch.setenv("VOYAGER_GROK_HOME", str(home / ".grok"))
    assert [Path(s.path).name for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)] == [SID]


def test_hostile_ids_and_cwds_come_back_exactly_from_the_resume_command(home: Path) -> None:
    native = "id;$(touch x)`y`'q\" z"
    cwd = "/tmp/a b;$(rm -rf ~)`id`'\"\nnext"
    path = folder(home, "hostile")
    summary(path, native)
    doc = json.loads((path / "summary.json").read_text())
    doc["info"]["cwd"] = cwd
    (path / "summary.json").write_text(json.dumps(doc))
    write(path / "chat_history.jsonl", history())
    session = [i for i in read_folder(path) if isinstance(i, Session)][0]
    argv = shlex.split(session.resume)
    assert argv == ["cd", cwd, "&&", "grok", "--resume", native]


def test_the_cwd_comes_from_the_folder_name_without_a_summary(home: Path) -> None:
    path = folder(home)
    write(path / "updates.jsonl", stream()[:2])
    session = [i for i in read_folder(path) if isinstance(i, Session)][0]
    assert (session.native_id, session.cwd, session.started) == (SID, CWD, 1796112000.0)


def test_nothing_is_written_beside_the_sessions(home: Path, run) -> None:
    summary(folder(home))
    write(folder(home) / "chat_history.jsonl", history())
    write_db(home, ["db-only-01"])
    before = tree(home)
    assert run.json("scan", "--json")["sessions"] == 2
    assert tree(home) == before


def test_an_update_whose_tag_is_a_list_or_an_object_is_named_not_fatal(home: Path) -> None:
    # `tag not in QUIET_UPDATES` raised TypeError (unhashable) out of the read: the session lost.
    path = folder(home)
    summary(path)
    odd = [update("x", 1), update("x", 2)]
    odd[0]["params"]["update"]["sessionUpdate"] = ["agent_message_chunk"]
    odd[1]["params"]["update"]["sessionUpdate"] = {"tag": 1}
    write(path / "updates.jsonl", odd + stream())
    items = read_folder(path)
    assert ("user", "human", "第一个问题 UPD_PROMPT_ONE") in drafts(items)
    assert len(notices(items)) == 1


def test_raw_output_or_update_content_that_is_not_a_list_costs_only_itself(home: Path) -> None:
    # Both were iterated with `x or ()`: a number raised TypeError out of the read and cost the session.
    path = folder(home)
    summary(path)
    items = history()
    items[4]["raw_output"] = 7
    write(path / "chat_history.jsonl", items)
    assert ("assistant", "agent", "修好了 GROK_REPLY") in drafts(read_folder(path))
    other = folder(home, sid="019f6000-0000-7000-8000-0000000000aa")
    summary(other, sid="019f6000-0000-7000-8000-0000000000aa")
    odd = update("tool_call_update", 5, toolCallId="c9", status="completed", content=7)
    write(other / "updates.jsonl", stream()[:3] + [odd] + stream()[3:])
    assert ("user", "human", "第一个问题 UPD_PROMPT_ONE") in drafts(read_folder(other))
