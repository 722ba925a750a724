"""The Poolside Agent CLI adapter (documented) against trajectories written here in the event shapes agentsview reads.

No real trajectory was captured (a Poolside account). A session is one NDJSON log of events, each
with its payload under the event's own name. Checked: the contract (kinds, one prompt, paired tool
call, files untouched, an unchanged rescan), the cwd, model and tokens, the start event's copy of the
prompt not indexed again, an appended turn, a cut last line, a bad line costing only itself, an
unknown event named, and the places.
"""

from __future__ import annotations
import json
import sys
from pathlib import Path
from tests.support.scanning import one, scan, sessions
from tests.support.documented import check_sample
from tests.support.items import write
from voyager_sessions.ingest.adapters.poolside import native_id_of, trajectories_dirs
from tests.support.samples.poolside import NAME, MARKERS, ev, events, path


def test_a_trajectory_holds_to_the_contract(home: Path, run) -> None:
    write(path(home), events())
    assert check_sample(run, home, "poolside", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"]) == (
        f"poolside:{native_id_of(NAME)}",
        "/home/dev/测试",
        "malibu-2",
    )


def test_an_appended_turn_a_cut_line_a_bad_line_and_an_unknown_event(home: Path, run) -> None:
    more = json.dumps(ev(20, "session.input", prompt="再快一点 PROMPT2_POOL"), ensure_ascii=False).encode()
    p = write(path(home), [*events()[:3], b"{broken\n", *events()[3:]], raw_tail=more[:25])
    out = scan(run)
    assert (
        out["failed"] == 0
        and one(run, "TOOLOUT_POOL", "tool_result", "tool")
        and one(run, "REPLY_POOL", "assistant", "agent")
    )
    with p.open("ab") as f:
        f.write(more[25:] + b"\n" + json.dumps(ev(21, "hologram.start")).encode() + b"\n")
    out = scan(run)
    assert out["grown"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_POOL", "user", "human") and "hologram.start" in out["stderr"]


def test_places(tmp_path: Path) -> None:
    if sys.platform.startswith("linux"):
        assert trajectories_dirs({"HOME": str(tmp_path)}) == [tmp_path / ".local/state/poolside/trajectories"]
        assert trajectories_dirs({"HOME": "/h", "XDG_STATE_HOME": "/s"}) == [Path("/s/poolside/trajectories")]
    assert trajectories_dirs({"HOME": "/h", "VOYAGER_POOLSIDE_HOME": "/v"}) == [Path("/v/trajectories")]
    assert native_id_of(NAME) == "cli_6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0"
