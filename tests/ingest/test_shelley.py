"""The Shelley adapter (documented) against databases built here in the schema agentsview's tests use.

No real Shelley database was captured. ``messages.llm_data`` is Go-serialized JSON with integer
content types; checked: the contract (kinds, one prompt, paired tool call, files untouched, an
unchanged rescan), a subagent's conversation (not user-initiated) under its parent, text kept only
in ``user_data``, tokens, a new message read while other conversations stay, a broken row costing
only itself, an unknown content type named, and the place.
"""

from __future__ import annotations
import json
import sqlite3
from pathlib import Path
from tests.support.scanning import one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.shelley import db_path, probe
from tests.support.samples.shelley import MARKERS, llm, main_messages, write_db


def test_a_conversation_holds_to_the_contract(home: Path, run) -> None:
    write_db(home, [("c1", "deploy-staging", 1, None)], {"c1": main_messages()})
    assert check_sample(run, home, "shelley", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["model"]) == (
        "shelley:c1",
        "deploy-staging",
        "/home/dev/部署",
        "claude-sonnet-4-5",
    )
    assert probe(str(db_path({"HOME": str(home)}))) == "conversations+messages"


def test_a_subagent_under_its_parent_and_user_data(home: Path, run) -> None:
    sub = [
        ("user", None, json.dumps({"text": "检查日志 DELEGATE_SHL"}, ensure_ascii=False), None),
        ("agent", llm(1, {"Type": 2, "Text": "日志正常 SUBREPLY_SHL"}), None, None),
    ]
    write_db(home, [("c1", "deploy", 1, None), ("c2", "check-logs", 0, "c1")], {"c1": main_messages(), "c2": sub})
    scan(run)
    hit = one(run, "DELEGATE_SHL", "user", "provider")
    assert sessions(run)[hit["session_id"]]["parent"] == "shelley:c1"


def test_a_new_message_a_broken_row_and_an_unknown_content_type(home: Path, run) -> None:
    path = write_db(
        home,
        [("c1", "deploy", 1, None), ("c2", "other", 1, None)],
        {"c1": main_messages(), "c2": [("user", llm(0, {"Type": 2, "Text": "别的 PROMPT_OTHER_SHL"}), None, None)]},
    )
    scan(run)
    conn = sqlite3.connect(path)
    conn.execute(
        "INSERT INTO messages (message_id, conversation_id, sequence_id, type, llm_data) VALUES ('c1-9', 'c1', 9, 'user', ?)",
        (llm(0, {"Type": 2, "Text": "回滚 PROMPT2_SHL"}, {"Type": 42, "X": 1}),),
    )
    conn.execute(
        "INSERT INTO messages (message_id, conversation_id, sequence_id, type, llm_data) VALUES ('c1-10', 'c1', 10, 'user', '{broken')"
    )
    conn.commit()
    conn.close()
    out = scan(run)
    assert out["changed"] == 1 and out["failed"] == 0, out
    assert "content type 42" in out["stderr"] and "llm_data:not-json" in out["stderr"]
    assert one(run, "PROMPT2_SHL", "user", "human") and one(run, "PROMPT_OTHER_SHL", "user", "human")


def test_place(tmp_path: Path) -> None:
    assert db_path({"HOME": str(tmp_path)}) == tmp_path / ".config/shelley/shelley.db"
    assert db_path({"HOME": "/h", "VOYAGER_SHELLEY_HOME": "/v"}) == Path("/v/shelley.db")
