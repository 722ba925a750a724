"""The CodeBuddy Code adapter (documented) against transcripts built here in the shape a peer's parser documents.

No real CodeBuddy Code transcript was captured: the lines below follow the documented
records (``message`` with ``input_text``/``output_text`` blocks, ``function_call``,
``function_call_result``, ``reasoning``, ``topic``), with CJK text, injected user text, a
subagent file, an appended turn through the CLI, a Claude-shaped line that is named (not
dropped silently), hostile lines and the places.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.samples.codebuddy import CWD, SID, line, lines, write
from tests.support.scanning import hits, kinds, one, scan, sessions
from voyager_sessions.ingest.adapters.codebuddy import projects_dir


def test_a_transcript_maps_to_its_kinds(home: Path, run) -> None:
    write(home, lines())
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_CBD", "user", "human")["provider"] == "codebuddy"
    assert kinds(run, "INJECTED_CBD") == [("meta", "provider")] and kinds(run, "Warmup") == [("meta", "provider")]
    assert one(run, "THINK_CBD", "reasoning", "agent")
    assert one(run, "pytest 测试.py", "tool_call", "agent")
    result = one(run, "TOOLOUT_CBD", "tool_result", "tool")
    assert result["provider"] == "codebuddy"
    assert one(run, "REPLY_CBD", "assistant", "agent")
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["title"], row["model"], row["resume"]) == (
        f"codebuddy:{SID}",
        CWD,
        "登录修复 TITLE_CBD",
        "hunyuan-2",
        None,
    )


def test_a_subagent_file_and_an_appended_turn(home: Path, run) -> None:
    path = write(home, lines())
    write(
        home,
        [line("message", "2026-01-01T00:00:03Z", role="user", content="子任务 SUBPROMPT_CBD", sessionId="sub-1")],
        name="agent-sub-1.jsonl",
    )
    scan(run)
    assert one(run, "SUBPROMPT_CBD", "user", "provider")
    with path.open("a", encoding="utf-8") as f:
        f.write(
            json.dumps(
                line("message", "2026-01-01T00:01:00Z", role="user", content="第二轮 PROMPT2_CBD"), ensure_ascii=False
            )
            + "\n"
        )
    second = scan(run)
    assert second["grown"] == 1 and second["events_added"] == 1
    assert one(run, "PROMPT2_CBD", "user", "human")
    assert sessions(run)[f"codebuddy:{SID}"]["title"] == "登录修复 TITLE_CBD", (
        "the title survives a read from the cursor"
    )


def test_other_shapes_are_named_not_dropped_silently(home: Path, run) -> None:
    claude_shaped = {"type": "user", "sessionId": SID, "message": {"role": "user", "content": "x"}}
    write(home, [*lines(), claude_shaped, "{broken", "7", line("message", "2026-01-01T00:00:09Z", role="critic")])
    out = scan(run)
    assert out["failed"] == 0 and one(run, "REPLY_CBD", "assistant", "agent")
    assert "user" in out["stderr"] and "role:critic" in out["stderr"]
    assert not hits(run, "critic")


def test_places(tmp_path: Path) -> None:
    assert projects_dir({"HOME": str(tmp_path)}) == tmp_path / ".codebuddy/projects"
    assert projects_dir({"HOME": "/h", "CODEBUDDY_CONFIG_DIR": "/c"}) == Path("/c/projects")
    assert projects_dir({"HOME": "/h", "CODEBUDDY_CONFIG_DIR": "/c", "VOYAGER_CODEBUDDY_HOME": "/v"}) == Path(
        "/v/projects"
    )
