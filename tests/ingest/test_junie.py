"""The Junie CLI adapter (documented) against event logs built here in the shape a peer's guide documents.

No real Junie session was captured: the files below follow the documented layout (an
``index.jsonl`` of sessions, ``<sessionId>/events.jsonl`` of ``kind``ed events), with a CJK
prompt, the task name as title, model usage, the UI block events Voyager counts but does not
index, an appended prompt through the CLI, a title changed in the index alone, hostile lines
and the places.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.samples.junie import SID, events, write
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.junie import sessions_dir


def test_prompts_title_and_model(home: Path, run) -> None:
    write(home, events())
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_JUN", "user", "human")["provider"] == "junie"
    assert [h["kind"] for h in hits(run, "TITLE_JUN")] == ["title"]
    assert not hits(run, "STATUS_JUN") and not hits(run, "BLOCK_JUN"), "UI updates are not indexed"
    (row,) = sessions(run).values()
    assert (row["session_id"], row["model"], row["resume"]) == (f"junie:{SID}", "claude-haiku-4-5-20251001", None)
    assert row["started"].startswith("2026-02-06")


def test_an_appended_prompt_and_a_renamed_task(home: Path, run) -> None:
    path = write(home, events())
    scan(run)
    with path.open("a", encoding="utf-8") as f:
        f.write(json.dumps({"kind": "UserPromptEvent", "prompt": "第二轮 PROMPT2_JUN"}, ensure_ascii=False) + "\n")
    second = scan(run)
    assert second["grown"] == 1 and second["events_added"] == 1
    assert one(run, "PROMPT2_JUN", "user", "human")
    write(home, [*events(), {"kind": "UserPromptEvent", "prompt": "第二轮 PROMPT2_JUN"}], title="新标题 RENAMED_JUN")
    scan(run)
    assert sessions(run)[f"junie:{SID}"]["title"] == "新标题 RENAMED_JUN"


def test_hostile_lines_cost_only_themselves(home: Path, run) -> None:
    write(
        home,
        [
            *events(),
            "{broken",
            "7",
            {"kind": "Sparkle"},
            {"kind": "SessionA2uxEvent", "event": {"agentEvent": {"kind": "NewBlockEvent"}}},
        ],
    )
    out = scan(run)
    assert out["failed"] == 0 and one(run, "PROMPT_JUN", "user", "human")
    assert "Sparkle" in out["stderr"] and "agentEvent:NewBlockEvent" in out["stderr"]


def test_places(tmp_path: Path) -> None:
    assert sessions_dir({"HOME": str(tmp_path)}) == tmp_path / ".junie/sessions"
    assert sessions_dir({"HOME": "/h", "VOYAGER_JUNIE_HOME": "/v"}) == Path("/v/sessions")
