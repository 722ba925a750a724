"""DeepSeek Harness (``dsh``, documented): the peers' samples, and logs written here from the documented shape."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.peers import PeerHome, check_markers, tree
from tests.support.scanning import search
from voyager_sessions.ingest import zstd
from voyager_sessions.ingest.adapters.base import Hints
from voyager_sessions.ingest.adapters.dsh import ADAPTER, decode_segment

zstandard = pytest.importorskip("zstandard")
_C = zstandard.ZstdCompressor(level=3, write_checksum=True)
SID = "session-7b1e2c3d-4f5a-4b6c-8d7e-9f0a1b2c3d4e"
CHILD = "session-0c9d8e7f-6a5b-4c3d-2e1f-0a9b8c7d6e5f"


def write_log(
    root: Path,
    sid: str,
    records: list[Any],
    *,
    cwd_dir: str = "--home-dev-shop--",
    framing: str = "line",
    raw_tail: bytes = b"",
) -> Path:
    """A session log as the harness writes it: one zstd frame a line (or ``grouped``: header alone,
    then four lines a frame, as agentsview frames it; ``plain``: uncompressed ``session.jsonl``)."""
    folder = root / ".dsh" / "sessions" / cwd_dir / sid.replace(":", "~003A")
    folder.mkdir(parents=True, exist_ok=True)
    lines = [(r if isinstance(r, bytes) else json.dumps(r, ensure_ascii=False).encode()) + b"\n" for r in records]
    if framing == "plain":
        path = folder / "session.jsonl"
        path.write_bytes(b"".join(lines) + raw_tail)
        return path
    if framing == "grouped":
        groups = [lines[:1]] + [lines[i : i + 4] for i in range(1, len(lines), 4)]
        data = b"".join(_C.compress(b"".join(g)) for g in groups)
    else:
        data = b"".join(_C.compress(line) for line in lines)
    path = folder / "session.jsonl.zstd"
    path.write_bytes(data + raw_tail)
    return path


def ev(seq: int, etype: str, data: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return {"type": etype, "seq": seq, "time": 1_790_000_000_000 + seq * 1000, "data": data, **extra}


def main_session(cwd: str = "/home/dev/shop") -> list[Any]:
    t = {"turn": 1, "step": 1}
    return [
        {"type": "session", "version": 0, "id": SID, "createdAt": 1_790_000_000_000, "cwd": cwd, "delegationDepth": 0},
        ev(0, "turn/start", {"turn": 1}),
        ev(1, "step/start", t),
        ev(
            2,
            "user/message",
            {
                "content": [{"type": "text", "text": "数据库迁移失败了，查一下 migrate_users 的日志"}],
                "source": {"kind": "user"},
                "role": "user",
                "id": "u1",
            },
            surfaceOp="append",
        ),
        ev(
            3,
            "user/message",
            {
                "content": [{"type": "text", "text": "Runtime context: sandbox workspace-write"}],
                "source": {"kind": "plugin", "plugin": "@deepseek-ai/dsh-system-prompt"},
                "role": "user",
                "id": "u2",
            },
            surfaceOp="append",
        ),
        ev(4, "request/header", {"header": {"config": {"model": "deepseek-chat", "provider": "deepseek"}}}),
        ev(5, "assistant/chunk", {**t, "chunk": {"type": "block-start", "blockType": "text", "index": 0}}),
        {
            "type": "text-chunks",
            "seq0": 6,
            "time0": 1_790_000_006_000,
            "data": {**t, "index": 0, "dt": [1, 1], "texts": ["streamed ", "draft ", "copy"]},
        },
        ev(
            9,
            "assistant/chunk",
            {**t, "chunk": {"type": "block-end", "index": 0, "block": {"type": "text", "text": "streamed draft copy"}}},
        ),
        ev(
            10,
            "assistant/message",
            {
                **t,
                "usage": {"inputTokens": 100, "outputTokens": 20, "cacheReadTokens": 5},
                "message": {
                    "id": "a1",
                    "role": "assistant",
                    "source": {"kind": "model", "model": "deepseek-reasoner", "provider": "deepseek"},
                    "content": [
                        {"type": "reasoning", "text": "先看迁移脚本的 stderr"},
                        {"type": "text", "text": "我来运行迁移脚本看看报错。"},
                        {
                            "type": "tool-call",
                            "id": "call-1",
                            "name": "bash",
                            "arguments": json.dumps({"command": "python migrate.py --dry-run"}),
                        },
                    ],
                },
            },
            surfaceOp="append",
        ),
        ev(
            11,
            "tool/call",
            {
                **t,
                "callId": "call-1",
                "name": "bash",
                "arguments": json.dumps({"command": "python migrate.py --dry-run"}),
            },
        ),
        ev(
            12,
            "tool/result",
            {
                **t,
                "message": {
                    "id": "r1",
                    "role": "user",
                    "source": {"kind": "tool", "callId": "call-1"},
                    "content": [
                        {
                            "type": "tool-result",
                            "toolCallId": "call-1",
                            "isError": True,
                            "content": [{"type": "text", "text": "IntegrityError: 用户表 duplicate key ERR_MIGRATE_7"}],
                        }
                    ],
                },
            },
            surfaceOp="append",
        ),
        ev(13, "step/end", t),
        ev(14, "step/start", {"turn": 1, "step": 2}),
        # An interrupted step: it streamed, and its complete message never landed.
        {
            "type": "text-chunks",
            "seq0": 15,
            "time0": 1_790_000_015_000,
            "data": {"turn": 1, "step": 2, "index": 0, "dt": [1, 1], "texts": ["重复键来自 ", "旧的种子数据", "。"]},
        },
        ev(18, "step/end", {"turn": 1, "step": 2}),
        ev(19, "turn/end", {"turn": 1, "reason": {"kind": "interrupted"}}),
        ev(
            20,
            "compaction/summary",
            {
                "compactionId": "c1",
                "provider": "deepseek",
                "model": "deepseek-chat",
                "summary": [{"type": "text", "text": "Summary: the duplicate key comes from old seed data"}],
                "shadowedRange": {"start": 2, "end": 12},
                "shadowedSeqs": [2, 12],
                "shadowedTokenCount": 900,
            },
        ),
        ev(
            21,
            "user/message",
            {
                "content": [{"type": "text", "text": "Summary: the duplicate key comes from old seed data"}],
                "source": {"kind": "compaction"},
                "role": "user",
                "id": "u3",
            },
            surfaceOp={"op": "replace", "start": 0, "end": 5},
        ),
        ev(22, "session/title", {"title": "迁移失败排查", "source": {"kind": "llm"}}),
        ev(23, "session/title", {"title": "Migration triage", "source": {"kind": "user"}}),
        ev(24, "goal/change", {"goal": "nothing to index"}),
        ev(25, "brand-new/event", {"x": 1}),
        ev(26, "another/new-event", {"x": 1}, ignorable=True),
    ]


def child_session() -> list[Any]:
    t = {"turn": 1, "step": 1}
    return [
        {
            "type": "session",
            "version": 0,
            "id": CHILD,
            "createdAt": 1_790_000_100_000,
            "cwd": "/home/dev/shop",
            "delegationDepth": 1,
            "parentSession": SID,
            "origin": "subagent",
            "seedLength": 2,
        },
        # Seeded from the parent: already indexed there.
        ev(
            0,
            "user/message",
            {
                "content": [{"type": "text", "text": "数据库迁移失败了，查一下 migrate_users 的日志"}],
                "source": {"kind": "user"},
                "role": "user",
                "id": "u1",
            },
            surfaceOp="append",
        ),
        ev(1, "session/title", {"title": "seeded title", "source": {"kind": "llm"}}),
        ev(2, "turn/start", {"turn": 1}),
        ev(3, "step/start", t),
        ev(
            4,
            "user/message",
            {
                "content": [{"type": "text", "text": "检查 seed 目录里的用户数据 SUBTASK_SEEDS"}],
                "source": {"kind": "user"},
                "role": "user",
                "id": "cu1",
            },
            surfaceOp="append",
        ),
        ev(
            5,
            "assistant/message",
            {
                **t,
                "message": {
                    "id": "ca1",
                    "role": "assistant",
                    "source": {"kind": "model", "model": "deepseek-chat", "provider": "deepseek"},
                    "content": [{"type": "text", "text": "seed 目录有两条重复用户 SUBREPLY_DUP"}],
                },
            },
            surfaceOp="append",
        ),
        ev(6, "step/end", t),
        ev(7, "turn/end", {"turn": 1, "reason": {"kind": "completed"}}),
    ]


# ---------------------------------------------------------------------------
# The peers' samples
# ---------------------------------------------------------------------------


def test_peer_samples(home, run):
    peer = PeerHome("dsh", home, run)
    doc = peer.scan
    assert doc["failed"] == 0 and doc["sessions"] == 2, doc
    check_markers(peer, "dsh")
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "dsh")
    assert report["evidence"] == "documented" and report["indexed_sessions"] == 2 and not report["failed_sources"]
    # Streaming copies of the final message (deltas, packed chunks, block ends) are never indexed.
    for copy in ("draft", "ignored", "block-end"):
        assert peer.hits(copy) == [], copy
    sessions = peer.sessions()
    assert sessions["dsh:session:one"]["title"] == "Newest title"  # the newest title wins
    assert tree(home) == peer.before


# ---------------------------------------------------------------------------
# Logs written from the documented shape
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("framing", ["line", "grouped", "plain"])
def test_documented_shape(home, run, framing):
    write_log(home, SID, main_session(), framing=framing)
    write_log(home, CHILD, child_session(), framing=framing)
    before = tree(home)
    doc = run.json("scan", "--json")
    assert doc["sessions"] == 2 and doc["failed"] == 0, doc
    # Every kind, once.
    prompt = search(run, "迁移失败")
    assert [(h["kind"], h["origin"]) for h in prompt if h["kind"] == "user"] == [("user", "human")]
    assert {(h["kind"], h["origin"]) for h in search(run, "sandbox")} == {("meta", "provider")}
    assert {(h["kind"], h["origin"]) for h in search(run, "stderr")} == {("reasoning", "agent")}
    assert [h["kind"] for h in search(run, "运行迁移脚本")] == ["assistant"]
    calls = search(run, '"python migrate.py --dry-run"')
    assert [(h["kind"], h["tool"]) for h in calls] == [("tool_call", "bash")]  # the block and tool/call: once
    result = search(run, "ERR_MIGRATE_7")
    assert [(h["kind"], h["origin"], h["tool"], h["exit_code"]) for h in result] == [
        ("tool_result", "tool", "bash", None)
    ]
    # The interrupted step's stream is its reply, once; the completed step's stream is a copy.
    assert [h["kind"] for h in search(run, "旧的种子数据")] == ["assistant"]
    assert search(run, '"streamed draft copy"') == [] and search(run, "streamed") == []
    # The compaction summary is meta; the surface replacement carrying it again is a copy.
    assert [(h["kind"], h["origin"]) for h in search(run, '"old seed data"')] == [("meta", "provider")]
    # The subagent: its prompt is the parent agent's, its parent is linked, the seed is not indexed twice.
    sub = search(run, "SUBTASK_SEEDS")
    assert [(h["kind"], h["origin"], h["session_id"]) for h in sub] == [("user", "provider", f"dsh:{CHILD}")]
    assert [h["kind"] for h in search(run, "SUBREPLY_DUP")] == ["assistant"]
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    assert sessions[f"dsh:{CHILD}"]["parent"] == f"dsh:{SID}"
    main = sessions[f"dsh:{SID}"]
    assert main["title"] == "Migration triage" and main["cwd"] == "/home/dev/shop" and main["resume"] is None
    assert sessions[f"dsh:{CHILD}"]["title"] != "seeded title"
    show = run.json("show", f"dsh:{SID}", "--json")
    assert show["session"]["model"] == "deepseek-reasoner"
    # The unknown record type is named (the ignorable one is not), with the rest read.
    res = run("doctor", "--json")
    report = next(p for p in json.loads(res.stdout)["providers"] if p["provider"] == "dsh")
    assert report["evidence"] == "documented" and report["versions"] == []
    assert any("brand-new/event" in n and "another/new-event" not in n for n in report["notes"]), report
    assert tree(home) == before  # read-only: same bytes, nothing created beside


def test_a_changed_log_is_read_again_whole_and_an_unchanged_one_not_at_all(home, run):
    records = main_session()[:13]
    path = write_log(home, SID, records)
    first = run.json("scan", "--json")
    assert first["new"] == 1
    assert run.json("scan", "--json")["unchanged"] == 1  # nothing read
    more = ev(
        40,
        "user/message",
        {
            "content": [{"type": "text", "text": "再试一次 SECOND_TURN_42"}],
            "source": {"kind": "user"},
            "role": "user",
            "id": "u9",
        },
        surfaceOp="append",
    )
    with open(path, "ab") as fh:  # the harness appends a frame
        fh.write(_C.compress(json.dumps(more, ensure_ascii=False).encode() + b"\n"))
    again = run.json("scan", "--json")
    # Read whole, but only the new turn is indexed: the events before it are the same as last time.
    assert again["changed"] == 1 and again["events_added"] == 1 and again["events_removed"] == 0, (first, again)
    assert [h["kind"] for h in search(run, "SECOND_TURN_42")] == ["user"]
    assert len(search(run, "迁移失败")) == 1  # kept, not duplicated
    # A rewrite that changes earlier lines replaces the whole session.
    records[3]["data"]["content"][0]["text"] = "改写过的提示 REWRITTEN_PROMPT"
    write_log(home, SID, records)
    third = run.json("scan", "--json")
    assert third["changed"] == 1 and third["events_removed"] == first["events_added"] + 1, third
    assert (
        len(search(run, "REWRITTEN_PROMPT")) == 1
        and search(run, "迁移失败") == []
        and search(run, "SECOND_TURN_42") == []
    )


def test_a_half_written_last_frame_and_a_bad_line_cost_only_themselves(home, run):
    records = main_session()[:4] + [b"{not json at all"] + main_session()[4:13]
    last = _C.compress(
        b'{"type":"user/message","seq":99,"time":1,"data":{"content":[{"type":"text","text":"TORN"}]}}\n'
    )
    write_log(home, SID, records, raw_tail=last[:-7])
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["failed"] == 0, doc
    reasons = " | ".join(s["reason"] for s in doc["skipped"])
    assert "malformed JSON" in reasons and "incomplete" in reasons, reasons
    assert search(run, "ERR_MIGRATE_7") and search(run, "迁移失败")


def test_without_zstd_the_store_is_named_and_read_once_it_is_installed(home, run):
    write_log(home, SID, main_session()[:13])
    saved = (zstd.backend(), zstd._BACKEND[1] if zstd._BACKEND else None)
    zstd.use_backend(None)
    try:
        res = run("scan", "--json")
        doc = json.loads(res.stdout)
        assert doc["failed"] == 1 and doc["sessions"] == 0
        hint = "`pip install zstandard` to read DeepSeek Harness sessions"
        assert hint in res.stderr
        doctor = run("doctor")
        assert hint in doctor.stdout and "not installed" in doctor.stdout
    finally:
        zstd.use_backend(*saved)
    # The file did not change; installing zstd is enough for the next scan to read it.
    doc = run.json("scan", "--json")
    assert doc["sessions"] == 1 and doc["failed"] == 0
    assert search(run, "ERR_MIGRATE_7")


def test_the_compressed_log_is_the_session_when_both_encodings_are_there(home, run):
    write_log(home, SID, main_session()[:13])
    write_log(home, SID, main_session()[:13], framing="plain")
    sources = [s for s in ADAPTER.discover({"HOME": str(home)}) if hasattr(s, "fingerprint")]
    assert [Path(s.path).name for s in sources] == ["session.jsonl.zstd"]


def test_a_log_without_its_header_is_named_after_its_directory(home, run):
    write_log(home, "session:two", main_session()[1:13])
    doc = run.json("scan", "--json")
    assert doc["sessions"] == 1
    assert [h["session_id"] for h in search(run, "ERR_MIGRATE_7")] == ["dsh:session:two"]
    assert any("no session header" in s["reason"] for s in doc["skipped"])
    assert decode_segment("session~003Aone~D83D~DE00") == "session:one\U0001f600"


def test_voyager_variable_is_authoritative_then_dsh_home(home, tmp_path):
    write_log(home, SID, main_session()[:13])  # under ~/.dsh
    other = tmp_path / "elsewhere"
    write_log(other, CHILD, child_session())
    env = {"HOME": str(home), "VOYAGER_DSH_HOME": str(other / ".dsh"), "DSH_HOME": str(home / ".dsh")}
    found = [s.path for s in ADAPTER.discover(env) if hasattr(s, "fingerprint")]
    assert len(found) == 1 and CHILD in found[0]
    assert ADAPTER.roots(env) == [other / ".dsh" / "sessions"]
    del env["VOYAGER_DSH_HOME"]
    env["DSH_HOME"] = str(other / ".dsh")
    found = [s.path for s in ADAPTER.discover(env) if hasattr(s, "fingerprint")]
    assert len(found) == 1 and CHILD in found[0]  # DSH_HOME replaces ~/.dsh
    assert (home / ".deepseek-harness" / "sessions") in ADAPTER.roots(env)


def test_a_project_local_sessions_dir_is_found_through_hints(home, tmp_path):
    project = tmp_path / "proj"
    write_log(project, SID, main_session()[:13])  # <project>/.dsh/sessions/...
    assert [s for s in ADAPTER.discover({"HOME": str(home)}, Hints()) if hasattr(s, "fingerprint")] == []
    found = [s.path for s in ADAPTER.discover({"HOME": str(home)}, Hints(cwds=frozenset({str(project), "/nowhere"})))]
    assert len(found) == 1 and found[0].startswith(str(project / ".dsh" / "sessions"))
    env = {"HOME": str(home), "VOYAGER_DSH_HOME": str(tmp_path / "o")}
    assert list(ADAPTER.discover(env, Hints(cwds=frozenset({str(project)})))) == []  # the override is authoritative


def test_hostile_cwds_never_stop_discovery(home, tmp_path):
    # Path.is_dir raised OSError (name too long) out of discover: the scan itself failed.
    project = tmp_path / "proj"
    write_log(project, SID, main_session()[:13])
    cwds = frozenset({"/" + "x" * 5000, "/home/dev/\x00nul", str(project)})
    found = [s.path for s in ADAPTER.discover({"HOME": str(home)}, Hints(cwds=cwds)) if hasattr(s, "fingerprint")]
    assert len(found) == 1 and found[0].startswith(str(project / ".dsh" / "sessions"))


def test_a_type_turn_step_or_index_that_is_a_list_or_an_object_is_no_error(home, run):
    # Each was a dict key or tested against a frozenset: a list or an object raised TypeError (unhashable)
    # out of the read ("adapter error"), and the session was lost.
    records = main_session()[:13]
    chunk = {"type": "text-delta", "index": {"i": 0}, "text": "odd chunk"}
    odd = [
        ev(50, "x", {}),
        ev(51, "assistant/chunk", {"turn": {"t": 1}, "step": [1], "chunk": chunk}),
        ev(52, "step/end", {"turn": {"t": 1}, "step": [1]}),
        ev(53, "turn/end", {"turn": [1]}),
        # A stream open, then its complete message (which drops the stream: a pop, keyed by turn and step).
        ev(54, "assistant/chunk", {"turn": {"t": 2}, "step": [2], "chunk": chunk}),
        ev(
            55,
            "assistant/message",
            {"turn": {"t": 2}, "step": [2], "message": {"content": [{"type": "text", "text": "x"}]}},
        ),
    ]
    odd[0]["type"] = ["user/message"]
    write_log(home, SID, records[:4] + odd + records[4:])
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    reasons = " ".join(s["reason"] for s in doc["skipped"])
    assert res.exit_code == 0 and doc["failed"] == 0 and "adapter error" not in reasons, doc
    assert search(run, "迁移失败") and "a list type" in reasons
