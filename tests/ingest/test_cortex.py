"""The Cortex Code adapter (documented) against conversations written here as agentsview's reader describes them.

No real conversation was captured (the CLI needs a Snowflake connection). Each is a JSON document
with its messages in ``history``, or in a companion ``<uuid>.history.jsonl`` when it grew large;
blocks nest their payloads (``tool_use``, ``tool_result``). Checked: the contract (kinds, one
prompt, paired tool calls, files untouched, an unchanged rescan), injected text (``internalOnly``,
system reminders) as meta, the companion history and a line added to it, a bad line costing only
itself, backups and the placeholder title left out, and the place.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample, read_events
from voyager_sessions.ingest.adapters.cortex import conversations_dir
from tests.support.samples.cortex import SID, MARKERS, history, doc, folder, write_companion


def test_a_conversation_holds_to_the_contract(home: Path, run) -> None:
    (folder(home) / f"{SID}.json").write_text(json.dumps(doc(), ensure_ascii=False))
    (folder(home) / f"{SID}.back.1780000000.json").write_text(json.dumps(doc(title="BACKUP_CTX"), ensure_ascii=False))
    assert check_sample(run, home, "cortex", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["git_branch"]) == (
        f"cortex:{SID}",
        "订单统计",
        "/home/dev/分析",
        "main",
    )
    assert not hits(run, "BACKUP_CTX")
    (call,) = [e for e in read_events("cortex", {"HOME": str(home)})[0] if e.kind == "tool_call"]
    assert call.text == "SELECT count(*) FROM 订单_ctx", "the SQL tool's call is its statement, as written"


def test_a_companion_history_and_a_line_added_to_it(home: Path, run) -> None:
    (folder(home) / f"{SID}.json").write_text(json.dumps(doc([], title=f"Chat for session: {SID}"), ensure_ascii=False))
    companion = folder(home) / f"{SID}.history.jsonl"
    write_companion(companion, [history()[0], b"{broken\n", *history()[1:]])
    out = scan(run)
    assert out["failed"] == 0
    assert one(run, "PROMPT_CTX", "user", "human") and one(run, "TOOLOUT_CTX", "tool_result", "tool")
    assert "Chat for session" not in sessions(run)[f"cortex:{SID}"]["title"], "the placeholder is no title"
    write_companion(
        companion,
        [*history(), {"role": "user", "id": "m4", "content": [{"type": "text", "text": "按地区拆分 PROMPT2_CTX"}]}],
    )
    out = scan(run)
    assert out["changed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_CTX", "user", "human")


def test_a_document_cut_mid_write_costs_only_itself(home: Path, run) -> None:
    (folder(home) / f"{SID}.json").write_text(json.dumps(doc(), ensure_ascii=False)[:200])
    (folder(home) / "other.json").write_text(
        json.dumps(doc(session_id="other", history=[history()[0]]), ensure_ascii=False)
    )
    out = json.loads(run("scan", "--json").stdout)
    assert out["failed"] == 1 and len(hits(run, "PROMPT_CTX")) == 1


def test_place(tmp_path: Path) -> None:
    assert conversations_dir({"HOME": str(tmp_path)}) == tmp_path / ".snowflake/cortex/conversations"
    assert conversations_dir({"HOME": "/h", "VOYAGER_CORTEX_HOME": "/v"}) == Path("/v/conversations")
