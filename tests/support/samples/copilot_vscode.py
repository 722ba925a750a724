"""Sample copilot vscode records and stores, built by code in the agent's real shapes (for its own tests and for
the tests of shared mechanisms that need such a store)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

CODE = Path(".config/Code/User")


def workspace(home: Path, ws: str = "ws1", folder: str | None = "file:///home/dev/%E5%95%86%E5%BA%97") -> Path:
    d = home / CODE / "workspaceStorage" / ws
    (d / "chatSessions").mkdir(parents=True, exist_ok=True)
    if folder is not None:
        (d / "workspace.json").write_text(json.dumps({"folder": folder}))
    return d / "chatSessions"


COPILOT = {
    "id": "github.copilot.editsAgent",
    "extensionId": {"value": "GitHub.copilot-chat", "_lower": "github.copilot-chat"},
}


def request(rid: str, prompt: str, response: list[Any], **extra: Any) -> dict[str, Any]:
    return {
        "requestId": rid,
        "message": {"text": prompt, "parts": []},
        "response": response,
        "timestamp": 1_767_225_600_000,
        "modelId": "copilot/gpt-5",
        "agent": COPILOT,
        **extra,
    }


def rich_session() -> dict[str, Any]:
    return {
        "version": 3,
        "sessionId": "rich",
        "creationDate": 1_767_225_500_000,
        "lastMessageDate": 1_767_225_900_000,
        "customTitle": "迁移数据库",
        "requests": [
            request(
                "r1",
                "数据库迁移失败 PROMPTCVS",
                [
                    {"kind": "thinking", "value": ["THINKCVS ", "check the schema"]},
                    {"value": "Let me ", "supportThemeIcons": False},
                    {
                        "kind": "inlineReference",
                        "inlineReference": {
                            "$mid": 1,
                            "fsPath": "/home/dev/商店/db.py",
                            "path": "/home/dev/商店/db.py",
                            "scheme": "file",
                        },
                    },
                    {"value": " run REPLYHALFCVS the tests."},
                    {
                        "kind": "toolInvocationSerialized",
                        "toolId": "run_in_terminal",
                        "toolCallId": "c1",
                        "invocationMessage": "Running pytest",
                        "isComplete": True,
                        "isConfirmed": {"type": 1},
                        "toolSpecificData": {
                            "kind": "terminal",
                            "language": "sh",
                            "commandLine": {"original": "pytest -q", "toolEdited": "pytest -q tests"},
                            "terminalCommandOutput": {"text": "TOOLOUTCVS 2 failed", "lineCount": 1},
                            "terminalCommandState": {"exitCode": 1, "duration": 900},
                        },
                    },
                    {
                        "kind": "toolInvocationSerialized",
                        "toolId": "copilot_readFile",
                        "toolCallId": "c2",
                        "invocationMessage": {"value": "Reading db.py"},
                        "pastTenseMessage": {"value": "Read db.py"},
                        "isComplete": True,
                        "toolSpecificData": {"kind": "input", "rawInput": {"filePath": "/home/dev/db.py"}},
                        "resultDetails": {
                            "input": "{}",
                            "output": [{"value": "READOUTCVS def migrate()", "isText": True}],
                            "isError": False,
                        },
                    },
                    {"kind": "codeblockUri", "uri": {"path": "/x"}},
                    {"kind": "markdownContent", "content": {"value": "REPLYCVS 已修复 the guard."}},
                    {"kind": "undoStop", "id": "u"},
                    {"kind": "brandNewPart", "value": "?"},
                ],
                result={"metadata": {"promptTokens": 900, "outputTokens": 40}},
            ),
            request(
                "r2",
                "OTHERPARTICIPANTCVS ask azure",
                [{"value": "OTHERREPLYCVS"}],
                agent={"id": "ms-azuretools.azure-agent", "extensionId": {"value": "ms-azuretools.vscode-azure"}},
            ),
            request(
                "r3",
                "second turn PROMPT2CVS",
                [],
                result={"errorDetails": {"message": "ERRORCVS rate limited", "responseIsFiltered": False}},
            ),
        ],
    }
