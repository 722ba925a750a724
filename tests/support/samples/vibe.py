"""Sample vibe records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from typing import Any

CWD = "/home/dev/支付 服务"


LEGACY_SID = "c01fc521-783c-2afd-91df-fe044995fe5d"


def legacy_lines() -> list[dict[str, Any]]:
    return [
        {"role": "user", "content": "PROMPT_L1 迁移 ERR_MIGRATE_77", "injected": False, "message_id": "m1"},
        {
            "role": "assistant",
            "content": "我来运行这个命令。",
            "reasoning_content": "THINK_L1 check it",
            "tool_calls": [
                {
                    "id": "call_1",
                    "index": 0,
                    "type": "function",
                    "function": {"name": "bash", "arguments": json.dumps({"command": "echo TOOLOUT_L1 完成"})},
                }
            ],
        },
        {
            "role": "tool",
            "content": "command: echo TOOLOUT_L1 完成\nexit_code: 0\nstdout: TOOLOUT_L1 完成\n",
            "name": "bash",
            "tool_call_id": "call_1",
            "tool_result": {"output": {"exit_code": 0, "stdout": "TOOLOUT_L1 完成\n", "returncode": 0}},
        },
        {"role": "user", "content": "<compaction summary> NOT_A_PROMPT_L1", "injected": True},
        {
            "role": "assistant",
            "content": "REPLY_L1 完成",
            "tool_calls": [
                {"id": "call_2", "function": {"name": "grep", "arguments": json.dumps({"pattern": "数据"})}}
            ],
        },
    ]


def legacy_meta(sid: str = LEGACY_SID, **extra: Any) -> dict[str, Any]:
    return {
        "session_id": sid,
        "parent_session_id": None,
        "start_time": "2026-12-01T08:09:14.034290+00:00",
        "end_time": "2026-12-01T08:09:18.037390+00:00",
        "git_branch": "main",
        "environment": {"working_directory": CWD},
        "title": None,
        "title_source": "auto",
        "config": {"active_model": "mock", "models": {"mock": {"name": "mock-model", "alias": "mock"}}},
        "stats": {"session_prompt_tokens": 300, "session_completion_tokens": 60},
        "system_prompt": {"role": "system", "content": "STALE_SYSTEM_PROMPT"},
        **extra,
    }
