"""Sample Visual Studio Copilot OpenTelemetry trace files, built by code (agentsview `visualstudio_copilot.go`)."""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any


CONV = "7f3e2d1c-0b9a-4f8e-8d7c-6b5a4f3e2d1c"


MARKERS = {
    "prompt": ["修复构建错误 PROMPT_VSC"],
    "call": ["dotnet build 构建_vsc"],
    "result": ["TOOLOUT_VSC"],
    "reply": ["REPLY_VSC"],
}


def attr(key: str, value: Any) -> dict[str, Any]:
    return {"key": key, "value": {"intValue": str(value)} if isinstance(value, int) else {"stringValue": value}}


def span(n: int, conv: str = CONV, **attrs: Any) -> dict[str, Any]:
    return {
        "traceId": "t1",
        "spanId": f"{conv[:4]}-{n}",
        "name": "chat",
        "startTimeUnixNano": str(1783000000_000000000 + n * 1_000_000_000),
        "endTimeUnixNano": str(1783000000_500000000 + n * 1_000_000_000),
        "attributes": [attr(CONVERSATION_KEY, conv), *(attr(k.replace("__", "."), v) for k, v in attrs.items())],
    }


CONVERSATION_KEY = "gen_ai.conversation.id"


def export(*spans: dict[str, Any]) -> dict[str, Any]:
    return {"resourceSpans": [{"resource": {}, "scopeSpans": [{"scope": {"name": "copilot"}, "spans": list(spans)}]}]}


def chat(n: int, history: list[Any], output: list[Any], conv: str = CONV) -> dict[str, Any]:
    return span(
        n,
        conv,
        gen_ai__operation__name="chat",
        gen_ai__request__model="gpt-5",
        gen_ai__input__messages=json.dumps(history, ensure_ascii=False),
        gen_ai__output__messages=json.dumps(output, ensure_ascii=False),
        gen_ai__usage__input_tokens=500,
        gen_ai__usage__output_tokens=40,
        copilot_chat__root_request_id="req-1",
    )


def turn() -> tuple[dict[str, Any], dict[str, Any]]:
    prompt = {"role": "user", "parts": [{"type": "text", "content": "修复构建错误 PROMPT_VSC"}]}
    call = {
        "type": "tool_call",
        "id": "call_1",
        "name": "run_command_in_terminal",
        "arguments": {"command": "dotnet build 构建_vsc"},
    }
    first = chat(
        1,
        [{"role": "system", "parts": [{"type": "text", "content": "You are Copilot"}]}, prompt],
        [{"role": "assistant", "parts": [call]}],
    )
    tool = span(
        2,
        gen_ai__operation__name="execute_tool",
        gen_ai__tool__name="run_command_in_terminal",
        gen_ai__tool__call__id="call_1",
        gen_ai__tool__call__arguments=json.dumps({"command": "dotnet build 构建_vsc"}, ensure_ascii=False),
        gen_ai__tool__call__result="TOOLOUT_VSC Build succeeded",
    )
    second = chat(
        3,
        [prompt, {"role": "assistant", "parts": [call]}],
        [{"role": "assistant", "parts": [{"type": "text", "content": "构建好了 REPLY_VSC。日本語: 完了"}]}],
    )
    return export(first), export(tool, second)


def folder(home: Path) -> Path:
    return home / ".cache/VSGitHubCopilotLogs/traces"
