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
from typing import Any

from tests.ingest._cli import one, scan, sessions
from tests.ingest._documented import check_sample
from tests.ingest._items import write
from voyager_sessions.ingest.adapters.poolside import native_id_of, trajectories_dirs

NAME = "trajectory-cli_6f1e2d3c-4b5a-4968-8776-a5b4c3d2e1f0.ndjson"
MARKERS = {
    "prompt": ["把测试改成并行 PROMPT_POOL"],
    "thinking": ["THINK_POOL"],
    "call": ["pytest -n 4 并行_pool"],
    "result": ["TOOLOUT_POOL"],
    "reply": ["REPLY_POOL"],
}


def ev(n: int, kind: str, step: str = "s1", **payload: Any) -> dict[str, Any]:
    return {
        "id": f"e{n}",
        "step_id": step,
        "timestamp": f"2026-09-01T10:00:{n:02d}Z",
        "type": kind,
        kind.replace(".", "_"): payload,
    }


def events() -> list[dict[str, Any]]:
    return [
        ev(
            0,
            "session.start",
            workspace="/home/dev",
            working_directories=["/home/dev/测试"],
            prompt="把测试改成并行 PROMPT_POOL",
        ),
        ev(1, "session.input", id="i1", prompt="把测试改成并行 PROMPT_POOL", mode="agent"),
        ev(2, "tool_call.inference.start", chat_completion_request={"model": "malibu-2"}),
        ev(3, "thought.start"),
        ev(4, "thought.end", thought="先看配置 THINK_POOL"),
        ev(5, "tool_call.parsed", id="tc1", name="shell", args={"cmd": "pytest -n 4 并行_pool"}),
        ev(6, "tool_call.inference.end", input_tokens=900, output_tokens=40, cache_read_input_tokens=100),
        ev(7, "tool_call.result", id="tc1", tool_name="shell", observation="TOOLOUT_POOL 120 passed", is_error=False),
        ev(8, "assistant_message.start"),
        ev(9, "assistant_message.end", assistant_message="已改成并行 REPLY_POOL。日本語: 完了"),
    ]


def path(home: Path) -> Path:
    return home / ".local/state/poolside/trajectories" / NAME


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
