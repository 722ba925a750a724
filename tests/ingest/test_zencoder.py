"""The Zencoder adapter (documented) against transcripts built here in the shape agentsview's parser and tests show.

No real Zencoder transcript was seen: the lines below follow the documented shape (a header
line, then one message a line with AI-SDK-style blocks and ``tag``s), with CJK text, the
cwd in the system banner, injected tagged text, a skill, reasoning, a shell call and its
result, a subagent's result, a continuation's parent, an appended turn through the CLI
and hostile lines.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.samples.zencoder import CWD, SID, lines, write
from tests.support.scanning import hits, kinds, one, scan, sessions
from voyager_sessions.ingest.adapters.zencoder import sessions_dir


def test_a_transcript_maps_to_its_kinds(home: Path, run) -> None:
    write(home, lines(parent="earlier-1"))
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1 and "finish" not in out["stderr"]
    assert one(run, "PROMPT_ZEN", "user", "human")["provider"] == "zencoder"
    for marker in ("REMINDER_ZEN", "SKILL_ZEN", "BANNER_ZEN", "TAGGED_ZEN"):
        assert kinds(run, marker) == [("meta", "provider")], marker
    assert one(run, "THINK_ZEN", "reasoning", "agent")
    assert one(run, "pytest 测试.py", "tool_call", "agent") and one(run, "SUBTASK_ZEN", "tool_call", "agent")
    assert one(run, "TOOLOUT_ZEN", "tool_result", "tool") and one(
        run, "SUBRESULT_ZEN", "tool_result", "agent"
    )  # a report
    assert one(run, "REPLY_ZEN", "assistant", "agent")
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["resume"]) == (f"zencoder:{SID}", CWD, None)
    assert row["parent"] == "zencoder:earlier-1"


def test_an_appended_turn_is_read_from_the_cursor(home: Path, run) -> None:
    path = write(home, lines())
    scan(run)
    with path.open("a", encoding="utf-8") as f:
        f.write(
            json.dumps(
                {
                    "role": "user",
                    "content": [{"type": "text", "text": "第二轮 PROMPT2_ZEN"}],
                    "createdAt": "2026-01-01T00:01:00Z",
                },
                ensure_ascii=False,
            )
            + "\n"
        )
    second = scan(run)
    assert second["grown"] == 1 and second["events_added"] == 1
    assert one(run, "PROMPT2_ZEN", "user", "human")
    assert sessions(run)[f"zencoder:{SID}"]["cwd"] == CWD, "what the head said is kept across reads"


def test_hostile_lines_cost_only_themselves(home: Path, run) -> None:
    write(
        home,
        [
            *lines(),
            "{broken",
            "7",
            {"role": "critic"},
            {"role": "assistant", "content": [3, {"type": "sparkle"}]},
            {"role": "tool", "content": [{"type": "tool-result", "toolCallId": "x", "content": {"k": "数据"}}]},
        ],
    )
    out = scan(run)
    assert out["failed"] == 0 and one(run, "REPLY_ZEN", "assistant", "agent")
    assert "role:critic" in out["stderr"] and "block:sparkle" in out["stderr"]
    assert not hits(run, "sparkle")


def test_places(tmp_path: Path) -> None:
    assert sessions_dir({"HOME": str(tmp_path)}) == tmp_path / ".zencoder/sessions"
    assert sessions_dir({"HOME": "/h", "VOYAGER_ZENCODER_HOME": "/v"}) == Path("/v/sessions")
