"""The Codex adapter against rollouts built here, line by line, from invented content."""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.captures import Capture
from tests.support.items import append, cursor_of, events, last_session, notices, write
from voyager_sessions.core.model import Event, Session
from voyager_sessions.ingest.adapters.base import Cursor, Notice, Source, fingerprint
from voyager_sessions.ingest.adapters._codex_read import parse_output, render_call
from voyager_sessions.ingest.adapters.codex import ADAPTER

SID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"
CWD = "/home/dev/payments"
ENV_CONTEXT = (
    f"<environment_context>\n  <cwd>{CWD}</cwd>\n  <approval_policy>on-request</approval_policy>\n"
    "</environment_context>"
)
AGENTS_MD = "# AGENTS.md instructions for /home/dev/payments\n\n<INSTRUCTIONS>\nRun make test.\n</INSTRUCTIONS>"


# -- builders ----------------------------------------------------------------------------------


def env(n: int, kind: str, payload: dict[str, Any]) -> dict[str, Any]:
    return {"timestamp": f"2026-11-03T14:00:{n:02d}.250Z", "type": kind, "payload": payload}


def meta(n: int = 0, **extra: Any) -> dict[str, Any]:
    payload = {
        "id": SID,
        "timestamp": "2026-11-03T14:00:00.000Z",
        "cwd": CWD,
        "originator": "codex_cli_rs",
        "cli_version": "0.46.0",
        "instructions": None,
        "git": {"commit_hash": "ab12", "branch": "main", "repository_url": "git@example.com:dev/payments.git"},
    }
    payload.update(extra)
    return env(n, "session_meta", payload)


def msg(n: int, role: str, text: str) -> dict[str, Any]:
    block = "output_text" if role == "assistant" else "input_text"
    return env(n, "response_item", {"type": "message", "role": role, "content": [{"type": block, "text": text}]})


def prompt_event(n: int, text: str, **extra: Any) -> dict[str, Any]:
    return env(n, "event_msg", {"type": "user_message", "message": text, "images": [], **extra})


def call(n: int, call_id: str, command: str) -> dict[str, Any]:
    args = json.dumps({"command": ["bash", "-lc", command], "workdir": CWD})
    return env(n, "response_item", {"type": "function_call", "name": "shell", "arguments": args, "call_id": call_id})


def output(n: int, call_id: str, out: str) -> dict[str, Any]:
    return env(n, "response_item", {"type": "function_call_output", "call_id": call_id, "output": out})


def shell_out(text: str, code: int) -> str:
    return json.dumps({"output": text, "metadata": {"exit_code": code, "duration_seconds": 0.4}})


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    src = Source(provider="codex", path=str(path), fingerprint=fingerprint(path), append_only=True)
    return list(ADAPTER.read(src, cursor))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return tmp_path / "codex"


def rollout(home: Path, sid: str = SID) -> Path:
    return home / "sessions" / "2026" / "11" / "03" / f"rollout-2026-11-03T14-00-00-{sid}.jsonl"


def current_rollout() -> list[dict[str, Any]]:
    """A current rollout as Codex writes it: everything said twice, once per channel."""
    return [
        meta(0),
        msg(1, "developer", "<permissions instructions>sandboxed</permissions instructions>"),
        msg(1, "user", AGENTS_MD),
        msg(1, "user", ENV_CONTEXT),
        msg(2, "user", "the charge test fails with ERR_CONN_REFUSED_42"),
        prompt_event(2, "the charge test fails with ERR_CONN_REFUSED_42"),
        env(
            2, "turn_context", {"cwd": CWD, "approval_policy": "on-request", "model": "gpt-5-codex", "effort": "medium"}
        ),
        env(3, "event_msg", {"type": "token_count", "info": None, "rate_limits": None}),
        env(4, "event_msg", {"type": "agent_reasoning", "text": "**Reproducing**"}),
        env(
            4,
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "**Reproducing**"}],
                "content": None,
                "encrypted_content": "gAAAA",
            },
        ),
        call(5, "call_1", "pytest -q tests/test_charge.py"),
        output(6, "call_1", shell_out("E ConnectionError: ERR_CONN_REFUSED_42", 1)),
        env(
            6,
            "event_msg",
            {"type": "exec_command_end", "call_id": "call_1", "exit_code": 1, "stdout": "", "stderr": ""},
        ),
        env(
            7,
            "response_item",
            {
                "type": "custom_tool_call",
                "status": "completed",
                "call_id": "call_2",
                "name": "apply_patch",
                "input": "*** Begin Patch\n*** Update File: app.py\n*** End Patch",
            },
        ),
        env(
            8,
            "response_item",
            {
                "type": "custom_tool_call_output",
                "call_id": "call_2",
                "output": shell_out("Success. Updated the following files:\nM app.py", 0),
            },
        ),
        env(
            9,
            "response_item",
            {
                "type": "local_shell_call",
                "call_id": "call_3",
                "status": "completed",
                "action": {"type": "exec", "command": ["make", "test", "ARGS=-k charge"]},
            },
        ),
        output(10, "call_3", "Exit code: 2\nWall time: 1.2 seconds\nOutput:\nmake: *** [test] Error 2"),
        env(
            11,
            "response_item",
            {"type": "function_call", "name": "view_image", "arguments": '{"path":"shot.png"}', "call_id": "call_4"},
        ),
        output(12, "call_4", "image attached"),
        env(13, "event_msg", {"type": "agent_message", "message": "The mock server port was wrong; fixed."}),
        msg(13, "assistant", "The mock server port was wrong; fixed."),
        env(
            14,
            "event_msg",
            {
                "type": "token_count",
                "info": {
                    "total_token_usage": {"input_tokens": 9000, "cached_input_tokens": 4000, "output_tokens": 700},
                    "last_token_usage": {"input_tokens": 5000, "output_tokens": 400},
                },
                "rate_limits": None,
            },
        ),
        env(15, "brand_new_kind", {"anything": True}),
        env(15, "response_item", {"type": "ghost_snapshot", "commit": "abc"}),
    ]


# -- discovery -------------------------------------------------------------------------------------


def test_discover_sessions_and_archived(home: Path, tmp_path: Path) -> None:
    live = write(rollout(home), [meta()])
    archived = write(
        home / "archived_sessions" / "rollout-2026-10-01T08-00-00-0199a1b2-0000-7000-8000-000000000001.jsonl", [meta()]
    )
    write(home / "sessions" / "2026" / "11" / "03" / "notes.jsonl", [{}])  # not a rollout
    write(home / "history.jsonl", [{}])
    e = {"CODEX_HOME": str(home), "HOME": str(tmp_path / "nohome")}
    assert ADAPTER.roots(e) == [home / "sessions", home / "archived_sessions"]
    found = list(ADAPTER.discover(e))
    assert {s.path for s in found} == {str(live), str(archived)}
    assert all(isinstance(s, Source) and s.append_only and s.provider == "codex" for s in found)


# -- mapping ---------------------------------------------------------------------------------------


def test_current_rollout_mapping(home: Path) -> None:
    items = read(write(rollout(home), current_rollout()))
    got = [(e.kind, e.origin, e.text, e.tool, e.call_id, e.exit_code) for e in events(items)]
    assert got == [
        ("meta", "provider", "<permissions instructions>sandboxed</permissions instructions>", None, None, None),
        ("meta", "provider", AGENTS_MD, None, None, None),
        ("meta", "provider", ENV_CONTEXT, None, None, None),
        # The prompt once, from the event; its response_item copy is not a second turn.
        ("user", "human", "the charge test fails with ERR_CONN_REFUSED_42", None, None, None),
        # Reasoning once, from the response item; agent_reasoning is not repeated.
        ("reasoning", "agent", "**Reproducing**", None, None, None),
        ("tool_call", "agent", "pytest -q tests/test_charge.py", "shell", "call_1", None),
        ("tool_result", "tool", "E ConnectionError: ERR_CONN_REFUSED_42", None, "call_1", 1),
        (
            "tool_call",
            "agent",
            "*** Begin Patch\n*** Update File: app.py\n*** End Patch",
            "apply_patch",
            "call_2",
            None,
        ),
        ("tool_result", "tool", "Success. Updated the following files:\nM app.py", None, "call_2", 0),
        ("tool_call", "agent", "make test 'ARGS=-k charge'", "local_shell", "call_3", None),
        (
            "tool_result",
            "tool",
            "Exit code: 2\nWall time: 1.2 seconds\nOutput:\nmake: *** [test] Error 2",
            None,
            "call_3",
            2,
        ),
        ("tool_call", "agent", '{"path":"shot.png"}', "view_image", "call_4", None),
        # No exit code recorded: None, not 0.
        ("tool_result", "tool", "image attached", None, "call_4", None),
        # The assistant once, from the response item.
        ("assistant", "agent", "The mock server port was wrong; fixed.", None, None, None),
    ]
    assert [e.seq for e in events(items)] == list(range(14))
    assert all(e.session == f"codex:{SID}" for e in events(items))
    assert not any(e.is_error for e in events(items))
    # The one envelope type Codex never wrote before is named (a format change is never silent).
    [notice] = notices(items)
    assert "brand_new_kind" in notice.reason and "Codex 0.46.0" in notice.reason and not notice.fatal


def test_session_fields(home: Path) -> None:
    items = read(write(rollout(home), current_rollout()))
    first = [i for i in items if isinstance(i, Session)][0]
    assert items.index(first) < items.index(events(items)[0])
    s = last_session(items)
    assert (s.id, s.provider, s.native_id) == (f"codex:{SID}", "codex", SID)
    assert s.cwd == CWD and s.git_branch == "main" and s.git_repo == "git@example.com:dev/payments.git"
    assert s.model == "gpt-5-codex"
    assert s.started == pytest.approx(1793714400.0) and s.updated == pytest.approx(1793714415.25)
    assert s.resume == f"codex resume {SID}"
    assert s.source == str(rollout(home))
    assert (s.tokens_in, s.tokens_out) == (9000, 700)
    assert s.title is None and s.parent is None


def test_replayed_prompts_after_compaction_are_not_new_turns(home: Path) -> None:
    lines = [
        meta(0),
        msg(1, "user", "add retries to the client"),
        prompt_event(1, "add retries to the client"),
        msg(2, "assistant", "Done."),
        env(
            3,
            "compacted",
            {
                "message": "Summary: retries were added to the client.",
                "replacement_history": [{"type": "message", "role": "user", "content": []}],
            },
        ),
        msg(4, "user", "add retries to the client"),  # replay of the earlier prompt
        msg(5, "user", "now document them"),
        prompt_event(5, "now document them"),
    ]
    got = [(e.kind, e.origin, e.text) for e in events(read(write(rollout(home), lines)))]
    assert got == [
        ("user", "human", "add retries to the client"),
        ("assistant", "agent", "Done."),
        ("meta", "provider", "Summary: retries were added to the client."),
        ("user", "human", "now document them"),
    ]


def test_injected_user_message_events_are_not_prompts(home: Path) -> None:
    lines = [
        meta(0),
        msg(1, "user", ENV_CONTEXT),
        prompt_event(1, ENV_CONTEXT, kind="environment_context"),
        prompt_event(2, "real prompt", kind="plain"),
    ]
    got = [(e.kind, e.origin) for e in events(read(write(rollout(home), lines)))]
    assert got == [("meta", "provider"), ("user", "human")]


def test_rollout_without_user_message_events_falls_back_to_response_items(home: Path) -> None:
    lines = [
        meta(0),
        msg(1, "user", ENV_CONTEXT),
        msg(2, "user", "why is the build slow?"),
        msg(3, "assistant", "The cache is cold."),
        msg(4, "user", "warm it then"),
    ]
    got = [(e.kind, e.origin, e.text) for e in events(read(write(rollout(home), lines)))]
    assert got == [
        ("meta", "provider", ENV_CONTEXT),
        ("user", "human", "why is the build slow?"),
        ("assistant", "agent", "The cache is cold."),
        ("user", "human", "warm it then"),
    ]


def test_old_format_without_envelope(home: Path) -> None:
    lines = [
        {"id": SID, "timestamp": "2025-04-18T10:20:30.123Z", "instructions": "Be brief."},
        {"record_type": "state"},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": ENV_CONTEXT}]},
        {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "rename parse_config_v2"}]},
        {"type": "reasoning", "id": "rs_1", "summary": [{"type": "summary_text", "text": "Find callers"}]},
        {
            "type": "function_call",
            "name": "shell",
            "arguments": '{"command":["rg","parse_config_v2"]}',
            "call_id": "c1",
        },
        {
            "type": "function_call_output",
            "call_id": "c1",
            "output": '{"output":"src/a.py:3","metadata":{"exit_code":0,"duration_seconds":0.1}}',
        },
        {"record_type": "state"},
        {"type": "message", "role": "assistant", "content": [{"type": "output_text", "text": "Renamed in 1 file."}]},
    ]
    items = read(write(home / "sessions" / "2025" / "04" / "18" / f"rollout-2025-04-18-{SID}.jsonl", lines))
    got = [(e.kind, e.origin, e.text, e.exit_code) for e in events(items)]
    assert got == [
        ("meta", "provider", ENV_CONTEXT, None),
        ("user", "human", "rename parse_config_v2", None),
        ("reasoning", "agent", "Find callers", None),
        ("tool_call", "agent", "rg parse_config_v2", None),
        ("tool_result", "tool", "src/a.py:3", 0),
        ("assistant", "agent", "Renamed in 1 file.", None),
    ]
    assert all(e.ts is None for e in events(items)), "bare items carry no time: none is invented"
    s = last_session(items)
    assert s.native_id == SID and s.started == pytest.approx(1744971630.123)
    assert s.cwd == CWD, "taken from the environment context Codex recorded"
    assert notices(items) == []


def test_unknown_and_broken_lines_are_skipped_and_unknown_kinds_named(home: Path) -> None:
    lines = [
        meta(0),
        env(1, "response_item", "not an object"),
        env(2, "response_item", {"type": "message", "role": "tool", "content": [{"type": "input_text", "text": "?"}]}),
        env(3, "response_item", {"type": "message", "role": "assistant", "content": "plain string content"}),
        env(4, "response_item", {"type": "message", "role": "assistant", "content": [{"type": "input_image"}]}),
        env(5, "event_msg", {"type": "turn_aborted", "reason": "interrupted"}),
        env(6, "who_knows", {}),
        [1, 2],
        {"no": "type"},
        msg(7, "assistant", "   "),
    ]
    items = read(write(rollout(home), lines))
    assert [e.text for e in events(items)] == ["plain string content"]
    [notice] = notices(items)
    assert "who_knows" in notice.reason


def test_session_id_falls_back_to_the_file_name(home: Path) -> None:
    items = read(write(rollout(home), [msg(1, "assistant", "hello")]))
    assert last_session(items).native_id == SID


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (shell_out("ok", 0), ("ok", 0)),
        (shell_out("boom", 127), ("boom", 127)),
        (json.dumps({"output": "no metadata"}), ("no metadata", None)),
        ('{"output": "x", "metadata": {"exit_code": true}}', ("x", None)),
        (
            "Exit code: 1\nWall time: 0.2 seconds\nOutput:\nfail",
            ("Exit code: 1\nWall time: 0.2 seconds\nOutput:\nfail", 1),
        ),
        (
            "Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 3\nOutput:\nx",
            ("Chunk ID: 1\nWall time: 0.1 seconds\nProcess exited with code 3\nOutput:\nx", 3),
        ),
        ("Output:\nProcess exited with code 3", ("Output:\nProcess exited with code 3", None)),
        ("{not json", ("{not json", None)),
        ("plain text", ("plain text", None)),
        ([{"type": "input_text", "text": "a"}, {"type": "input_image"}], ("a", None)),
        (None, ("", None)),
    ],
)
def test_parse_output(raw: Any, expected: tuple[str, int | None]) -> None:
    assert parse_output(raw) == expected


@pytest.mark.parametrize(
    ("arguments", "text"),
    [
        ('{"command":["bash","-lc","cd src && make"]}', "cd src && make"),
        ('{"command":["git","commit","-m","fix: port"]}', "git commit -m 'fix: port'"),
        ('{"command":"ls -la","workdir":"/x"}', "ls -la"),
        ('{"cmd":"npm test"}', "npm test"),
        ('{"query":"数据库 索引"}', '{"query":"数据库 索引"}'),
        ("not json at all", "not json at all"),
    ],
)
def test_render_call(arguments: str, text: str) -> None:
    assert render_call("shell", arguments) == text


def test_arguments_and_output_nested_too_deeply_cost_only_themselves(home: Path) -> None:
    deep = "[" * 100_000 + "]" * 100_000
    path = write(
        rollout(home),
        [
            *current_rollout(),
            env(
                20, "response_item", {"type": "function_call", "name": "shell", "arguments": deep, "call_id": "call_9"}
            ),
            output(21, "call_9", "{" + deep),
        ],
    )
    items = read(path)
    texts = [e.text for e in events(items)]
    assert "the charge test fails with ERR_CONN_REFUSED_42" in texts  # the neighbours are all there
    assert deep in texts and "{" + deep in texts  # kept as written
    assert not any(n.fatal for n in notices(items))


# -- titles ----------------------------------------------------------------------------------------


def test_title_from_session_index_last_rename_wins(home: Path) -> None:
    path = write(rollout(home), current_rollout())
    write(
        home / "session_index.jsonl",
        [
            {"id": SID, "thread_name": "charge test", "updated_at": "2026-11-03T14:00:00Z"},
            {"id": "someone-else", "thread_name": "no", "updated_at": "2026-11-03T14:00:00Z"},
            b"{broken\n",
            {"id": SID, "thread_name": "Fix ERR_CONN_REFUSED_42 in charge test", "updated_at": "2026-11-03T15:00:00Z"},
        ],
    )
    items = read(path)
    assert last_session(items).title == "Fix ERR_CONN_REFUSED_42 in charge test"
    assert last_session(items).title_source == "user"  # a thread name is a person's (re)name
    assert [n for n in notices(items) if "brand_new_kind" not in n.reason] == []


def test_title_from_session_index_in_archived_sessions(home: Path) -> None:
    path = write(home / "archived_sessions" / f"rollout-2026-11-03T14-00-00-{SID}.jsonl", [meta()])
    write(home / "session_index.jsonl", [{"id": SID, "thread_name": "archived one", "updated_at": "x"}])
    assert last_session(read(path)).title == "archived one"


def test_no_session_index_means_no_title(home: Path) -> None:
    assert last_session(read(write(rollout(home), [meta()]))).title is None


def test_a_fifo_named_session_index_is_passed_over_not_waited_on(home: Path) -> None:
    # Opened blocking, a FIFO with the side index's name would hang the scan until a writer came.
    path = write(rollout(home), current_rollout())
    os.mkfifo(home / "session_index.jsonl")
    items = read(path)
    assert last_session(items).title is None and events(items)


# -- streaming contract -----------------------------------------------------------------------------


def test_seq_is_stable_across_reads(home: Path) -> None:
    path = write(rollout(home), current_rollout())
    assert read(path) == read(path)


def test_resume_after_append_yields_only_new_events(home: Path) -> None:
    path = write(rollout(home), current_rollout())
    first = read(path)
    cursor = cursor_of(first)
    assert cursor.offset == path.stat().st_size and cursor.next_seq == 14 and cursor.session == f"codex:{SID}"

    append(
        path,
        [
            msg(20, "user", "and the refund test?"),
            prompt_event(20, "and the refund test?"),
            env(20, "turn_context", {"cwd": CWD, "model": "gpt-5.1-codex"}),
            call(21, "call_9", "pytest -q tests/test_refund.py"),
            output(22, "call_9", shell_out("1 passed", 0)),
        ],
    )
    again = read(path, cursor)
    got = [(e.seq, e.kind, e.text, e.exit_code) for e in events(again)]
    assert got == [
        (14, "user", "and the refund test?", None),
        (15, "tool_call", "pytest -q tests/test_refund.py", None),
        (16, "tool_result", "1 passed", 0),
    ]
    s = last_session(again)
    assert s.cwd == CWD and s.git_branch == "main" and s.model == "gpt-5.1-codex"
    assert events(first) + events(again) == events(read(path))
    assert last_session(again) == last_session(read(path))


def test_resume_keeps_the_prompt_source_decision(home: Path) -> None:
    # No user_message events: prompts come from response items, before and after resuming.
    path = write(rollout(home), [meta(0), msg(1, "user", "first question")])
    cursor = cursor_of(read(path))
    assert cursor.state["prompts"] == "response"
    append(path, [msg(2, "user", "second question")])
    assert [(e.seq, e.origin, e.text) for e in events(read(path, cursor))] == [(1, "human", "second question")]


def test_a_malformed_line_is_named_and_the_rest_comes_through(home: Path) -> None:
    path = write(rollout(home), [meta(0), b'{"timestamp": "x", "type": \n', msg(2, "assistant", "still here")])
    items = read(path)
    assert [e.text for e in events(items)] == ["still here"]
    [notice] = notices(items)
    assert notice.where == "line 2" and not notice.fatal


def test_a_truncated_last_line_is_not_consumed(home: Path) -> None:
    tail = json.dumps(msg(2, "assistant", "half")).encode()
    path = write(rollout(home), [meta(0), msg(1, "assistant", "whole")], raw_tail=tail[:30])
    items = read(path)
    assert [e.text for e in events(items)] == ["whole"]
    assert len(notices(items)) == 1
    cursor = cursor_of(items)
    assert cursor.offset == path.stat().st_size - 30 and cursor.next_seq == 1
    with open(path, "ab") as fh:
        fh.write(tail[30:] + b"\n")
    assert [(e.seq, e.text) for e in events(read(path, cursor))] == [(1, "half")]


def test_a_binary_file_yields_only_a_notice(home: Path) -> None:
    # Judged line by line: the one (binary) line is named; the scan then calls the
    # source unusable because nothing in it was readable (tests/scan/test_scan.py).
    path = rollout(home)
    path.parent.mkdir(parents=True)
    path.write_bytes(b"\x1f\x8b\x08\x00" + bytes(512))
    items = read(path)
    notices = [i for i in items if isinstance(i, Notice)]
    assert (
        len(notices) == 1 and "binary" in notices[0].reason and not any(isinstance(i, (Session, Event)) for i in items)
    )


def test_reading_leaves_files_byte_identical(home: Path) -> None:
    path = write(rollout(home), current_rollout())
    index = write(home / "session_index.jsonl", [{"id": SID, "thread_name": "t", "updated_at": "x"}])
    before = [hashlib.sha256(p.read_bytes()).hexdigest() for p in (path, index)]
    read(path)
    read(path, cursor_of(read(path)))
    assert [hashlib.sha256(p.read_bytes()).hexdigest() for p in (path, index)] == before


DEEP_JSON = '{"command": ' + "[" * 1000 + "]" * 1000 + "}"


def test_json_text_nested_too_deeply_is_kept_as_written() -> None:
    # Arguments and outputs are JSON *strings* inside a record: decoding one nested 1,000 deep raised
    # RecursionError out of the read (adapter error, the rollout's later lines lost).
    assert render_call("shell", DEEP_JSON) == DEEP_JSON
    assert parse_output(DEEP_JSON) == (DEEP_JSON, None)


def test_a_session_index_line_nested_too_deeply_costs_that_line(home: Path) -> None:
    path = write(rollout(home), current_rollout())
    (home / "session_index.jsonl").write_text(
        DEEP_JSON + "\n" + json.dumps({"id": SID, "thread_name": "kept name"}) + "\n"
    )
    assert last_session(read(path)).title == "kept name"


def test_a_record_whose_type_is_a_list_or_an_object_is_named_not_fatal(home: Path) -> None:
    # `kind not in _NOT_CONVERSATION` raised TypeError (unhashable) out of the read: the rollout's later lines lost.
    lines = [
        meta(0),
        {"timestamp": "2026-11-03T14:00:01Z", "type": ["odd"], "payload": {}},
        {"timestamp": "2026-11-03T14:00:02Z", "type": {"odd": 1}, "payload": {}},
        msg(3, "assistant", "still read"),
    ]
    items = read(write(rollout(home), lines))
    assert [e.text for e in events(items)] == ["still read"]
    assert "odd" in " ".join(n.reason for n in notices(items))


def test_an_mcp_call_keeps_its_server_in_the_tool_name(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Codex 0.171.0 records an MCP tool call as function `search` in namespace `mcp__voyager` (the real capture's
    first turn called Voyager's own search): indexed as Codex names it, `mcp__voyager__search`, never a bare
    `search` that says neither which server answered nor that it was no built-in tool."""
    c = Capture("codex-0.171.0", tmp_path, monkeypatch)
    (sid,) = c.sessions()
    events = c.run.json("show", sid, "--json")["events"]
    calls = [(e["tool"], e["text"]) for e in events if e["kind"] == "tool_call"]
    assert [tool for tool, _ in calls] == ["exec_command", "mcp__voyager__search", "exec_command"], calls
    assert "迁移 任务" in calls[1][1]
    # Its result pairs with it, and a search for the tool by name finds the call.
    result = next(e for e in events if e["kind"] == "tool_result" and "schema_version" in e["text"])
    call = next(e for e in events if e.get("tool") == "mcp__voyager__search")
    assert result["call_id"] == call["call_id"]
    assert any(h["seq"] == call["seq"] for h in c.hits("mcp__voyager__search"))


def test_the_session_index_is_found_above_any_depth_of_dated_folders() -> None:
    """``session_index_of`` (strings, cached a folder) names the file beside the nearest ``sessions`` or
    ``archived_sessions`` folder above a rollout's folder, as the ``pathlib`` walk it replaced did."""
    from voyager_sessions.ingest.adapters._codex_read import session_index_of

    assert session_index_of("/h/.codex/sessions/2026/11/03") == "/h/.codex/session_index.jsonl"
    assert session_index_of("/h/.codex/archived_sessions") == "/h/.codex/session_index.jsonl"
    assert session_index_of("/h/sessions/x/sessions/2026") == "/h/sessions/x/session_index.jsonl"  # the nearest
    assert session_index_of("sessions/2026") == "session_index.jsonl"
    assert session_index_of("/h/.codex/elsewhere") is None
    assert session_index_of("/") is None and session_index_of("") is None
