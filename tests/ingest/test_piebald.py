"""The Piebald adapter (documented) against databases built here in the tables agentsview and splitrail read.

No real Piebald database was captured (a desktop app). A chat's messages form a tree; their text
sits in content nodes below text parts, and a tool call part holds the call and its result.
Checked: the contract (kinds, one prompt, paired tool call, files untouched, an unchanged rescan),
thinking parts, the cwd from the worktree, a regenerated turn whose both branches are kept, a
subagent's chat under the chat that started it, a deleted chat left out, a new message read while
other chats stay, and the places.
"""

from __future__ import annotations
import sqlite3
import sys
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.piebald import db_paths, probe
from tests.support.samples.piebald import MARKERS, Db, base, path_of


def test_a_chat_holds_to_the_contract(home: Path, run) -> None:
    db = Db(path_of(home))
    base(db)
    db.chat(9, "deleted", is_deleted=1)
    db.message(90, 9, None, "user", ("text", ["DELETED_PBD"]))
    db.close()
    assert check_sample(run, home, "piebald", {**MARKERS, "absent": ["DELETED_PBD"]})["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["git_branch"], row["model"]) == (
        "piebald:1",
        "缓存重构",
        "/home/dev/缓存",
        "cache",
        "claude-opus-4",
    )
    assert probe(str(path_of(home))) == "chats+messages"


def test_both_branches_of_a_regenerated_turn_and_a_subagents_chat(home: Path, run) -> None:
    db = Db(path_of(home))
    base(db)
    db.message(3, 1, 1, "assistant", ("text", ["第一版回答 BRANCH1_PBD"]), enabled=0)
    db.chat(2, "子任务")
    db.message(
        4, 1, 2, "assistant", ("tool", ("tu2", "agent", '{"prompt": "查依赖"}', "依赖没问题", None, "completed", 2))
    )
    db.message(20, 2, None, "user", ("text", ["查依赖 DELEGATE_PBD"]))
    db.close()
    scan(run)
    assert one(run, "BRANCH1_PBD", "assistant", "agent") and one(run, "REPLY_PBD", "assistant", "agent")
    child = sessions(run)[one(run, "DELEGATE_PBD", "user", "provider")["session_id"]]
    assert child["parent"] == "piebald:1"


def test_a_new_message_is_read_and_other_chats_stay(home: Path, run) -> None:
    path = path_of(home)
    db = Db(path)
    base(db)
    db.chat(3, "other")
    db.message(30, 3, None, "user", ("text", ["别的 PROMPT_OTHER_PBD"]))
    db.close()
    scan(run)
    db = Db.__new__(Db)
    db.conn, db.n = sqlite3.connect(path), 1000
    db.message(5, 1, 2, "user", ("text", ["再加监控 PROMPT2_PBD"]))
    db.close()
    out = scan(run)
    assert out["changed"] == 1 and out["failed"] == 0, out
    assert one(run, "PROMPT2_PBD", "user", "human") and hits(run, "PROMPT_OTHER_PBD")


def test_places(tmp_path: Path) -> None:
    if sys.platform.startswith("linux"):
        assert db_paths({"HOME": str(tmp_path)}) == [tmp_path / ".local/share/piebald/app.db"]
        assert db_paths({"HOME": "/h", "XDG_DATA_HOME": "/x"}) == [Path("/x/piebald/app.db")]
    assert db_paths({"HOME": "/h", "VOYAGER_PIEBALD_HOME": "/v"}) == [Path("/v/app.db")]
