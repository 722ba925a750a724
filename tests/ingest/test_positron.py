"""The Positron Assistant adapter (documented) against chat-session files written here in VS Code's shapes.

No real Positron session was captured; agentsview reads Positron's ``chatSessions`` files with its
VS Code chat parser, so the sessions below are VS Code's (a serialized ``.json`` and a ``.jsonl``
mutation log) in Positron's user dir. Checked: the contract (kinds, one prompt, paired tool call,
files untouched), every request kept whoever answered (Positron's panel is not only Copilot's),
VS Code's own files left to Copilot Chat, a log that grows, a cut log line, and the places.
"""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from tests.support.samples.copilot_vscode import rich_session
from voyager_sessions.ingest.adapters.positron import ADAPTER
from tests.support.samples.positron import USER, MARKERS, chat_dir, log


def test_a_session_holds_to_the_contract(home: Path, run) -> None:
    (chat_dir(home) / "rich.json").write_text(json.dumps(rich_session(), ensure_ascii=False))
    assert check_sample(run, home, "positron", MARKERS, calls=2)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["resume"]) == ("positron:rich", "/home/dev/分析", None)
    # Positron's panel is Positron Assistant's: a request another participant answered is still its.
    assert one(run, "OTHERPARTICIPANTCVS", "user", "human")["provider"] == "positron"


def test_vs_codes_own_sessions_stay_copilots(home: Path, run) -> None:
    (chat_dir(home, Path(".config/Code/User")) / "rich.json").write_text(json.dumps(rich_session(), ensure_ascii=False))
    scan(run)
    assert {h["provider"] for h in hits(run, "PROMPTCVS")} == {"copilot-vscode"}


def test_a_mutation_log_grows_and_a_cut_line_waits(home: Path, run) -> None:
    first = {"requestId": "r0", "message": {"text": "画个直方图 PROMPT0_POS"}, "response": [{"value": "好 REPLY0_POS"}]}
    doc: dict[str, Any] = {"version": 3, "sessionId": "log1", "requests": [first]}
    req = {
        "requestId": "r1",
        "message": {"text": "载入 CSV 文件 PROMPT_POS"},
        "response": [{"value": "用 read.csv() REPLY_POS"}],
    }
    path = chat_dir(home) / "log1.jsonl"
    push = json.dumps({"kind": 2, "k": ["requests"], "v": [req]}, ensure_ascii=False).encode()
    log(path, [{"kind": 0, "v": doc}], tail=push[:25])
    assert scan(run)["failed"] == 0 and not hits(run, "PROMPT_POS")
    assert one(run, "PROMPT0_POS", "user", "human")
    log(path, [{"kind": 0, "v": doc}, {"kind": 2, "k": ["requests"], "v": [req]}])
    assert scan(run)["changed"] == 1
    assert one(run, "PROMPT_POS", "user", "human") and one(run, "REPLY_POS", "assistant", "agent")
    assert one(run, "PROMPT0_POS", "user", "human")


def test_places(tmp_path: Path) -> None:
    assert ADAPTER.roots({"HOME": str(tmp_path)}) == [tmp_path / USER]
    assert ADAPTER.roots({"HOME": "/h", "VOYAGER_POSITRON_HOME": "/v"}) == [Path("/v")]
