"""The Visual Studio Copilot adapter (documented) against OpenTelemetry trace files written here as agentsview reads them.

No real trace was captured (Visual Studio runs on Windows). Each line of a trace file is one OTLP
export; a conversation's spans (``gen_ai.conversation.id``) spread over several files and a file
holds several conversations. Checked: the contract (kinds, one prompt per turn although every call
of a turn resends it, paired tool call, files untouched, an unchanged rescan), two conversations in
one folder, a new span read with the others unchanged, a bad line costing only itself, the model
and tokens, and the places.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.ingest._cli import hits, one, scan, sessions
from tests.ingest._documented import check_sample
from tests.ingest._items import write
from voyager_sessions.ingest.adapters.visualstudio_copilot import traces_dirs

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


def test_a_conversation_across_files_holds_to_the_contract(home: Path, run) -> None:
    one_, two = turn()
    write(folder(home) / "20260901_VSGitHubCopilot_traces_1.jsonl", [one_])
    write(folder(home) / "20260901_VSGitHubCopilot_traces_2.jsonl", [two])
    write(folder(home) / "unrelated.jsonl", [export(span(9, "other", gen_ai__operation__name="chat"))])
    assert check_sample(run, home, "visualstudio-copilot", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["model"]) == (f"visualstudio-copilot:{CONV}", "gpt-5")


def test_a_new_span_is_read_and_the_other_conversation_stays(home: Path, run) -> None:
    one_, two = turn()
    other = "0a1b2c3d-0000-4000-8000-000000000009"
    path = write(folder(home) / "a_VSGitHubCopilot_traces.jsonl", [one_, b"{broken\n", two])
    with path.open("a") as f:
        f.write(
            json.dumps(
                export(
                    chat(
                        5,
                        [{"role": "user", "parts": [{"type": "text", "content": "别的 PROMPT_OTHER_VSC"}]}],
                        [],
                        other,
                    )
                ),
                ensure_ascii=False,
            )
            + "\n"
        )
    out = scan(run)
    assert out["failed"] == 0 and one(run, "REPLY_VSC", "assistant", "agent") and hits(run, "PROMPT_OTHER_VSC")
    later = chat(7, [{"role": "user", "parts": [{"type": "text", "content": "再跑测试 PROMPT2_VSC"}]}], [], CONV)
    later["attributes"].append(attr("copilot_chat.root_request_id", "req-2"))
    with path.open("a") as f:
        f.write(json.dumps(export(later), ensure_ascii=False) + "\n")
    out = scan(run)
    assert out["changed"] == 1 and out["failed"] == 0, out
    assert one(run, "PROMPT2_VSC", "user", "human") and one(run, "PROMPT_OTHER_VSC", "user", "human")


def test_places(tmp_path: Path) -> None:
    if sys.platform.startswith("linux"):
        assert traces_dirs({"HOME": str(tmp_path)}) == [tmp_path / ".cache/VSGitHubCopilotLogs/traces"]
    assert traces_dirs({"HOME": "/h", "VOYAGER_VISUALSTUDIO_COPILOT_HOME": "/v"}) == [Path("/v")]
