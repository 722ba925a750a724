"""The WorkBuddy adapter (documented) against session logs written here in the item shapes agentsview reads.

No real WorkBuddy log was captured (it needs a Tencent login). A session is one JSONL log of
OpenAI Agents SDK items (``message``, ``function_call``, ``function_call_result``) with
``providerData`` on the assistant's. Checked: the contract (kinds, one prompt, paired tool call,
files untouched, an unchanged rescan), tokens and model, a subagent's log under its parent, an
appended turn read from the Cursor, a cut last line, a bad line costing only itself, an unknown
item named, and the place.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import one, scan, sessions
from tests.support.documented import check_sample
from tests.support.items import write
from voyager_sessions.ingest.adapters.workbuddy import projects_dir
from tests.support.samples.workbuddy import T, MARKERS, items, log


def test_a_session_holds_to_the_contract(home: Path, run) -> None:
    write(log(home), items())
    assert check_sample(run, home, "workbuddy", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"], row["resume"]) == (
        "workbuddy:s-1",
        "/home/dev/周报",
        "hunyuan-t2",
        None,
    )


def test_a_subagents_log_is_a_session_under_its_parent(home: Path, run) -> None:
    write(log(home), items())
    sub = [{"type": "message", "role": "user", "content": "检查拼写 SUBTASK_WB", "timestamp": T + 1500}]
    write(log(home, "s-1/subagents/checker.jsonl"), sub)
    scan(run)
    child = sessions(run)[one(run, "SUBTASK_WB", "user", "provider")["session_id"]]
    assert child["parent"] == "workbuddy:s-1"


def test_an_appended_turn_a_cut_line_and_a_bad_line(home: Path, run) -> None:
    more = json.dumps(
        {"type": "message", "role": "user", "content": "再短一点 PROMPT2_WB", "timestamp": T + 9000}, ensure_ascii=False
    ).encode()
    path = write(log(home), [items()[0], b"{not json\n", *items()[1:]], raw_tail=more[:20])
    out = scan(run)
    assert (
        out["failed"] == 0
        and one(run, "REPLY_WB", "assistant", "agent")
        and one(run, "TOOLOUT_WB", "tool_result", "tool")
    )
    with path.open("ab") as f:
        f.write(more[20:] + b"\n" + json.dumps({"type": "hologram"}).encode() + b"\n")
    out = scan(run)
    assert out["grown"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_WB", "user", "human") and "hologram" in out["stderr"]


def test_place(tmp_path: Path) -> None:
    assert projects_dir({"HOME": str(tmp_path)}) == tmp_path / ".workbuddy/projects"
    assert projects_dir({"HOME": "/h", "VOYAGER_WORKBUDDY_HOME": "/v"}) == Path("/v/projects")
