"""The QClaw adapter (documented) against transcripts written here in OpenClaw's JSONL generation, under ~/.qclaw.

No real QClaw store was captured (a Tencent build); its transcripts are OpenClaw's older JSONL,
read by the Pi reader. Checked: the contract (kinds, one prompt, paired tool call, files untouched,
an unchanged rescan), the label from ``sessions.json`` as title and a relabel seen by the stat pass,
the trace and checkpoint files left out, OpenClaw's own home not read, an appended turn, a cut last
line, and the place.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.documented import check_sample
from tests.support.samples.qclaw import MARKERS, SID, entry, lines, write
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.qclaw import ADAPTER, is_transcript


def test_a_transcript_holds_to_the_contract(home: Path, run) -> None:
    path = write(home, lines())
    (path.parent / f"{SID}.trajectory.jsonl").write_text(
        json.dumps({"traceSchema": "openclaw-trajectory", "data": {"prompt": "TRACE_QCL"}}) + "\n"
    )
    (path.parent / f"{SID}.checkpoint.0a1b.jsonl").write_text(
        json.dumps(lines()[3]).replace("PROMPT_QCL", "CHECKPOINT_QCL") + "\n"
    )
    assert check_sample(run, home, "qclaw", {**MARKERS, "absent": ["TRACE_QCL", "CHECKPOINT_QCL"]})["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["resume"]) == (
        f"qclaw:{SID}",
        "周会",
        "/home/dev/办公",
        None,
    )


def test_a_relabel_is_seen_and_openclaws_home_is_not_read(home: Path, run) -> None:
    write(home, lines())
    scan(run)
    write(home, lines(), label="改名了")
    out = scan(run)
    assert out["grown"] + out["changed"] == 1, out  # the index is part of the transcript's fingerprint
    (row,) = sessions(run).values()
    assert row["title"] == "改名了"
    other = home / ".openclaw/agents/main/sessions/x.jsonl"
    other.parent.mkdir(parents=True)
    other.write_text(json.dumps(lines()[3]).replace("PROMPT_QCL", "OPENCLAW_QCL") + "\n")
    scan(run)
    assert {h["provider"] for h in hits(run, "OPENCLAW_QCL")} <= {"openclaw"}


def test_an_appended_turn_and_a_cut_line(home: Path, run) -> None:
    more = json.dumps(
        entry(
            "message",
            "u2",
            "a2",
            "2026-02-18T10:30:00Z",
            message={"role": "user", "content": [{"type": "text", "text": "改到四楼 PROMPT2_QCL"}]},
        ),
        ensure_ascii=False,
    ).encode()
    path = write(home, [*lines(), more[:30]])
    assert scan(run)["failed"] == 0 and one(run, "REPLY_QCL", "assistant", "agent")
    with path.open("ab") as f:
        f.write(more[30:] + b"\n")
    out = scan(run)
    assert out["grown"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_QCL", "user", "human")


def test_place_and_names(tmp_path: Path) -> None:
    assert ADAPTER.roots({"HOME": str(tmp_path)}) == [tmp_path / ".qclaw/agents"]
    assert ADAPTER.roots({"HOME": "/h", "VOYAGER_QCLAW_HOME": "/v"}) == [Path("/v/agents")]
    assert (
        is_transcript("a.jsonl")
        and not is_transcript("a.trajectory.jsonl")
        and not is_transcript("a.checkpoint.x.jsonl")
    )
    assert not is_transcript("a.jsonl.deleted.2026-01-01") and not is_transcript("a.jsonl.lock")
