"""The Gemini CLI adapter against chats built here in the shapes Gemini CLI writes (see docs/agents.md).

What the captures in ``shared/fixtures/agents/gemini-*`` do not show is built here: a resume
in another minute (a second file for the same session), the legacy whole-document
``.json`` and its migrated ``.jsonl``, a history known only from a snapshot, injected and
compaction text, hostile ids and paths, broken lines, and scans that must index only what
a new turn added.
"""

from __future__ import annotations

import hashlib
import json
import os
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import append, events, notices, write
from tests.support.samples.gemini import CWD, call, legacy_document, response, ts, user
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Cursor, Partial, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.gemini import ADAPTER, resume_command

SID = "73fef89a-e238-486f-90e8-4df8da7174fe"
CTX = "d04923d38bb0f6017037e74183378ef4"


# -- builders: the record shapes of Gemini CLI 0.61 -------------------------------------------------


def epoch(sec: int) -> float:
    """``ts(sec)`` in epoch seconds."""
    return 1796112000.1 + sec


def header(at: int, sid: str = SID, **extra: Any) -> dict[str, Any]:
    return {
        "sessionId": sid,
        "projectHash": hashlib.sha256(CWD.encode()).hexdigest(),
        "startTime": ts(at),
        "lastUpdated": ts(at),
        "kind": "main",
        **extra,
    }


def context(at: int) -> dict[str, Any]:
    return {
        "id": CTX,
        "timestamp": ts(at),
        "type": "user",
        "content": [{"text": "<session_context>\nThis is the Gemini CLI. 项目目录 zebrafish\n</session_context>"}],
    }


def start(at: int, sid: str = SID) -> list[dict[str, Any]]:
    """What every CLI start writes: a header and a snapshot holding the injected context."""
    return [header(at, sid), {"$set": {"messages": [context(at)], "lastUpdated": ts(at)}}]


def model(
    mid: str, text: str, at: int, *, thought: str | None = None, calls: list[dict] | None = None
) -> dict[str, Any]:
    rec: dict[str, Any] = {
        "id": mid,
        "timestamp": ts(at),
        "type": "gemini",
        "content": text,
        "thoughts": [{"subject": "", "description": thought, "timestamp": ts(at)}] if thought else [],
        "tokens": {"input": 100, "output": 20, "cached": 0, "thoughts": 5, "tool": 0, "total": 125},
        "model": "gemini-2.5-flash",
    }
    if calls is not None:
        rec["toolCalls"] = calls
    return rec


def turn(n: str, at: int) -> list[dict[str, Any]]:
    """One turn as Gemini CLI logs it live: prompt, the model turn, the same turn again with its tool
    call, the tool results repeated as a user message, the answer; ``$set lastUpdated`` between."""
    cid = f"run_shell_command__{n}_0"
    first = model(f"m1-{n}", "我来运行这个命令。", at + 1, thought=f"THINK_{n} 先运行")
    return [
        user(f"u-{n}", f"请运行 `echo TOOLOUT_{n}` PROMPT_{n}", at),
        {"$set": {"lastUpdated": ts(at)}},
        first,
        {"$set": {"lastUpdated": ts(at + 1)}},
        {**first, "toolCalls": [call(cid, f"echo TOOLOUT_{n}", f"Output: TOOLOUT_{n} 输出完成", at + 2)]},
        {
            "id": f"r-{n}",
            "timestamp": ts(at + 2),
            "type": "user",
            "content": [response(cid, f"Output: TOOLOUT_{n} 输出完成")],
        },
        model(f"m2-{n}", f"完成 REPLY_{n}。日本語: 完了しました。한국어: 완료.", at + 3),
        {"$set": {"lastUpdated": ts(at + 3)}},
    ]


def snapshot_of(n: str, at: int) -> dict[str, Any]:
    """The ``$set messages`` a resume writes for turn ``n``: parts format, a synthetic ``_response``
    message, and every timestamp reset to the resume's time."""
    cid = f"run_shell_command__{n}_0"
    return {
        "$set": {
            "messages": [
                context(at),
                {
                    "id": f"u-{n}",
                    "timestamp": ts(at),
                    "type": "user",
                    "content": [{"text": f"请运行 `echo TOOLOUT_{n}` PROMPT_{n}"}],
                },
                {
                    "id": f"m1-{n}",
                    "timestamp": ts(at),
                    "type": "gemini",
                    "content": [
                        {"text": f"THINK_{n} 先运行", "thought": True},
                        {"text": "我来运行这个命令。"},
                        {
                            "functionCall": {
                                "id": cid,
                                "name": "run_shell_command",
                                "args": {"command": f"echo TOOLOUT_{n}"},
                            }
                        },
                    ],
                },
                {
                    "id": f"m1-{n}_response",
                    "timestamp": ts(at),
                    "type": "user",
                    "content": [response(cid, f"Output: TOOLOUT_{n} 输出完成")],
                },
                {
                    "id": f"r-{n}",
                    "timestamp": ts(at),
                    "type": "user",
                    "content": [response(cid, f"Output: TOOLOUT_{n} 输出完成")],
                },
                {
                    "id": f"m2-{n}",
                    "timestamp": ts(at),
                    "type": "gemini",
                    "content": [{"text": f"完成 REPLY_{n}。日本語: 完了しました。한국어: 완료."}],
                },
            ],
            "lastUpdated": ts(at),
        }
    }


def resumed_session() -> list[dict[str, Any]]:
    """Two turns in one file, the second after a resume (docs/agents.md, ``gemini-0.61.0``)."""
    return [*start(0), *turn("A", 1), *start(30), {"$set": {"sessionId": SID}}, snapshot_of("A", 30), *turn("B", 31)]


@pytest.fixture
def gemini(tmp_path: Path) -> Path:
    """A ``.gemini`` dir whose projects.json names the project ``proj`` (its cwd has a space and CJK)."""
    g = tmp_path / "home" / ".gemini"
    (g / "tmp" / "proj" / "chats").mkdir(parents=True)
    (g / "projects.json").write_text(json.dumps({"projects": {CWD: "proj"}}, ensure_ascii=False), encoding="utf-8")
    return g


def chats(gemini: Path, project: str = "proj") -> Path:
    return gemini / "tmp" / project / "chats"


def env_of(gemini: Path) -> dict[str, str]:
    return {"HOME": str(gemini.parent)}


def read_all(gemini: Path) -> list[Any]:
    items: list[Any] = []
    for src in ADAPTER.discover(env_of(gemini)):
        assert isinstance(src, Source), src
        items.extend(ADAPTER.read(src))
    return items


def described(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in events(items)]


def sessions(items: list[Any]) -> list[Session]:
    return [i for i in items if isinstance(i, Session)]


# -- replaying the patch log --------------------------------------------------------------------------


def test_a_resumed_session_replays_to_each_message_once(gemini: Path) -> None:
    write(chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl", resumed_session())
    items = read_all(gemini)
    got = [(e.kind, e.origin, e.tool, e.call_id) for e in events(items)]
    turn_shape = [
        ("user", "human", None, None),
        ("reasoning", "agent", None, None),
        ("assistant", "agent", None, None),
        ("tool_call", "agent", "run_shell_command", "run_shell_command__{}_0"),
        ("tool_result", "tool", None, "run_shell_command__{}_0"),
        ("assistant", "agent", None, None),
    ]
    want = [("meta", "provider", None, None)]
    for n in "AB":
        want += [(k, o, t, c.format(n) if c else None) for k, o, t, c in turn_shape]
    assert got == want, "no copy (upsert, snapshot, _response, functionResponse message) becomes an event"
    assert [e.seq for e in events(items)] == list(range(len(want)))
    by_text = {e.text: e for e in events(items)}
    assert by_text["echo TOOLOUT_A\n# run it"].kind == "tool_call"  # the command, then its description
    assert by_text["Output: TOOLOUT_A 输出完成"].exit_code is None, "Gemini CLI records no exit code"
    # A snapshot restamps every message with the resume's time; the earliest stamp is kept.
    assert by_text["请运行 `echo TOOLOUT_A` PROMPT_A"].ts == pytest.approx(epoch(1))
    assert notices(items) == []

    [s] = sessions(items)
    assert (s.id, s.native_id, s.cwd, s.model, s.parent) == (f"gemini:{SID}", SID, CWD, "gemini-2.5-flash", None)
    assert s.started == pytest.approx(epoch(0)) and s.updated == pytest.approx(epoch(34))
    assert (s.tokens_in, s.tokens_out) == (400, 100), "each model message counted once however often it was written"
    assert s.resume == resume_command(CWD, SID) and s.title is None


def test_a_history_known_only_from_a_snapshot_keeps_its_calls_and_results(gemini: Path) -> None:
    # The live lines of turn A are gone (a second file of the session holds only the resume).
    write(
        chats(gemini) / "session-2026-12-01T08-01-73fef89a.jsonl",
        [*start(30), {"$set": {"sessionId": SID}}, snapshot_of("A", 30)],
    )
    got = [(e.kind, e.text) for e in events(read_all(gemini))]
    assert got == [
        ("meta", "<session_context>\nThis is the Gemini CLI. 项目目录 zebrafish\n</session_context>"),
        ("user", "请运行 `echo TOOLOUT_A` PROMPT_A"),
        ("reasoning", "THINK_A 先运行"),
        ("assistant", "我来运行这个命令。"),
        ("tool_call", "echo TOOLOUT_A"),
        ("tool_result", "Output: TOOLOUT_A 输出完成"),  # once: the _response copy is dropped
        ("assistant", "完成 REPLY_A。日本語: 完了しました。한국어: 완료."),
    ]


def test_a_resume_in_another_minute_is_one_source_and_one_session(gemini: Path) -> None:
    first = write(chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl", [*start(0), *turn("A", 1)])
    second = write(
        chats(gemini) / "session-2026-12-01T08-05-73fef89a.jsonl",
        [*start(300), {"$set": {"sessionId": SID}}, snapshot_of("A", 300), *turn("B", 301)],
    )
    write(chats(gemini) / "session-2026-12-01T08-07-0badc0de.jsonl", [*start(420, "0badc0de-0000"), *turn("C", 421)])
    found = list(ADAPTER.discover(env_of(gemini)))
    assert [s.path for s in found] == [str(first), str(chats(gemini) / "session-2026-12-01T08-07-0badc0de.jsonl")]
    assert (
        found[0].fingerprint.size == first.stat().st_size + second.stat().st_size and found[0].fingerprint.wal_size == 2
    )
    items = list(ADAPTER.read(found[0]))
    assert [s.id for s in sessions(items)] == [f"gemini:{SID}"]
    texts = [e.text for e in events(items)]
    assert sum("PROMPT_A" in t for t in texts) == 1 and any("REPLY_B" in t for t in texts)


def test_a_second_scan_after_a_new_turn_indexes_only_that_turn(gemini: Path, monkeypatch, run) -> None:
    monkeypatch.setenv("HOME", str(gemini.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(gemini.parent.parent / "data"))
    first = write(chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl", [*start(0), *turn("A", 1)])
    one = run.json("scan", "--json")
    assert (one["new"], one["events_added"]) == (1, 7)
    assert run.json("scan", "--json")["unchanged"] == 1

    # The resume lands in a second file; the first must keep what it indexed.
    write(
        chats(gemini) / "session-2026-12-01T08-05-73fef89a.jsonl",
        [*start(300), {"$set": {"sessionId": SID}}, snapshot_of("A", 300), *turn("B", 301)],
    )
    two = run.json("scan", "--json")
    assert (two["changed"], two["events_added"], two["events_removed"]) == (1, 6, 0), two
    for marker in ("PROMPT_A", "TOOLOUT_A", "REPLY_A", "PROMPT_B", "REPLY_B"):
        hits = run.json("search", marker, "--json", "--no-refresh")["hits"]
        assert {h["session_id"] for h in hits} == {f"gemini:{SID}"}, marker
    assert (
        len([h for h in run.json("search", "PROMPT_A", "--json", "--no-refresh")["hits"] if h["kind"] == "user"]) == 1
    )

    # Only a `$set lastUpdated` appended: nothing to index again.
    append(first, [{"$set": {"lastUpdated": ts(500)}}])
    three = run.json("scan", "--json")
    assert (three["changed"], three["events_added"], three["events_removed"]) == (1, 0, 0), three
    [listed] = run.json("list", "--json")["sessions"]
    assert listed["events"] == 13


def test_reading_with_the_last_cursor_yields_only_the_new_turn(gemini: Path) -> None:
    path = write(chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl", [*start(0), *turn("A", 1)])
    [src] = ADAPTER.discover(env_of(gemini))
    first = list(ADAPTER.read(src))
    cursor = first[-1]
    assert isinstance(cursor, Cursor)
    again = list(ADAPTER.read(src, cursor))
    assert [type(i) for i in again] == [Session, Unchanged, Cursor]
    append(path, turn("B", 40))
    grown = list(ADAPTER.read(src, cursor))
    assert isinstance(grown[1], Partial) and grown[1].from_seq == 7
    assert [e.seq for e in events(grown)] == list(range(7, 13))
    # An edit inside the history (a masked tool output, say) means a whole replacement.
    lines = [json.loads(x) for x in path.read_text().splitlines()]
    lines[2]["content"][0]["text"] = "a different prompt"
    write(path, lines)
    changed = list(ADAPTER.read(src, cursor))
    assert not any(isinstance(i, (Partial, Unchanged)) for i in changed) and len(events(changed)) == 13


# -- the legacy whole-document sessions --------------------------------------------------------------


def test_a_legacy_json_document_is_read_with_its_cwd_from_the_project_hash(gemini: Path) -> None:
    folder = chats(gemini, hashlib.sha256(CWD.encode()).hexdigest())
    write(folder / "session-2026-12-01T08-00-1f2e3d4c.json", [legacy_document()])
    items = read_all(gemini)
    assert described(items) == [
        ("user", "human", "迁移 数据库 LEGACYPROMPT"),
        ("reasoning", "agent", "Planning\nrun the tests LEGACYTHINK"),
        ("assistant", "agent", "运行测试 LEGACYREPLY"),
        ("tool_call", "agent", "pytest -q\n# run it"),
        ("tool_result", "tool", "3 failed LEGACYTOOL"),
        ("meta", "provider", "Request cancelled."),
    ]
    assert [e.is_error for e in events(items)][4] is True
    [s] = sessions(items)
    assert s.cwd == CWD and s.model == "gemini-2.5-pro"


def test_a_migrated_document_and_its_jsonl_are_one_session_without_copies(gemini: Path) -> None:
    doc = legacy_document()
    folder = chats(gemini)
    write(folder / "session-2026-12-01T08-00-1f2e3d4c.json", [doc])
    # A resume migrates the document: header, every message again, then the new turn.
    header_line = {k: v for k, v in doc.items() if k != "messages"}
    write(
        folder / "session-2026-12-01T08-00-1f2e3d4c.jsonl",
        [
            header_line,
            *doc["messages"],
            {"$set": {"sessionId": doc["sessionId"]}},
            user("4", "下一步 NEXTPROMPT", 20),
            model("5", "好的 NEXTREPLY", 21),
        ],
    )
    [src] = ADAPTER.discover(env_of(gemini))
    assert src.path.endswith(".json") and src.fingerprint.wal_size == 2
    texts = [e.text for e in events(ADAPTER.read(src))]
    assert texts.count("迁移 数据库 LEGACYPROMPT") == 1 and texts.count("3 failed LEGACYTOOL") == 1
    assert texts[-2:] == ["下一步 NEXTPROMPT", "好的 NEXTREPLY"]


def test_a_project_copied_from_its_hash_folder_is_read_once(gemini: Path, monkeypatch, run) -> None:
    # Gemini CLI copied tmp/<sha256(cwd)>/ to tmp/proj/ and left the old folder; a resume then
    # migrated the copy in tmp/proj/ and added a turn.
    doc = legacy_document()
    old, new = chats(gemini, hashlib.sha256(CWD.encode()).hexdigest()), chats(gemini)
    for folder in (old, new):
        write(folder / "session-2026-12-01T08-00-1f2e3d4c.json", [doc])
        write(
            folder / doc["sessionId"] / "c0ffee00-0000.jsonl",
            [header(5, "c0ffee00-0000", kind="subagent"), user("s", "SUBPROMPT", 6)],
        )
    write(
        new / "session-2026-12-01T08-00-1f2e3d4c.jsonl",
        [{k: v for k, v in doc.items() if k != "messages"}, *doc["messages"], user("4", "下一步 NEXTPROMPT", 20)],
    )
    found = list(ADAPTER.discover(env_of(gemini)))
    assert len(found) == 2 and [s.fingerprint.wal_size for s in found] == [3, 2]

    monkeypatch.setenv("HOME", str(gemini.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(gemini.parent.parent / "data"))
    assert run.json("scan", "--json")["sessions"] == 2
    for marker, n in (("LEGACYPROMPT", 1), ("NEXTPROMPT", 1), ("SUBPROMPT", 1)):
        assert len(run.json("search", marker, "--json", "--no-refresh")["hits"]) == n, marker


# -- who said it --------------------------------------------------------------------------------------


def test_injected_compaction_and_display_text(gemini: Path) -> None:
    lines = [
        *start(0),
        {
            "id": "h",
            "timestamp": ts(1),
            "type": "user",
            "content": [{"text": "<hook_context>branch main</hook_context>"}],
        },
        # What the person typed is displayContent; the @file it expanded is context.
        {
            "id": "p",
            "timestamp": ts(2),
            "type": "user",
            "displayContent": [{"text": "explain @README.md"}],
            "content": [
                {"text": "explain @README.md"},
                {"text": "--- Content from referenced files ---\n# README 说明"},
            ],
        },
        model("a", "It explains setup.", 3),
        user("c", "/compress", 4),
        model("s", "<state_snapshot><summary>摘要 SUMMARY_X</summary></state_snapshot>", 5),
        # Interactive compaction: the summary comes back as a user message in a snapshot.
        {
            "$set": {
                "messages": [
                    {
                        "id": "z",
                        "timestamp": ts(6),
                        "type": "user",
                        "content": [{"text": "<state_snapshot>摘要 SUMMARY_Y</state_snapshot>"}],
                    },
                    {
                        "id": "zz",
                        "timestamp": ts(6),
                        "type": "gemini",
                        "content": [{"text": "Got it. Thanks for the additional context!"}],
                    },
                ]
            }
        },
        user("after", "the next real prompt", 7),
        {"id": "w", "timestamp": ts(8), "type": "warning", "content": "Loop detected"},
        {"$rewindTo": "after"},
    ]
    write(chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl", lines)
    assert described(read_all(gemini))[1:] == [
        ("meta", "provider", "<hook_context>branch main</hook_context>"),
        ("user", "human", "explain @README.md"),
        ("meta", "provider", "--- Content from referenced files ---\n# README 说明"),
        ("assistant", "agent", "It explains setup."),
        ("meta", "provider", "/compress"),
        ("meta", "provider", "<state_snapshot><summary>摘要 SUMMARY_X</summary></state_snapshot>"),
        ("meta", "provider", "<state_snapshot>摘要 SUMMARY_Y</state_snapshot>"),
        ("meta", "provider", "Got it. Thanks for the additional context!"),
        ("user", "human", "the next real prompt"),  # a rewind hides it from the CLI, not from search
        ("meta", "provider", "Loop detected"),
    ]


def test_a_subagent_chat_links_to_its_parent(gemini: Path) -> None:
    parent = "48fb3d1a-3fcf-45f1-9616-13514cd1aab9"
    child = "8588209a-8df6-453e-89e2-abbb7cc0e782"
    write(chats(gemini) / f"session-2026-12-01T08-06-{parent[:8]}.jsonl", [*start(0, parent), *turn("P", 1)])
    write(
        chats(gemini) / parent / f"{child}.jsonl",
        [
            header(2, child, kind="subagent", directories=["/srv/other tree"]),
            user("s1", "run `echo SUBTOOL` for the parent", 3),
            model("s2", "", 4, thought="SUBTHINK", calls=[call("c9", "echo SUBTOOL", "SUBTOOL", 5)]),
            {"$set": {"summary": '{\n  "response": "ok"\n}'}},
        ],
    )
    items = read_all(gemini)
    sub = [s for s in sessions(items) if s.native_id == child][-1]
    assert sub.parent == f"gemini:{parent}" and sub.title is None, "a subagent's summary is its result, not a title"
    assert sub.cwd == CWD, "the project folder names the cwd before the header's directories do"
    assert sub.resume == resume_command(CWD, parent), "a subagent is resumed through its parent"
    sub_events = [e for e in events(items) if e.session == f"gemini:{child}"]
    assert [(e.kind, e.origin) for e in sub_events] == [
        ("user", "provider"),
        ("reasoning", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
    ]


def test_a_main_session_summary_is_its_title_and_searchable(gemini: Path, monkeypatch, run) -> None:
    monkeypatch.setenv("HOME", str(gemini.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(gemini.parent.parent / "data"))
    write(
        chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl",
        [*start(0), *turn("A", 1), {"$set": {"summary": "修复 数据库 migration quokka"}}],
    )
    run.json("scan", "--json")
    [s] = run.json("list", "--json")["sessions"]
    assert s["title"] == "修复 数据库 migration quokka"
    hits = run.json("search", "quokka", "--json", "--no-refresh")["hits"]
    assert [h["kind"] for h in hits] == ["title"]


# -- hostile and broken input -------------------------------------------------------------------------


HOSTILE = ["a'b; rm -rf ~", "$(touch /tmp/pwned)", "`id` && echo", "two words\nnew line", '"quoted" \\ back']


@pytest.mark.parametrize("value", HOSTILE)
def test_resume_commands_quote_hostile_ids_and_paths(gemini: Path, value: str) -> None:
    cwd = f"/home/dev/{value}"
    (gemini / "projects.json").write_text(json.dumps({"projects": {cwd: "evil"}}), encoding="utf-8")
    sid = f"sess {value}"
    write(chats(gemini, "evil") / "session-2026-12-01T08-00-x.jsonl", [header(0, sid), user("u", "hi", 1)])
    [s] = sessions(read_all(gemini))
    assert s.native_id == sid and s.cwd == cwd
    assert shlex.split(s.resume) == ["cd", cwd, "&&", "gemini", "--resume", sid]
    assert subprocess.run(["sh", "-n", "-c", s.resume]).returncode == 0


def test_broken_unknown_and_half_written_lines_cost_only_themselves(gemini: Path) -> None:
    path = chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl"
    lines: list[Any] = [
        *start(0),
        user("u1", "first prompt", 1),
        b'{"id": "x", "type": "user", oops\n',
        {"brandNewRecord": {"x": 1}},
        {"id": "m", "timestamp": ts(2), "type": "hologram", "content": "?"},
        [1, 2],
        user("u2", "second prompt", 3),
    ]
    write(path, lines, raw_tail=json.dumps(user("u3", "being written", 4)).encode()[:20])
    items = read_all(gemini)
    assert [e.text for e in events(items) if e.kind == "user"] == ["first prompt", "second prompt"]
    reasons = " | ".join(n.reason for n in notices(items))
    assert "malformed JSON" in reasons and "incomplete" in reasons
    assert "hologram" in reasons and "brandNewRecord" in reasons and "Gemini CLI" in reasons
    assert not any(n.fatal for n in notices(items))


def test_one_unreadable_file_of_a_session_does_not_hide_the_others(gemini: Path) -> None:
    good = write(chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl", [*start(0), *turn("A", 1)])
    os.mkfifo(chats(gemini) / "session-2026-12-01T08-09-73fef89a.jsonl")
    items = list(ADAPTER.read(Source(provider="gemini", path=str(good), fingerprint=fingerprint(good))))
    assert any("PROMPT_A" in e.text for e in events(items))
    [notice] = notices(items)
    assert "FIFO" in notice.reason and not notice.fatal


def test_a_file_of_nothing_readable_is_fatal_and_named(gemini: Path) -> None:
    write(chats(gemini) / "session-2026-12-01T08-00-0000dead.jsonl", [b"\x00\x01garbage\n"])
    items = read_all(gemini)
    assert not events(items) and not sessions(items)
    assert notices(items)


# -- where Voyager looks -------------------------------------------------------------------------------


def test_env_precedence_and_antigravity_left_alone(tmp_path: Path) -> None:
    for name in ("home", "cli", "override"):
        g = tmp_path / name / ".gemini" if name != "override" else tmp_path / name
        write(
            g / "tmp" / "p" / "chats" / f"session-2026-12-01T08-00-{name}.jsonl", [header(0, name), user("u", name, 1)]
        )
    antigravity = tmp_path / "home" / ".gemini" / "antigravity" / "conversations"
    write(antigravity / "x.jsonl", [header(0, "agy")])
    home = {"HOME": str(tmp_path / "home")}
    cli = {**home, "GEMINI_CLI_HOME": str(tmp_path / "cli")}
    override = {**cli, "VOYAGER_GEMINI_HOME": str(tmp_path / "override")}
    for env, want in ((home, "home"), (cli, "cli"), (override, "override")):
        found = [s for s in ADAPTER.discover(env) if isinstance(s, Source)]
        assert [Path(s.path).name for s in found] == [f"session-2026-12-01T08-00-{want}.jsonl"], env
    assert ADAPTER.roots(override) == [tmp_path / "override" / "tmp"]


def test_an_empty_store_yields_nothing_and_scans_cleanly(gemini: Path, monkeypatch, run) -> None:
    monkeypatch.setenv("HOME", str(gemini.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(gemini.parent.parent / "data"))
    assert list(ADAPTER.discover(env_of(gemini))) == []
    doc = run.json("scan", "--json")
    assert doc["sessions"] == 0 and doc["failed"] == 0
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "gemini")
    assert report["sources"] == 0 and report["roots_found"] == [str(gemini / "tmp")]


def test_scanning_leaves_every_file_byte_identical(gemini: Path, monkeypatch, run) -> None:
    monkeypatch.setenv("HOME", str(gemini.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(gemini.parent.parent / "data"))
    write(chats(gemini) / "session-2026-12-01T08-00-73fef89a.jsonl", resumed_session())
    write(
        chats(gemini, hashlib.sha256(CWD.encode()).hexdigest()) / "session-2026-12-01T08-00-1f2e3d4c.json",
        [legacy_document()],
    )

    def tree() -> dict[str, tuple[str, int]]:
        return {
            str(p.relative_to(gemini)): (
                hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                p.stat().st_mtime_ns,
            )
            for p in sorted(gemini.rglob("*"))
        }

    before = tree()
    run.json("scan", "--json")
    run.json("search", "PROMPT_A", "--json")
    assert tree() == before
