"""The Forge adapter (documented) against databases built here in the schema agentsview's tests use.

No real Forge store was captured. ``conversations`` rows hold each conversation's messages as JSON
in ``context``; checked: the contract (kinds, one prompt, paired tool call, files untouched, an
unchanged rescan), the cwd from the system prompt, a subagent's conversation under the task call
that started it (its prompt the parent's), an empty conversation, a changed conversation read again
while the others stay, a broken context costing only itself, an unknown schema named, and the place.
"""

from __future__ import annotations
import json
import sqlite3
from pathlib import Path
from tests.support.scanning import one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.forge import db_path, probe
from tests.support.samples.forge import MARKERS, text, messages, write_db


def test_a_conversation_holds_to_the_contract(home: Path, run) -> None:
    write_db(home, [("conv-1", "API 限流", messages()), ("conv-empty", "nothing yet", None)])
    assert check_sample(run, home, "forge", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["model"]) == (
        "forge:conv-1",
        "API 限流",
        "/home/dev/网关",
        "gpt-5.4",
    )
    assert probe(str(db_path({"HOME": str(home)}))) == "conversations"


def test_a_subagents_conversation_sits_under_its_parent(home: Path, run) -> None:
    child = [
        text("User", "写文档 DELEGATE_FRG", "2026-05-02T09:58:17Z"),
        text("Assistant", "文档写好了 SUBREPLY_FRG", "2026-05-02T09:58:18Z"),
    ]
    write_db(home, [("conv-1", "API 限流", messages(child="conv-sub")), ("conv-sub", None, child)])
    scan(run)
    hit = one(run, "DELEGATE_FRG", "user", "provider")
    assert sessions(run)[hit["session_id"]]["parent"] == "forge:conv-1"


def test_a_changed_conversation_is_read_again_and_a_broken_one_costs_only_itself(home: Path, run) -> None:
    path = write_db(
        home,
        [
            ("conv-1", "API 限流", messages()),
            ("conv-2", "other", [text("User", "别的 PROMPT_OTHER_FRG", "2026-05-02T11:00:00Z")]),
        ],
    )
    scan(run)
    conn = sqlite3.connect(path)
    more = [*messages(), text("User", "再加日志 PROMPT2_FRG", "2026-05-02T10:05:00Z")]
    conn.execute(
        "UPDATE conversations SET context = ? WHERE conversation_id = 'conv-1'",
        (json.dumps({"messages": more}, ensure_ascii=False),),
    )
    conn.execute("UPDATE conversations SET context = '{broken' WHERE conversation_id = 'conv-2'")
    conn.commit()
    conn.close()
    out = scan(run)
    assert out["failed"] == 0 and "context:not-json" in out["stderr"]
    assert one(run, "PROMPT2_FRG", "user", "human")


def test_an_unknown_schema_is_named_and_the_place(home: Path, run, tmp_path: Path) -> None:
    path = home / ".forge" / ".forge.db"
    path.parent.mkdir()
    sqlite3.connect(path).execute("CREATE TABLE chats (id TEXT)").connection.close()
    assert probe(str(path)) == "unknown-schema"
    assert "not a Forge store" in run("scan", "--json").stderr
    assert db_path({"HOME": "/h", "VOYAGER_FORGE_HOME": "/v"}) == Path("/v/.forge.db")
