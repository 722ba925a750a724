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

import pytest

from tests.support.samples.iflow import CWD, SID, lines, rec, write
from tests.support.scanning import hits, kinds, one, scan, sessions
from voyager_sessions.ingest.adapters.iflow import projects_dir, result_text, resume_command


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
