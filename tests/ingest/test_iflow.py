"""The iFlow CLI adapter (documented) against transcripts built here in the shape peers' parsers and reference show.

No real iFlow transcript was captured: the lines below follow the documented shape (Claude
Code's record envelope, Anthropic blocks, Gemini-shaped tool results), with CJK text,
thinking, a streamed snapshot repeating a tool call, both tool-result shapes, injected user
text and ``isMeta`` records, a sidechain, an appended turn read from the Cursor through the
CLI, hostile lines, the places and the quoted resume command.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.ingest._cli import hits, kinds, one, scan, sessions
from voyager_sessions.ingest.adapters.iflow import projects_dir, result_text, resume_command

SID = "session-041101e6-2a7f-4dfd-90b0-57888a353f6a"
CWD = "/home/dev/支付 service"


def rec(kind: str, content: Any, uuid: str, parent: str | None, t: str, cwd: str = CWD, **extra: Any) -> dict:
    message: dict[str, Any] = {"role": kind, "content": content, **extra.pop("message", {})}
    return {
        "uuid": uuid,
        "parentUuid": parent,
        "sessionId": SID,
        "timestamp": t,
        "type": kind,
        "isSidechain": False,
        "userType": "external",
        "cwd": cwd,
        "gitBranch": "main",
        "version": "0.5.3",
        "message": message,
        **extra,
    }


def lines(cwd: str = CWD) -> list[Any]:
    call = {"type": "tool_use", "id": "call_1", "name": "run_shell_command", "input": {"command": "grep 错误 日志.log"}}
    return [
        rec("user", "# AGENTS.md instructions for /home/dev\nINJECTED_IFL", "u0", None, "2026-01-01T00:00:00Z", cwd),
        rec("user", [{"type": "text", "text": "帮我查日志的错误 PROMPT_IFL"}], "u1", "u0", "2026-01-01T00:00:01Z", cwd),
        rec(
            "assistant",
            [{"type": "thinking", "thinking": "先查日志 THINK_IFL"}, {"type": "text", "text": "我来查。"}, call],
            "a1",
            "u1",
            "2026-01-01T00:00:02.100Z",
            cwd,
            message={"model": "glm-4.7", "usage": {"input_tokens": 100, "output_tokens": 20}},
        ),
        rec("assistant", [call], "a2", "u1", "2026-01-01T00:00:02.300Z", cwd),  # a streamed snapshot: the same call
        rec(
            "user",
            [
                {
                    "type": "tool_result",
                    "tool_use_id": "call_1",
                    "content": {
                        "callId": "call_1",
                        "responseParts": {
                            "functionResponse": {
                                "id": "call_1",
                                "name": "run_shell_command",
                                "response": {"output": "TOOLOUT_IFL 错误 x3"},
                            }
                        },
                        "resultDisplay": "TOOLOUT_IFL",
                    },
                }
            ],
            "u2",
            "a2",
            "2026-01-01T00:00:03Z",
            cwd,
            toolUseResult={"status": "success", "toolName": "run_shell_command"},
        ),
        rec(
            "assistant",
            [{"type": "text", "text": "找到三个错误 REPLY_IFL。日本語: 完了"}],
            "a3",
            "u2",
            "2026-01-01T00:00:05Z",
            cwd,
        ),
        rec("user", "Caveat NOTE_IFL", "u3", "a3", "2026-01-01T00:00:06Z", cwd, isMeta=True),
        rec("user", "子任务 SIDE_IFL", "u4", "a3", "2026-01-01T00:00:07Z", cwd, isSidechain=True),
    ]


def write(home: Path, items: list[Any], project: str = "-home-dev-proj") -> Path:
    folder = home / ".iflow/projects" / project
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{SID}.jsonl"
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    return path


def test_a_transcript_maps_to_its_kinds(home: Path, run) -> None:
    write(home, lines())
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_IFL", "user", "human")["provider"] == "iflow"
    assert one(run, "THINK_IFL", "reasoning", "agent")
    assert one(run, "grep 错误 日志.log", "tool_call", "agent"), "a streamed snapshot's repeat is indexed once"
    assert one(run, "TOOLOUT_IFL", "tool_result", "tool")
    assert one(run, "REPLY_IFL", "assistant", "agent")
    assert kinds(run, "INJECTED_IFL") == [("meta", "provider")] and kinds(run, "NOTE_IFL") == [("meta", "provider")]
    assert one(run, "SIDE_IFL", "user", "provider"), "a sidechain's prompt is its parent agent's"
    (row,) = sessions(run).values()
    assert row["cwd"] == CWD and row["session_id"] == f"iflow:{SID}"
    assert row["resume"] == resume_command(CWD, SID)


def test_an_appended_turn_is_read_from_the_cursor(home: Path, run) -> None:
    path = write(home, lines())
    scan(run)
    again = rec(
        "assistant",
        [
            {
                "type": "tool_use",
                "id": "call_1",
                "name": "run_shell_command",
                "input": {"command": "grep 错误 日志.log"},
            },
            {"type": "text", "text": "第二轮 REPLY2_IFL"},
        ],
        "a4",
        "u4",
        "2026-01-01T00:01:00Z",
    )
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps(again, ensure_ascii=False) + "\n")
    second = scan(run)
    assert second["grown"] == 1 and second["events_added"] == 1, "only the reply: the call id was seen before"
    assert one(run, "REPLY2_IFL", "assistant", "agent")


def test_hostile_lines_cost_only_themselves(home: Path, run) -> None:
    write(
        home, [*lines(), "{broken", "7", {"type": "weird"}, rec("assistant", [3, {"type": "sparkle"}], "x", "a3", "")]
    )
    out = scan(run)
    assert out["failed"] == 0 and one(run, "REPLY_IFL", "assistant", "agent")
    assert "weird" in out["stderr"] and "block:sparkle" in out["stderr"]
    assert not hits(run, "sparkle")


def test_result_text() -> None:
    assert result_text("x") == "x"
    assert result_text([{"type": "text", "text": "a"}, {"functionResponse": {"response": {"output": "b"}}}]) == "a\nb"
    assert result_text({"callId": "c", "responseParts": [], "resultDisplay": "shown"}) == "shown"
    assert result_text({"functionResponse": {"response": {"error": "失败"}}}) == "失败"
    assert result_text(None) == ""


def test_places(tmp_path: Path) -> None:
    assert projects_dir({"HOME": str(tmp_path)}) == tmp_path / ".iflow/projects"
    assert projects_dir({"HOME": "/h", "VOYAGER_IFLOW_HOME": "/v"}) == Path("/v/projects")


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(evil: str) -> None:
    assert shlex.split(resume_command(evil, evil)) == ["cd", evil, "&&", "iflow", "--resume", evil]
