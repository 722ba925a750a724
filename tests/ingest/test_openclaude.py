"""The OpenClaude adapter (documented) against transcripts built here in Claude Code's format, as peers say it writes.

No real OpenClaude transcript was captured (its npm package is not on this registry); the lines
below are Claude Code records (agentsview reads OpenClaude with its Claude parser unchanged): CJK
text, reasoning, a shell call and its result, an injected reminder, a subagent, its own home and
``$OPENCLAUDE_CONFIG_DIR``, an appended turn read from the Cursor, a cut last line, and the quoted
resume command.
"""

from __future__ import annotations
import json
import shlex
from pathlib import Path
from typing import Any
import pytest
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.openclaude import ADAPTER, projects_dir, resume_command
from tests.support.samples.openclaude import SID, CWD, MARKERS, rec, lines, write


def test_a_transcript_holds_to_the_contract(home: Path, run) -> None:
    write(home, lines())
    out = check_sample(run, home, "openclaude", MARKERS)
    assert out["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"]) == (f"openclaude:{SID}", CWD, "deepseek-chat")
    assert row["resume"] == resume_command(CWD, SID)


def test_claude_codes_own_home_is_not_read(home: Path, run) -> None:
    write(home, lines(), root=".claude")
    scan(run)
    assert {h["provider"] for h in hits(run, "PROMPT_OCL")} == {"claude"}


def test_a_subagent_is_a_session_under_its_parent(home: Path, run) -> None:
    path = write(home, lines())
    sub = path.parent / SID / "subagents" / "agent-a1b2.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(
        json.dumps(
            rec("user", "子任务 SUBPROMPT_OCL", "s1", None, "2026-01-01T00:00:04Z", isSidechain=True),
            ensure_ascii=False,
        )
        + "\n"
    )
    scan(run)
    hit = one(run, "SUBPROMPT_OCL", "user", "provider")
    assert sessions(run)[hit["session_id"]]["parent"] == f"openclaude:{SID}"


def test_an_appended_turn_is_read_from_the_cursor_and_a_cut_line_waits(home: Path, run) -> None:
    cut = json.dumps(rec("user", "第二轮 PROMPT2_OCL", "u4", "a3", "2026-01-01T00:01:00Z"), ensure_ascii=False).encode()
    path = write(home, lines(), tail=cut[:40])
    assert scan(run)["failed"] == 0 and one(run, "REPLY_OCL", "assistant", "agent")
    with path.open("ab") as f:
        f.write(cut[40:] + b"\n")
    second = scan(run)
    assert second["grown"] == 1 and second["events_added"] == 1
    assert one(run, "PROMPT2_OCL", "user", "human")


def test_a_bad_line_costs_only_itself(home: Path, run) -> None:
    items: list[Any] = lines()
    path = write(home, items[:2])
    with path.open("ab") as f:
        f.write(b'{"type": "user", "message": {"content": [\n')
        for x in items[2:]:
            f.write(json.dumps(x, ensure_ascii=False).encode() + b"\n")
    assert scan(run)["failed"] == 0
    assert one(run, "REPLY_OCL", "assistant", "agent") and one(run, "PROMPT_OCL", "user", "human")


def test_places(tmp_path: Path) -> None:
    assert projects_dir({"HOME": str(tmp_path)}) == tmp_path / ".openclaude/projects"
    assert projects_dir({"HOME": "/h", "OPENCLAUDE_CONFIG_DIR": "/o"}) == Path("/o/projects")
    assert projects_dir({"HOME": "/h", "OPENCLAUDE_CONFIG_DIR": "/o", "VOYAGER_OPENCLAUDE_HOME": "/v"}) == Path(
        "/v/projects"
    )
    assert ADAPTER.roots({"HOME": "/h"}) == [Path("/h/.openclaude/projects")]


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(evil: str) -> None:
    assert shlex.split(resume_command(evil, evil)) == ["cd", evil, "&&", "openclaude", "--resume", evil]
