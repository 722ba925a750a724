"""The Posit Assistant adapter (documented) against conversation folders written here as agentsview reads them.

No real conversation was captured (an IDE extension). A conversation is a tree of nodes
(``conversation.json``) naming the AI SDK model messages appended to ``lm-messages.jsonl``; the
workspace's ``workspace.json`` names the project. Checked: the contract (kinds, one prompt, paired
tool call, files untouched, an unchanged rescan), the summary tags as meta, an inactive branch left
out, the render log not indexed, a subagent's conversation under its parent, a turn added, a bad
line costing only itself, and the place.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.ingest._cli import hits, one, scan, sessions
from tests.ingest._documented import check_sample
from tests.ingest._items import write
from voyager_sessions.ingest.adapters.posit_assistant import workspaces_dir

T = 1781000000000
MARKERS = {
    "prompt": ["画出销量趋势 PROMPT_PST"],
    "thinking": ["THINK_PST"],
    "call": ["ggplot(销量_pst)"],
    "result": ["TOOLOUT_PST"],
    "reply": ["REPLY_PST"],
    "meta": ["SUMMARY_PST"],
    "absent": ["INACTIVE_PST", "UICOPY_PST"],
}


def positai(n: int, **extra: Any) -> dict[str, Any]:
    return {"providerOptions": {"providerMetadata": {"positai": {"timestamp": T + n * 1000, **extra}}}}


def lm() -> list[dict[str, Any]]:
    usage = {"modelId": "claude-sonnet-4-5", "usage": {"inputTokens": 300, "outputTokens": 40, "cacheReadTokens": 50}}
    return [
        {"id": 0, "message": {"role": "system", "content": "You are Posit Assistant", **positai(0)}},
        {
            "id": 1,
            "message": {"role": "user", "content": [{"type": "text", "text": "画出销量趋势 PROMPT_PST"}], **positai(1)},
        },
        {
            "id": 2,
            "message": {
                "role": "assistant",
                "content": [
                    {"type": "reasoning", "text": "用 ggplot THINK_PST"},
                    {
                        "type": "tool-call",
                        "toolCallId": "tc1",
                        "toolName": "runCode",
                        "input": {"code": "ggplot(销量_pst)"},
                    },
                ],
                **positai(2, **usage),
            },
        },
        {
            "id": 3,
            "message": {
                "role": "tool",
                "content": [
                    {
                        "type": "tool-result",
                        "toolCallId": "tc1",
                        "toolName": "runCode",
                        "output": {"type": "text", "value": "TOOLOUT_PST plot.png"},
                    }
                ],
                **positai(3),
            },
        },
        {
            "id": 4,
            "message": {
                "role": "assistant",
                "content": "<MESSAGESUMMARY>SUMMARY_PST</MESSAGESUMMARY>趋势图画好了 REPLY_PST。日本語: 完了",
                **positai(4, **usage),
            },
        },
        {"id": 5, "message": {"role": "assistant", "content": "旧的回答 INACTIVE_PST", **positai(5)}},
    ]


def tree(kind: str = "chat", parent: str | None = None, ids: list[list[int]] | None = None) -> dict[str, Any]:
    nodes = [
        {
            "id": f"n{i}",
            "parentId": f"n{i - 1}" if i else None,
            "isActive": True,
            "lmMessageIds": group,
            "timestamp": T + i,
        }
        for i, group in enumerate(ids or [[0, 1], [2, 3], [4]])
    ]
    nodes.append({"id": "old", "parentId": "n1", "isActive": False, "lmMessageIds": [5], "timestamp": T + 9})
    meta: dict[str, Any] = {"kind": kind, "gitBranch": "main"}
    if parent:
        meta["parentTreeId"] = parent
    return {
        "schemaVersion": "3",
        "root": {"id": "r", "title": "销量趋势", "timestamp": T, "metadata": meta},
        "messages": nodes,
    }


def conversation(folder: Path, lines: list[Any], doc: dict[str, Any]) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "conversation.json").write_text(json.dumps(doc, ensure_ascii=False))
    write(folder / "lm-messages.jsonl", lines)
    write(folder / "ui-messages.jsonl", [{"id": "u1", "parts": [{"type": "text", "text": "UICOPY_PST"}]}])
    return folder


def workspace(home: Path) -> Path:
    ws = home / ".posit/assistant/workspaces/ws-1"
    ws.mkdir(parents=True, exist_ok=True)
    (ws / "workspace.json").write_text(json.dumps({"path": "/home/dev/销量分析"}, ensure_ascii=False))
    return ws


def test_a_conversation_holds_to_the_contract(home: Path, run) -> None:
    conversation(workspace(home) / "conv-1", lm(), tree())
    assert check_sample(run, home, "posit-assistant", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["git_branch"], row["model"]) == (
        "posit-assistant:conv-1",
        "销量趋势",
        "/home/dev/销量分析",
        "main",
        "claude-sonnet-4-5",
    )


def test_a_subagents_conversation_sits_under_its_parent(home: Path, run) -> None:
    parent = conversation(workspace(home) / "conv-1", lm(), tree())
    sub_lm = [
        {"id": 0, "message": {"role": "user", "content": "检查数据 DELEGATE_PST"}},
        {"id": 1, "message": {"role": "assistant", "content": "数据完整 SUBREPLY_PST"}},
    ]
    conversation(parent / "subagents" / "sub-1", sub_lm, tree("subagent", "conv-1", [[0], [1]]))
    scan(run)
    child = sessions(run)[one(run, "DELEGATE_PST", "user", "provider")["session_id"]]
    assert child["parent"] == "posit-assistant:conv-1" and child["cwd"] == "/home/dev/销量分析"


def test_a_turn_added_and_a_bad_line(home: Path, run) -> None:
    folder = conversation(workspace(home) / "conv-1", [*lm()[:2], b"{broken\n", *lm()[2:]], tree())
    assert scan(run)["failed"] == 0 and one(run, "REPLY_PST", "assistant", "agent")
    more = [*lm(), {"id": 6, "message": {"role": "user", "content": "改成柱状图 PROMPT2_PST"}}]
    write(folder / "lm-messages.jsonl", more)
    (folder / "conversation.json").write_text(json.dumps(tree(ids=[[0, 1], [2, 3], [4], [6]]), ensure_ascii=False))
    out = scan(run)
    assert out["changed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_PST", "user", "human") and not hits(run, "INACTIVE_PST")


def test_place(tmp_path: Path) -> None:
    assert workspaces_dir({"HOME": str(tmp_path)}) == tmp_path / ".posit/assistant/workspaces"
    assert workspaces_dir({"HOME": "/h", "VOYAGER_POSIT_ASSISTANT_HOME": "/v"}) == Path("/v/workspaces")
