"""Sample copilot records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from typing import Any


def legacy_doc(sid: str = "legacy-0001") -> dict[str, Any]:
    return {
        "sessionId": sid,
        "startTime": "2025-09-01T08:00:00.000Z",
        "endTime": "2025-09-01T08:05:00.000Z",
        "chatMessages": [
            {"role": "system", "content": "LEGACY_SYSTEM_PROMPT"},
            {"role": "user", "content": "旧版会话 LEGACY_PROMPT"},
            {
                "role": "assistant",
                "content": "Looking.",
                "tool_calls": [
                    {
                        "id": "tc1",
                        "type": "function",
                        "function": {"name": "bash", "arguments": json.dumps({"command": "ls LEGACY_DIR"})},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "tc1", "content": "LEGACY_TOOL_OUTPUT"},
            {"role": "assistant", "content": "LEGACY_REPLY"},
            {"role": "critic", "content": "?"},
        ],
        "timeline": [{"type": "tool_call_completed", "toolTitle": "bash", "arguments": {"command": "ls LEGACY_DIR"}}],
    }
