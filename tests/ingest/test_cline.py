"""The Cline adapter: CLI session files written here in 3.0.65's shape, and the VS Code extension's task folders."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.captures import CAPTURES, PEERS, needs_peers
from tests.support.items import events, notices
from tests.support.peers import PeerHome, check_sample
from tests.support.shell import HOSTILE_NAMES, run_with_stub, shell_words
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Notice, Source, fingerprint
from voyager_sessions.ingest.adapters.cline import ADAPTER, extension_dirs, probe, sessions_dir

SID = "1796200000000_k3x9q"


@pytest.fixture(autouse=True, params=["whole", "streamed"])
def json_reading(request, monkeypatch) -> str:
    """Every test twice: documents decoded whole, and streamed a message at a time (as one past
    ``STREAM_JSON_BYTES`` is): what the adapter yields must not depend on the file's size."""
    from voyager_sessions.ingest import jsondoc

    if request.param == "streamed":
        monkeypatch.setattr(jsondoc, "STREAM_JSON_BYTES", 0)
    return request.param


CWD = "/home/dev/商店"


# -- builders: the CLI ---------------------------------------------------------------------------


def prompt(mid: str, text: str, ts: int, mode: str = "act") -> dict[str, Any]:
    return {
        "id": mid,
        "role": "user",
        "content": [{"type": "text", "text": f'<user_input mode="{mode}">{text}</user_input>'}],
        "ts": ts,
    }


def assistant(mid: str, blocks: list[dict[str, Any]], ts: int) -> dict[str, Any]:
    return {
        "id": mid,
        "role": "assistant",
        "content": blocks,
        "ts": ts,
        "modelInfo": {"id": "mock-model", "provider": "openai-compatible"},
        "metrics": {"inputTokens": 100, "outputTokens": 20},
    }


def run_commands(call_id: str, *commands: str) -> dict[str, Any]:
    return {"type": "tool_use", "id": call_id, "name": "run_commands", "input": {"commands": list(commands)}}


def results(mid: str, call_id: str, outcomes: list[tuple[str, str, bool]], ts: int) -> dict[str, Any]:
    return {
        "id": mid,
        "role": "user",
        "ts": ts,
        "content": [
            {
                "type": "tool_result",
                "tool_use_id": call_id,
                "name": "run_commands",
                "content": [{"query": q, "result": r, "success": ok} for q, r, ok in outcomes],
            }
        ],
    }


def conversation() -> list[dict[str, Any]]:
    return [
        prompt("u1", "把数据库迁移跑一遍 MIGRATE_KIWI", 1796200000100),
        assistant(
            "a1",
            [
                {"type": "thinking", "thinking": "先检查迁移脚本 PONDER_KIWI"},
                {"type": "text", "text": "我来运行迁移。"},
                run_commands("call_1", "make migrate", "make check"),
            ],
            1796200000200,
        ),
        results(
            "r1",
            "call_1",
            [
                ("make migrate", "migrated 3 tables OUTPUT_KIWI\n", True),
                ("make check", "FAILED\n[Command exited with code 2]", False),
            ],
            1796200000300,
        ),
        assistant(
            "a2",
            [{"type": "text", "text": "迁移完成，检查失败。日本語: 移行完了。한국어: 완료 ANSWER_KIWI"}],
            1796200000400,
        ),
        {
            "id": "u2",
            "role": "user",
            "ts": 1796200000500,
            "content": [{"type": "text", "text": "<mode_notice>switched to plan mode NOTICE_KIWI</mode_notice>"}],
        },
        assistant(
            "a2",
            [{"type": "text", "text": "迁移完成，检查失败。日本語: 移行完了。한국어: 완료 ANSWER_KIWI"}],
            1796200000400,
        ),
    ]


def manifest(sid: str = SID, *, cwd: str = CWD, title: str = "把数据库迁移跑一遍 MIGRATE_KI") -> dict[str, Any]:
    return {
        "version": 1,
        "session_id": sid,
        "source": "cli",
        "started_at": "2026-12-02T08:00:00.000Z",
        "ended_at": "2026-12-02T08:05:00.000Z",
        "status": "completed",
        "provider": "openai-compatible",
        "model": "mock-model",
        "cwd": cwd,
        "workspace_root": cwd,
        "prompt": "把数据库迁移跑一遍 MIGRATE_KIWI",
        "metadata": {
            "sessionHistoryOrigin": {"mode": "user", "version": "3.0.65"},
            "title": title,
            "usage": {"inputTokens": 400, "outputTokens": 80},
        },
    }


def write_cli(
    data: Path,
    messages: list[Any],
    sid: str = SID,
    *,
    man: dict[str, Any] | None = None,
    stem: str | None = None,
    header: dict[str, Any] | None = None,
) -> Path:
    folder = data / "sessions" / sid
    folder.mkdir(parents=True, exist_ok=True)
    doc = {
        "version": 1,
        "updated_at": "2026-12-02T08:05:00.000Z",
        "agent": "lead",
        "sessionId": sid,
        "origin": {"source": "cli", "mode": "user", "sessionId": sid, "version": "3.0.65"},
        "messages": messages,
        "system_prompt": "You are Cline, SYSTEM_KIWI",
    }
    doc.update(header or {})
    path = folder / f"{stem or sid}.messages.json"
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), encoding="utf-8")
    if stem is None:
        (folder / f"{sid}.json").write_text(
            json.dumps(man or manifest(sid), ensure_ascii=False, indent=2), encoding="utf-8"
        )
    return path


def read(path: Path) -> list[Any]:
    src = Source(provider="cline", path=str(path), fingerprint=fingerprint(path), append_only=False)
    return list(ADAPTER.read(src))


def sessions(items: list[Any]) -> dict[str, Session]:
    return {i.id: i for i in items if isinstance(i, Session)}


# -- the CLI -------------------------------------------------------------------------------------------


def test_cli_kinds_origins_tools_and_dedupe(tmp_path: Path) -> None:
    items = read(write_cli(tmp_path / "data", conversation()))
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [
        ("user", "human"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
        ("meta", "provider"),
    ]
    assert evs[0].text == "把数据库迁移跑一遍 MIGRATE_KIWI", "the <user_input> wrapper is stripped"
    call, result = evs[3], evs[4]
    assert (call.text, call.tool, call.call_id) == ("make migrate\nmake check", "run_commands", "call_1")
    assert result.text == "migrated 3 tables OUTPUT_KIWI\n\nFAILED\n[Command exited with code 2]"
    assert (result.call_id, result.is_error, result.exit_code) == ("call_1", True, None), (
        "two commands, one code: whose?"
    )
    assert sum("ANSWER_KIWI" in e.text for e in evs) == 1, "a message written twice (same id) is one event"
    assert not any("SYSTEM_KIWI" in e.text for e in evs), "the system prompt is not conversation"
    (s,) = sessions(items).values()
    assert (s.native_id, s.cwd, s.model, s.parent) == (SID, CWD, "mock-model", None)
    assert (s.tokens_in, s.tokens_out) == (400, 80)
    assert s.started == pytest.approx(1796198400.0) and s.updated == pytest.approx(1796198700.0)
    assert s.title == "把数据库迁移跑一遍 MIGRATE_KI" and s.title_source == "prompt"  # the CLI cuts the first prompt
    assert s.resume == f"cline --id {SID}"


def test_cli_exit_code_only_where_recorded(tmp_path: Path) -> None:
    items = read(
        write_cli(
            tmp_path / "data",
            [
                results("r1", "c1", [("false", "[Command exited with code 3]", False)], 1),
                results("r2", "c2", [("true", "fine", True)], 2),
            ],
        )
    )
    assert [(e.exit_code, e.is_error) for e in events(items)] == [(3, True), (None, False)]


def test_cli_subagent_links_to_its_root_and_its_prompt_is_not_a_persons(tmp_path: Path) -> None:
    data = tmp_path / "data"
    write_cli(data, conversation())
    agent = "agent_1796200000600_ab12cd"
    sub = write_cli(
        data,
        [
            {
                "id": "s1",
                "role": "user",
                "content": [{"type": "text", "text": "检查迁移 DELEGATE_KIWI"}],
                "ts": 1796200000600,
            },
            assistant("s2", [{"type": "text", "text": "子任务完成 SUBREPLY_KIWI"}], 1796200000700),
        ],
        stem=agent,
        header={
            "agent": "subagent",
            "sessionId": f"{SID}__{agent}",
            "origin": {"mode": "subagent", "parentThreadId": SID},
        },
    )
    items = read(sub)
    (s,) = sessions(items).values()
    assert s.native_id == f"{SID}__{agent}" and s.parent == f"cline:{SID}" and s.cwd == CWD
    assert s.title is None and s.resume == f"cline --id {SID}"
    assert [(e.kind, e.origin) for e in events(items)] == [("user", "provider"), ("assistant", "agent")]


def test_cli_without_wrappers_the_prompt_is_a_persons(tmp_path: Path) -> None:
    items = read(
        write_cli(
            tmp_path / "data",
            [
                {"id": "u", "role": "user", "content": "plain prompt", "ts": 1},
                {
                    "id": "m",
                    "role": "user",
                    "content": [{"type": "text", "text": "<mode_notice>act</mode_notice>"}],
                    "ts": 2,
                },
                {"id": "a", "role": "assistant", "content": [{"type": "thinking", "text": "quiet thought"}], "ts": 3},
            ],
        )
    )
    assert [(e.kind, e.origin, e.text) for e in events(items)] == [
        ("user", "human", "plain prompt"),
        ("meta", "provider", "<mode_notice>act</mode_notice>"),
        ("reasoning", "agent", "quiet thought"),
    ]


def test_cli_bad_pieces_are_named_and_neighbours_kept(tmp_path: Path) -> None:
    msgs = conversation()[:2] + [
        "not a message",
        {"id": "x", "role": "system", "content": "?"},
        assistant("a9", [{"type": "hologram", "data": 1}, {"type": "text", "text": "still here"}], 9),
    ]
    items = read(write_cli(tmp_path / "data", msgs))
    assert "still here" in [e.text for e in events(items)]
    (notice,) = notices(items)
    assert "3 records" in notice.reason and "block:hologram" in notice.reason and "role:system" in notice.reason
    assert "Cline CLI 3.0.65" in notice.reason


def test_cli_half_written_file_is_a_transient_failure(tmp_path: Path) -> None:
    path = write_cli(tmp_path / "data", conversation())
    path.write_bytes(path.read_bytes()[:300])
    notice = read(path)[-1]  # streamed, what came before the cut may be read: it is replaced next scan
    assert isinstance(notice, Notice) and notice.fatal and notice.transient


@pytest.mark.parametrize("name", [n for n in HOSTILE_NAMES if "/" not in n])
def test_cli_resume_command_survives_hostile_ids(tmp_path: Path, name: str) -> None:
    items = read(write_cli(tmp_path / "data", conversation(), sid=name, man=manifest(name, cwd=f"/tmp/{name}")))
    (s,) = sessions(items).values()
    assert s.native_id == name
    # An id that begins with '-' is attached to its option: data, never an option of its own (issue 38).
    args = [f"--id={name}"] if name.startswith("-") else ["--id", name]
    assert shell_words(s.resume) == ["cline", *args]
    assert run_with_stub(s.resume, "cline", tmp_path)[1] == args


def test_where_the_cli_store_is(tmp_path: Path) -> None:
    home = str(tmp_path)
    assert sessions_dir({"HOME": home}) == tmp_path / ".cline" / "data" / "sessions"
    assert sessions_dir({"HOME": home, "CLINE_DIR": "/c"}) == Path("/c/data/sessions")
    assert sessions_dir({"HOME": home, "CLINE_DIR": "/c", "CLINE_DATA_DIR": "/d"}) == Path("/d/sessions")
    assert sessions_dir({"HOME": home, "CLINE_DATA_DIR": "/d", "CLINE_SESSION_DATA_DIR": "/s"}) == Path("/s")
    assert sessions_dir({"HOME": home, "CLINE_SESSION_DATA_DIR": "/s", "VOYAGER_CLINE_HOME": "/v"}) == Path(
        "/v/sessions"
    )


def test_discovery_skips_copies_and_names_a_manifest_without_messages(tmp_path: Path) -> None:
    data = tmp_path / ".cline" / "data"
    path = write_cli(data, conversation())
    lonely = data / "sessions" / "1796200009999_zzzzz"
    lonely.mkdir()
    (lonely / "1796200009999_zzzzz.json").write_text("{}")
    (data / "db").mkdir()
    (data / "db" / "sessions.db").write_bytes(b"SQLite format 3\x00")
    (data / "cache").mkdir()
    (data / "cache" / "user_input_history.jsonl").write_text('{"prompt": "x", "ts": 1}\n')
    found = list(ADAPTER.discover({"HOME": str(tmp_path)}))
    assert [s.path for s in found if isinstance(s, Source)] == [str(path)]
    (notice,) = [n for n in found if isinstance(n, Notice)]
    assert notice.source == str(lonely) and "without its .messages.json" in notice.reason
    assert probe(str(path)) == "cli"
    # The index without any session file beside it is named, not silently empty.
    moved = {"HOME": str(tmp_path), "CLINE_SESSION_DATA_DIR": str(tmp_path / "elsewhere")}
    (notice,) = ADAPTER.discover(moved)
    assert notice.source == str(data / "db" / "sessions.db") and "no session file" in notice.reason


# -- the VS Code extension's task folders --------------------------------------------------------------


def ui(ts: int, kind: str, what: str, text: str | None = None, **extra: Any) -> dict[str, Any]:
    msg: dict[str, Any] = {"ts": ts, "type": kind, kind: what}
    if text is not None:
        msg["text"] = text
    msg.update(extra)
    return msg


def ui_task() -> list[dict[str, Any]]:
    return [
        ui(1767300000000, "say", "text", "修复登录页面的空指针 CRASH_PLUM"),
        ui(
            1767300000100,
            "say",
            "api_req_started",
            json.dumps({"request": "<task>\n修复登录页面 CRASH_PLUM\n</task>", "tokensIn": 120, "tokensOut": 30}),
        ),
        ui(1767300000200, "say", "reasoning", "先看日志 MUSE_PLUM"),
        ui(1767300000300, "say", "text", "我先运行测试", partial=True),
        ui(1767300000300, "say", "text", "我先运行测试。日本語: テストを実行します STREAM_PLUM", partial=False),
        ui(1767300000400, "ask", "command", "npm test -- login PROBE_PLUMREQ_APP"),
        ui(1767300000500, "ask", "command_output", "1 failing: TypeError RESULT_PLUM"),
        ui(
            1767300000600,
            "ask",
            "tool",
            json.dumps(
                {"tool": "editedExistingFile", "path": "src/login.ts", "diff": "- user.name\n+ user?.name EDIT_PLUM"}
            ),
        ),
        ui(
            1767300000700,
            "ask",
            "followup",
            json.dumps({"question": "要同时修复注册页吗? ASK_PLUM", "options": ["是", "否"]}),
        ),
        ui(1767300000800, "say", "user_feedback", "是的，也修复注册页 AGAIN_PLUM"),
        ui(1767300000850, "say", "checkpoint_created"),
        ui(1767300000870, "say", "teleport", "from a newer version"),
        ui(1767300000900, "say", "completion_result", "两个页面都修好了 DONE_PLUMHAS_CHANGES"),
        ui(1767300000950, "ask", "completion_result", ""),
    ]


def write_task(
    storage: Path,
    task_id: str,
    *,
    ui_messages: list[Any] | None = None,
    api: list[Any] | None = None,
    metadata: dict[str, Any] | None = None,
) -> Path:
    folder = storage / "tasks" / task_id
    folder.mkdir(parents=True, exist_ok=True)
    if ui_messages is not None:
        (folder / "ui_messages.json").write_text(json.dumps(ui_messages, ensure_ascii=False), encoding="utf-8")
    if api is not None:
        (folder / "api_conversation_history.json").write_text(json.dumps(api, ensure_ascii=False), encoding="utf-8")
    if metadata is not None:
        (folder / "task_metadata.json").write_text(json.dumps(metadata), encoding="utf-8")
    return folder


def read_task(folder: Path) -> list[Any]:
    src = Source(provider="cline", path=str(folder), fingerprint=fingerprint(folder), append_only=False)
    return list(ADAPTER.read(src))


def storage_in(home: Path, app: str = "Code") -> Path:
    return home / ".config" / app / "User" / "globalStorage" / "saoudrizwan.claude-dev"


def test_ui_messages_kinds_partials_and_flags(tmp_path: Path) -> None:
    storage = storage_in(tmp_path)
    folder = write_task(
        storage,
        "1767300000000",
        ui_messages=ui_task(),
        metadata={"model_usage": [{"ts": 1, "model_id": "old-model"}, {"ts": 2, "model_id": "claude-x"}]},
    )
    (storage / "state").mkdir()
    (storage / "state" / "taskHistory.json").write_text(
        json.dumps(
            [
                {
                    "id": "1767300000000",
                    "ts": 1767300000950,
                    "task": "修复登录页面的空指针 CRASH_PLUM\nmore lines",
                    "tokensIn": 500,
                    "tokensOut": 90,
                    "cwdOnTaskInitialization": "/home/dev/web",
                    "modelId": "claude-x",
                }
            ]
        )
    )
    items = read_task(folder)
    got = [(e.kind, e.origin, e.tool) for e in events(items)]
    assert got == [
        ("user", "human", None),
        ("reasoning", "agent", None),
        ("assistant", "agent", None),
        ("tool_call", "agent", "execute_command"),
        ("tool_result", "tool", "execute_command"),
        ("tool_call", "agent", "editedExistingFile"),
        ("assistant", "agent", None),
        ("user", "human", None),
        ("assistant", "agent", None),
    ]
    texts = [e.text for e in events(items)]
    assert texts[2] == "我先运行测试。日本語: テストを実行します STREAM_PLUM", (
        "a streamed message counts once, complete"
    )
    assert texts[3] == "npm test -- login PROBE_PLUM" and texts[8] == "两个页面都修好了 DONE_PLUM", "UI flags stripped"
    assert texts[6] == "要同时修复注册页吗? ASK_PLUM\n是\n否"
    assert not any("<task>" in t for t in texts), "the request copy in api_req_started is never an event"
    (notice,) = notices(items)
    assert "say:teleport" in notice.reason
    s = list(sessions(items).values())[-1]
    assert (s.title, s.title_source, s.cwd, s.model) == (
        "修复登录页面的空指针 CRASH_PLUM",
        "prompt",
        "/home/dev/web",
        "claude-x",
    )
    assert (s.tokens_in, s.tokens_out, s.resume) == (500, 90, None)
    assert s.started == pytest.approx(1767300000.0) and s.updated == pytest.approx(1767300000.95)
    assert probe(str(folder)) == "ui_messages"


def test_api_history_when_there_is_no_ui_view(tmp_path: Path) -> None:
    folder = write_task(
        storage_in(tmp_path),
        "1767400000000",
        api=[
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "<task>\n给 API 加上限流 LIMIT_FIG\n</task>"},
                    {"type": "text", "text": "<environment_details>\n# cwd /srv/api ENV_FIG\n</environment_details>"},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {"type": "text", "text": "<execute_command><command>rg limiter</command></execute_command>"}
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "text", "text": "[execute_command for 'rg limiter'] Result:"},
                    {"type": "text", "text": "src/limiter.ts: export class Limiter GREP_FIG"},
                    {"type": "text", "text": "<environment_details>\nENV2_FIG\n</environment_details>"},
                ],
            },
            {
                "role": "assistant",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "t1",
                        "name": "attempt_completion",
                        "input": {"result": "限流已添加 FINAL_FIG"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "t1", "content": "The user provided feedback."},
                    {"type": "text", "text": "<feedback>\n再加一个测试 MORE_FIG\n</feedback>"},
                ],
            },
        ],
    )
    evs = events(read_task(folder))
    assert [(e.kind, e.origin) for e in evs] == [
        ("user", "human"),
        ("meta", "provider"),
        ("assistant", "agent"),
        ("tool_result", "tool"),
        ("meta", "provider"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("user", "human"),
    ]
    assert evs[0].text == "给 API 加上限流 LIMIT_FIG" and evs[7].text == "再加一个测试 MORE_FIG"
    assert evs[3].tool == "execute_command" and evs[3].text == "src/limiter.ts: export class Limiter GREP_FIG"
    assert probe(str(folder)) == "api_conversation_history"


def test_only_one_view_is_read_when_a_task_has_both(tmp_path: Path) -> None:
    folder = write_task(
        storage_in(tmp_path),
        "1767500000000",
        ui_messages=[ui(1, "say", "text", "ONCE_PEAR please")],
        api=[{"role": "user", "content": "<task>ONCE_PEAR please</task>"}],
    )
    assert [e.text for e in events(read_task(folder))] == ["ONCE_PEAR please"]


def test_extension_dirs_every_vscode_family_app_and_overrides(tmp_path: Path) -> None:
    home = tmp_path / "home"
    for app in ("Code", "Cursor", "VSCodium", "Code - Insiders"):
        write_task(storage_in(home, app), f"17676{len(app)}", ui_messages=[ui(1, "say", "text", app)])
    write_task(storage_in(home), "no-conversation", metadata={})
    env = {"HOME": str(home)}
    found = list(ADAPTER.discover(env))
    apps = sorted(Path(s.path).parts[-6] for s in found if isinstance(s, Source))
    assert apps == ["Code", "Code - Insiders", "Cursor", "VSCodium"]
    assert any(isinstance(n, Notice) and n.source.endswith("no-conversation") for n in found)
    xdg = tmp_path / "xdg"
    write_task(
        xdg / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev", "1", ui_messages=[ui(1, "say", "text", "x")]
    )
    assert (
        extension_dirs({**env, "XDG_CONFIG_HOME": str(xdg)})[0]
        == xdg / "Code" / "User" / "globalStorage" / "saoudrizwan.claude-dev"
    )
    orphan = storage_in(home, "Code - Insiders")
    shutil.rmtree(orphan / "tasks")
    (orphan / "state").mkdir()
    (orphan / "state" / "taskHistory.json").write_text('[{"id": "1", "task": "gone"}]')
    assert any(
        isinstance(n, Notice) and n.source == str(orphan / "state" / "taskHistory.json") for n in ADAPTER.discover(env)
    ), "a task list without task folders is named"
    only = {
        **env,
        "VOYAGER_CLINE_VSCODE_HOME": str(storage_in(home, "Cursor")),
        "VOYAGER_CLINE_HOME": str(tmp_path / "none"),
    }
    assert [Path(s.path).parts[-6] for s in ADAPTER.discover(only) if isinstance(s, Source)] == ["Cursor"]


# -- through the CLI: the capture-like store, incremental re-reads, read-only -------------------------


def test_scan_reads_a_rewritten_session_again_and_replaces_it(home: Path, run) -> None:
    data = home / ".cline" / "data"
    path = write_cli(data, conversation()[:4])
    first = json.loads(run("scan", "--json").stdout)
    assert first["providers"]["cline"] == 1
    write_cli(data, conversation() + [prompt("u3", "再来一次 SECOND_KIWI", 1796200000900)])
    second = json.loads(run("scan", "--json").stdout)
    # The CLI rewrites the whole file after each message; a turn added at the end costs what it adds.
    assert second["changed"] == 1 and second["events_removed"] == 0 and second["events_added"] == 2
    for word in ("MIGRATE_KIWI", "SECOND_KIWI"):
        hits = run.json("search", word, "--json", "--no-refresh")["hits"]
        assert [(h["kind"], h["origin"]) for h in hits] == [("user", "human")], word
    (row,) = run.json("list", "--json", "--provider", "cline")["sessions"]
    assert row["title_source"] == "prompt" and row["events"] == 8
    assert json.loads(run("scan", "--json").stdout)["unchanged"] >= 1
    # A rewrite that changes an earlier message replaces the session whole.
    write_cli(data, [prompt("u1", "改写 REWRITTEN_KIWI", 1796200000000)] + conversation()[1:])
    third = json.loads(run("scan", "--json").stdout)
    assert third["changed"] == 1 and third["events_removed"] == 8 and third["events_added"] == 7
    assert run.json("search", "REWRITTEN_KIWI", "--json", "--no-refresh")["total"] == 1
    assert run.json("search", "SECOND_KIWI", "--json", "--no-refresh")["total"] == 0
    assert path.exists()


@needs_peers
def test_scan_of_the_shared_samples_is_read_only(home: Path, run) -> None:
    assert PEERS is not None
    for sample in (CAPTURES / "cline-3.0.65", PEERS / "cline" / "home", PEERS / "cline-cli" / "home"):
        shutil.copytree(sample, home, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json"))
    before = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() for p in home.rglob("*") if p.is_file()}
    listing = sorted(str(p) for p in home.rglob("*") if "voyager-data" not in p.parts)
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["providers"]["cline"] == 4 and doc["failed"] == 0
    after = {
        p: h
        for p, h in ((str(p), hashlib.sha256(p.read_bytes()).hexdigest()) for p in home.rglob("*") if p.is_file())
        if "voyager-data" not in p
    }
    assert after == {p: h for p, h in before.items() if "voyager-data" not in p}
    assert sorted(str(p) for p in home.rglob("*") if "voyager-data" not in p.parts) == listing
    for copy in ("PROMPT_T2CLIN45d159",):  # in the TUI input history too: one human event, from the messages file
        hits = run.json("search", copy, "--json", "--no-refresh")["hits"]
        assert [(h["kind"], h["origin"]) for h in hits] == [("user", "human")]
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "cline")
    assert report["shapes"] == {"cli": 2, "ui_messages": 1, "api_conversation_history": 1}
    assert report["evidence"] == "observed" and report["versions"] == ["3.0.65"]
    assert os.path.isdir(home / ".cline" / "data" / "db")


# -- peers' samples -------------------------------------------------------------------------------------


@pytest.mark.parametrize("sample", ["cline", "cline-cli"])
def test_peer_samples(sample: str, home: Path, run) -> None:
    check_sample(PeerHome(sample, home, run), "cline")


def test_a_message_nested_too_deeply_costs_that_message_only(tmp_path: Path) -> None:
    folder = write_task(storage_in(tmp_path), "1767300000000", ui_messages=ui_task())
    doc = folder / "ui_messages.json"
    deep = "[" * 1000 + "]" * 1000  # json.dumps cannot write it: spliced into the text
    doc.write_text(doc.read_text().replace('"say": "reasoning"', '"say": "reasoning", "images": ' + deep, 1))
    items = read_task(folder)
    texts = " ".join(e.text for e in events(items))
    for marker in ("CRASH_PLUM", "MUSE_PLUM", "STREAM_PLUM", "RESULT_PLUM", "DONE_PLUM"):
        assert marker in texts
    assert any("nested more than 128 deep" in n.reason and n.source == str(doc) for n in notices(items))


def test_a_task_history_entry_nested_too_deeply_costs_that_entry_only(tmp_path: Path) -> None:
    # It raised RecursionError out of every task's read ("adapter error"): taskHistory.json is shared by all.
    storage = storage_in(tmp_path)
    folder = write_task(storage, "1767300000000", ui_messages=ui_task())
    (storage / "state").mkdir()
    entry = {"id": "1767300000000", "task": "CRASH_PLUM", "cwdOnTaskInitialization": "/home/dev/web", "modelId": "m-x"}
    deep = "[" * 1000 + "]" * 1000
    (storage / "state" / "taskHistory.json").write_text(f'[{{"id": "other", "extra": {deep}}}, {json.dumps(entry)}]')
    items = read_task(folder)
    s = list(sessions(items).values())[-1]
    assert (s.cwd, s.model) == ("/home/dev/web", "m-x") and "CRASH_PLUM" in " ".join(e.text for e in events(items))
