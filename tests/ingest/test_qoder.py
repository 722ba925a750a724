"""The Qoder CLI adapter (documented) against transcripts built here in Claude Code's format, as peers say Qoder writes it.

No real Qoder transcript was captured (the CLI needs a Qoder login). The lines below are
Claude Code records with what peers add for Qoder: a ``runtime-config`` head line, credits on
assistant lines, a subagent under ``<sessionId>/subagents/`` with a name of its own, and
``state.json`` beside; CJK text, a shell call and its result, an injected reminder, the
QoderWork home, an appended turn read from the Cursor, and the quoted resume command.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest

from tests.support.samples.qoder import CWD, SID, lines, rec, write
from tests.support.scanning import hits, kinds, one, scan, sessions
from voyager_sessions.ingest.adapters.qoder import projects_dirs, resume_command


def test_a_transcript_maps_to_its_kinds(home: Path, run) -> None:
    write(home, lines())
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert "runtime-config" not in out["stderr"]
    assert one(run, "PROMPT_QOD", "user", "human")["provider"] == "qoder"
    assert one(run, "THINK_QOD", "reasoning", "agent")
    assert one(run, "pytest 测试.py", "tool_call", "agent")
    assert one(run, "TOOLOUT_QOD", "tool_result", "tool")
    assert one(run, "REPLY_QOD", "assistant", "agent")
    assert kinds(run, "INJECTED_QOD") == [("meta", "provider")]
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["resume"]) == (f"qoder:{SID}", CWD, resume_command(CWD, SID))


def test_a_subagent_under_its_parent_folder(home: Path, run) -> None:
    path = write(home, lines())
    sub = path.parent / SID / "subagents" / "explore-1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(
        json.dumps(
            rec("user", "子任务 SUBPROMPT_QOD", "s1", None, "2026-01-01T00:00:04Z", isSidechain=True),
            ensure_ascii=False,
        )
        + "\n",
        encoding="utf-8",
    )
    scan(run)
    hit = one(run, "SUBPROMPT_QOD", "user", "provider")
    child = sessions(run)[hit["session_id"]]
    assert child["parent"] == f"qoder:{SID}" and child["resume"] == resume_command(CWD, SID)


def test_an_appended_turn_is_read_from_the_cursor(home: Path, run) -> None:
    path = write(home, lines())
    scan(run)
    with path.open("a", encoding="utf-8") as f:
        f.write(
            json.dumps(rec("user", "第二轮 PROMPT2_QOD", "u4", "a3", "2026-01-01T00:01:00Z"), ensure_ascii=False) + "\n"
        )
    second = scan(run)
    assert second["grown"] == 1 and second["events_added"] == 1
    assert hits(run, "PROMPT2_QOD")


def test_qoderwork_is_read_too(home: Path, run) -> None:
    write(home, lines(), root=".qoderwork")
    assert scan(run)["new"] == 1 and one(run, "PROMPT_QOD", "user", "human")


def test_places(tmp_path: Path) -> None:
    assert projects_dirs({"HOME": str(tmp_path)}) == [tmp_path / ".qoder/projects", tmp_path / ".qoderwork/projects"]
    assert projects_dirs({"HOME": "/h", "VOYAGER_QODER_HOME": "/v"}) == [Path("/v/projects")]


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(evil: str) -> None:
    assert shlex.split(resume_command(evil, evil)) == ["cd", evil, "&&", "qodercli", "-r", evil]
