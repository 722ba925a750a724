"""The GitHub Copilot CLI adapter against session logs built here, line by line, from invented content.

The shapes are those Copilot CLI 1.0.102 wrote in ``shared/fixtures/agents/copilot-1.0.102*``
(checked by ``test_captures.py``); these tests cover what the captures do not show:
subagent lines read on from a cursor, half-written and malformed lines, unknown record
types, renames, hostile ids and paths, where Voyager looks, and the legacy layout.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.shell import option_words
from tests.support.items import append, cursor_of, events, last_session, notices, write
from tests.support.samples.copilot import legacy_doc
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Partial, Source, fingerprint
from voyager_sessions.ingest.adapters.copilot import ADAPTER, resume_command

SID = "0c6f2d1e-5a4b-4c3d-9e8f-7a6b5c4d3e2f"
AGENT = "9a8b7c6d-1111-4222-8333-944455556666"
CWD = "/home/dev/billing api"


# -- builders ----------------------------------------------------------------------------


def rec(n: int, kind: str, data: dict[str, Any], agent: str | None = None) -> dict[str, Any]:
    line: dict[str, Any] = {
        "type": kind,
        "data": data,
        "id": f"ev-{n}",
        "timestamp": f"2026-11-03T10:00:{n:02d}.250Z",
        "parentId": f"ev-{n - 1}" if n else None,
    }
    if agent:
        line["agentId"] = agent
    return line


def start(n: int = 0, sid: str = SID, cwd: str = CWD) -> dict[str, Any]:
    return rec(
        n,
        "session.start",
        {
            "sessionId": sid,
            "version": 1,
            "producer": "copilot-agent",
            "copilotVersion": "1.0.102",
            "startTime": "2026-11-03T10:00:00.000Z",
            "selectedModel": "gpt-5.1",
            "context": {"cwd": cwd},
        },
    )


def prompt(n: int, text: str, agent: str | None = None, **extra: Any) -> dict[str, Any]:
    return rec(
        n,
        "user.message",
        {
            "content": text,
            "transformedContent": f"<current_datetime>x</current_datetime>\n\n{text} TRANSFORMED_ONLY",
            **extra,
        },
        agent,
    )


def reply(
    n: int, text: str, *calls: dict[str, Any], reasoning: str | None = None, agent: str | None = None
) -> dict[str, Any]:
    model = "claude-haiku-4.5" if agent else "gpt-5.1"
    data: dict[str, Any] = {"messageId": f"m-{n}", "model": model, "content": text, "toolRequests": list(calls)}
    if reasoning:
        data["reasoningText"] = reasoning
    return rec(n, "assistant.message", data, agent)


def call(call_id: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"toolCallId": call_id, "name": name, "arguments": arguments, "type": "function"}


def done(
    n: int, call_id: str, output: str, exit_code: int | None = 0, success: bool = True, agent: str | None = None
) -> dict[str, Any]:
    data: dict[str, Any] = {"toolCallId": call_id, "success": success, "result": {"content": output}}
    if exit_code is not None:
        data["shellExecution"] = {"exitCode": exit_code}
    return rec(n, "tool.execution_complete", data, agent)


def workspace(name: str | None = "修复账单导出 first prompt", user_named: bool = False, cwd: str = CWD) -> str:
    lines = [f"id: {SID}", f"cwd: {json.dumps(cwd)}", "client_name: github/cli"]
    if name is not None:
        lines.append(f"name: {json.dumps(name, ensure_ascii=False)}")
    lines += [
        f"user_named: {'true' if user_named else 'false'}",
        "created_at: 2026-11-03T09:59:59.000Z",
        "updated_at: 2026-11-03T10:00:30.000Z",
    ]
    return "\n".join(lines) + "\n"


def main_lines() -> list[dict[str, Any]]:
    return [
        start(0),
        prompt(1, "账单导出失败了 ERR_BILLING_EXPORT_77, 请检查"),
        rec(2, "system.message", {"role": "system", "content": "You are the GitHub Copilot CLI SYSTEM_PROMPT_TEXT"}),
        rec(3, "assistant.turn_start", {"turnId": "0"}),
        rec(4, "session.usage_record", {"usage": {"model": "gpt-5.1", "inputTokens": 100, "outputTokens": 20}}),
        reply(
            5,
            "我来看看。",
            call("call_1", "bash", {"command": "grep -rn export_csv src/", "description": "find it"}),
            reasoning="The exporter probably chokes on the MARMALADE_DELIMITER",
        ),
        rec(
            6,
            "tool.execution_start",
            {"toolCallId": "call_1", "toolName": "bash", "arguments": {"command": "grep -rn export_csv src/"}},
        ),
        done(7, "call_1", "src/export.py:12: def export_csv\n<shellId: 0 completed with exit code 1>", exit_code=1),
        reply(8, "", call("call_2", "view", {"path": "src/export.py"})),
        done(9, "call_2", "Path does not exist", exit_code=None, success=False),
        reply(10, "The delimiter was wrong; fixed in src/export.py."),
        rec(11, "assistant.turn_end", {"turnId": "1"}),
        rec(12, "session.shutdown", {"shutdownType": "routine", "modelMetrics": {}}),
    ]


def subagent_lines(first: int) -> list[dict[str, Any]]:
    n = first
    return [
        reply(
            n, "Delegating.", call("call_task", "task", {"prompt": "Look for SUB_TASK_PROMPT", "agent_type": "explore"})
        ),
        rec(
            n + 1,
            "subagent.started",
            {
                "toolCallId": "call_task",
                "agentName": "explore",
                "agentDisplayName": "Explore Agent",
                "agentDescription": "查找导出代码",
                "model": "claude-haiku-4.5",
            },
            AGENT,
        ),
        rec(n + 2, "subagent.configured", {"model": "claude-haiku-4.5"}, AGENT),
        prompt(n + 3, "Find where SUB_TASK_PROMPT lives", agent=AGENT, source=f"agent-{SID}"),
        rec(n + 4, "system.message", {"role": "system", "content": "explore agent system prompt"}, AGENT),
        rec(n + 5, "session.usage_record", {"usage": {"inputTokens": 7, "outputTokens": 3}}, AGENT),
        reply(
            n + 6,
            "",
            call("call_sub", "bash", {"command": "ls src/SUB_TOOL_DIR"}),
            reasoning="SUB_THINKING here",
            agent=AGENT,
        ),
        done(n + 7, "call_sub", "SUB_TOOL_OUTPUT export.py", agent=AGENT),
        reply(n + 8, "Found it: SUB_REPLY_TEXT", agent=AGENT),
        rec(n + 9, "subagent.completed", {"toolCallId": "call_task", "agentName": "explore"}, AGENT),
        done(n + 10, "call_task", "Found it: SUB_REPLY_TEXT", exit_code=None),
    ]


def write_session(root: Path, lines: list[Any], sid: str = SID, ws: str | None = None, raw_tail: bytes = b"") -> Path:
    folder = root / ".copilot" / "session-state" / sid
    path = write(folder / "events.jsonl", lines, raw_tail=raw_tail)
    if ws is not None:
        (folder / "workspace.yaml").write_text(ws, encoding="utf-8")
    return path


def source_of(path: Path) -> Source:
    return Source(provider="copilot", path=str(path), fingerprint=fingerprint(path), append_only=True)


def read(path: Path, cursor=None) -> list[Any]:
    return list(ADAPTER.read(source_of(path), cursor))


def by_session(items: list[Any]) -> dict[str, list[Any]]:
    out: dict[str, list[Any]] = {}
    for ev in events(items):
        out.setdefault(ev.session, []).append(ev)
    return out


def sessions(items: list[Any]) -> dict[str, Session]:
    out: dict[str, Session] = {}
    for s in items:
        if isinstance(s, Session):
            out[s.id] = s
    return out


# -- mapping ---------------------------------------------------------------------------------


def test_kinds_origins_and_what_is_skipped(tmp_path: Path) -> None:
    path = write_session(tmp_path, main_lines(), ws=workspace())
    items = read(path)
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [
        ("user", "human"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
    ]
    assert [e.seq for e in evs] == list(range(len(evs)))
    text = "\n".join(e.text for e in evs)
    assert "TRANSFORMED_ONLY" not in text and "SYSTEM_PROMPT_TEXT" not in text
    grep, view = evs[3], evs[5]
    assert (grep.text, grep.tool, grep.call_id) == ("grep -rn export_csv src/\n# find it", "bash", "call_1")
    assert view.tool == "view" and json.loads(view.text) == {"path": "src/export.py"}
    assert (evs[4].exit_code, evs[4].is_error, evs[4].call_id) == (1, False, "call_1")
    assert (evs[6].exit_code, evs[6].is_error) == (None, True)
    assert not notices(items)


def test_session_fields(tmp_path: Path) -> None:
    path = write_session(tmp_path, main_lines(), ws=workspace())
    s = last_session(read(path))
    assert s.id == f"copilot:{SID}" and s.native_id == SID and s.cwd == CWD and s.model == "gpt-5.1"
    assert (s.title, s.title_source) == ("修复账单导出 first prompt", "prompt")
    assert (s.tokens_in, s.tokens_out) == (100, 20)
    assert s.started is not None and s.updated is not None and s.started < s.updated
    assert s.resume == f"cd '{CWD}' && copilot --resume {SID}"
    assert s.source == str(path)


def test_a_renamed_session_has_the_users_title(tmp_path: Path) -> None:
    path = write_session(tmp_path, main_lines(), ws=workspace("Billing export fix", user_named=True))
    assert (last_session(read(path)).title, last_session(read(path)).title_source) == ("Billing export fix", "user")


def test_without_workspace_yaml_the_cwd_comes_from_the_log(tmp_path: Path) -> None:
    s = last_session(read(write_session(tmp_path, main_lines())))
    assert s.cwd == CWD and s.title is None


def test_a_malformed_workspace_yaml_is_named_and_the_log_still_read(tmp_path: Path) -> None:
    path = write_session(tmp_path, main_lines(), ws="name: 'never closed\nuser_named: true\n")
    items = read(path)
    assert len(events(items)) == 8
    named = [n for n in notices(items) if n.source.endswith("workspace.yaml")]
    assert named and not named[0].fatal and "unterminated" in named[0].reason
    assert last_session(items).title is None


def test_compaction_snapshots_are_skipped_and_the_summary_is_meta_once(tmp_path: Path) -> None:
    lines = main_lines() + [
        rec(13, "session.compaction_start", {"trigger": "manual"}),
        rec(
            14,
            "model.messages_snapshot",
            {"messages": [{"role": "user", "content": "账单导出失败了 ERR_BILLING_EXPORT_77"}]},
        ),
        rec(15, "model.response", {"response": {"content": "<summary>SUMMARY_OF_BILLING</summary>"}}),
        rec(
            16,
            "session.compaction_complete",
            {"success": True, "summaryContent": "<summary>SUMMARY_OF_BILLING</summary>"},
        ),
    ]
    evs = events(read(write_session(tmp_path, lines)))
    assert [e for e in evs if "ERR_BILLING_EXPORT_77" in e.text][0].kind == "user"
    assert len([e for e in evs if "ERR_BILLING_EXPORT_77" in e.text]) == 1
    summary = [e for e in evs if "SUMMARY_OF_BILLING" in e.text]
    assert [(e.kind, e.origin) for e in summary] == [("meta", "provider")]


def test_errors_and_warnings_are_provider_meta(tmp_path: Path) -> None:
    lines = [
        start(0),
        prompt(1, "hi"),
        rec(2, "session.error", {"errorType": "rate_limit", "message": "RATE_LIMITED_429"}),
    ]
    evs = events(read(write_session(tmp_path, lines)))
    assert [(e.kind, e.origin, e.text) for e in evs][-1] == ("meta", "provider", "RATE_LIMITED_429")


def test_a_user_message_an_agent_wrote_is_not_a_persons_prompt(tmp_path: Path) -> None:
    lines = [
        start(0),
        prompt(1, "typed by a person", source="user"),
        prompt(2, "written by an agent", source="agent-x"),
        prompt(3, "typed, from a source not documented", source="cli"),
    ]
    evs = events(read(write_session(tmp_path, lines)))
    assert [(e.kind, e.origin) for e in evs] == [("user", "human"), ("user", "provider"), ("user", "human")]


def test_unknown_and_broken_lines_are_skipped_and_unknown_kinds_named(tmp_path: Path) -> None:
    lines = [
        start(0),
        prompt(1, "before the junk"),
        b"{not json at all\n",
        rec(3, "session.hologram", {"x": 1}),
        rec(4, "session.hologram", {"x": 2}),
        ["a", "list"],
        reply(5, "after the junk"),
    ]
    items = read(write_session(tmp_path, lines))
    assert [e.text for e in events(items)] == ["before the junk", "after the junk"]
    reasons = " | ".join(n.reason for n in notices(items))
    assert "malformed JSON" in reasons
    assert "session.hologram ×2" in reasons and "GitHub Copilot CLI 1.0.102" in reasons


# -- subagents ---------------------------------------------------------------------------------


def test_subagent_lines_become_a_child_session(tmp_path: Path) -> None:
    path = write_session(tmp_path, main_lines()[:-1] + subagent_lines(12), ws=workspace())
    items = read(path)
    parts = by_session(items)
    main_id, child_id = f"copilot:{SID}", f"copilot:{SID}/{AGENT}"
    assert set(parts) == {main_id, child_id}
    child = parts[child_id]
    assert [(e.kind, e.origin) for e in child] == [
        ("user", "provider"),
        ("reasoning", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
    ]
    assert [e.seq for e in child] == list(range(5))
    assert child[2].text == "ls src/SUB_TOOL_DIR" and child[3].exit_code == 0
    main_text = "\n".join(e.text for e in parts[main_id])
    assert "SUB_THINKING" not in main_text and "SUB_TOOL_OUTPUT" not in main_text
    # The parent keeps its task call and the result the subagent returned to it.
    assert [e.kind for e in parts[main_id] if e.call_id == "call_task"] == ["tool_call", "tool_result"]
    s = sessions(items)
    assert s[child_id].parent == main_id and s[main_id].parent is None
    assert (s[child_id].title, s[child_id].title_source) == ("查找导出代码", "agent")
    assert s[child_id].model == "claude-haiku-4.5" and s[child_id].cwd == CWD
    assert (s[child_id].tokens_in, s[child_id].tokens_out) == (7, 3)
    assert (s[main_id].tokens_in, s[main_id].tokens_out) == (100, 20)  # the subagent's usage is its own
    assert s[child_id].resume == s[main_id].resume  # a subagent is resumed through its parent


def test_reading_on_from_a_cursor_keeps_routing_subagent_lines(tmp_path: Path) -> None:
    lines = main_lines()[:-1] + subagent_lines(12)
    path = write_session(tmp_path, lines[:17])  # stops inside the subagent's run
    first = read(path)
    cursor = cursor_of(first)
    assert cursor.state["agents"][AGENT]["seq"] == 1  # its prompt so far
    append(path, lines[17:] + [prompt(30, "second prompt T2_MARKER"), reply(31, "second answer")])
    second = read(path, cursor)
    parts = by_session(second)
    child_id = f"copilot:{SID}/{AGENT}"
    assert [e.seq for e in parts[child_id]] == [1, 2, 3, 4]
    assert [i for i in second if isinstance(i, Partial)] == [Partial(session=child_id, from_seq=1)]
    # What the two reads yield is exactly what one read of the whole file yields.
    whole = by_session(read(path))
    combined: dict[str, list[tuple]] = {}
    for part in (by_session(first), parts):
        for sid, evs in part.items():
            combined.setdefault(sid, []).extend((e.seq, e.kind, e.text) for e in evs)
    assert combined == {sid: [(e.seq, e.kind, e.text) for e in evs] for sid, evs in whole.items()}
    child = sessions(second)[child_id]
    assert child.parent == f"copilot:{SID}" and child.title == "查找导出代码"  # kept in the cursor


@pytest.mark.parametrize("cut", [0.5, 1.0])
def test_a_half_written_subagent_line_is_read_again_with_the_same_seq(tmp_path: Path, cut: float) -> None:
    """The last line of a live log may lack its newline (cut in half, or whole but unterminated):
    whatever it gave is not consumed, and the next read replaces it from the same seq."""
    lines = main_lines()[:-1] + subagent_lines(12)
    tail = json.dumps(lines[18], ensure_ascii=False).encode()
    path = write_session(tmp_path, lines[:18], raw_tail=tail[: int(len(tail) * cut)])
    first = read(path)
    child_id = f"copilot:{SID}/{AGENT}"
    got = [(e.seq, e.kind) for e in by_session(first)[child_id]]
    assert got == ([(0, "user")] if cut < 1 else [(0, "user"), (1, "reasoning"), (2, "tool_call")])
    assert cursor_of(first).state["agents"][AGENT]["seq"] == 1
    with open(path, "ab") as fh:
        fh.write(tail[int(len(tail) * cut) :] + b"\n")
    second = read(path, cursor_of(first))
    assert [i for i in second if isinstance(i, Partial)] == [Partial(session=child_id, from_seq=1)]
    assert [(e.seq, e.kind) for e in by_session(second)[child_id]] == [(1, "reasoning"), (2, "tool_call")]
    assert cursor_of(second).state["agents"][AGENT]["seq"] == 3


def test_scanning_twice_reads_only_what_was_appended(home: Path, run) -> None:
    lines = main_lines()[:-1] + subagent_lines(12)
    path = write_session(home, lines[:16], ws=workspace())
    first = json.loads(run("scan", "--json").stdout)
    assert first["new"] == 1 and first["failed"] == 0
    append(path, lines[16:] + [prompt(30, "second prompt T2_MARKER_77"), reply(31, "second answer")])
    second = json.loads(run("scan", "--json").stdout)
    assert (second["grown"], second["changed"], second["new"]) == (1, 0, 0)
    listed = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    child_id = f"copilot:{SID}/{AGENT}"
    assert listed[child_id]["parent"] == f"copilot:{SID}" and listed[child_id]["events"] == 5
    hits = run.json("search", "SUB_TOOL_OUTPUT", "--json", "--no-refresh")["hits"]
    assert {h["session_id"] for h in hits if h["kind"] == "tool_result"} == {child_id}
    assert [h["origin"] for h in run.json("search", "T2_MARKER_77", "--json", "--no-refresh")["hits"]] == ["human"]
    # Same index as a scan from scratch: no event lost, none twice.
    shown = {sid: run.json("show", sid, "--json") for sid in listed}
    (home / "voyager-data").rename(home / "old-data")
    run("scan", "--json")
    fresh = {sid: run.json("show", sid, "--json") for sid in listed}

    def content(doc: dict) -> list[tuple]:
        return [(e["seq"], e["kind"], e["origin"], e["text"]) for e in doc["events"]]

    assert {k: content(v) for k, v in shown.items()} == {k: content(v) for k, v in fresh.items()}


def test_a_subagent_line_scanned_before_its_newline_is_not_indexed_twice(home: Path, run) -> None:
    lines = main_lines()[:-1] + subagent_lines(12)
    tail = json.dumps(lines[18], ensure_ascii=False).encode()
    path = write_session(home, lines[:18], raw_tail=tail)  # whole, but its newline not written yet
    run("scan", "--json")
    assert len(run.json("search", "SUB_THINKING", "--json", "--no-refresh")["hits"]) == 1
    with open(path, "ab") as fh:
        fh.write(b"\n")
    append(path, lines[19:])
    assert json.loads(run("scan", "--json").stdout)["grown"] == 1
    assert len(run.json("search", "SUB_THINKING", "--json", "--no-refresh")["hits"]) == 1
    child = run.json("show", f"copilot:{SID}/{AGENT}", "--json")
    assert [e["seq"] for e in child["events"] if e["kind"] != "title"] == [0, 1, 2, 3, 4]


def test_a_rename_alone_is_picked_up_and_the_title_is_searchable(home: Path, run) -> None:
    path = write_session(home, main_lines(), ws=workspace())
    run("scan", "--json")
    assert run.json("search", "ZEBRA_RENAMED", "--json", "--no-refresh")["hits"] == []
    ws = path.parent / "workspace.yaml"
    ws.write_text(workspace("ZEBRA_RENAMED billing", user_named=True) + "# renamed\n", encoding="utf-8")
    summary = json.loads(run("scan", "--json").stdout)
    assert summary["grown"] + summary["changed"] == 1
    hits = run.json("search", "ZEBRA_RENAMED", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"]) for h in hits] == [("title", "human")]


# -- discovery, homes, hostile input, read-only ----------------------------------------------------


def test_discover_finds_session_logs_only(tmp_path: Path) -> None:
    write_session(tmp_path, main_lines(), ws=workspace())
    write_session(tmp_path, main_lines(), sid="other-session")
    folder = tmp_path / ".copilot" / "session-state" / SID
    write(folder / "checkpoints" / "events.jsonl", [start(0)])  # not a session log
    (folder / "rewind-file-snapshots").mkdir()
    env = {"HOME": str(tmp_path)}
    found = [s for s in ADAPTER.discover(env) if isinstance(s, Source)]
    assert sorted(Path(s.path).parent.name for s in found) == sorted([SID, "other-session"])
    assert all(s.append_only for s in found)
    with_ws = next(s for s in found if Path(s.path).parent.name == SID)
    assert with_ws.fingerprint.wal_size == (folder / "workspace.yaml").stat().st_size


def test_an_empty_store_finds_nothing_and_a_store_of_empty_folders_says_so(tmp_path: Path) -> None:
    env = {"HOME": str(tmp_path)}
    assert list(ADAPTER.discover(env)) == []
    (tmp_path / ".copilot" / "session-state").mkdir(parents=True)
    assert list(ADAPTER.discover(env)) == []
    (tmp_path / ".copilot" / "session-state" / SID).mkdir()
    (found,) = list(ADAPTER.discover(env))
    assert "none with an events.jsonl" in found.reason and "GitHub Copilot CLI" in found.reason


def test_an_empty_log_is_named(home: Path, run) -> None:
    write_session(home, [])
    res = run("scan", "--json")
    assert "empty file" in res.stderr


def test_where_it_looks(tmp_path: Path) -> None:
    home = str(tmp_path / "h")
    assert ADAPTER.roots({"HOME": home})[0] == Path(home) / ".copilot" / "session-state"
    assert ADAPTER.roots({"HOME": home, "COPILOT_HOME": "/opt/cop"})[0] == Path("/opt/cop/session-state")
    env = {"HOME": home, "COPILOT_HOME": "/opt/cop", "VOYAGER_COPILOT_HOME": "/srv/mine"}
    assert ADAPTER.roots(env) == [Path("/srv/mine/session-state"), Path("/srv/mine/history-session-state")]


def test_the_voyager_override_is_authoritative(tmp_path: Path) -> None:
    write_session(tmp_path / "default", main_lines())
    write_session(tmp_path / "theirs", main_lines())
    env = {
        "HOME": str(tmp_path / "default"),
        "COPILOT_HOME": str(tmp_path / "theirs" / ".copilot"),
        "VOYAGER_COPILOT_HOME": str(tmp_path / "nowhere"),
    }
    assert list(ADAPTER.discover(env)) == []
    env.pop("VOYAGER_COPILOT_HOME")
    (found,) = ADAPTER.discover(env)
    assert "theirs" in found.path  # type: ignore[union-attr]


HOSTILE_IDS = ["a;rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "with space", "new\nline", "-starts-with-dash"]


@pytest.mark.parametrize("sid", HOSTILE_IDS)
def test_resume_commands_survive_hostile_ids_and_paths(tmp_path: Path, sid: str) -> None:
    cwd = f"/tmp/x; echo $(id) `id` '{sid}'"
    path = write_session(tmp_path, [start(0, sid=sid, cwd=cwd), prompt(1, "hi")], sid=sid)
    s = last_session(read(path))
    assert s.native_id == sid and s.cwd == cwd
    assert shlex.split(s.resume) == ["cd", cwd, "&&", "copilot", *option_words("--resume", sid)]
    assert subprocess.run(["sh", "-n", "-c", s.resume], capture_output=True).returncode == 0
    assert shlex.split(resume_command(None, sid)) == ["copilot", *option_words("--resume", sid)]


def test_scanning_leaves_the_store_byte_identical(home: Path, run) -> None:
    path = write_session(home, main_lines()[:-1] + subagent_lines(12), ws=workspace())
    root = home / ".copilot"
    (root / "session-store.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)  # never opened

    def tree() -> dict[str, str]:
        return {
            str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
            for p in sorted(root.rglob("*"))
        }

    before = tree()
    assert run("scan", "--json").exit_code == 0
    append(path, [prompt(40, "more")])
    assert run("scan", "--json").exit_code == 0
    after = tree()
    assert {k: v for k, v in after.items() if not k.endswith("events.jsonl")} == {
        k: v for k, v in before.items() if not k.endswith("events.jsonl")
    }
    assert set(after) == set(before)


# -- the legacy layout --------------------------------------------------------------------------------


def test_legacy_history_session_state_documents(tmp_path: Path) -> None:
    legacy = tmp_path / ".copilot" / "history-session-state"
    legacy.mkdir(parents=True)
    (legacy / "legacy-0001.json").write_text(json.dumps(legacy_doc(), ensure_ascii=False), encoding="utf-8")
    (found,) = [s for s in ADAPTER.discover({"HOME": str(tmp_path)}) if isinstance(s, Source)]
    assert not found.append_only
    items = list(ADAPTER.read(found))
    assert [(e.kind, e.origin, e.text) for e in events(items)] == [
        ("user", "human", "旧版会话 LEGACY_PROMPT"),
        ("assistant", "agent", "Looking."),
        ("tool_call", "agent", "ls LEGACY_DIR"),
        ("tool_result", "tool", "LEGACY_TOOL_OUTPUT"),
        ("assistant", "agent", "LEGACY_REPLY"),
    ]
    assert events(items)[3].call_id == "tc1"
    s = last_session(items)
    assert s.id == "copilot:legacy-0001" and s.started is not None and s.updated - s.started == 300
    assert any("critic" in n.reason for n in notices(items))


def test_a_legacy_document_of_a_session_in_the_current_layout_is_not_read_twice(tmp_path: Path) -> None:
    write_session(tmp_path, main_lines())
    legacy = tmp_path / ".copilot" / "history-session-state"
    legacy.mkdir(parents=True)
    (legacy / f"{SID}.json").write_text(json.dumps(legacy_doc(SID)), encoding="utf-8")
    found = [s for s in ADAPTER.discover({"HOME": str(tmp_path)}) if isinstance(s, Source)]
    assert [Path(s.path).name for s in found] == ["events.jsonl"]


def test_a_legacy_file_that_is_no_session_is_named(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text(json.dumps({"sessionId": "x"}))
    items = list(ADAPTER.read(Source(provider="copilot", path=str(path), fingerprint=fingerprint(path))))
    assert [n.reason for n in notices(items)] == ["no chatMessages list: not a Copilot CLI session document"]


def test_a_tool_request_nested_too_deeply_is_kept_as_written() -> None:
    from voyager_sessions.ingest.adapters.copilot import render_call

    deep = "[" * 100_000 + "]" * 100_000  # msgspec's RecursionError must not escape the read
    assert render_call("bash", deep) == deep
    assert render_call("bash", '{"command": "ls -la"}') == "ls -la"
