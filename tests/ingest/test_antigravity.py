"""The Antigravity adapter (documented): peers' samples, and brain transcripts written here from the described shape.

The peers' samples are agent-sessions' trimmed capture (the ``steps`` shape) and deja-vu's
two-line ``source-lines`` transcript. The fixtures below add CJK text, a shell call whose
arguments are JSON strings, the choice between ``transcript.jsonl`` and
``transcript_full.jsonl`` (one read, never both), the protobuf conversation store that is
named and not read, Gemini CLI's files beside Antigravity's, and the incremental, hostile
and read-only cases.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import append, events, notices, write
from tests.support.peers import PeerHome, check_sample, tree
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.antigravity import ADAPTER, probe, split_request
from voyager_sessions.ingest.adapters.base import Source, fingerprint

CID = "7d1e2f3a-4b5c-4d6e-8f9a-0b1c2d3e4f5a"


def steps(long_output: str = "ok") -> list[dict[str, Any]]:
    return [
        {
            "step_index": 0,
            "source": "USER_EXPLICIT",
            "type": "USER_INPUT",
            "status": "DONE",
            "created_at": "2026-12-01T08:00:00Z",
            "content": '<USER_REQUEST>\n运行测试并修复 AG_PROMPT\n<ADDITIONAL_METADATA>{"cwd":"/home/dev/店"}'
            "</ADDITIONAL_METADATA></USER_REQUEST>\n<USER_SETTINGS_CHANGE>Model changed AG_SETTING"
            "</USER_SETTINGS_CHANGE>",
        },
        {
            "step_index": 1,
            "source": "SYSTEM",
            "type": "CONVERSATION_HISTORY",
            "status": "DONE",
            "created_at": "2026-12-01T08:00:00Z",
        },
        {
            "step_index": 2,
            "source": "MODEL",
            "type": "PLANNER_RESPONSE",
            "status": "DONE",
            "created_at": "2026-12-01T08:00:01Z",
            "thinking": "先运行测试 AG_THINK",
            "tool_calls": [
                {"name": "run_command", "args": {"CommandLine": '"npm test -- 登录"', "Cwd": '"/home/dev/店"'}}
            ],
        },
        {
            "step_index": 3,
            "source": "MODEL",
            "type": "RUN_COMMAND",
            "status": "DONE",
            "created_at": "2026-12-01T08:00:02Z",
            "content": f"1 failing テスト失敗 AG_TOOLOUT {long_output}",
        },
        {
            "step_index": 4,
            "source": "MODEL",
            "type": "PLANNER_RESPONSE",
            "status": "DONE",
            "created_at": "2026-12-01T08:00:03Z",
            "content": "修好了 로그인 AG_REPLY",
        },
        {
            "step_index": 5,
            "source": "SYSTEM",
            "type": "CHECKPOINT",
            "status": "DONE",
            "created_at": "2026-12-01T08:00:04Z",
            "content": "# Resuming AG_SUMMARY",
        },
    ]


def brain(root: Path, cid: str = CID) -> Path:
    return root / ".gemini" / "antigravity-cli" / "brain" / cid / ".system_generated" / "logs"


def drafts(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in events(items)]


def read(path: Path) -> list[Any]:
    return list(
        ADAPTER.read(Source(provider="antigravity", path=str(path), fingerprint=fingerprint(path), append_only=True))
    )


def test_the_peers_samples_pass_every_marker(home: Path, run) -> None:
    peer = PeerHome("antigravity", home, run)
    check_sample(peer, "antigravity")
    # The trimmed capture's GENERIC steps are of a type Voyager does not know: named, not guessed.
    assert "GENERIC" in peer.stderr
    shapes = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["antigravity"]["shapes"]
    assert shapes == {"transcript:steps": 1, "transcript:source-lines": 1}
    cwd = peer.sessions()["antigravity:registry-antigravity"]["cwd"]
    assert cwd == "/workspace/registry-demo"  # from <ADDITIONAL_METADATA>, which is not part of the prompt


def test_steps_map_to_events_and_wrapped_context_is_not_the_prompt(home: Path) -> None:
    items = read(write(brain(home) / "transcript.jsonl", steps()))
    assert drafts(items) == [
        ("user", "human", "运行测试并修复 AG_PROMPT"),
        (
            "meta",
            "provider",
            '<USER_SETTINGS_CHANGE>Model changed AG_SETTING</USER_SETTINGS_CHANGE>\n{"cwd":"/home/dev/店"}',
        ),
        ("reasoning", "agent", "先运行测试 AG_THINK"),
        ("tool_call", "agent", "npm test -- 登录"),
        ("tool_result", "tool", "1 failing テスト失敗 AG_TOOLOUT ok"),
        ("assistant", "agent", "修好了 로그인 AG_REPLY"),
        ("meta", "provider", "# Resuming AG_SUMMARY"),
    ]
    call, result = events(items)[3], events(items)[4]
    assert (call.tool, result.tool, result.exit_code) == ("run_command", "run_command", None)
    session = [i for i in items if isinstance(i, Session)][-1]
    assert (session.native_id, session.cwd, session.resume) == (CID, "/home/dev/店", None)


def test_a_request_without_tags_is_all_prompt() -> None:
    assert split_request("just do it") == ("just do it", "", None)


def test_only_the_full_transcript_is_read_when_both_exist(home: Path, run) -> None:
    logs = brain(home)
    write(logs / "transcript.jsonl", steps("[truncated]"))
    write(logs / "transcript_full.jsonl", steps("FULL_ONLY_TAIL " + "x" * 5000))
    summary = run.json("scan", "--json")
    assert (summary["sources"], summary["sessions"]) == (1, 1)
    assert run.json("search", "FULL_ONLY_TAIL", "--json", "--no-refresh")["total"] == 1
    assert [h["kind"] for h in run.json("search", "AG_PROMPT", "--json", "--no-refresh")["hits"]] == ["user"]


def test_unknown_steps_are_named_and_a_broken_line_costs_only_itself(home: Path) -> None:
    path = write(
        brain(home) / "transcript.jsonl",
        [steps()[0], b"{not json\n", {"step_index": 9, "type": "TELEPORT", "content": "?"}, steps()[4]],
    )
    items = read(path)
    assert [e.text for e in events(items) if e.kind in ("user", "assistant")] == [
        "运行测试并修复 AG_PROMPT",
        "修好了 로그인 AG_REPLY",
    ]
    reasons = " | ".join(n.reason for n in notices(items))
    assert "TELEPORT" in reasons and "malformed" in reasons


def test_a_turn_appended_later_is_read_from_where_the_last_scan_stopped(home: Path, run) -> None:
    path = write(brain(home) / "transcript.jsonl", steps()[:3], raw_tail=b'{"step_index": 3, "source": "MO')
    first = run.json("scan", "--json")
    assert first["events_added"] == 4
    with open(path, "rb+") as fh:
        data = fh.read()
        fh.seek(0)
        fh.truncate()
        fh.write(data[: data.rindex(b"\n") + 1])
    append(path, steps()[3:])
    second = run.json("scan", "--json")
    assert (second["grown"], second["events_added"]) == (1, 3)
    assert run.json("list", "--json")["sessions"][0]["events"] == 7


def test_a_protobuf_conversation_store_is_named_never_silently_skipped(home: Path, run) -> None:
    folder = home / ".gemini" / "antigravity" / "conversations"
    folder.mkdir(parents=True)
    (folder / "aaaa-unread.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    (folder / f"{CID}.db").write_bytes(b"SQLite format 3\x00" + b"\x00" * 100)
    write(home / ".gemini" / "antigravity" / "brain" / CID / ".system_generated" / "logs" / "transcript.jsonl", steps())
    scan = run("scan", "--json")
    assert "aaaa-unread.db" in scan.stderr and "cannot read" in scan.stderr
    assert f"{CID}.db" not in scan.stderr  # that conversation is read from its transcript
    report = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["antigravity"]
    assert any("1 Antigravity conversation store" in p for p in report["problems"])
    assert report["indexed_sessions"] == 1


def test_gemini_cli_files_beside_it_are_not_antigravity_sessions(home: Path) -> None:
    write(home / ".gemini" / "tmp" / "proj" / "chats" / "session-1.jsonl", [{"type": "user", "content": "gemini"}])
    write(home / ".gemini" / "antigravity-cli" / "brain" / "x" / "notes" / "transcript.jsonl", steps())  # not logs/
    assert [s for s in ADAPTER.discover({"HOME": str(home)}) if isinstance(s, Source)] == []


def test_the_voyager_variable_is_authoritative_and_may_name_one_antigravity_folder(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(brain(home) / "transcript.jsonl", steps())
    other = tmp_path / "agy"
    write(other / "brain" / "b1" / ".system_generated" / "logs" / "transcript.jsonl", steps())
    monkeypatch.setenv("VOYAGER_ANTIGRAVITY_HOME", str(other))
    found = [s.path for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)]
    assert found == [str(other / "brain" / "b1" / ".system_generated" / "logs" / "transcript.jsonl")]


def test_hostile_folder_names_are_data(home: Path) -> None:
    cid = "x;$(rm -rf ~)`id`'\" y"
    items = read(write(brain(home, cid) / "transcript.jsonl", steps()))
    session = [i for i in items if isinstance(i, Session)][-1]
    assert session.native_id == cid and session.resume is None


def test_probe_tells_the_two_shapes_apart(home: Path) -> None:
    full = write(brain(home) / "transcript_full.jsonl", steps())
    two = write(brain(home, "dj") / "transcript.jsonl", [{"source": "USER_EXPLICIT", "content": "hi"}])
    assert (probe(full), probe(two), probe(home / "missing.jsonl")) == (
        "transcript_full:steps",
        "transcript:source-lines",
        "unreadable",
    )


def test_nothing_is_written_beside_the_transcripts(home: Path, run) -> None:
    write(brain(home) / "transcript.jsonl", steps())
    before = tree(home)
    run.json("scan", "--json")
    assert tree(home) == before
    assert json.loads(run("scan", "--json").stdout)["unchanged"] == 1


def test_a_step_type_or_tool_calls_of_the_wrong_type_cost_only_that_step(home: Path) -> None:
    # A list or object type raised TypeError (unhashable) out of the read, and so did tool_calls that were
    # a number or true (iterated): the rest of the transcript was lost.
    odd = steps()
    odd[2]["tool_calls"] = 7
    path = write(
        brain(home) / "transcript.jsonl",
        [odd[0], {"type": ["PLANNER_RESPONSE"], "content": "x"}, {"type": {"t": 1}}, *odd[2:]],
    )
    items = read(path)
    assert [e.text for e in events(items) if e.kind in ("user", "assistant")] == [
        "运行测试并修复 AG_PROMPT",
        "修好了 로그인 AG_REPLY",
    ]
    assert "step of type list" in " | ".join(n.reason for n in notices(items))
