"""The Augment Auggie adapter (package code) against session documents written here in the shape its bundle saves.

No real Auggie session was captured (every model call goes through Augment's service). The
documents below follow ``@augmentcode/auggie`` 0.36.0's session store: ``chatHistory`` exchanges
whose request and response nodes carry the conversation (``request_message`` and
``response_text`` are copies). Checked: the contract (kinds, one prompt per exchange, paired tool
call, files untouched, an unchanged rescan), a reply streamed in pieces read as one, the history
summary as meta, titles, backups left out, an added exchange costing what it adds, a cut file,
the quoted resume command, and the place.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path
from typing import Any

import pytest

from tests.ingest._cli import hits, one, scan, sessions
from tests.ingest._documented import check_sample
from voyager_sessions.ingest.adapters.auggie import resume_command, sessions_dir

SID = "5d6e7f80-91a2-4b3c-8d4e-5f60718293a4"
MARKERS = {
    "prompt": ["把日志改成结构化 PROMPT_AUG"],
    "thinking": ["THINK_AUG"],
    "call": ["grep -rn print 日志_aug"],
    "result": ["TOOLOUT_AUG"],
    "reply": ["REPLY_AUG"],
    "meta": ["SUMMARY_AUG"],
}


def exchanges() -> list[dict[str, Any]]:
    return [
        {
            "exchange": {
                "request_id": "r1",
                "request_message": "把日志改成结构化 PROMPT_AUG",
                "request_nodes": [
                    {"id": 0, "type": 10, "text_node": {"content": "Earlier: SUMMARY_AUG"}},
                    {"id": 1, "type": 0, "text_node": {"content": "把日志改成结构化 PROMPT_AUG"}},
                ],
                "response_text": "我先找 print。",
                "response_nodes": [
                    {"id": 0, "type": 8, "content": "", "thinking": {"content": "先搜索 THINK_AUG"}},
                    {"id": 1, "type": 0, "content": "我先找 print。"},
                    {
                        "id": 2,
                        "type": 5,
                        "content": "",
                        "tool_use": {
                            "tool_use_id": "tu1",
                            "tool_name": "launch-process",
                            "input_json": json.dumps({"command": "grep -rn print 日志_aug"}),
                        },
                    },
                    {"id": 3, "type": 9, "content": "", "billing": {"credits": 2}},
                ],
            },
            "completed": True,
            "sequenceId": 1,
            "finishedAt": "2026-07-01T08:00:05Z",
        },
        {
            "exchange": {
                "request_id": "r2",
                "request_message": "",
                "request_nodes": [
                    {
                        "id": 0,
                        "type": 1,
                        "tool_result_node": {
                            "tool_use_id": "tu1",
                            "content": "TOOLOUT_AUG 7 matches",
                            "is_error": False,
                        },
                    }
                ],
                "response_text": "改好了 REPLY_AUG。",
                "response_nodes": [
                    {"id": 0, "type": 0, "content": "改好了 "},
                    {"id": 1, "type": 0, "content": "REPLY_AUG。日本語: 完了"},
                ],
            },
            "completed": True,
            "sequenceId": 2,
            "finishedAt": "2026-07-01T08:00:09Z",
        },
    ]


def doc(history: list[Any] | None = None, **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": SID,
        "created": "2026-07-01T08:00:00Z",
        "modified": "2026-07-01T08:00:09Z",
        "title": "结构化日志",
        "workspaceId": "ws-1",
        "agentState": {"modelId": "claude-sonnet-4-5", "userEmail": "dev@example.com"},
        "chatHistory": exchanges() if history is None else history,
        **extra,
    }


def write(home: Path, body: Any, name: str = f"{SID}.json") -> Path:
    path = home / ".augment/sessions" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(body if isinstance(body, str) else json.dumps(body, ensure_ascii=False))
    return path


def test_a_session_holds_to_the_contract(home: Path, run) -> None:
    write(home, doc())
    write(home, doc(title="BACKUP_AUG"), name=f"{SID}-backup3.json")
    assert check_sample(run, home, "auggie", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["title_source"], row["model"]) == (
        f"auggie:{SID}",
        "结构化日志",
        "agent",
        "claude-sonnet-4-5",
    )
    assert shlex.split(row["resume"]) == ["auggie", "--resume", SID]
    assert not hits(run, "BACKUP_AUG")
    assert one(run, "改好了 REPLY_AUG", "assistant", "agent"), "a reply streamed in pieces is one message"


def test_a_title_the_person_set_wins(home: Path, run) -> None:
    write(home, doc(customTitle="我的标题"))
    scan(run)
    (row,) = sessions(run).values()
    assert (row["title"], row["title_source"]) == ("我的标题", "user")


def test_an_added_exchange_costs_what_it_adds_and_a_cut_file_waits(home: Path, run) -> None:
    path = write(home, doc())
    scan(run)
    more = [
        *exchanges(),
        {
            "exchange": {"request_message": "再加测试 PROMPT2_AUG", "request_nodes": [], "response_nodes": []},
            "finishedAt": "2026-07-01T08:10:00Z",
        },
    ]
    path.write_text(json.dumps(doc(more), ensure_ascii=False)[:-40])
    out = json.loads(run("scan", "--json").stdout)
    assert out["failed"] == 1 and not hits(run, "PROMPT2_AUG") and one(run, "PROMPT_AUG", "user", "human")
    path.write_text(json.dumps(doc(more), ensure_ascii=False))
    out = scan(run)
    assert out["changed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_AUG", "user", "human")


def test_place(tmp_path: Path) -> None:
    assert sessions_dir({"HOME": str(tmp_path)}) == tmp_path / ".augment/sessions"
    assert sessions_dir({"HOME": "/h", "VOYAGER_AUGGIE_HOME": "/v"}) == Path("/v/sessions")


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(evil: str) -> None:
    assert shlex.split(resume_command(evil)) == ["auggie", "--resume", evil]
