"""The Command Code adapter (documented) against transcripts built here in the shape peers' parser and fixtures show.

No real Command Code transcript was seen: the files below follow the documented shape
(one message a line, AI-SDK-style blocks, a ``.meta.json`` beside), with CJK text,
reasoning, a shell call and its result in both spellings, the person's rename, files that
are no transcripts, an appended turn through the CLI, hostile lines and the places.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.samples.commandcode import CWD, SID, lines, write
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.commandcode import ADAPTER, projects_dir, result_text


def test_a_transcript_maps_to_its_kinds(home: Path, run) -> None:
    write(home, lines(), {"title": "登录修复 TITLE_CMD", "userRenamed": True})
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_CMD", "user", "human")["provider"] == "commandcode"
    assert one(run, "THINK_CMD", "reasoning", "agent")
    assert one(run, "pytest 测试.py", "tool_call", "agent")
    assert one(run, "TOOLOUT_CMD", "tool_result", "tool")
    assert one(run, "OLDRESULT_CMD", "tool_result", "tool"), "a user line's tool result is no prompt"
    assert one(run, "REPLY_CMD", "assistant", "agent")
    assert not hits(run, "CHECKPOINT_CMD") and not hits(run, "PROMPTLOG_CMD")
    (row,) = sessions(run).values()
    assert (row["title"], row["title_source"], row["cwd"], row["resume"]) == ("登录修复 TITLE_CMD", "user", CWD, None)
    assert row["session_id"] == f"commandcode:{SID}"


def test_an_appended_turn_and_a_rename_are_seen(home: Path, run) -> None:
    path = write(home, lines(), {"title": "旧标题"})
    scan(run)
    with path.open("a", encoding="utf-8") as f:
        f.write(
            json.dumps({"sessionId": SID, "role": "user", "content": "第二轮 PROMPT2_CMD"}, ensure_ascii=False) + "\n"
        )
    second = scan(run)
    assert second["events_added"] == 1 and second["events_removed"] == 0
    assert one(run, "PROMPT2_CMD", "user", "human")
    (path.parent / f"{SID}.meta.json").write_text(json.dumps({"title": "新标题 RENAMED_CMD", "userRenamed": True}))
    assert scan(run)["changed"] == 1
    assert [h["kind"] for h in hits(run, "RENAMED_CMD")] == ["title"]


def test_hostile_lines_cost_only_themselves(home: Path, run) -> None:
    bad = [
        *lines(),
        "{broken",
        "7",
        {"role": "critic", "content": "x"},
        {"sessionId": SID, "role": "assistant", "content": [3, {"type": "sparkle"}]},
    ]
    write(home, bad, meta=None)
    out = scan(run)
    assert out["failed"] == 0 and one(run, "REPLY_CMD", "assistant", "agent")
    assert "role:critic" in out["stderr"] and "block:sparkle" in out["stderr"]


def test_result_text_and_places(tmp_path: Path) -> None:
    assert result_text({"output": {"type": "text", "value": "x"}}) == "x"
    assert result_text({"content": [{"type": "text", "text": "a"}]}) == "a"
    assert result_text({"output": {"type": "json", "value": {"k": "数据"}}}) == '{"type":"json","value":{"k":"数据"}}'
    assert result_text({"error": "boom"}) == "boom"
    assert projects_dir({"HOME": str(tmp_path)}) == tmp_path / ".commandcode/projects"
    assert projects_dir({"HOME": "/h", "VOYAGER_COMMANDCODE_HOME": "/v"}) == Path("/v/projects")
    write(tmp_path, lines())
    assert [Path(s.path).name for s in ADAPTER.discover({"HOME": str(tmp_path)})] == [f"{SID}.jsonl"]
