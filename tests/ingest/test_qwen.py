"""The Qwen Code adapter against transcripts built here in the record shapes Qwen Code 0.24 writes.

The captures in ``shared/fixtures/agents/qwen-*`` prove the common paths; this file covers
what they do not show: failed tools, a compaction's kept history, archived sessions,
subagents with and without their ``.meta.json``, hostile ids and paths, broken and
half-written lines, appended turns, where Voyager looks, and that nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import append, cursor_of, events, last_session, notices, write
from voyager_sessions.ingest.adapters.base import Source, fingerprint
from voyager_sessions.ingest.adapters.qwen import ADAPTER, resume_command

SID = "4490dd8f-289c-4a48-a99c-e687d2c0715c"
CWD = "/home/dev/数据 proj"
PROJECT = "-home-dev----proj"


def ts(sec: int) -> str:
    return f"2026-12-01T08:00:{sec:02d}.000Z"


def rec(n: int, kind: str, sid: str = SID, **extra: Any) -> dict[str, Any]:
    return {
        "uuid": f"u{n}",
        "parentUuid": f"u{n - 1}" if n else None,
        "sessionId": sid,
        "timestamp": ts(n),
        "type": kind,
        "cwd": CWD,
        "version": "0.24.4",
        "gitBranch": "main",
        **extra,
    }


def prompt(n: int, text: str, **extra: Any) -> dict[str, Any]:
    return rec(n, "user", provenance="real_user", message={"role": "user", "parts": [{"text": text}]}, **extra)


def reply(n: int, *parts: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return rec(
        n,
        "assistant",
        provenance="assistant_output",
        model="qwen3-coder-plus",
        message={"role": "model", "parts": list(parts)},
        usageMetadata={"promptTokenCount": 100, "candidatesTokenCount": 20, "thoughtsTokenCount": 5},
        **extra,
    )


def shell_call(cid: str, command: str) -> dict[str, Any]:
    return {"functionCall": {"id": cid, "name": "run_shell_command", "args": {"command": command, "description": "x"}}}


def result(
    n: int, cid: str, output: str, *, exit_code: int | None = 0, status: str = "success", **extra: Any
) -> dict[str, Any]:
    display = {"type": "shell_result", "exitCode": exit_code, "output": output} if exit_code is not None else None
    info: dict[str, Any] = {"callId": cid, "status": status}
    if display is not None:
        info["resultDisplay"] = display
    return rec(
        n,
        "tool_result",
        provenance="tool_result",
        message={
            "role": "user",
            "parts": [{"functionResponse": {"id": cid, "name": "run_shell_command", "response": {"output": output}}}],
        },
        toolCallResult=info,
        **extra,
    )


def telemetry(n: int, text: str) -> dict[str, Any]:
    return rec(
        n,
        "system",
        provenance="system",
        subtype="ui_telemetry",
        systemPayload={"uiEvent": {"event.name": "qwen-code.api_response", "response_text": text}},
    )


def conversation() -> list[dict[str, Any]]:
    """A turn as Qwen Code 0.24 logs it: prompt, bookkeeping, a thought and a shell call, the
    telemetry copies, a failed command with its recorded exit code, the answer."""
    return [
        prompt(0, "请修复 迁移 PROMPTQ"),
        rec(1, "system", provenance="system", subtype="attribution_snapshot", systemPayload={"snapshot": {}}),
        telemetry(2, "我来运行 REPLY_COPY"),
        reply(
            3,
            {"text": "先跑测试 THINKQ", "thought": True},
            {"text": "我来运行这个命令。"},
            shell_call("c1", "pytest -q"),
        ),
        result(4, "c1", "Command: pytest -q\nOutput: 2 failed TOOLQ\nExit Code: 1", exit_code=1, status="error"),
        telemetry(5, "完成 REPLYQ"),
        reply(6, {"text": "完成 REPLYQ。日本語: 完了。한국어: 완료."}),
    ]


@pytest.fixture
def qwen(tmp_path: Path) -> Path:
    q = tmp_path / "home" / ".qwen"
    (q / "projects" / PROJECT / "chats").mkdir(parents=True)
    return q


def chat(qwen: Path, sid: str = SID) -> Path:
    return qwen / "projects" / PROJECT / "chats" / f"{sid}.jsonl"


def read(path: Path, cursor=None) -> list[Any]:
    return list(
        ADAPTER.read(Source(provider="qwen", path=str(path), fingerprint=fingerprint(path), append_only=True), cursor)
    )


def described(items: list[Any]) -> list[tuple[Any, ...]]:
    return [(e.kind, e.origin, e.text, e.call_id, e.exit_code, e.is_error) for e in events(items)]


# -- mapping --------------------------------------------------------------------------------------------


def test_kinds_origins_exit_codes_and_no_telemetry_copies(qwen: Path) -> None:
    items = read(write(chat(qwen), conversation()))
    assert described(items) == [
        ("user", "human", "请修复 迁移 PROMPTQ", None, None, False),
        ("reasoning", "agent", "先跑测试 THINKQ", None, None, False),
        ("assistant", "agent", "我来运行这个命令。", None, None, False),
        ("tool_call", "agent", "pytest -q\n# x", "c1", None, False),
        ("tool_result", "tool", "Command: pytest -q\nOutput: 2 failed TOOLQ\nExit Code: 1", "c1", 1, True),
        ("assistant", "agent", "完成 REPLYQ。日本語: 完了。한국어: 완료.", None, None, False),
    ]
    assert notices(items) == []
    s = last_session(items)
    assert (s.id, s.native_id, s.cwd, s.git_branch, s.model) == (f"qwen:{SID}", SID, CWD, "main", "qwen3-coder-plus")
    assert (s.tokens_in, s.tokens_out) == (200, 50) and s.parent is None and s.title is None
    assert s.resume == resume_command(CWD, SID)


def test_a_result_without_a_recorded_exit_code_keeps_none(qwen: Path) -> None:
    lines = [reply(0, shell_call("c1", "ls")), result(1, "c1", "Exit Code: 0\nfile.txt", exit_code=None)]
    [_, res] = events(read(write(chat(qwen), lines)))
    assert (res.kind, res.exit_code, res.is_error) == ("tool_result", None, False), "never read out of the output"


def test_injected_user_records_are_never_human(qwen: Path) -> None:
    lines = [
        rec(
            0,
            "user",
            provenance="real_user",
            message={
                "role": "user",
                "parts": [
                    {"text": "<system-reminder>\n1 background agent was restored.\n</system-reminder>"},
                    {"text": "继续 PROMPT2"},
                ],
            },
        ),
        rec(
            1,
            "user",
            provenance="system",
            subtype="notification",
            message={
                "role": "user",
                "parts": [
                    {
                        "text": "<task-notification>\n<status>completed</status>\n<result>SUBRESULT</result>\n</task-notification>"
                    }
                ],
            },
        ),
        rec(
            2,
            "user",
            provenance="system",
            subtype="agent_mention",
            message={"role": "user", "parts": [{"text": "@bob look"}]},
        ),
        rec(3, "user", message={"role": "user", "parts": [{"text": "an older record without provenance"}]}),
    ]
    assert [(k, o, t) for k, o, t, *_ in described(read(write(chat(qwen), lines)))] == [
        ("meta", "provider", "<system-reminder>\n1 background agent was restored.\n</system-reminder>"),
        ("user", "human", "继续 PROMPT2"),
        (
            "tool_result",  # a subagent's report: the one kind/origin (docs/json.md)
            "agent",
            "<task-notification>\n<status>completed</status>\n<result>SUBRESULT</result>\n</task-notification>",
        ),
        ("meta", "provider", "@bob look"),
        ("user", "human", "an older record without provenance"),
    ]


def test_a_compaction_summary_is_meta_and_its_kept_history_is_not_repeated(qwen: Path) -> None:
    lines = [
        *conversation(),
        rec(
            7,
            "system",
            provenance="system",
            subtype="chat_compression",
            systemPayload={
                "info": {"triggerReason": "manual"},
                "compressedHistory": [
                    {
                        "role": "user",
                        "parts": [{"text": "<summary>会话摘要 SUMMARYQ</summary>\n\nResume the prior task."}],
                    },
                    {"role": "model", "parts": [{"text": "Got it. Thanks for the additional context!"}]},
                    {"role": "user", "parts": [{"text": "请修复 迁移 PROMPTQ"}]},
                ],
            },
        ),
    ]
    items = read(write(chat(qwen), lines))
    assert described(items)[-1][:3] == (
        "meta",
        "provider",
        "<summary>会话摘要 SUMMARYQ</summary>\n\nResume the prior task.",
    )
    assert [e.text for e in events(items)].count("请修复 迁移 PROMPTQ") == 1
    assert len(events(items)) == 7


def test_a_subagent_transcript_links_to_its_parent(qwen: Path) -> None:
    folder = qwen / "projects" / PROJECT / "subagents" / SID
    sub = write(
        folder / "agent-general-purpose-call_9.jsonl",
        [
            rec(
                0,
                "user",
                agentId="general-purpose-call_9",
                isSidechain=True,
                message={"role": "user", "parts": [{"text": "run `echo SUBTOOL`"}]},
            ),
            reply(1, {"text": "SUBTHINK", "thought": True}, shell_call("c2", "echo SUBTOOL"), isSidechain=True),
            rec(
                2,
                "tool_result",
                isSidechain=True,
                toolCallResult={"callId": "c2", "durationMs": 9},
                message={
                    "role": "user",
                    "parts": [{"functionResponse": {"id": "c2", "response": {"output": "SUBTOOL"}}}],
                },
            ),
        ],
    )
    (folder / "agent-general-purpose-call_9.meta.json").write_text(
        json.dumps(
            {
                "agentId": "general-purpose-call_9",
                "description": "运行子任务 marmot",
                "parentSessionId": SID,
                "model": "qwen3-coder-flash",
            },
            ensure_ascii=False,
        ),
        encoding="utf-8",
    )
    items = read(sub)
    s = last_session(items)
    assert s.native_id == f"agent-general-purpose-call_9@{SID}" and s.parent == f"qwen:{SID}"
    assert (s.title, s.title_source, s.model) == ("运行子任务 marmot", "agent", "qwen3-coder-plus")
    assert s.resume == resume_command(CWD, SID), "a subagent is resumed through its parent"
    assert [(e.kind, e.origin) for e in events(items)] == [
        ("user", "provider"),
        ("reasoning", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
    ]
    (folder / "agent-general-purpose-call_9.meta.json").unlink()
    assert last_session(read(sub)).title is None, "the .meta.json is optional"


# -- discovery and where Voyager looks ------------------------------------------------------------------


def test_discovery_finds_sessions_archives_and_subagents_only(qwen: Path) -> None:
    project = qwen / "projects" / PROJECT
    main = write(chat(qwen), conversation())
    archived = write(project / "chats" / "archive" / "0ld.jsonl", [prompt(0, "old")])
    sub = write(project / "subagents" / SID / "agent-x.jsonl", [prompt(0, "task")])
    write(project / "subagents" / SID / "notes.jsonl", [prompt(0, "not a transcript")])
    write(project / "memory" / "facts.jsonl", [prompt(0, "not a transcript")])
    (project / "chats" / f"{SID}.runtime.json").write_text("{}")
    found = list(ADAPTER.discover({"HOME": str(qwen.parent)}))
    assert all(isinstance(s, Source) and s.append_only for s in found)
    assert sorted(s.path for s in found) == sorted(map(str, (main, archived, sub)))


def test_sessions_in_the_older_gemini_shape_are_named_not_silently_skipped(qwen: Path) -> None:
    chats = qwen / "tmp" / hashlib.sha256(CWD.encode()).hexdigest() / "chats"
    write(chats / "session-2025-08-01T10-00-abcd1234.json", [{"sessionId": "abcd1234", "messages": []}])
    (qwen / "tmp" / "other").mkdir()
    [notice] = [n for n in ADAPTER.discover({"HOME": str(qwen.parent)}) if not isinstance(n, Source)]
    assert notice.source == str(chats) and "older Qwen Code shape" in notice.reason and not notice.fatal


def test_env_precedence(tmp_path: Path) -> None:
    for name in ("home/.qwen", "qwenhome", "runtime", "override"):
        write(tmp_path / name / "projects" / "p" / "chats" / f"{name.replace('/', '_')}.jsonl", [prompt(0, name)])
    home = {"HOME": str(tmp_path / "home")}
    qhome = {**home, "QWEN_HOME": str(tmp_path / "qwenhome")}
    runtime = {**qhome, "QWEN_RUNTIME_DIR": str(tmp_path / "runtime")}
    override = {**runtime, "VOYAGER_QWEN_HOME": str(tmp_path / "override")}
    for env, want in ((home, "home_.qwen"), (qhome, "qwenhome"), (runtime, "runtime"), (override, "override")):
        assert [Path(s.path).stem for s in ADAPTER.discover(env)] == [want], env


def test_an_empty_store_scans_cleanly(qwen: Path, monkeypatch, run) -> None:
    monkeypatch.setenv("HOME", str(qwen.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(qwen.parent.parent / "data"))
    doc = run.json("scan", "--json")
    assert doc["sessions"] == 0 and doc["failed"] == 0
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "qwen")
    assert report["sources"] == 0 and report["roots_found"] == [str(qwen / "projects")]


# -- hostile and broken input, incremental reads ---------------------------------------------------------


@pytest.mark.parametrize("value", ["a'b; rm -rf ~", "$(touch pwned)", "`id` && echo", "two words\nnew line", '"q" \\'])
def test_resume_commands_quote_hostile_ids_and_paths(qwen: Path, value: str) -> None:
    sid = f"s {value}"
    line = prompt(0, "hi", sid=sid)
    line["cwd"] = f"/tmp/{value}"
    s = last_session(read(write(chat(qwen, sid), [line])))
    assert s.native_id == sid
    assert shlex.split(s.resume) == ["cd", f"/tmp/{value}", "&&", "qwen", "--resume", sid]
    assert subprocess.run(["sh", "-n", "-c", s.resume]).returncode == 0


def test_unknown_malformed_and_half_written_lines(qwen: Path) -> None:
    tail = json.dumps(prompt(9, "being written")).encode()
    path = write(
        chat(qwen),
        [
            prompt(0, "first"),
            b'{"type": "user", oops\n',
            rec(2, "hologram"),
            rec(3, "system", subtype="brand_new_subtype"),
            "a string",
            prompt(5, "second"),
        ],
        raw_tail=tail[:30],
    )
    items = read(path)
    assert [e.text for e in events(items)] == ["first", "second"]
    reasons = " | ".join(n.reason for n in notices(items))
    assert "malformed JSON" in reasons and "incomplete" in reasons
    assert "hologram" in reasons and "Qwen Code 0.24.4" in reasons and "brand_new_subtype" not in reasons
    cursor = cursor_of(items)
    assert cursor.offset == path.stat().st_size - 30 and cursor.next_seq == 2

    with open(path, "ab") as fh:  # Qwen Code finishes the line
        fh.write(tail[30:] + b"\n")
    assert [(e.seq, e.text) for e in events(read(path, cursor))] == [(2, "being written")]


def test_a_second_scan_reads_only_the_appended_turn(qwen: Path, monkeypatch, run) -> None:
    monkeypatch.setenv("HOME", str(qwen.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(qwen.parent.parent / "data"))
    path = write(chat(qwen), conversation())
    assert run.json("scan", "--json")["events_added"] == 6
    append(path, [prompt(7, "再来一次 PROMPT2Q"), reply(8, {"text": "好的 REPLY2Q"})])
    doc = run.json("scan", "--json")
    assert (doc["grown"], doc["events_added"], doc["events_removed"]) == (1, 2, 0), doc
    [s] = run.json("list", "--json")["sessions"]
    assert s["events"] == 8
    hits = run.json("search", "PROMPT2Q", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"]) for h in hits] == [("user", "human")]


def test_scanning_leaves_every_file_byte_identical(qwen: Path, monkeypatch, run) -> None:
    monkeypatch.setenv("HOME", str(qwen.parent))
    monkeypatch.setenv("VOYAGER_HOME", str(qwen.parent.parent / "data"))
    write(chat(qwen), conversation())
    folder = qwen / "projects" / PROJECT / "subagents" / SID
    write(
        folder / "agent-a.jsonl", [rec(0, "user", isSidechain=True, message={"role": "user", "parts": [{"text": "t"}]})]
    )
    (folder / "agent-a.meta.json").write_text('{"description": "d"}')

    def tree() -> dict[str, tuple[str, int]]:
        return {
            str(p.relative_to(qwen)): (
                hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir",
                p.stat().st_mtime_ns,
            )
            for p in sorted(qwen.rglob("*"))
        }

    before = tree()
    run.json("scan", "--json")
    run.json("search", "PROMPTQ", "--json")
    assert tree() == before


def test_a_record_whose_type_is_a_list_or_an_object_is_named_not_fatal(qwen: Path) -> None:
    # `kind not in _RECORD_TYPES` raised TypeError (unhashable) out of the read: the session lost.
    odd = [rec(1, "x"), rec(2, "x")]
    odd[0]["type"], odd[1]["type"] = ["user"], {"t": 1}
    items = read(write(chat(qwen), [prompt(0, "first"), *odd, prompt(3, "second")]))
    assert [e.text for e in events(items)] == ["first", "second"] and "record without a type" in notices(items)[
        0
    ].reason
