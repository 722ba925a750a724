"""The Kimi adapter: Kimi CLI session folders built in their observed shape, Kimi Code's in its documented one.

The capture Kimi CLI 1.52.0 wrote is checked by ``test_captures.py``. Here: every wire event
kind, the ``context.jsonl`` fallback, titles and working directories, subagent folders and
the copies of their events in the parent's log, a folder re-read from where its stream
stopped, half-written and broken lines, the environment variables, hostile ids, nothing
written; then Kimi Code's layout (documented only: a fixture built from its wire manifest).
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.support.shell import option_words
from tests.support.items import append, events, last_session, notices, write
from voyager_sessions.ingest.adapters.base import Cursor, Partial, Source
from voyager_sessions.ingest.adapters.kimi import WORK_SESSIONS, ADAPTER, render_call, resume_command
from voyager_sessions.ingest.files import folder_fingerprint

SID = "26047b80-c983-47e1-adc3-bcec443611c4"
CWD = "/home/dev/proj"
MD5 = "2b8c70fb72d8a087e5dee109778f74cf"  # md5("/home/dev/proj"), Kimi's folder name for it
T0 = 1796112502.0


def wire(n: int, kind: str, /, **payload: Any) -> dict[str, Any]:
    return {"timestamp": T0 + n, "message": {"type": kind, "payload": payload}}


META = {"type": "metadata", "protocol_version": "1.10"}


def first_turn(prompt: str = "请运行 make test PROMPT_K1") -> list[dict[str, Any]]:
    return [
        META,
        wire(0, "TurnBegin", user_input=prompt),
        wire(1, "StepBegin", n=1),
        wire(2, "ContentPart", type="think", think="Run the tests first THINK_K1", encrypted=None),
        wire(3, "ContentPart", type="text", text="我来运行测试。"),
        wire(
            4,
            "ToolCall",
            type="function",
            id="call_1",
            function={"name": "Shell", "arguments": json.dumps({"command": "make test", "description": "tests"})},
        ),
        wire(
            5,
            "StatusUpdate",
            token_usage={"input_other": 100, "output": 20, "input_cache_read": 7, "input_cache_creation": 0},
        ),
        wire(
            6,
            "ToolResult",
            tool_call_id="call_1",
            return_value={"is_error": True, "output": "2 failed", "message": "Command failed with exit code 2."},
        ),
        wire(7, "ContentPart", type="text", text="两个测试失败 REPLY_K1"),
        wire(8, "TurnEnd"),
    ]


def session_dir(home: Path, sid: str = SID, wd: str = MD5) -> Path:
    return home / ".kimi" / "sessions" / wd / sid


def make_session(
    home: Path,
    lines: list[Any],
    *,
    title: str | None = None,
    generated: bool = False,
    sid: str = SID,
    kimi_json: bool = True,
) -> Path:
    folder = session_dir(home, sid)
    write(folder / "wire.jsonl", lines)
    state = {"version": 1, "custom_title": title, "title_generated": generated, "archived": False, "todos": []}
    (folder / "state.json").write_text(json.dumps(state, ensure_ascii=False))
    if kimi_json:
        (home / ".kimi" / "kimi.json").write_text(
            json.dumps(
                {
                    "work_dirs": [
                        {"path": CWD, "kaos": "local", "last_session_id": sid},
                        {"path": "/srv/app", "kaos": "ssh", "last_session_id": None},
                    ]
                }
            )
        )
    return folder


def source(folder: Path) -> Source:
    files = [folder / n for n in ("wire.jsonl", "context.jsonl", "state.json", "meta.json")]
    return Source(provider="kimi", path=str(folder), fingerprint=folder_fingerprint(folder, files))


def read(folder: Path, cursor: Cursor | None = None) -> list[Any]:
    return list(ADAPTER.read(source(folder), cursor))


def cursor_of(items: list[Any]) -> Cursor:
    [c] = [i for i in items if isinstance(i, Cursor)]
    return c


def got(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in events(items)]


# -- Kimi CLI: mapping ---------------------------------------------------------------------------------


def test_a_wire_turn_maps_to_one_event_each(tmp_path: Path) -> None:
    items = read(make_session(tmp_path, first_turn()))
    assert got(items) == [
        ("user", "human", "请运行 make test PROMPT_K1"),
        ("reasoning", "agent", "Run the tests first THINK_K1"),
        ("assistant", "agent", "我来运行测试。"),
        ("tool_call", "agent", "make test\n# tests"),
        ("tool_result", "tool", "2 failed\nCommand failed with exit code 2."),
        ("assistant", "agent", "两个测试失败 REPLY_K1"),
    ]
    result = events(items)[4]
    assert result.is_error and result.exit_code is None and result.call_id == "call_1"
    assert events(items)[0].ts == T0 and not notices(items)
    s = last_session(items)
    assert s.id == f"kimi:{SID}" and s.cwd == CWD and (s.tokens_in, s.tokens_out) == (107, 20)
    assert s.started == T0 and s.updated == T0 + 8
    assert s.resume == f"cd {CWD} && kimi -r {SID}"


def test_other_wire_events(tmp_path: Path) -> None:
    lines = first_turn() + [
        wire(9, "SteerInput", user_input=[{"type": "text", "text": "also check lint"}]),
        wire(10, "Notification", title="Background task done", body="lint passed"),
        wire(11, "PlanDisplay", content="1. fix tests", file_path="/x.md"),
        wire(12, "BtwBegin", id="b1", question="what is 数据库?"),
        wire(13, "BtwEnd", id="b1", response="a database"),
        wire(14, "Hologram", x=1),
        wire(15, "CompactionBegin"),
        wire(16, "ContentPart", type="image_url", image_url={"url": "data:..."}),
    ]
    items = read(make_session(tmp_path, lines))
    assert got(items)[6:] == [
        ("user", "human", "also check lint"),
        ("meta", "provider", "Background task done\nlint passed"),
        ("meta", "provider", "1. fix tests"),
        ("user", "human", "what is 数据库?"),
        ("assistant", "agent", "a database"),
    ]
    [notice] = notices(items)
    assert "Hologram" in notice.reason and "Kimi CLI (wire protocol 1.10)" in notice.reason


def test_older_sessions_without_a_wire_log_are_read_from_the_context(tmp_path: Path) -> None:
    folder = session_dir(tmp_path)
    write(
        folder / "context.jsonl",
        [
            {"role": "_system_prompt", "content": "You are Kimi SYSTEM_ONLY"},
            {"role": "_checkpoint", "id": 0},
            {"role": "user", "content": "请运行 ls PROMPT_CTX"},
            {
                "role": "assistant",
                "content": [{"type": "think", "think": "list it"}, {"type": "text", "text": "好的"}],
                "tool_calls": [
                    {"type": "function", "id": "c1", "function": {"name": "Shell", "arguments": '{"command": "ls"}'}}
                ],
            },
            {
                "role": "tool",
                "content": [
                    {"type": "text", "text": "<system>Command executed successfully.</system>"},
                    {"type": "text", "text": "a.txt\n"},
                ],
                "tool_call_id": "c1",
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "text",
                        "text": "<system>Previous context has been compacted. Here is the compaction output:</system>",
                    },
                    {"type": "text", "text": "SUMMARY_CTX of the work"},
                ],
            },
            {"role": "_usage", "token_count": 120},
        ],
    )
    items = read(folder)
    assert got(items) == [
        ("user", "human", "请运行 ls PROMPT_CTX"),
        ("reasoning", "agent", "list it"),
        ("assistant", "agent", "好的"),
        ("tool_call", "agent", "ls"),
        ("tool_result", "tool", "a.txt\n"),
        ("meta", "provider", "SUMMARY_CTX of the work"),
    ]
    assert all(e.ts is None for e in events(items)), "context.jsonl has no timestamps: none are invented"


@pytest.mark.parametrize(("generated", "source_"), [(False, "prompt"), (True, None)])
def test_titles(tmp_path: Path, generated: bool, source_: str | None) -> None:
    s = last_session(read(make_session(tmp_path, first_turn(), title="Fix the 测试", generated=generated)))
    assert (s.title, s.title_source) == ("Fix the 测试", source_)


def test_without_kimi_json_there_is_no_cwd(tmp_path: Path) -> None:
    s = last_session(read(make_session(tmp_path, first_turn(), kimi_json=False)))
    assert s.cwd is None and s.resume == f"kimi -r {SID}"


def test_a_remote_work_dir_maps_through_its_kaos_prefix(tmp_path: Path) -> None:
    import hashlib as h

    wd = "ssh_" + h.md5(b"/srv/app").hexdigest()
    make_session(tmp_path, first_turn())
    folder = session_dir(tmp_path, "remote-1", wd)
    write(folder / "wire.jsonl", first_turn())
    assert last_session(read(folder)).cwd == "/srv/app"


def test_render_call() -> None:
    assert render_call("Shell", '{"command": "echo 输出", "timeout": 5}') == "echo 输出"
    assert render_call("WriteFile", '{"path": "a", "content": "\\u6570\\u636e"}') == '{"path":"a","content":"数据"}'
    assert render_call("Shell", "{broken") == "{broken"
    deep = "[" * 100_000 + "]" * 100_000  # too deep to decode: kept as written, never a crash
    assert render_call("Shell", deep) == deep


# -- Kimi CLI: subagents -----------------------------------------------------------------------------


def test_a_subagent_folder_is_a_child_session_and_its_copies_in_the_parent_are_skipped(tmp_path: Path) -> None:
    inner = {"type": "ContentPart", "payload": {"type": "text", "text": "SUBREPLY_K1 from the child"}}
    folder = make_session(
        tmp_path,
        first_turn() + [wire(9, "SubagentEvent", agent_id="a1b2c3d4", parent_tool_call_id="call_9", event=inner)],
    )
    sub = folder / "subagents" / "a1b2c3d4"
    write(
        sub / "wire.jsonl",
        [
            META,
            wire(20, "TurnBegin", user_input="Summarise the failures SUBTASK_K1"),
            wire(21, "ContentPart", type="text", text="SUBREPLY_K1 from the child"),
        ],
    )
    (sub / "meta.json").write_text(
        json.dumps(
            {
                "agent_id": "a1b2c3d4",
                "subagent_type": "coder",
                "description": "Summarise failures",
                "status": "completed",
                "launch_spec": {"effective_model": "kimi-k2-turbo"},
            }
        )
    )
    assert not any("SUBREPLY_K1" in e.text for e in events(read(folder))), "the parent's copy is skipped"
    items = read(sub)
    assert got(items) == [
        ("user", "provider", "Summarise the failures SUBTASK_K1"),
        ("assistant", "agent", "SUBREPLY_K1 from the child"),
    ]
    s = last_session(items)
    assert s.id == f"kimi:{SID}/a1b2c3d4" and s.parent == f"kimi:{SID}" and s.cwd == CWD and s.model == "kimi-k2-turbo"
    assert (s.title, s.title_source) == ("Summarise failures", "agent") and s.resume == f"cd {CWD} && kimi -r {SID}"
    assert {Path(x.path).name for x in ADAPTER.discover({"HOME": str(tmp_path)})} == {SID, "a1b2c3d4"}


def test_subagent_events_without_a_folder_stay_with_the_parent(tmp_path: Path) -> None:
    inner = {"type": "TurnBegin", "payload": {"user_input": "the child's task"}}
    items = read(make_session(tmp_path, [META, wire(0, "SubagentEvent", agent_id="gone", event=inner)]))
    assert got(items) == [("user", "provider", "the child's task")]


# -- Kimi CLI: incremental reads ----------------------------------------------------------------------


def test_a_grown_folder_is_read_from_where_its_stream_stopped(tmp_path: Path) -> None:
    folder = make_session(tmp_path, first_turn())
    cursor = cursor_of(read(folder))
    append(
        folder / "wire.jsonl",
        [wire(20, "TurnBegin", user_input="第二轮 PROMPT2_K1"), wire(21, "ContentPart", type="text", text="NOTE_K1")],
    )
    again = read(folder, cursor)
    assert [i for i in again if isinstance(i, Partial)] == [Partial(session=f"kimi:{SID}", from_seq=6)]
    assert [(e.seq, e.text) for e in events(again)] == [(6, "第二轮 PROMPT2_K1"), (7, "NOTE_K1")]
    assert last_session(again).updated == T0 + 21
    full = read(folder)
    assert events(read(folder))[6:] == events(again) and last_session(full).tokens_in == last_session(again).tokens_in


def test_a_title_change_alone_reads_no_events(tmp_path: Path) -> None:
    folder = make_session(tmp_path, first_turn())
    cursor = cursor_of(read(folder))
    (folder / "state.json").write_text(json.dumps({"custom_title": "Renamed", "title_generated": True}))
    again = read(folder, cursor)
    assert [i for i in again if isinstance(i, Partial)] and not events(again)
    assert last_session(again).title == "Renamed"


def test_a_rewritten_stream_is_read_whole(tmp_path: Path) -> None:
    folder = make_session(tmp_path, first_turn())
    cursor = cursor_of(read(folder))
    write(folder / "wire.jsonl", first_turn("a different first prompt"))
    again = read(folder, cursor)
    assert not [i for i in again if isinstance(i, Partial)] and events(again)[0].seq == 0
    assert events(again)[0].text == "a different first prompt"


def test_a_truncated_last_line_waits_for_the_next_read(tmp_path: Path) -> None:
    tail = json.dumps(wire(20, "TurnBegin", user_input="late prompt")).encode()
    folder = session_dir(tmp_path)
    write(folder / "wire.jsonl", first_turn(), raw_tail=tail[:20])
    items = read(folder)
    assert len(events(items)) == 6
    with open(folder / "wire.jsonl", "ab") as fh:
        fh.write(tail[20:] + b"\n")
    assert [(e.seq, e.text) for e in events(read(folder, cursor_of(items)))] == [(6, "late prompt")]


def test_a_malformed_line_costs_only_itself(tmp_path: Path) -> None:
    lines = first_turn()
    items = read(make_session(tmp_path, [*lines[:3], b'{"timestamp": 1, "message": {\n', *lines[3:]]))
    assert len(events(items)) == 6 and len(notices(items)) == 1 and not notices(items)[0].fatal


def test_a_second_scan_through_the_cli_reads_only_the_new_turn(home: Path, run) -> None:
    folder = make_session(home, first_turn())
    assert run.json("scan", "--json")["events_added"] == 6
    append(folder / "wire.jsonl", [wire(20, "TurnBegin", user_input="第二轮 PROMPT2_KCLI")])
    second = run.json("scan", "--json")
    assert (second["changed"], second["events_added"], second["events_removed"]) == (1, 1, 0)
    hits = run.json("search", "PROMPT2_KCLI", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"], h["session_id"]) for h in hits] == [("user", "human", f"kimi:{SID}")]
    assert run.json("stats", "--json")["providers"]["kimi"]["events"] == 7


# -- where Voyager looks; what it never does -----------------------------------------------------------


def test_homes_and_their_precedence(tmp_path: Path) -> None:
    home = tmp_path / "h"
    for base, sid in ((home / ".kimi", "a"), (tmp_path / "share", "b"), (tmp_path / "voyager", "c")):
        write(base / "sessions" / MD5 / sid / "wire.jsonl", first_turn())
    write(home / ".kimi-code" / "sessions" / "wd_x" / "session_d" / "agents" / "main" / "wire.jsonl", [META])
    write(tmp_path / "code" / "sessions" / "wd_x" / "session_e" / "agents" / "main" / "wire.jsonl", [META])

    def found(env: dict[str, str]) -> set[str]:
        out = set()
        for s in ADAPTER.discover({"HOME": str(home), **env}):
            p = Path(s.path)
            out.add(p.parent.parent.name if p.name == "main" else p.name)
        return out

    assert found({}) == {"a", "session_d"}
    assert found({"KIMI_SHARE_DIR": str(tmp_path / "share")}) == {"b", "session_d"}
    assert found({"KIMI_SHARE_DIR": str(tmp_path / "share"), "VOYAGER_KIMI_HOME": str(tmp_path / "voyager")}) == {
        "c",
        "session_d",
    }
    assert found({"KIMI_CODE_HOME": str(tmp_path / "code")}) == {"a", "session_e"}
    assert found({"KIMI_CODE_HOME": str(tmp_path / "code"), "VOYAGER_KIMI_CODE_HOME": str(tmp_path / "none")}) == {"a"}


def test_folders_with_nothing_said_yet_are_not_sources(tmp_path: Path) -> None:
    folder = session_dir(tmp_path)
    folder.mkdir(parents=True)
    (folder / "state.json").write_text("{}")
    assert list(ADAPTER.discover({"HOME": str(tmp_path)})) == []


HOSTILE = ["x; rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "two words", "line\nbreak", "-rf"]


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_ids_and_cwds_are_quoted(evil: str) -> None:
    for code, flag in ((False, "-r"), (True, "--session")):
        command = resume_command(f"/tmp/{evil}", evil, code=code)
        if evil.startswith("-") and not flag.startswith("--"):
            assert command is None  # `-r -rf`: a short option has no form that keeps a dash id data (issue 38)
            continue
        assert command is not None
        assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0
        assert shlex.split(command) == ["cd", f"/tmp/{evil}", "&&", "kimi", *option_words(flag, evil)]


def test_reading_writes_nothing(tmp_path: Path) -> None:
    folder = make_session(tmp_path, first_turn())
    tree = lambda: {  # noqa: E731
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir"
        for p in sorted((tmp_path / ".kimi").rglob("*"))
    }
    before = tree()
    read(folder, cursor_of(read(folder)))
    assert tree() == before


# -- Kimi Code (documented layout) -------------------------------------------------------------------


CODE_SID = "session_4031c7d7-3497-4edf-8b5e-91d1e7b33228"
T1 = 1796200000000  # Kimi Code writes epoch milliseconds


def rec(n: int, kind: str, /, **payload: Any) -> dict[str, Any]:
    return {"type": kind, **payload, "time": T1 + n * 1000}


def user_msg(n: int, text: str, origin: Any = None, agent: str = "main") -> dict[str, Any]:
    message: dict[str, Any] = {"role": "user", "content": [{"type": "text", "text": text}], "toolCalls": []}
    if origin is not None:
        message["origin"] = origin
    return rec(n, "context.append_message", agentId=agent, message=message)


def loop(n: int, event: dict[str, Any], agent: str = "main") -> dict[str, Any]:
    return rec(n, "context.append_loop_event", agentId=agent, event=event)


def code_main() -> list[dict[str, Any]]:
    return [
        {"type": "metadata", "protocol_version": "1.5", "created_at": T1},
        rec(0, "config.update", agentId="main", modelAlias="kimi-k3", systemPrompt="SYSTEM_ONLY"),
        rec(1, "turn.prompt", agentId="main", input=[{"type": "text", "text": "修复登录 PROMPT_KC1"}], origin="user"),
        user_msg(1, "修复登录 PROMPT_KC1", {"kind": "user"}),
        user_msg(1, "<system-reminder>date is today</system-reminder>", {"kind": "injection"}),
        loop(2, {"type": "step.begin", "uuid": "s1", "turnId": "1", "step": 1}),
        loop(
            3,
            {"type": "content.part", "stepUuid": "s1", "part": {"type": "think", "think": "Look at auth.py THINK_KC1"}},
        ),
        loop(4, {"type": "content.part", "stepUuid": "s1", "part": {"type": "text", "text": "我看看代码。"}}),
        loop(
            5,
            {
                "type": "tool.call",
                "stepUuid": "s1",
                "toolCallId": "tc1",
                "name": "Bash",
                "args": {"command": "pytest tests/test_auth.py"},
            },
        ),
        loop(
            6,
            {"type": "tool.result", "toolCallId": "tc1", "result": {"output": "1 failed TOOLOUT_KC1", "isError": True}},
        ),
        loop(7, {"type": "step.end", "uuid": "s1", "finishReason": "tool_calls"}),
        rec(
            8,
            "usage.record",
            agentId="main",
            model="kimi-k3",
            usage={"inputOther": 10, "output": 5, "inputCacheRead": 0, "inputCacheCreation": 0},
        ),
        user_msg(9, "<bash-input>\ngit status\n</bash-input>", {"kind": "shell_command", "phase": "input"}),
        user_msg(
            9,
            "<bash-stdout>clean</bash-stdout><bash-stderr></bash-stderr>",
            {"kind": "shell_command", "phase": "output"},
        ),
        rec(10, "context.apply_compaction", agentId="main", summary="SUMMARY_KC1 login fixed", compactedCount=4),
        rec(11, "turn.ended", agentId="main", turnId=1, reason="completed"),
        rec(12, "holo.gram", agentId="main"),
    ]


def code_session(home: Path, state: dict[str, Any] | None = None) -> Path:
    kc = home / ".kimi-code"
    session = kc / "sessions" / "wd_proj_c52ddf65534b" / CODE_SID
    write(session / "agents" / "main" / "wire.jsonl", code_main())
    write(
        session / "agents" / "agent-1" / "wire.jsonl",
        [
            {"type": "metadata", "protocol_version": "1.5", "created_at": T1},
            user_msg(20, "Check the session store SUBTASK_KC1", {"kind": "user"}, agent="agent-1"),
            loop(
                21,
                {"type": "content.part", "stepUuid": "s9", "part": {"type": "text", "text": "store is fine"}},
                "agent-1",
            ),
        ],
    )
    (session / "state.json").write_text(
        json.dumps(
            state
            if state is not None
            else {
                "id": CODE_SID,
                "version": 2,
                "title": "修复登录 bug",
                "titleKind": "custom",
                "createdAt": T1,
                "updatedAt": T1 + 60000,
                "archived": False,
                "agents": {"main": {"type": "main"}, "agent-1": {"type": "sub", "parentAgentId": "main"}},
            },
            ensure_ascii=False,
        )
    )
    write(kc / "session_index.jsonl", [{"sessionId": CODE_SID, "sessionDir": str(session), "workDir": CWD}])
    return session


def test_kimi_code_main_agent(tmp_path: Path) -> None:
    session = code_session(tmp_path)
    items = read(session / "agents" / "main")
    assert got(items) == [
        ("user", "human", "修复登录 PROMPT_KC1"),
        ("meta", "provider", "<system-reminder>date is today</system-reminder>"),
        ("reasoning", "agent", "Look at auth.py THINK_KC1"),
        ("assistant", "agent", "我看看代码。"),
        ("tool_call", "agent", "pytest tests/test_auth.py"),
        ("tool_result", "tool", "1 failed TOOLOUT_KC1"),
        ("tool_call", "human", "git status"),
        ("tool_result", "tool", "clean"),
        ("meta", "provider", "SUMMARY_KC1 login fixed"),
    ]
    assert events(items)[5].is_error and events(items)[0].ts == pytest.approx((T1 + 1000) / 1000)
    [notice] = notices(items)
    assert "holo.gram" in notice.reason and "Kimi Code (wire protocol 1.5)" in notice.reason
    s = last_session(items)
    assert s.id == f"kimi:{CODE_SID}" and s.cwd == CWD and s.model == "kimi-k3"
    assert (s.title, s.title_source) == ("修复登录 bug", "user")
    assert s.resume == f"cd {CWD} && kimi --session {CODE_SID}"


def test_kimi_code_subagent(tmp_path: Path) -> None:
    items = read(code_session(tmp_path) / "agents" / "agent-1")
    assert got(items) == [
        ("user", "provider", "Check the session store SUBTASK_KC1"),
        ("assistant", "agent", "store is fine"),
    ]
    s = last_session(items)
    assert s.id == f"kimi:{CODE_SID}/agent-1" and s.parent == f"kimi:{CODE_SID}" and s.title is None
    assert s.resume == f"cd {CWD} && kimi --session {CODE_SID}"


def test_kimi_code_imported_sessions_are_not_read_twice(tmp_path: Path) -> None:
    session = code_session(tmp_path, {"title": "x", "custom": {"imported_from_kimi_cli": True}})
    assert not events(read(session / "agents" / "main"))


def test_kimi_code_a_forked_agent_skips_the_history_it_was_given(tmp_path: Path) -> None:
    session = code_session(
        tmp_path,
        {
            "title": "fork",
            "titleKind": "generated",
            "forkedFrom": "session_origin",
            "agents": {"main": {"type": "main"}},
        },
    )
    lines = [
        {"type": "metadata", "protocol_version": "1.5"},
        user_msg(0, "copied prompt from the origin"),
        loop(1, {"type": "content.part", "stepUuid": "s0", "part": {"type": "text", "text": "copied reply"}}),
        rec(2, "turn.prompt", agentId="main", input=[], origin="user"),
        user_msg(2, "the fork's own prompt"),
    ]
    write(session / "agents" / "main" / "wire.jsonl", lines)
    items = read(session / "agents" / "main")
    assert got(items) == [("user", "human", "the fork's own prompt")]
    s = last_session(items)
    assert s.parent == "kimi:session_origin" and s.title_source == "agent"


def test_kimi_code_through_the_cli(home: Path, run) -> None:
    code_session(home)
    doc = run.json("scan", "--json")
    assert doc["sessions"] == 2 and doc["failed"] == 0
    hits = run.json("search", "PROMPT_KC1", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"]) for h in hits] == [("user", "human")]
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    assert sessions[f"kimi:{CODE_SID}/agent-1"]["parent"] == f"kimi:{CODE_SID}"
    assert any(h["kind"] == "title" for h in run.json("search", "登录", "--json", "--no-refresh")["hits"])


def test_side_files_nested_too_deeply_cost_only_what_they_say(tmp_path: Path) -> None:
    # kimi.json and state.json are read whole: 1,000 levels of nesting in either raised RecursionError
    # out of the read ("adapter error", every event lost); now the deep value alone is skipped.
    folder = make_session(tmp_path, first_turn(), title="Fix the 测试")
    deep = "[" * 1000 + "]" * 1000
    kimi_json = tmp_path / ".kimi" / "kimi.json"
    kimi_json.write_text(kimi_json.read_text()[:-1] + f', "recent": {deep}}}')
    state = folder / "state.json"
    state.write_text(state.read_text()[:-1] + f', "todos_deep": {deep}}}')
    items = read(folder)
    s = last_session(items)
    assert (s.cwd, s.title) == (CWD, "Fix the 测试") and "PROMPT_K1" in " ".join(e.text for e in events(items))


def test_arguments_nested_too_deeply_are_kept_as_written() -> None:
    deep = '{"command": ' + "[" * 1000 + "]" * 1000 + "}"  # RecursionError escaped the read before
    assert render_call("Shell", deep) == deep


def test_a_wire_message_whose_type_is_a_list_or_an_object_is_named_not_fatal(tmp_path: Path) -> None:
    # `kind not in _WIRE_SKIPPED` raised TypeError (unhashable) out of the read: the session lost.
    odd = [wire(20, "x"), wire(21, "x")]
    odd[0]["message"]["type"], odd[1]["message"]["type"] = ["TurnBegin"], {"t": 1}
    items = read(make_session(tmp_path, first_turn() + odd))
    assert "PROMPT_K1" in " ".join(e.text for e in events(items)) and len(notices(items)) == 1


def test_kimi_code_records_of_the_wrong_shape_cost_only_themselves(tmp_path: Path) -> None:
    # A record type that is a list or object (unhashable) and toolCalls that are a number (iterated) both
    # raised TypeError out of the read: every event of the agent lost.
    session = code_session(tmp_path)
    odd_call = user_msg(30, "x")
    odd_call["message"].update(role="assistant", toolCalls=7)
    append(session / "agents" / "main" / "wire.jsonl", [{"type": ["turn.prompt"]}, {"type": {"t": 1}}, odd_call])
    items = read(session / "agents" / "main")
    assert got(items)[0] == ("user", "human", "修复登录 PROMPT_KC1") and ("assistant", "agent", "x") in got(items)


# -- Kimi Work (the desktop app; documented, agentsview `kimi_work_provider.go`) -----------------------------

WORK = Path(".config/kimi-desktop/daimon-share/daimon/runtime/kimi-code/home/sessions/wd_proj_9f8e7d6c")


def work_main() -> list[dict[str, Any]]:
    return [
        {"type": "metadata", "protocol_version": "1.5", "created_at": T1},
        user_msg(1, "整理会议纪要 PROMPT_KW", {"kind": "user"}),
        loop(2, {"type": "content.part", "stepUuid": "s1", "part": {"type": "think", "think": "先读文件 THINK_KW"}}),
        loop(
            3,
            {
                "type": "tool.call",
                "stepUuid": "s1",
                "toolCallId": "tw1",
                "name": "Bash",
                "args": {"command": "cat 纪要_kw.md"},
            },
        ),
        loop(4, {"type": "tool.result", "toolCallId": "tw1", "result": {"output": "TOOLOUT_KW", "isError": False}}),
        loop(
            5,
            {
                "type": "content.part",
                "stepUuid": "s2",
                "part": {"type": "text", "text": "已整理 REPLY_KW。한국어: 완료"},
            },
        ),
    ]


def test_kimi_work_conversations_hold_to_the_contract(home: Path, run) -> None:
    from tests.support.documented import check_sample

    write(home / WORK / "conv-7a1b" / "agents" / "main" / "wire.jsonl", work_main())
    # The app's own runs beside the conversations (a title, a skill summary) are not a person's.
    write(
        home / WORK / "ctitle-7a1b" / "agents" / "main" / "wire.jsonl",
        [user_msg(1, "Title this APPRUN_KW", {"kind": "user"})],
    )
    write(home / WORK / "sklsum-1" / "wire.jsonl", first_turn("summarise APPRUN2_KW"))
    markers = {
        "prompt": ["整理会议纪要 PROMPT_KW"],
        "thinking": ["THINK_KW"],
        "call": ["cat 纪要_kw.md"],
        "result": ["TOOLOUT_KW"],
        "reply": ["REPLY_KW"],
        "absent": ["APPRUN_KW", "APPRUN2_KW"],
    }
    check_sample(run, home, "kimi", markers)
    (row,) = run.json("list", "--json")["sessions"]
    assert row["session_id"] == "kimi:conv-7a1b" and row["resume"] is None  # the desktop app has no command


def test_kimi_works_older_layout_is_a_wire_log_in_the_conversation_folder(tmp_path: Path) -> None:
    home = tmp_path / "h"
    write(home / WORK / "conv-old" / "wire.jsonl", first_turn("旧版 PROMPT_KWOLD"))
    (source,) = [s for s in ADAPTER.discover({"HOME": str(home)}) if isinstance(s, Source)]
    items = read(Path(source.path))
    assert ("user", "human", "旧版 PROMPT_KWOLD") in got(items)
    assert last_session(items).resume is None and last_session(items).native_id == "conv-old"


def test_kimi_works_places(tmp_path: Path) -> None:
    from voyager_sessions.ingest.adapters.kimi import work_dirs

    roots = work_dirs({"HOME": str(tmp_path)})
    if sys.platform.startswith("linux"):
        assert roots == [
            tmp_path / ".config/kimi-desktop" / WORK_SESSIONS,
            tmp_path / ".local/share/kimi-desktop" / WORK_SESSIONS,
        ]
    assert work_dirs({"HOME": "/h", "VOYAGER_KIMI_WORK_HOME": "/w"}) == [Path("/w")]
    assert ADAPTER.roots({"HOME": "/h", "VOYAGER_KIMI_WORK_HOME": "/w"})[-1] == Path("/w")
