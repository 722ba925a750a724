"""The DeepSeek TUI / CodeWhale adapter (documented) against session documents written here as agentsview reads them.

No real session was captured (the npm package is a stub for ``codewhale``, not on this registry).
Each session is one JSON document, ``{metadata, messages}``, with Anthropic-style blocks. Checked:
the contract (kinds, one prompt, paired tool call, files untouched, an unchanged rescan), a
``user`` message of tool results that is no prompt, both homes, ``latest.json`` and
``offline_queue.json`` left alone, a turn added to the rewritten file read as what it adds, a
file cut mid-write costing only itself, and an unknown block named.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.deepseek_tui import sessions_dirs
from tests.support.samples.deepseek_tui import SID, MARKERS, messages, doc, write


def test_a_session_holds_to_the_contract(home: Path, run) -> None:
    write(home, doc())
    write(home, {"id": SID}, name="latest.json")
    write(home, [{"prompt": "QUEUED_DST"}], name="offline_queue.json")
    assert check_sample(run, home, "deepseek-tui", {**MARKERS, "absent": ["QUEUED_DST", "SYSTEM_DST"]})["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["model"]) == (
        f"deepseek-tui:{SID}",
        "内存泄漏",
        "/home/dev/服务",
        "deepseek-v4",
    )


def test_the_older_home_is_read_too(home: Path, run) -> None:
    write(home, doc(), root=".deepseek")
    assert scan(run)["new"] == 1 and one(run, "PROMPT_DST", "user", "human")


def test_an_added_turn_costs_what_it_adds(home: Path, run) -> None:
    path = write(home, doc())
    scan(run)
    more = [*messages(), {"role": "user", "content": "再查一次 PROMPT2_DST", "timestamp": "2026-05-01T10:05:00Z"}]
    path.write_text(json.dumps(doc(more), ensure_ascii=False))
    out = scan(run)
    assert out["changed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_DST", "user", "human")


def test_a_file_cut_mid_write_costs_only_itself(home: Path, run) -> None:
    write(home, json.dumps(doc(), ensure_ascii=False)[:300])
    other = dict(doc(), metadata={**doc()["metadata"], "id": "other"})
    other["messages"] = [{"role": "user", "content": "别的会话 PROMPT_OTHER_DST"}]
    write(home, other, name="other.json")
    res = run("scan", "--json")
    assert json.loads(res.stdout)["failed"] == 1
    assert one(run, "PROMPT_OTHER_DST", "user", "human") and not hits(run, "PROMPT_DST")


def test_an_unknown_block_is_named(home: Path, run) -> None:
    msgs = messages()
    msgs[4]["content"].append({"type": "hologram", "data": "x"})
    write(home, doc(msgs))
    out = scan(run)
    assert "block:hologram" in out["stderr"] and one(run, "REPLY_DST", "assistant", "agent")


def test_places(tmp_path: Path) -> None:
    assert sessions_dirs({"HOME": str(tmp_path)}) == [tmp_path / ".codewhale/sessions", tmp_path / ".deepseek/sessions"]
    assert sessions_dirs({"HOME": "/h", "VOYAGER_DEEPSEEK_TUI_HOME": "/v"}) == [Path("/v/sessions")]
