"""The Codebuff / Freebuff adapter (documented) against session folders written here as agentsview's reader describes them.

No real Codebuff session was captured (the CLI downloads its binary at first start and needs its
service). A session is a folder named by its start time holding ``chat-messages.json`` (the chat as
shown: ``user``/``ai``/``error`` messages, ``ai`` ones made of blocks), ``run-state.json`` (the cwd,
the agent type) and ``chat-meta.json``. Checked: the contract (kinds, one prompt, a tool block's call
and output paired, files untouched, an unchanged rescan), a subagent's answer as its report, plans,
questions and errors as meta, a time of day that names no date, Freebuff's sessions, an added
message costing what it adds, a cut file costing only its session, and the place.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample, read_events
from voyager_sessions.ingest.adapters.codebuff import folder_time, projects_dir
from tests.support.samples.codebuff import FOLDER, MARKERS, chat, folder, write


def test_a_session_holds_to_the_contract(home: Path, run) -> None:
    write(folder(home), chat())
    assert check_sample(run, home, "codebuff", MARKERS, calls=2)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["resume"]) == (f"codebuff:shop/{FOLDER}", "/home/dev/商店", None)
    assert one(run, "SUBREPORT_CBF", "tool_result", "agent"), "a subagent's answer is its report"
    events, _ = read_events("codebuff", {"HOME": str(home)})
    (error,) = [e for e in events if "ERROR_CBF" in e.text]
    assert error.ts is None, "a time of day names no date"


def test_freebuff_sessions_are_read_the_same(home: Path, run) -> None:
    write(folder(home), chat(), agent_type="freebuff-base")
    assert scan(run)["new"] == 1 and one(run, "PROMPT_CBF", "user", "human")["provider"] == "codebuff"


def test_an_added_message_and_a_cut_file(home: Path, run) -> None:
    d = folder(home)
    write(d, chat())
    other = folder(home, "2026-03-02T09-00-00.000Z")
    write(other, [{"variant": "user", "content": "另一个 PROMPT_OTHER_CBF"}])
    scan(run)
    write(
        d, [*chat(), {"variant": "user", "content": "再调亮一点 PROMPT2_CBF", "timestamp": "2026-03-01T10:05:00.000Z"}]
    )
    write(other, json.dumps(chat(), ensure_ascii=False)[:50])
    out = json.loads(run("scan", "--json").stdout)
    assert out["changed"] == 1 and out["failed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_CBF", "user", "human") and hits(run, "PROMPT_OTHER_CBF")


def test_places_and_folder_times(tmp_path: Path) -> None:
    assert projects_dir({"HOME": str(tmp_path)}) == tmp_path / ".config/manicode/projects"
    assert projects_dir({"HOME": "/h", "VOYAGER_CODEBUFF_HOME": "/v"}) == Path("/v/projects")
    assert folder_time(FOLDER) == 1772359200.0 and folder_time("2026-03-01T10-00-00Z") == 1772359200.0
    assert folder_time("not-a-time") is None
