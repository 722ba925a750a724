"""The TRAE CLI adapter (documented) against rollouts built here in Codex's format, under TRAE CLI's home.

No real TRAE CLI rollout was captured (the CLI needs a login); agentsview reads TRAE CLI with its
Codex parser unchanged, so the lines below are Codex rollout records (``session_meta``, a person's
``user_message``, the model's reasoning, a shell call and its output, the reply) under
``~/.trae/cli/sessions/YYYY/MM/DD/`` and ``archived_sessions/``; with CJK text, an appended turn,
a cut last line, Codex's own home left to Codex, and the quoted resume command.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.ingest._cli import hits, one, scan, sessions
from tests.ingest._documented import check_sample
from voyager_sessions.ingest.adapters.traex import ADAPTER

SID = "019a2b3c-4d5e-7f60-8a1b-2c3d4e5f6a7b"
CWD = "/home/dev/支付 service"
MARKERS = {
    "prompt": ["修复登录错误 PROMPT_TRX"],
    "thinking": ["THINK_TRX"],
    "call": ["pytest 测试_trx.py"],
    "result": ["TOOLOUT_TRX"],
    "reply": ["REPLY_TRX"],
    "meta": ["INJECTED_TRX"],
}


def line(kind: str, payload: dict[str, Any], t: str = "2026-12-01T08:00:01.000Z") -> dict[str, Any]:
    return {"timestamp": t, "type": kind, "payload": payload}


def rollout(cwd: str = CWD, prompt: str = "修复登录错误 PROMPT_TRX") -> list[dict[str, Any]]:
    return [
        line(
            "session_meta",
            {
                "id": SID,
                "timestamp": "2026-12-01T08:00:00.000Z",
                "cwd": cwd,
                "originator": "codex-tui",
                "cli_version": "2.0.3",
            },
            "2026-12-01T08:00:00.000Z",
        ),
        line(
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [{"type": "input_text", "text": "<environment_context>INJECTED_TRX</environment_context>"}],
            },
        ),
        line("turn_context", {"cwd": cwd, "model": "doubao-seed-code"}),
        line("response_item", {"type": "message", "role": "user", "content": [{"type": "input_text", "text": prompt}]}),
        line("event_msg", {"type": "user_message", "message": prompt}),
        line(
            "response_item",
            {"type": "reasoning", "summary": [{"type": "summary_text", "text": "先运行测试 THINK_TRX"}]},
        ),
        line(
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "arguments": json.dumps({"command": ["bash", "-lc", "pytest 测试_trx.py"]}),
                "call_id": "call_1",
            },
        ),
        line(
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": json.dumps({"output": "TOOLOUT_TRX 1 failed", "metadata": {"exit_code": 1}}),
            },
        ),
        line(
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "修好了 REPLY_TRX。한국어: 완료"}],
            },
        ),
    ]


def write(home: Path, lines: list[Any], *, folder: str = "sessions/2026/12/01", root: str = ".trae/cli") -> Path:
    path = home / root / folder / f"rollout-2026-12-01T08-00-00-{SID}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(
        b"".join(x if isinstance(x, bytes) else json.dumps(x, ensure_ascii=False).encode() + b"\n" for x in lines)
    )
    return path


def test_a_rollout_holds_to_the_contract(home: Path, run) -> None:
    write(home, rollout())
    assert check_sample(run, home, "traex", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"]) == (f"traex:{SID}", CWD, "doubao-seed-code")
    assert shlex.split(row["resume"]) == ["traex", "resume", SID]


def test_archived_rollouts_are_read_and_codex_keeps_its_own(home: Path, run) -> None:
    write(home, rollout(), folder="archived_sessions")
    write(home, rollout(prompt="codex 的 PROMPT_CDX"), root=".codex")
    scan(run)
    assert one(run, "PROMPT_TRX", "user", "human")["provider"] == "traex"
    assert {h["provider"] for h in hits(run, "PROMPT_CDX")} == {"codex"}


def test_an_appended_turn_and_a_cut_line(home: Path, run) -> None:
    more = line("event_msg", {"type": "user_message", "message": "第二轮 PROMPT2_TRX"}, "2026-12-01T08:05:00.000Z")
    cut = json.dumps(more, ensure_ascii=False).encode()
    path = write(home, [*rollout(), cut[:30]])
    assert scan(run)["failed"] == 0 and one(run, "REPLY_TRX", "assistant", "agent")
    with path.open("ab") as f:
        f.write(cut[30:] + b"\n")
    assert scan(run)["grown"] == 1
    assert one(run, "PROMPT2_TRX", "user", "human")


def test_a_bad_record_costs_only_itself(home: Path, run) -> None:
    lines: list[Any] = rollout()
    write(home, [*lines[:5], b'{"type": "response_item", "payload": {\n', *lines[5:]])
    assert scan(run)["failed"] == 0
    assert one(run, "REPLY_TRX", "assistant", "agent") and one(run, "TOOLOUT_TRX", "tool_result", "tool")


def test_places(tmp_path: Path) -> None:
    assert ADAPTER.roots({"HOME": str(tmp_path)}) == [
        tmp_path / ".trae/cli/sessions",
        tmp_path / ".trae/cli/archived_sessions",
    ]
    assert ADAPTER.roots({"HOME": "/h", "VOYAGER_TRAEX_HOME": "/v"}) == [
        Path("/v/sessions"),
        Path("/v/archived_sessions"),
    ]


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(home: Path, run, evil: str) -> None:
    lines = rollout()
    lines[0]["payload"]["id"] = evil
    write(home, lines)
    scan(run)
    (row,) = sessions(run).values()
    assert shlex.split(row["resume"]) == ["traex", "resume", evil]
