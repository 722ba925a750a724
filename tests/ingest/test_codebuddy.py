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
from typing import Any

from tests.ingest._cli import hits, kinds, one, scan, sessions
from voyager_sessions.ingest.adapters.codebuddy import projects_dir

SID = "d7e8f9a0-0000-4000-8000-00000000000d"
CWD = "/home/dev/支付 service"


def line(kind: str, t: str, **extra: Any) -> dict[str, Any]:
    return {"id": f"{kind}-{t}", "timestamp": t, "type": kind, "sessionId": SID, "cwd": CWD, **extra}


def lines() -> list[Any]:
    return [
        line("message", "2026-01-01T00:00:00Z", role="user", content=[{"type": "input_text", "text": "Warmup"}]),
        line(
            "message",
            "2026-01-01T00:00:01Z",
            role="user",
            content=[{"type": "input_text", "text": "修复登录错误 PROMPT_CBD"}],
        ),
        line(
            "reasoning", "2026-01-01T00:00:02Z", rawContent=[{"type": "reasoning_text", "text": "先运行测试 THINK_CBD"}]
        ),
        line(
            "message",
            "2026-01-01T00:00:02Z",
            role="assistant",
            providerData={"model": "hunyuan-2"},
            content=[{"type": "output_text", "text": "我来运行。"}],
        ),
        line(
            "function_call",
            "2026-01-01T00:00:03Z",
            callId="c1",
            name="Bash",
            arguments=json.dumps({"command": "pytest 测试.py"}, ensure_ascii=False),
        ),
        line(
            "function_call_result",
            "2026-01-01T00:00:04Z",
            callId="c1",
            name="Bash",
            status="failed",
            output={"type": "text", "text": "TOOLOUT_CBD 1 failed"},
        ),
        line("message", "2026-01-01T00:00:05Z", role="user", content="<system-reminder>INJECTED_CBD</system-reminder>"),
        line(
            "message",
            "2026-01-01T00:00:06Z",
            role="assistant",
            content=[{"type": "output_text", "text": "修好了 REPLY_CBD。日本語: 完了"}],
        ),
        line("topic", "2026-01-01T00:00:07Z", topic="登录修复 TITLE_CBD"),
        line("file-history-snapshot", "2026-01-01T00:00:07Z"),
    ]


def write(home: Path, items: list[Any], name: str = f"{SID}.jsonl") -> Path:
    folder = home / ".codebuddy/projects/home-dev-proj"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(
        "".join((x if isinstance(x, str) else json.dumps(x, ensure_ascii=False)) + "\n" for x in items),
        encoding="utf-8",
    )
    return path


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
