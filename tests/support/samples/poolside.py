"""Sample Poolside trajectories (NDJSON events), built by code (agentsview `poolside.go`)."""

from __future__ import annotations
from pathlib import Path
from typing import Any


NAME = "trajectory-cli_6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.ndjson"


MARKERS = {
    "prompt": ["把测试改成并行 PROMPT_POOL"],
    "thinking": ["THINK_POOL"],
    "call": ["pytest -n 4 并行_pool"],
    "result": ["TOOLOUT_POOL"],
    "reply": ["REPLY_POOL"],
}


def ev(n: int, kind: str, step: str = "s1", **payload: Any) -> dict[str, Any]:
    return {
        "id": f"e{n}",
        "step_id": step,
        "timestamp": f"2026-09-01T10:00:{n:02d}Z",
        "type": kind,
        kind.replace(".", "_"): payload,
    }


def events() -> list[dict[str, Any]]:
    return [
        ev(
            0,
            "session.start",
            workspace="/home/dev",
            working_directories=["/home/dev/测试"],
            prompt="把测试改成并行 PROMPT_POOL",
        ),
        ev(1, "session.input", id="i1", prompt="把测试改成并行 PROMPT_POOL", mode="agent"),
        ev(2, "tool_call.inference.start", chat_completion_request={"model": "malibu-2"}),
        ev(3, "thought.start"),
        ev(4, "thought.end", thought="先看配置 THINK_POOL"),
        ev(5, "tool_call.parsed", id="tc1", name="shell", args={"cmd": "pytest -n 4 并行_pool"}),
        ev(6, "tool_call.inference.end", input_tokens=900, output_tokens=40, cache_read_input_tokens=100),
        ev(7, "tool_call.result", id="tc1", tool_name="shell", observation="TOOLOUT_POOL 120 passed", is_error=False),
        ev(8, "assistant_message.start"),
        ev(9, "assistant_message.end", assistant_message="已改成并行 REPLY_POOL。日本語: 完了"),
    ]


def path(home: Path) -> Path:
    return home / ".local/state/poolside/trajectories" / NAME
