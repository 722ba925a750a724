"""The QwenPaw adapter (documented; package code 2.2.2.post1) against session files written here in both generations.

No session was persisted by a headless run here. The files below follow the package's own loader:
1.x ``agent.memory.content`` (``[message, marks]`` pairs, what agentsview reads, under ``~/.copaw``)
and 2.x ``agent.state.context`` (under ``~/.qwenpaw``), AgentScope messages whose tool results come
back in ``system`` messages. Checked: the contract for both (kinds, one prompt, paired tool call,
files untouched, an unchanged rescan), channel subfolders, dotted files and folders left out, a turn
added, a cut file costing only itself, and the places.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample, read_events
from voyager_sessions.ingest.adapters.qwenpaw import working_dirs
from tests.support.samples.qwenpaw import MARKERS, messages, legacy, current, write


def test_the_legacy_generation_holds_to_the_contract(home: Path, run) -> None:
    write(home, ".copaw", "console/alice_s-1.json", legacy(messages()))
    write(home, ".copaw", ".synced.json", {"files": {}})
    write(home, ".copaw", ".weixin-legacy/old.json", legacy(messages("旧的 LEGACYARCHIVE_QPW")))
    assert check_sample(run, home, "qwenpaw", {**MARKERS, "absent": ["LEGACYARCHIVE_QPW"]})["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["resume"]) == ("qwenpaw:default/console/alice_s-1", None)


def test_the_current_generation_holds_to_the_contract(home: Path, run) -> None:
    write(home, ".qwenpaw", "s-1.json", current(messages()))
    assert check_sample(run, home, "qwenpaw", MARKERS)["new"] == 1
    (call,) = [e for e in read_events("qwenpaw", {"HOME": str(home)})[0] if e.kind == "tool_call"]
    assert (call.tool, call.text) == ("execute_shell_command", "calendar add 开会_qpw"), "the shell tool's command line"


def test_a_turn_added_and_a_cut_file(home: Path, run) -> None:
    path = write(home, ".qwenpaw", "s-1.json", current(messages()))
    other = write(home, ".qwenpaw", "s-2.json", current(messages("另一件事 PROMPT_OTHER_QPW")))
    scan(run)
    more = [
        *messages(),
        {"id": "m6", "role": "user", "content": "改到后天 PROMPT2_QPW", "timestamp": "2026-10-01 09:10:00.000"},
    ]
    path.write_text(json.dumps(current(more), ensure_ascii=False))
    other.write_text(json.dumps(current(messages()), ensure_ascii=False)[:70])
    out = json.loads(run("scan", "--json").stdout)
    assert out["changed"] == 1 and out["failed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_QPW", "user", "human") and hits(run, "PROMPT_OTHER_QPW")


def test_places(tmp_path: Path) -> None:
    assert working_dirs({"HOME": str(tmp_path)}) == [tmp_path / ".qwenpaw", tmp_path / ".copaw"]
    assert working_dirs({"HOME": "/h", "QWENPAW_WORKING_DIR": "/w"}) == [Path("/w")]
    assert working_dirs({"HOME": "/h", "QWENPAW_WORKING_DIR": "/w", "VOYAGER_QWENPAW_HOME": "/v"}) == [Path("/v")]
