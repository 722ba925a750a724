"""The Claude Code adapter against transcripts built here, line by line, from invented content."""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import append, cursor_of, events, last_session, notices, write
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Cursor, Notice, Source, fingerprint
from voyager_sessions.ingest.adapters.claude import ADAPTER

SID = "5f0c2a9e-1b7d-4c3e-9a21-7e6d5c4b3a20"
CWD = "/home/dev/inventory api"
PROJECT = "-home-dev-inventory-api"


# -- builders ----------------------------------------------------------------------------


def base(n: int, **extra: Any) -> dict[str, Any]:
    """The fields every conversational line carries; ``n`` orders uuids and timestamps."""
    line = {
        "parentUuid": f"u-{n - 1}" if n > 1 else None,
        "isSidechain": False,
        "userType": "external",
        "cwd": CWD,
        "sessionId": SID,
        "version": "2.0.14",
        "gitBranch": "fix/parser",
        "uuid": f"u-{n}",
        "timestamp": f"2026-11-02T09:00:{n:02d}.500Z",
    }
    line.update(extra)
    return line


def user(n: int, content: Any, **extra: Any) -> dict[str, Any]:
    return base(n, type="user", message={"role": "user", "content": content}, **extra)


def assistant(
    n: int,
    *blocks: dict[str, Any],
    model: str = "claude-sonnet-4-5-20250929",
    msg_id: str | None = None,
    usage: dict[str, int] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    message = {
        "model": model,
        "id": msg_id or f"msg_{n}",
        "type": "message",
        "role": "assistant",
        "content": list(blocks),
        "stop_reason": None,
        "stop_sequence": None,
        "usage": usage
        or {"input_tokens": 10, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0, "output_tokens": 5},
    }
    return base(n, type="assistant", message=message, **extra)


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def tool_use(call_id: str, name: str, tool_input: dict[str, Any]) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": name, "input": tool_input}


def tool_result(call_id: str, content: Any, is_error: bool = False) -> dict[str, Any]:
    return {"tool_use_id": call_id, "type": "tool_result", "content": content, "is_error": is_error}


def source(path: Path) -> Source:
    return Source(provider="claude", path=str(path), fingerprint=fingerprint(path), append_only=True)


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    return list(ADAPTER.read(source(path), cursor))


@pytest.fixture
def projects(tmp_path: Path) -> Path:
    return tmp_path / "claude" / "projects"


def session_file(projects: Path) -> Path:
    return projects / PROJECT / f"{SID}.jsonl"


def debugging_session() -> list[dict[str, Any]]:
    """A short, typical session: prompt, thinking, a Bash call that fails, a Read, a fix."""
    return [
        {"type": "file-history-snapshot", "messageId": "u-0", "snapshot": {"trackedFileBackups": {}}},
        user(1, "pytest fails with a TypeError in parse_config_v2, can you look?"),
        assistant(
            2, {"type": "thinking", "thinking": "Run the failing test first.", "signature": "sig"}, msg_id="msg_a"
        ),
        assistant(3, text("Let me run the test."), msg_id="msg_a"),
        assistant(
            4,
            tool_use("toolu_1", "Bash", {"command": "pytest -q tests/test_config.py", "description": "run"}),
            msg_id="msg_a",
        ),
        user(
            5,
            [tool_result("toolu_1", "E   TypeError: unsupported operand type(s) for +: 'int' and 'str'", True)],
            toolUseResult="Error: Exit code 1",
        ),
        assistant(6, tool_use("toolu_2", "Read", {"file_path": "/home/dev/src/配置.py"}), msg_id="msg_b"),
        user(7, [tool_result("toolu_2", [text("def parse_config_v2(raw):"), {"type": "image", "source": {}}])]),
        assistant(
            8, {"type": "redacted_thinking", "data": "xxxx"}, text("Fixed: cast the port to int."), msg_id="msg_c"
        ),
    ]


# -- discovery ---------------------------------------------------------------------------------


def test_discover_finds_sessions_and_both_subagent_layouts(tmp_path: Path, projects: Path) -> None:
    main = write(session_file(projects), [user(1, "hi")])
    beside = write(projects / PROJECT / "agent-a1b2.jsonl", [user(1, "task")])
    nested = write(projects / PROJECT / SID / "subagents" / "agent-c3d4.jsonl", [user(1, "task")])
    write(projects / PROJECT / "sessions-index.json", [])  # not a transcript
    env = {"CLAUDE_CONFIG_DIR": str(tmp_path / "claude"), "HOME": str(tmp_path / "nohome")}

    assert ADAPTER.roots(env) == [projects]
    found = list(ADAPTER.discover(env))
    assert all(isinstance(s, Source) and s.append_only and s.provider == "claude" for s in found)
    assert {s.path for s in found} == {str(main), str(beside), str(nested)}


def test_discover_without_a_claude_home_finds_nothing(tmp_path: Path) -> None:
    assert list(ADAPTER.discover({"HOME": str(tmp_path)})) == []


# -- mapping ---------------------------------------------------------------------------------------


def test_kinds_origins_and_tool_pairing(projects: Path) -> None:
    items = read(write(session_file(projects), debugging_session()))
    got = [(e.seq, e.kind, e.origin, e.text, e.tool, e.call_id, e.exit_code, e.is_error) for e in events(items)]
    assert got == [
        (
            0,
            "user",
            "human",
            "pytest fails with a TypeError in parse_config_v2, can you look?",
            None,
            None,
            None,
            False,
        ),
        (1, "reasoning", "agent", "Run the failing test first.", None, None, None, False),
        (2, "assistant", "agent", "Let me run the test.", None, None, None, False),
        # The command line, then the call's description as a comment (the one rule, docs/json.md).
        (3, "tool_call", "agent", "pytest -q tests/test_config.py\n# run", "Bash", "toolu_1", None, False),
        # Claude records no exit code: a failed result keeps is_error and exit_code None.
        (
            4,
            "tool_result",
            "tool",
            "E   TypeError: unsupported operand type(s) for +: 'int' and 'str'",
            None,
            "toolu_1",
            None,
            True,
        ),
        (5, "tool_call", "agent", '{"file_path":"/home/dev/src/配置.py"}', "Read", "toolu_2", None, False),
        (6, "tool_result", "tool", "def parse_config_v2(raw):", None, "toolu_2", None, False),
        (7, "assistant", "agent", "Fixed: cast the port to int.", None, None, None, False),
    ]
    assert notices(items) == []
    first = events(items)[0]
    assert first.session == f"claude:{SID}"
    assert first.ts == pytest.approx(1793610001.5)


@pytest.mark.parametrize(
    "line",
    [
        user(1, "Caveat: the messages below were generated by local commands.", isMeta=True),
        user(1, "This session is being continued from a previous conversation. Summary: ...", isCompactSummary=True),
        user(1, "<command-name>/clear</command-name>\n<command-message>clear</command-message>"),
        user(1, "<local-command-stdout>Set model to opus</local-command-stdout>"),
        user(1, [text("<system-reminder>The user opened config.py</system-reminder>")]),
        user(1, [text("[Request interrupted by user for tool use]")]),
    ],
    ids=["isMeta", "compact-summary", "command-name", "local-stdout", "system-reminder", "interrupt"],
)
def test_injected_user_lines_are_provider_meta(projects: Path, line: dict[str, Any]) -> None:
    [event] = events(read(write(session_file(projects), [line])))
    assert (event.kind, event.origin) == ("meta", "provider")


def test_text_blocks_beside_images_are_prompts(projects: Path) -> None:
    line = user(
        1, [{"type": "image", "source": {"type": "base64", "data": "AAAA"}}, text("what is in this screenshot?")]
    )
    [event] = events(read(write(session_file(projects), [line])))
    assert (event.kind, event.origin, event.text) == ("user", "human", "what is in this screenshot?")


def test_unknown_and_broken_lines_are_skipped_and_unknown_kinds_named(projects: Path) -> None:
    lines = [
        {"type": "file-history-snapshot", "snapshot": {}},
        base(1, type="system", subtype="compact_boundary", content="Conversation compacted"),
        base(2, type="brand-new-type", payload={"x": 1}),
        base(3, type="user"),  # no message
        base(4, type="assistant", message="not an object"),
        [1, 2, 3],
        "just a string",
        user(5, [{"type": "tool_result"}]),  # no content at all: nothing to find
        user(6, "   "),
        assistant(7, text("")),
        user(8, "the one real prompt"),
    ]
    items = read(write(session_file(projects), lines))
    assert [(e.seq, e.text) for e in events(items)] == [(0, "the one real prompt")]
    # Known bookkeeping is skipped without a word; a record type Claude Code did not write
    # before is named once (never silently empty after a format change), with the version.
    [notice] = notices(items)
    assert "brand-new-type" in notice.reason and "Claude Code 2.0.14" in notice.reason and not notice.fatal


def test_synthetic_assistant_messages_are_provider_meta(projects: Path) -> None:
    lines = [
        user(1, "hello"),
        assistant(2, text("real answer")),
        assistant(3, text("API Error: 529 overloaded"), model="<synthetic>", isApiErrorMessage=True),
    ]
    items = read(write(session_file(projects), lines))
    assert [(e.kind, e.origin) for e in events(items)] == [
        ("user", "human"),
        ("assistant", "agent"),
        ("meta", "provider"),
    ]
    assert last_session(items).model == "claude-sonnet-4-5-20250929"


def test_tool_input_rendering_keeps_full_content(projects: Path) -> None:
    long_body = "x = 1\n" * 2000
    lines = [
        assistant(
            1,
            tool_use("t1", "Write", {"file_path": "a.py", "content": long_body}),
            tool_use("t2", "Bash", {"command": "ls -la"}),
            tool_use("t3", "TodoWrite", {}),
        )
    ]
    calls = events(read(write(session_file(projects), lines)))
    assert json.loads(calls[0].text) == {"file_path": "a.py", "content": long_body}
    assert calls[1].text == "ls -la"
    assert calls[2].text == "TodoWrite"  # no arguments: the tool's name (the one rule, docs/json.md)


# -- the session -------------------------------------------------------------------------------------


def test_session_fields(projects: Path) -> None:
    lines = debugging_session()
    lines[-1]["gitBranch"] = "main"
    items = read(write(session_file(projects), lines))
    first = [i for i in items if isinstance(i, Session)][0]
    assert items.index(first) < items.index(events(items)[0]), "the Session comes before its events"
    s = last_session(items)
    assert s.id == f"claude:{SID}" and s.provider == "claude" and s.native_id == SID
    assert s.cwd == CWD
    assert s.git_branch == "main"
    assert s.model == "claude-sonnet-4-5-20250929"
    assert s.started == pytest.approx(1793610001.5) and s.updated == pytest.approx(1793610008.5)
    assert s.resume == f"cd '{CWD}' && claude --resume {SID}"
    assert s.source == str(session_file(projects))
    assert s.parent is None and s.title is None
    # Usage repeated on the split lines of msg_a counts once: three API messages of 10 in / 5 out.
    assert (s.tokens_in, s.tokens_out) == (30, 15)


def test_resume_without_cwd(projects: Path) -> None:
    line = user(1, "hi")
    del line["cwd"]
    assert last_session(read(write(session_file(projects), [line]))).resume == f"claude --resume {SID}"


def test_title_from_summary_line(projects: Path) -> None:
    lines = [{"type": "summary", "summary": "Fix TypeError in parse_config_v2", "leafUuid": "u-9"}, user(1, "hi")]
    items = read(write(session_file(projects), lines))
    assert all(s.title == "Fix TypeError in parse_config_v2" for s in items if isinstance(s, Session))


def test_title_from_a_summary_line_at_the_end_updates_the_session(projects: Path) -> None:
    lines = [user(1, "hi"), {"type": "summary", "summary": "Later title", "leafUuid": "u-1"}]
    items = read(write(session_file(projects), lines))
    sessions = [i for i in items if isinstance(i, Session)]
    assert sessions[0].title is None and sessions[-1].title == "Later title"


def test_an_ai_title_line_is_the_generated_title_and_no_unknown_record(projects: Path) -> None:
    lines = [user(1, "hi"), {"type": "ai-title", "aiTitle": " 配置解析修复 ", "sessionId": SID}]
    items = read(write(session_file(projects), lines))
    assert last_session(items).title == "配置解析修复" and last_session(items).title_source == "agent"
    assert not notices(items)


def test_title_from_sessions_index_wins(projects: Path) -> None:
    path = write(session_file(projects), [{"type": "summary", "summary": "old", "leafUuid": "x"}, user(1, "hi")])
    index = {
        "version": 1,
        "entries": [
            {"sessionId": "someone-else", "summary": "not this", "modified": "2026-11-02T09:00:00Z"},
            {
                "sessionId": SID,
                "summary": "Renamed: config parser",
                "modified": "2026-11-02T09:00:00Z",
                "fileMtime": 1793610000000,
            },
        ],
    }
    (path.parent / "sessions-index.json").write_text(json.dumps(index))
    assert last_session(read(path)).title == "Renamed: config parser"


@pytest.mark.parametrize(
    "content", ["{not json", "[]", '{"entries": "nope"}', '{"entries": [1, {"sessionId": 3}]}', ""]
)
def test_a_corrupt_sessions_index_is_no_error(projects: Path, content: str) -> None:
    path = write(
        session_file(projects), [{"type": "summary", "summary": "from the file", "leafUuid": "x"}, user(1, "hi")]
    )
    (path.parent / "sessions-index.json").write_text(content)
    items = read(path)
    assert last_session(items).title == "from the file"
    assert notices(items) == []


def test_subagent_beside_the_session(projects: Path) -> None:
    lines = [
        user(1, "Search the repo for every call of parse_config_v2", isSidechain=True, agentId="a1b2"),
        assistant(2, tool_use("t1", "Grep", {"pattern": "parse_config_v2"}), isSidechain=True, agentId="a1b2"),
        user(3, [tool_result("t1", "src/config.py:12")], isSidechain=True, agentId="a1b2"),
        assistant(4, text("Found one call."), isSidechain=True, agentId="a1b2"),
    ]
    items = read(write(projects / PROJECT / "agent-a1b2.jsonl", lines))
    s = last_session(items)
    assert (s.id, s.native_id, s.parent) == ("claude:agent-a1b2", "agent-a1b2", f"claude:{SID}")
    # The parent agent wrote the prompt, not a person.
    assert [(e.kind, e.origin) for e in events(items)] == [
        ("user", "provider"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
    ]
    assert all(e.session == "claude:agent-a1b2" for e in events(items))
    assert s.resume == f"cd '{CWD}' && claude --resume {SID}", "a subagent is resumed through its parent"


def test_subagent_in_the_nested_layout_takes_its_parent_from_the_directory(projects: Path) -> None:
    line = user(1, "Summarise the failing tests", isSidechain=True)
    del line["sessionId"]
    items = read(write(projects / PROJECT / SID / "subagents" / "agent-c3d4.jsonl", [line]))
    s = last_session(items)
    assert (s.native_id, s.parent) == ("agent-c3d4", f"claude:{SID}")
    assert [(e.kind, e.origin) for e in events(items)] == [("user", "provider")]


def test_sidechain_lines_inside_a_main_file_are_not_human(projects: Path) -> None:
    lines = [user(1, "the person's prompt"), user(2, "the agent's task prompt", isSidechain=True)]
    assert [e.origin for e in events(read(write(session_file(projects), lines)))] == ["human", "provider"]


# -- streaming contract: seq, cursor, resume -------------------------------------------------------


def test_seq_is_stable_across_reads(projects: Path) -> None:
    path = write(session_file(projects), debugging_session())
    assert read(path) == read(path)
    assert [e.seq for e in events(read(path))] == list(range(8))


def test_resume_after_append_yields_only_new_events(projects: Path) -> None:
    path = write(session_file(projects), debugging_session())
    first = read(path)
    cursor = cursor_of(first)
    assert cursor.offset == path.stat().st_size and cursor.next_seq == 8 and cursor.session == f"claude:{SID}"

    append(
        path, [user(9, "now run the whole suite"), assistant(10, text("All 42 tests pass."), model="claude-opus-4-1")]
    )
    again = read(path, cursor)
    assert [(e.seq, e.text) for e in events(again)] == [(8, "now run the whole suite"), (9, "All 42 tests pass.")]
    s = last_session(again)
    assert s.id == f"claude:{SID}" and s.cwd == CWD, "the session is described from the cursor state"
    assert s.model == "claude-opus-4-1" and s.updated == pytest.approx(1793610010.5)
    assert (s.tokens_in, s.tokens_out) == (40, 20)
    assert cursor_of(again).next_seq == 10
    # Reading in two steps gives what one full read gives.
    full = read(path)
    assert events(first) + events(again) == events(full)
    assert last_session(again) == last_session(full)


def test_resume_with_nothing_new_keeps_the_cursor(projects: Path) -> None:
    path = write(session_file(projects), debugging_session())
    cursor = cursor_of(read(path))
    again = read(path, cursor)
    assert events(again) == [] and cursor_of(again) == cursor


def test_a_malformed_line_is_named_and_the_rest_comes_through(projects: Path) -> None:
    path = write(session_file(projects), [user(1, "first"), b'{"type": "user", "message": {oops\n', user(3, "third")])
    items = read(path)
    assert [e.text for e in events(items)] == ["first", "third"]
    [notice] = notices(items)
    assert notice.where == "line 2" and not notice.fatal and notice.source == str(path)


def test_a_truncated_last_line_is_not_consumed(projects: Path) -> None:
    complete = json.dumps(user(2, "second")).encode()
    path = write(session_file(projects), [user(1, "first")], raw_tail=complete[:25])
    items = read(path)
    assert [e.text for e in events(items)] == ["first"]
    assert len(notices(items)) == 1 and not notices(items)[0].fatal
    cursor = cursor_of(items)
    assert cursor.offset == path.stat().st_size - 25 and cursor.next_seq == 1

    with open(path, "ab") as fh:  # the agent finishes the line
        fh.write(complete[25:] + b"\n")
    again = read(path, cursor)
    assert [(e.seq, e.text) for e in events(again)] == [(1, "second")]
    assert notices(again) == [] and cursor_of(again).offset == path.stat().st_size


def test_a_parseable_last_line_without_newline_is_read_but_not_consumed(projects: Path) -> None:
    path = write(session_file(projects), [user(1, "first")], raw_tail=json.dumps(user(2, "second")).encode())
    items = read(path)
    assert [(e.seq, e.text) for e in events(items)] == [(0, "first"), (1, "second")]
    cursor = cursor_of(items)
    assert cursor.next_seq == 1 and cursor.offset < path.stat().st_size
    # The next scan reads that line again and numbers it the same.
    assert [(e.seq, e.text) for e in events(read(path, cursor))] == [(1, "second")]


def test_a_binary_file_yields_nothing_but_notices(projects: Path) -> None:
    # Lines are judged one by one (a NUL is one bad line, not a bad file): a file of
    # binary data yields no session, only notices naming what was skipped.
    path = session_file(projects)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"SQLite format 3\x00" + bytes(range(256)) * 4)
    items = read(path)
    assert not events(items) and not [i for i in items if isinstance(i, Session)]
    notices = [i for i in items if isinstance(i, Notice)]
    assert notices and not any(n.fatal for n in notices)
    assert any("NUL" in n.reason for n in notices)


def test_a_vanished_file_is_a_fatal_notice(projects: Path) -> None:
    path = write(session_file(projects), [user(1, "hi")])
    src = source(path)
    path.unlink()
    items = list(ADAPTER.read(src))
    assert len(items) == 1 and items[0].fatal


def test_reading_leaves_files_byte_identical(projects: Path) -> None:
    path = write(session_file(projects), debugging_session())
    (path.parent / "sessions-index.json").write_text(json.dumps({"version": 1, "entries": []}))
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in path.parent.iterdir()}
    mtimes = {p: p.stat().st_mtime_ns for p in path.parent.iterdir()}
    read(path)
    read(path, cursor_of(read(path)))
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in path.parent.iterdir()} == before
    assert {p: p.stat().st_mtime_ns for p in path.parent.iterdir()} == mtimes


def test_a_file_with_only_a_summary_yields_no_session(projects: Path) -> None:
    items = read(write(session_file(projects), [{"type": "summary", "summary": "t", "leafUuid": "x"}]))
    assert Counter(type(i).__name__ for i in items) == Counter({"Cursor": 1})
    assert cursor_of(items).session is None


def test_a_subagents_report_is_tool_result_agent_read_at_once_or_in_two_reads(projects: Path) -> None:
    """The one rule (docs/json.md): an Agent/Task call's result is the subagent's report; the acknowledgement of a
    background launch is tool output, and the <task-notification> that brings that subagent's result is the
    report, paired with the call by its <tool-use-id>. A result appended after the read that saw its call is
    a report too: the pending call is kept in the cursor."""
    call = [
        user(1, "fix it with a subagent"),
        assistant(2, tool_use("toolu_sync", "Task", {"prompt": "look", "subagent_type": "general-purpose"})),
    ]
    rest = [
        user(3, [tool_result("toolu_sync", [text("SYNC_REPORT found it")])]),
        assistant(4, tool_use("toolu_bg", "Agent", {"prompt": "in the background"})),
        user(
            5,
            [tool_result("toolu_bg", [text("Async agent launched successfully.")])],
            toolUseResult={"isAsync": True, "status": "async_launched", "agentId": "a1"},
        ),
        user(
            6,
            "<task-notification>\n<task-id>a1</task-id>\n<tool-use-id>toolu_bg</tool-use-id>\n"
            '<status>completed</status>\n<summary>Agent "x" finished</summary>\n<result>BG_REPORT</result>\n'
            "</task-notification>",
        ),
    ]
    path = write(session_file(projects), call)
    first = read(path)
    assert "agent_calls" in cursor_of(first).state
    append(path, rest)
    split = events(first) + events(read(path, cursor_of(first)))
    whole = events(read(path))
    assert split == whole
    got = [(e.kind, e.origin, e.call_id) for e in whole if e.kind == "tool_result"]
    assert got == [
        ("tool_result", "agent", "toolu_sync"),  # the Task call's result: its report
        ("tool_result", "tool", "toolu_bg"),  # only the launch's acknowledgement
        ("tool_result", "agent", "toolu_bg"),  # the notification: the background subagent's report
    ]
    assert not [e for e in whole if e.kind == "meta"]
