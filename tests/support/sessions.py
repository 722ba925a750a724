"""A Claude Code and a Codex session in their real JSONL shapes, and where each agent keeps them under a HOME:
the default corpus of the CLI tests (the ``corpus`` fixture in ``tests/conftest.py`` writes them).
"""

from __future__ import annotations

import json
from pathlib import Path

CLAUDE_SID = "5f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e5f"


CODEX_SID = "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"


def json_line(obj: dict) -> str:
    return json.dumps(obj, ensure_ascii=False) + "\n"


def claude_session_lines(sid: str = CLAUDE_SID, cwd: str = "/home/dev/shop") -> list[str]:
    """A small Claude Code session in its real JSONL shape: prompt, thinking, tool use, tool result, answer."""
    base = {
        "sessionId": sid,
        "cwd": cwd,
        "gitBranch": "main",
        "version": "2.0.14",
        "isSidechain": False,
        "userType": "external",
    }
    return [
        json_line(
            {
                **base,
                "type": "user",
                "uuid": "u0",
                "parentUuid": None,
                "isMeta": True,
                "timestamp": "2026-11-20T09:59:59.000Z",
                "message": {"role": "user", "content": "<system-reminder>injected context zebrafish</system-reminder>"},
            }
        ),
        json_line(
            {
                **base,
                "type": "user",
                "uuid": "u1",
                "parentUuid": "u0",
                "timestamp": "2026-11-20T10:00:00.000Z",
                "message": {
                    "role": "user",
                    "content": "我们的数据库迁移失败了，帮我看看 ERR_VOYAGER_00012 in parse_config_v2",
                },
            }
        ),
        json_line(
            {
                **base,
                "type": "assistant",
                "uuid": "a1",
                "parentUuid": "u1",
                "timestamp": "2026-11-20T10:00:04.000Z",
                "message": {
                    "id": "msg_01",
                    "model": "claude-sonnet-4",
                    "role": "assistant",
                    "type": "message",
                    "content": [
                        {
                            "type": "thinking",
                            "thinking": "Look at src/store/db.py before the marmalade",
                            "signature": "sig",
                        }
                    ],
                    "stop_reason": None,
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            }
        ),
        json_line(
            {
                **base,
                "type": "assistant",
                "uuid": "a2",
                "parentUuid": "a1",
                "timestamp": "2026-11-20T10:00:05.000Z",
                "message": {
                    "id": "msg_01",
                    "model": "claude-sonnet-4",
                    "role": "assistant",
                    "type": "message",
                    "content": [
                        {
                            "type": "tool_use",
                            "id": "toolu_01",
                            "name": "Bash",
                            "input": {"command": "pytest -q tests/test_migrate.py", "description": "run tests"},
                        }
                    ],
                    "stop_reason": "tool_use",
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            }
        ),
        json_line(
            {
                **base,
                "type": "user",
                "uuid": "u2",
                "parentUuid": "a2",
                "timestamp": "2026-11-20T10:00:09.000Z",
                "message": {
                    "role": "user",
                    "content": [
                        {
                            "type": "tool_result",
                            "tool_use_id": "toolu_01",
                            "is_error": True,
                            "content": "TypeError: 'NoneType' object is not subscriptable\n数字和据点 are apart here",
                        }
                    ],
                },
                "toolUseResult": {"stdout": "", "stderr": "TypeError", "interrupted": False},
            }
        ),
        json_line(
            {
                **base,
                "type": "assistant",
                "uuid": "a3",
                "parentUuid": "u2",
                "timestamp": "2026-11-20T10:00:12.000Z",
                "message": {
                    "id": "msg_02",
                    "model": "claude-sonnet-4",
                    "role": "assistant",
                    "type": "message",
                    "content": [
                        {"type": "text", "text": "The migration returns None; fixed the guard in parse_config_v2."}
                    ],
                    "stop_reason": "end_turn",
                    "usage": {"input_tokens": 10, "output_tokens": 5},
                },
            }
        ),
    ]


def codex_session_lines(sid: str = CODEX_SID, cwd: str = "/home/dev/api") -> list[str]:
    """A small Codex rollout in its current envelope shape."""

    def env(ts: str, typ: str, payload: dict) -> str:
        return json_line({"timestamp": ts, "type": typ, "payload": payload})

    return [
        env(
            "2026-11-21T08:00:00.000Z",
            "session_meta",
            {
                "id": sid,
                "timestamp": "2026-11-21T08:00:00.000Z",
                "cwd": cwd,
                "originator": "codex_cli_rs",
                "cli_version": "0.58.0",
                "git": {
                    "commit_hash": "abc123",
                    "branch": "feat/retry",
                    "repository_url": "git@example.com:dev/api.git",
                },
            },
        ),
        env(
            "2026-11-21T08:00:00.100Z",
            "turn_context",
            {
                "cwd": cwd,
                "model": "gpt-5-codex",
                "approval_policy": "on-request",
                "sandbox_policy": {"mode": "workspace-write"},
            },
        ),
        env(
            "2026-11-21T08:00:00.200Z",
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {
                        "type": "input_text",
                        "text": "<environment_context>\n  <cwd>/home/dev/api</cwd>\n</environment_context>",
                    }
                ],
            },
        ),
        env(
            "2026-11-21T08:00:01.000Z",
            "event_msg",
            {
                "type": "user_message",
                "message": "데이터베이스 연결 오류를 고쳐 줘, connection refused on port 5432",
                "images": [],
            },
        ),
        env(
            "2026-11-21T08:00:01.000Z",
            "response_item",
            {
                "type": "message",
                "role": "user",
                "content": [
                    {"type": "input_text", "text": "데이터베이스 연결 오류를 고쳐 줘, connection refused on port 5432"}
                ],
            },
        ),
        env(
            "2026-11-21T08:00:03.000Z",
            "response_item",
            {
                "type": "reasoning",
                "summary": [{"type": "summary_text", "text": "Check whether postgres listens before retrying"}],
                "encrypted_content": "xx",
            },
        ),
        env(
            "2026-11-21T08:00:04.000Z",
            "response_item",
            {
                "type": "function_call",
                "name": "shell",
                "call_id": "call_1",
                "arguments": json.dumps({"command": ["bash", "-lc", "pg_isready -h localhost"]}),
            },
        ),
        env(
            "2026-11-21T08:00:05.000Z",
            "response_item",
            {
                "type": "function_call_output",
                "call_id": "call_1",
                "output": json.dumps(
                    {
                        "output": "localhost:5432 - no response ERR_CONN_REFUSED_42",
                        "metadata": {"exit_code": 2, "duration_seconds": 0.1},
                    }
                ),
            },
        ),
        env(
            "2026-11-21T08:00:06.000Z",
            "event_msg",
            {"type": "agent_message", "message": "Postgres is down; start it with systemctl."},
        ),
        env(
            "2026-11-21T08:00:06.000Z",
            "response_item",
            {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": "Postgres is down; start it with systemctl."}],
            },
        ),
        env("2026-11-21T08:00:07.000Z", "event_msg", {"type": "token_count", "info": None}),
    ]


def write_claude(home: Path, lines: list[str], sid: str = CLAUDE_SID, project: str = "-home-dev-shop") -> Path:
    d = home / ".claude" / "projects" / project
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"{sid}.jsonl"
    p.write_text("".join(lines), encoding="utf-8")
    return p


def write_codex(home: Path, lines: list[str], sid: str = CODEX_SID) -> Path:
    d = home / ".codex" / "sessions" / "2026" / "11" / "21"
    d.mkdir(parents=True, exist_ok=True)
    p = d / f"rollout-2026-11-21T08-00-00-{sid}.jsonl"
    p.write_text("".join(lines), encoding="utf-8")
    return p
