"""Sample mini swe agent records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters.base import Cursor, Source, fingerprint
from voyager_sessions.ingest.adapters.mini_swe_agent import ADAPTER, FILE

TEMPLATE = "Please solve this issue: {{task}}\n\nYou can execute bash commands.\n\n<system_information>\n{{system}}\n</system_information>\n"


def config_dir(home: Path) -> Path:
    return home / ".config" / "mini-swe-agent"


def assistant(text: str, command: str, call: str, ts: float, thought: str | None = None) -> dict[str, Any]:
    msg: dict[str, Any] = {
        "role": "assistant",
        "content": text,
        "tool_calls": [
            {
                "id": call,
                "type": "function",
                "function": {"name": "bash", "arguments": json.dumps({"command": command})},
            }
        ],
        "extra": {
            "timestamp": ts,
            "response": {
                "model": "mock-model",
                "usage": {"prompt_tokens": 10, "completion_tokens": 2},
                "choices": [{"message": {"reasoning_content": thought}}],
            },
        },
    }
    if thought:
        msg["reasoning_content"] = thought
    return msg


def tool(call: str, output: str, code: int, ts: float) -> dict[str, Any]:
    body = json.dumps({"returncode": code, "output": output}, ensure_ascii=True)
    return {
        "role": "tool",
        "tool_call_id": call,
        "content": body,
        "extra": {"raw_output": output, "returncode": code, "timestamp": ts, "exception_info": ""},
    }


def trajectory(
    marker: str, *, t0: float = 1796167163.0, steps: int = 2, template: str | None = TEMPLATE, version: str = "2.4.6"
) -> dict[str, Any]:
    task = f"修复登录 {marker}_TASK"
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": "You are a helpful assistant."},
        {"role": "user", "content": TEMPLATE.replace("{{task}}", task).replace("{{system}}", "Linux")},
        assistant("我先看看。", f"grep -r login {marker}_CMD", "call_1", t0, thought=f"想一想 {marker}_THINK"),
        tool("call_1", f"{marker}_OUT 找到了\n", 0, t0 + 1),
        assistant(f"完成 {marker}_REPLY。", "echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT", "call_2", t0 + 2),
        {
            "role": "tool",
            "tool_call_id": "call_2",
            "content": '{"returncode": -1, "output": "", "exception_info": "action was not executed"}',
            "extra": {
                "raw_output": "",
                "returncode": -1,
                "timestamp": t0 + 3,
                "exception_info": "action was not executed",
            },
        },
        {"role": "exit", "content": "", "extra": {"exit_status": "Submitted", "submission": ""}},
    ]
    if steps == 1:
        messages = messages[:4]
    agent = {"instance_template": template} if template is not None else {}
    return {
        "info": {
            "mini_version": version,
            "exit_status": "Submitted",
            "config": {"agent": agent, "model": {"model_name": "openai/mock-model"}, "environment": {"cwd": ""}},
        },
        "messages": messages,
        "trajectory_format": "mini-swe-agent-1.1",
    }


def write(folder: Path, doc: Any) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / FILE
    path.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return path


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    return list(ADAPTER.read(Source(provider="mini-swe-agent", path=str(path), fingerprint=fingerprint(path)), cursor))
