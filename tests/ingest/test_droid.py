"""The Factory Droid adapter against session files built here, line by line, from invented content.

The store's shape is the one Droid 0.225.2 wrote in ``shared/fixtures/agents/factory-0.225.2``
(checked by ``test_captures.py``); these tests cover what that one-turn capture does not
show: titles, settings, appended turns, broken and unknown lines, hostile ids, where
Voyager looks, and the documented stream-json logs.
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
from voyager_sessions.ingest.adapters.droid import ADAPTER, exit_code_in, resume_command

SID = "3b2a1c0d-9e8f-4a7b-8c6d-5e4f3a2b1c0d"
CWD = "/home/dev/shop front"
SLUG = "-home-dev-shop-front"
PROMPT = "把购物车的价格计算修好 CART_PRICE_BUG_31, 然后跑测试"


# -- builders ----------------------------------------------------------------------------


def session_start(title: str | None = PROMPT, manual: bool = False, sid: str = SID, cwd: str = CWD) -> dict[str, Any]:
    line = {
        "type": "session_start",
        "id": sid,
        "owner": "unknown",
        "version": 2,
        "cwd": cwd,
        "hostId": "h-1",
        "isSessionTitleManuallySet": manual,
    }
    if title is not None:
        line["title"] = title
    return line


def msg(n: int, role: str, *blocks: dict[str, Any], msg_id: str | None = None, **message: Any) -> dict[str, Any]:
    return {
        "type": "message",
        "id": msg_id or f"m-{n}",
        "parentId": f"m-{n - 1}",
        "timestamp": f"2026-11-04T07:30:{n:02d}.100Z",
        "message": {"role": role, "content": list(blocks), **message},
    }


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


def store_lines() -> list[dict[str, Any]]:
    return [
        session_start(),
        msg(
            1,
            "user",
            text("<system-reminder>\nDeferred tools: INJECTED_TOOL_LIST\n</system-reminder>"),
            text("<system-reminder>Current date: 2026-11-04.</system-reminder>"),
            msg_id="context-m-2",
            visibility="llm_only",
        ),
        msg(2, "user", text(PROMPT), interactionMode="auto"),
        msg(
            3,
            "assistant",
            {"type": "thinking", "signature": "s", "thinking": "The tax is applied twice GUAVA_REASONING"},
            text("我先看看代码。"),
            {
                "type": "tool_use",
                "id": "call_1",
                "name": "Execute",
                "input": {"command": "pytest -q tests/test_cart.py", "riskLevel": "low"},
            },
            chatCompletionReasoningContent="The tax is applied twice GUAVA_REASONING",
            modelId="custom:Mock-0",
        ),
        msg(
            4,
            "user",
            {
                "type": "tool_result",
                "tool_use_id": "call_1",
                "is_error": True,
                "content": "1 failed TAX_TWICE\n\n\n[Process exited with code 1]",
            },
        ),
        msg(
            5, "assistant", {"type": "tool_use", "id": "call_2", "name": "Read", "input": {"file_path": "src/cart.py"}}
        ),
        msg(
            6,
            "user",
            {
                "type": "tool_result",
                "tool_use_id": "call_2",
                "is_error": False,
                "content": [{"type": "text", "text": "def total(): TOTAL_SOURCE"}],
            },
        ),
        msg(7, "assistant", text("Fixed: the tax was applied twice. 税金の二重計算を直しました。")),
        {"type": "agent_turn_outcome", "turnId": "m-2", "reason": "completed", "resultKind": "text"},
    ]


SETTINGS = {
    "model": "claude-opus-4-5",
    "autonomyLevel": "high",
    "tokenUsage": {
        "inputTokens": 200,
        "outputTokens": 40,
        "cacheCreationTokens": 10,
        "cacheReadTokens": 5,
        "thinkingTokens": 0,
    },
}


def write_store(
    root: Path, lines: list[Any], sid: str = SID, settings: dict | None = None, raw_tail: bytes = b""
) -> Path:
    folder = root / ".factory" / "sessions" / SLUG
    path = write(folder / f"{sid}.jsonl", lines, raw_tail=raw_tail)
    if settings is not None:
        (folder / f"{sid}.settings.json").write_text(json.dumps(settings), encoding="utf-8")
        (folder / f"{sid}.settings.json.bak").write_text("{not json", encoding="utf-8")
    return path


def read(path: Path, cursor=None) -> list[Any]:
    source = Source(provider="droid", path=str(path), fingerprint=fingerprint(path), append_only=True)
    return list(ADAPTER.read(source, cursor))


# -- the session store ---------------------------------------------------------------------------


def test_kinds_origins_and_what_is_skipped(tmp_path: Path) -> None:
    items = read(write_store(tmp_path, store_lines(), settings=SETTINGS))
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [
        ("meta", "provider"),
        ("meta", "provider"),
        ("user", "human"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
    ]
    assert [e.text for e in evs if e.kind == "user"] == [PROMPT]
    assert sum("GUAVA_REASONING" in e.text for e in evs) == 1  # the block, not its copy beside it
    run_tests, result = evs[5], evs[6]
    assert (run_tests.text, run_tests.tool, run_tests.call_id) == ("pytest -q tests/test_cart.py", "Execute", "call_1")
    assert (result.exit_code, result.is_error, result.call_id) == (1, True, "call_1")
    assert json.loads(evs[7].text) == {"file_path": "src/cart.py"} and evs[7].tool == "Read"
    assert (evs[8].text, evs[8].exit_code, evs[8].is_error) == ("def total(): TOTAL_SOURCE", None, False)
    assert not notices(items)


@pytest.mark.parametrize("marks", [{"visibility": "llm_only"}, {"msg_id": "context-m-2"}])
def test_injected_user_messages_are_meta_even_without_a_reminder_tag(tmp_path: Path, marks: dict[str, str]) -> None:
    lines = [
        session_start(),
        msg(1, "user", text("Project notes INJECTED_NOTES"), **marks),
        msg(2, "user", text(PROMPT)),
    ]
    evs = events(read(write_store(tmp_path, lines)))
    assert [(e.kind, e.origin) for e in evs] == [("meta", "provider"), ("user", "human")]


def test_session_fields(tmp_path: Path) -> None:
    path = write_store(tmp_path, store_lines(), settings=SETTINGS)
    s = last_session(read(path))
    assert s.id == f"droid:{SID}" and s.cwd == CWD and s.source == str(path)
    assert s.model == "claude-opus-4-5"  # the settings' (latest) model over the message's
    assert (s.tokens_in, s.tokens_out) == (215, 40)
    assert (s.title, s.title_source) == (PROMPT, "prompt")
    assert s.started is not None and s.updated is not None and s.updated - s.started == pytest.approx(6.0)
    assert s.resume == f"cd '{CWD}' && droid --resume {SID}"


def test_without_settings_the_model_comes_from_the_messages(tmp_path: Path) -> None:
    s = last_session(read(write_store(tmp_path, store_lines())))
    assert s.model == "custom:Mock-0" and s.tokens_in is None


@pytest.mark.parametrize(
    ("title", "manual", "source"),
    [
        ("Cart price fix", True, "user"),
        (PROMPT[:20] + "…", False, "prompt"),
        ("Fix cart tax calculation", False, "agent"),
    ],
)
def test_title_sources(tmp_path: Path, title: str, manual: bool, source: str) -> None:
    lines = store_lines()
    lines[0] = session_start(title=title, manual=manual)
    s = last_session(read(write_store(tmp_path, lines)))
    assert (s.title, s.title_source) == (title, source)


def test_without_session_start_the_file_name_is_the_id(tmp_path: Path) -> None:
    s = last_session(read(write_store(tmp_path, store_lines()[1:])))
    assert s.native_id == SID and s.title is None and s.cwd is None


@pytest.mark.parametrize(
    ("output", "code"),
    [
        ("ok\n[Process exited with code 0]", 0),
        ("[Process exited with code 2]\nretry\n[Process exited with code -9]", -9),
        ("no code here", None),
        ("Process exited with code 3", None),
    ],
)
def test_exit_code_only_from_droids_marker(output: str, code: int | None) -> None:
    assert exit_code_in(output) == code


def test_unknown_and_broken_lines_are_skipped_and_unknown_kinds_named(tmp_path: Path) -> None:
    lines = store_lines()[:3] + [
        b'{"type": "message", broken\n',
        {"type": "mission_state", "x": 1},
        msg(9, "narrator", text("?")),
        store_lines()[-2],
    ]
    items = read(write_store(tmp_path, lines))
    kinds = [e.kind for e in events(items)]
    assert kinds == ["meta", "meta", "user", "assistant"]
    reasons = " | ".join(n.reason for n in notices(items))
    assert "malformed JSON" in reasons and "mission_state" in reasons and "message/narrator" in reasons
    assert "Factory Droid" in reasons


def test_resume_after_append_yields_only_new_events(tmp_path: Path) -> None:
    lines = store_lines()
    path = write_store(tmp_path, lines[:3])
    first = read(path)
    assert [e.kind for e in events(first)] == ["meta", "meta", "user"]
    append(path, lines[3:])
    second = read(path, cursor_of(first))
    assert [e.seq for e in events(second)] == list(range(3, 10))
    assert last_session(second).title_source == "prompt"  # decided in the first read, kept in the cursor


def test_a_truncated_last_line_is_not_consumed(tmp_path: Path) -> None:
    lines = store_lines()
    tail = json.dumps(lines[3], ensure_ascii=False).encode()
    path = write_store(tmp_path, lines[:3], raw_tail=tail[:40])
    first = read(path)
    assert any("incomplete" in n.reason for n in notices(first))
    with open(path, "ab") as fh:
        fh.write(tail[40:] + b"\n")
    assert [e.seq for e in events(read(path, cursor_of(first)))] == [3, 4, 5]


def test_scanning_twice_reads_only_what_was_appended(home: Path, run) -> None:
    lines = store_lines()
    path = write_store(home, lines[:3], settings=SETTINGS)
    assert json.loads(run("scan", "--json").stdout)["new"] == 1
    append(path, lines[3:] + [msg(20, "user", text("second turn SECOND_TURN_88")), msg(21, "assistant", text("done"))])
    second = json.loads(run("scan", "--json").stdout)
    assert (second["grown"], second["changed"]) == (1, 0) and second["events_added"] == 9
    hits = run.json("search", "SECOND_TURN_88", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"]) for h in hits] == [("user", "human")]
    (listed,) = run.json("list", "--json")["sessions"]
    assert listed["events"] == 12 and listed["model"] == "claude-opus-4-5"
    # Only the settings changed (a model switch): the session's facts follow.
    settings = path.with_name(f"{SID}.settings.json")
    settings.write_text(json.dumps({**SETTINGS, "model": "gpt-5.1-codex"}), encoding="utf-8")
    third = json.loads(run("scan", "--json").stdout)
    assert third["grown"] + third["changed"] == 1 and third["events_added"] == 0
    assert run.json("list", "--json")["sessions"][0]["model"] == "gpt-5.1-codex"


# -- discovery, homes, hostile input, read-only ----------------------------------------------------


def test_discover_ignores_settings_and_backups(tmp_path: Path) -> None:
    write_store(tmp_path, store_lines(), settings=SETTINGS)
    found = [s for s in ADAPTER.discover({"HOME": str(tmp_path)}) if isinstance(s, Source)]
    assert [Path(s.path).name for s in found] == [f"{SID}.jsonl"]
    settings = tmp_path / ".factory" / "sessions" / SLUG / f"{SID}.settings.json"
    assert found[0].append_only and found[0].fingerprint.wal_size == settings.stat().st_size


def test_an_empty_store_finds_nothing(tmp_path: Path) -> None:
    assert list(ADAPTER.discover({"HOME": str(tmp_path)})) == []
    (tmp_path / ".factory" / "sessions").mkdir(parents=True)
    assert list(ADAPTER.discover({"HOME": str(tmp_path)})) == []


def test_a_file_of_no_known_shape_is_named(home: Path, run) -> None:
    write_store(home, [{"type": "mission_state", "x": 1}])
    res = run("scan", "--json")
    assert "mission_state" in res.stderr and "Factory Droid" in res.stderr


def test_where_it_looks(tmp_path: Path) -> None:
    home = tmp_path / "h"
    assert ADAPTER.roots({"HOME": str(home)}) == [home / ".factory" / "sessions", home / ".factory" / "projects"]
    env = {"HOME": str(home), "VOYAGER_DROID_HOME": "/srv/factory", "FACTORY_HOME": "/elsewhere"}
    assert ADAPTER.roots(env) == [Path("/srv/factory/sessions"), Path("/srv/factory/projects")]


def test_the_voyager_override_is_authoritative(tmp_path: Path) -> None:
    write_store(tmp_path, store_lines())
    assert list(ADAPTER.discover({"HOME": str(tmp_path), "VOYAGER_DROID_HOME": str(tmp_path / "none")})) == []


HOSTILE_IDS = ["a;rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "with space", "new\nline"]


@pytest.mark.parametrize("sid", HOSTILE_IDS)
def test_resume_commands_survive_hostile_ids_and_paths(tmp_path: Path, sid: str) -> None:
    cwd = f"/tmp/x; echo $(id) `id` '{sid}'"
    path = write_store(tmp_path, [session_start(sid=sid, cwd=cwd), msg(1, "user", text("hi"))], sid="file-name")
    s = last_session(read(path))
    assert s.native_id == sid and s.cwd == cwd
    assert shlex.split(s.resume) == ["cd", cwd, "&&", "droid", "--resume", sid]
    assert subprocess.run(["sh", "-n", "-c", s.resume], capture_output=True).returncode == 0
    assert shlex.split(resume_command(None, sid)) == ["droid", "--resume", sid]


def test_scanning_leaves_the_store_byte_identical(home: Path, run) -> None:
    path = write_store(home, store_lines(), settings=SETTINGS)
    root = home / ".factory"

    def tree() -> dict[str, str]:
        return {
            str(p.relative_to(root)): (hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir")
            for p in sorted(root.rglob("*"))
        }

    before = tree()
    assert run("scan", "--json").exit_code == 0
    assert tree() == before
    append(path, [msg(30, "user", text("more"))])
    after_append = tree()
    assert run("scan", "--json").exit_code == 0
    assert tree() == after_append


# -- stream-json logs (documented, not observed) ------------------------------------------------------


def stream_lines(sid: str = "stream-7f3e") -> list[dict[str, Any]]:
    base = {"session_id": sid}
    return [
        {"type": "system", "subtype": "init", "cwd": "/home/dev/api", "tools": ["Execute"], "model": "glm-4.6", **base},
        {
            "type": "message",
            "role": "user",
            "id": "u1",
            "text": "接口超时了 API_TIMEOUT_PROMPT",
            "timestamp": 1793779200000,
            **base,
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "a0",
            "subtype": "delta",
            "text": "Let",
            "timestamp": 1793779201000,
            **base,
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "a1",
            "text": "Let me check the logs.",
            "timestamp": 1793779201000,
            **base,
        },
        {
            "type": "tool_call",
            "id": "tc1",
            "messageId": "a1",
            "toolId": "execute-cli",
            "toolName": "Execute",
            "parameters": {"command": "tail -n 50 /var/log/api.log"},
            "timestamp": 1793779202000,
            **base,
        },
        {
            "type": "tool_result",
            "id": "tc1",
            "messageId": "a1",
            "toolId": "execute-cli",
            "isError": False,
            "value": "upstream timed out API_LOG_LINE\n[Process exited with code 0]",
            "timestamp": 1793779203000,
            **base,
        },
        {
            "type": "message",
            "role": "assistant",
            "id": "a2",
            "text": "The upstream pool is exhausted.",
            "timestamp": 1793779204000,
            **base,
        },
        {"type": "error", "message": "STREAM_ERROR_TEXT", "timestamp": 1793779205000, **base},
        {
            "type": "completion",
            "finalText": "The upstream pool is exhausted.",
            "numTurns": 2,
            "durationMs": 5000,
            **base,
        },
    ]


def test_stream_json_logs_under_projects(tmp_path: Path) -> None:
    log = write(tmp_path / ".factory" / "projects" / "api" / "run.jsonl", stream_lines())
    (found,) = [s for s in ADAPTER.discover({"HOME": str(tmp_path)}) if isinstance(s, Source)]
    assert found.path == str(log)
    items = list(ADAPTER.read(found))
    assert [(e.kind, e.origin) for e in events(items)] == [
        ("user", "human"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
        ("meta", "provider"),
    ]  # the delta and the completion repeat messages
    tool_call, tool_result = events(items)[2:4]
    assert (tool_call.text, tool_call.call_id) == ("tail -n 50 /var/log/api.log", "tc1")
    assert (tool_result.call_id, tool_result.exit_code, tool_result.is_error) == ("tc1", 0, False)
    s = last_session(items)
    assert (s.native_id, s.cwd, s.model) == ("stream-7f3e", "/home/dev/api", "glm-4.6")
    assert s.started == 1793779200.0 and s.updated == 1793779205.0


def test_a_completion_that_says_something_new_is_kept(tmp_path: Path) -> None:
    lines = stream_lines()[:2] + [{"type": "completion", "finalText": "FINAL_ONLY_TEXT", "session_id": "stream-7f3e"}]
    log = write(tmp_path / "run.jsonl", lines)
    assert [e.text for e in events(read(log))][-1] == "FINAL_ONLY_TEXT"


def test_a_stream_json_copy_of_a_stored_session_is_not_read_twice(tmp_path: Path) -> None:
    write_store(tmp_path, store_lines())
    write(tmp_path / ".factory" / "projects" / "api" / "copy.jsonl", stream_lines(sid=SID))
    write(tmp_path / ".factory" / "projects" / "api" / "other.jsonl", stream_lines())
    found = [Path(s.path).name for s in ADAPTER.discover({"HOME": str(tmp_path)}) if isinstance(s, Source)]
    assert found == [f"{SID}.jsonl", "other.jsonl"]


def test_a_record_whose_type_is_a_list_or_an_object_is_named_not_fatal(tmp_path: Path) -> None:
    # `kind in _STREAM_HANDLERS` raised TypeError (unhashable) out of the read: the session's later lines lost.
    lines = store_lines()[:3] + [{"type": ["message"]}, {"type": {"message": 1}}] + store_lines()[3:]
    items = read(write_store(tmp_path, lines))
    assert [e.kind for e in events(items)] == [e.kind for e in events(read(write_store(tmp_path / "b", store_lines())))]
    assert "record" in " ".join(n.reason for n in notices(items))
