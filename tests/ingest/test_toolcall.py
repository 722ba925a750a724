"""The one rule for a tool call's searchable text and the one kind/origin of a subagent's report
(``ingest/toolcall.py``; docs/json.md, "Tool calls and subagent reports").

A table of calls as agents write them — nothing, ``{}``, ``None``, JSON text, nested objects, a shell
command as a string or an argv list, non-ASCII, hostile control characters — and the text each must
read as; then the report's pair, what the counter every adapter numbers events with does with it, and
how a task notification is told apart from a background command's end.
"""

from __future__ import annotations

from typing import Any

import pytest

from voyager_sessions.ingest.adapters._common import EventCounter
from voyager_sessions.ingest.toolcall import (
    SUBAGENT_REPORT,
    TOOL_OUTPUT,
    arguments_text,
    is_shell_tool,
    notification_report,
    report_pair,
    tool_call_text,
)

DEEP = '{"a": ' + "[" * 5000 + "]" * 5000 + "}"


@pytest.mark.parametrize(
    ("tool", "arguments", "text"),
    [
        # Arguments that say nothing: the call reads as its tool's name, never "None", "{}" or "null".
        ("TodoRead", {}, "TodoRead"),
        ("TodoRead", None, "TodoRead"),
        ("TodoRead", "", "TodoRead"),
        ("TodoRead", "   ", "TodoRead"),
        ("TodoRead", "{}", "TodoRead"),
        ("TodoRead", "null", "TodoRead"),
        ("TodoRead", "None", "TodoRead"),  # a Python agent's str(None)
        ("TodoRead", [], "TodoRead"),
        ("TodoRead", {"filter": None, "path": ""}, "TodoRead"),
        ("Bash", {"command": ""}, "Bash"),  # an empty command is no command
        (None, None, ""),  # neither name nor arguments: no event
        ("  ", {}, ""),
        # Any other tool: compact JSON, keys as written, nested values kept, JSON text decoded first.
        (
            "Edit",
            {"path": "a.py", "edits": [{"old": "x", "new": None}]},
            '{"path":"a.py","edits":[{"old":"x","new":null}]}',
        ),
        ("Write", '{"path": "\\u6570\\u636e.txt"}', '{"path":"数据.txt"}'),  # \uXXXX escapes: CJK to find
        ("Write", {"content": "迁移 データ 마이그레이션 😀"}, '{"content":"迁移 データ 마이그레이션 😀"}'),
        ("Count", 3, "3"),
        ("Flag", {"force": False}, '{"force":false}'),  # a false value is a value
        ("Search", "not json {", "not json {"),  # text that is not JSON: as written
        ("Search", '"just a string"', "just a string"),
        ("Deep", DEEP, DEEP),  # JSON nested too deeply to decode: as written, never an error
        # A shell tool (any case, namespaced by its last part): its command line.
        ("Bash", {"command": "ls -la", "timeout": 5}, "ls -la"),
        ("bash", {"command": "ls"}, "ls"),
        ("BASH", {"command": "ls"}, "ls"),
        ("file_system.bash", {"command": "ls"}, "ls"),
        ("developer__shell", {"command": "ls"}, "ls"),
        ("run_shell_command", '{"command": "echo 输出"}', "echo 输出"),
        ("exec_command", {"cmd": "npm test"}, "npm test"),
        ("RUN_COMMAND", {"CommandLine": "dir"}, "dir"),
        ("shell", {"command": ["bash", "-lc", "cd src && make"]}, "cd src && make"),  # argv: the script
        ("shell", {"command": ["git", "commit", "-m", "fix: a b"]}, "git commit -m 'fix: a b'"),  # argv: quoted
        ("shell", ["ls", "-la"], "ls -la"),
        ("run_shell_command", "ls 目录", "ls 目录"),  # a bare string is the command
        ("Bash", {"command": "pytest -q", "description": "Run  the\ntests"}, "pytest -q\n# Run the tests"),
        ("Bash", {"description": "no command"}, '{"description":"no command"}'),
        # Hostile text: control characters stay escaped in JSON, never raw; a lone surrogate never raises.
        ("Edit", {"k": "\x1b[31mred\x07"}, '{"k":"\\u001b[31mred\\u0007"}'),
        ("Edit", {"k": "\ud800"}, '{"k":"\ufffd"}'),
        ("Bash", {"command": "ls", "description": "a\x1b[2Jb"}, "ls\n# a\x1b[2Jb"),
    ],
)
def test_the_rule(tool: str | None, arguments: Any, text: str) -> None:
    assert tool_call_text(tool, arguments) == text


def test_an_adapters_own_shell_names_join_the_common_ones() -> None:
    assert tool_call_text("Runner", {"command": "ls"}) == '{"command":"ls"}'
    assert tool_call_text("Runner", {"command": "ls"}, {"Runner"}) == "ls"
    assert tool_call_text("runner", {"command": "ls"}, {"Runner"}) == "ls"
    assert is_shell_tool("container.exec") and is_shell_tool("Shell") and not is_shell_tool("Read")


def test_a_non_shell_tools_command_field_is_not_a_command_line() -> None:
    # OpenHands' file editor has a "command" (view, create): that is an argument, not what was run.
    assert tool_call_text("str_replace_editor", {"command": "view", "path": "/x"}) == '{"command":"view","path":"/x"}'


def test_never_the_literal_none_or_a_python_repr() -> None:
    for value in (None, {"a": None}, [None], {"a": {"b": None}}, "None", {"x": b"bytes"}, {1: 2}):
        text = tool_call_text("T", value)
        assert "None" not in text and "{'" not in text, (value, text)
    assert arguments_text(None) == arguments_text({}) == arguments_text("null") == ""


def test_the_report_pair() -> None:
    assert SUBAGENT_REPORT == ("tool_result", "agent") and TOOL_OUTPUT == ("tool_result", "tool")
    for name in ("Task", "Agent", "task", "agent", "invoke_agent", "delegate_task"):
        assert report_pair(name) == SUBAGENT_REPORT, name
        assert report_pair(name, background=True) == TOOL_OUTPUT, name  # only the launch's acknowledgement
    for name in (None, "", "Bash", "TaskCreate", "read_file"):
        assert report_pair(name) == TOOL_OUTPUT, name


def test_the_counter_files_every_adapters_report_by_the_one_rule() -> None:
    c = EventCounter("x:1", 0)
    call = c.make("tool_call", "agent", '{"prompt":"p"}', tool="Task", call_id="t1")
    by_id = c.make("tool_result", "tool", "the subagent's words", call_id="t1")
    by_name = c.make("tool_result", "tool", "words", tool="task", call_id="other")
    plain = c.make("tool_result", "tool", "output", tool="Bash", call_id="t2")
    assert call is not None and (call.kind, call.origin) == ("tool_call", "agent")
    assert by_id is not None and (by_id.kind, by_id.origin) == SUBAGENT_REPORT
    assert by_name is not None and (by_name.kind, by_name.origin) == SUBAGENT_REPORT
    assert plain is not None and (plain.kind, plain.origin) == TOOL_OUTPUT
    # An adapter that knows a result only acknowledges a background launch takes the call out first.
    c.make("tool_call", "agent", "{}", tool="Agent", call_id="t3")
    c.launched("t3")
    ack = c.make("tool_result", "tool", "launched", call_id="t3")
    assert ack is not None and (ack.kind, ack.origin) == TOOL_OUTPUT
    # The calls still waiting for their result carry over to the next read (bounded), as a cursor keeps them.
    c.make("tool_call", "agent", "{}", tool="task", call_id="t4")
    later = EventCounter("x:1", c.seq, list(c.agent_calls))
    report = later.make("tool_result", "tool", "words", call_id="t4")
    assert report is not None and (report.kind, report.origin) == SUBAGENT_REPORT
    many = EventCounter("x:1", 0, [f"c{i}" for i in range(1000)] + [None, 3])
    assert len(many.agent_calls) == EventCounter.AGENT_CALLS_KEPT and "c999" in many.agent_calls


@pytest.mark.parametrize(
    ("text", "want"),
    [
        (
            "<task-notification>\n<task-id>a1</task-id>\n<tool-use-id>toolu_9</tool-use-id>\n<status>completed</status>\n"
            '<summary>Agent "fix" finished</summary>\n<result>done 完成</result>\n</task-notification>',
            (True, "toolu_9"),
        ),
        ("<task-notification>\n<status>completed</status>\n<result>SUB</result>\n</task-notification>", (True, None)),
        (
            "<task-notification>\n<task-id>b2</task-id>\n<tool-use-id>toolu_8</tool-use-id>\n"
            '<summary>Background command "make" completed (exit code 0)</summary>\n</task-notification>',
            (False, "toolu_8"),  # a background command's end: tool output's business, not a report
        ),
        ("please look at <task-notification> and <result>", (False, None)),  # a person quoting the tag
        ("<task-notification><tool-use-id>" + "x" * 5000, (False, None)),  # hostile: no unbounded id
    ],
)
def test_a_task_notification(text: str, want: tuple[bool, str | None]) -> None:
    assert notification_report(text) == want
