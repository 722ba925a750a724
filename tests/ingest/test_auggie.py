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
import pytest
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.auggie import resume_command, sessions_dir
from tests.support.samples.auggie import SID, MARKERS, exchanges, doc, write


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
