"""The OpenHands adapter against conversation folders built here, one event file at a time, from invented content.

The capture ``shared/fixtures/agents/openhands-1.16.0`` is checked by ``test_captures.py``;
these tests cover what it does not show: every event kind, a conversation that grows
(only the new files are read), files rewritten or caught half-written, subagents, V0
sessions, local time, the variables that move OpenHands' store, hostile ids and paths,
and that nothing is written.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import time
import uuid
from pathlib import Path
from typing import Any

import pytest

from tests.support.hostile import EVIL, _stub
from tests.support.items import cursor_of, events, last_session, notices
from tests.support.run import sha256_tree
from voyager_sessions.ingest.adapters.base import Partial, Source
from voyager_sessions.ingest.adapters.openhands import ADAPTER, dashed, probe

HEX = "68e92157d0f448e8920006e783b07af5"
UUID = "68e92157-d0f4-48e8-9200-06e783b07af5"
CWD = "/home/dev/商店 api"


def _ts(n: int) -> str:
    return f"2026-12-01T08:08:{n:02d}.500000"


def msg(n: int, source: str, text: str, **extra: Any) -> dict[str, Any]:
    role = "user" if source == "user" else "assistant"
    return {
        "kind": "MessageEvent",
        "id": str(uuid.uuid4()),
        "timestamp": _ts(n),
        "source": source,
        "llm_message": {
            "role": role,
            "content": [{"type": "text", "text": text, "cache_prompt": False}],
            "thinking_blocks": [],
        },
        "activated_skills": [],
        "extended_content": [],
        **extra,
    }


def action(
    n: int,
    action_body: dict[str, Any] | None,
    *,
    thought: str = "",
    reasoning: str | None = None,
    call_id: str = "call_1",
    tool: str = "terminal",
    arguments: str = "{}",
) -> dict[str, Any]:
    return {
        "kind": "ActionEvent",
        "id": str(uuid.uuid4()),
        "timestamp": _ts(n),
        "source": "agent",
        "thought": [{"type": "text", "text": thought}] if thought else [],
        "reasoning_content": reasoning,
        "thinking_blocks": [],
        "action": action_body,
        "tool_name": tool,
        "tool_call_id": call_id,
        "tool_call": {"id": call_id, "name": tool, "arguments": arguments, "origin": "completion"},
        "llm_response_id": "chatcmpl-1",
        "security_risk": "UNKNOWN",
    }


def observation(
    n: int,
    text: str,
    *,
    exit_code: int | None = 0,
    call_id: str = "call_1",
    kind: str = "TerminalObservation",
    is_error: bool = False,
    tool: str = "terminal",
) -> dict[str, Any]:
    obs: dict[str, Any] = {"content": [{"type": "text", "text": text}], "is_error": is_error, "kind": kind}
    if kind == "TerminalObservation":
        obs.update(
            {
                "command": "x",
                "exit_code": exit_code,
                "metadata": {"exit_code": exit_code if exit_code is not None else -1},
            }
        )
    return {
        "kind": "ObservationEvent",
        "id": str(uuid.uuid4()),
        "timestamp": _ts(n),
        "source": "environment",
        "tool_name": tool,
        "tool_call_id": call_id,
        "observation": obs,
        "action_id": "a",
    }


def system_prompt() -> dict[str, Any]:
    return {
        "kind": "SystemPromptEvent",
        "id": str(uuid.uuid4()),
        "timestamp": _ts(0),
        "source": "agent",
        "system_prompt": {"type": "text", "text": "STALE_SYSTEM_PROMPT You are OpenHands agent"},
        "tools": [],
    }


def base_state(cid: str = UUID, cwd: str = CWD) -> dict[str, Any]:
    return {
        "id": cid,
        "agent": {"llm": {"model": "openai/mock-model", "api_key": "**********"}, "kind": "Agent"},
        "workspace": {"working_dir": cwd, "kind": "LocalWorkspace"},
        "execution_status": "finished",
        "stats": {
            "usage_to_metrics": {
                "agent": {"accumulated_token_usage": {"prompt_tokens": 300, "completion_tokens": 60}},
                "condenser": {"accumulated_token_usage": {"prompt_tokens": 10, "completion_tokens": 2}},
            }
        },
    }


class Conversation:
    """A V1 conversation folder as the OpenHands SDK writes it: base_state.json + events/event-NNNNN-<uuid>.json."""

    def __init__(self, root: Path, name: str = HEX, base: dict[str, Any] | None = None) -> None:
        self.folder = root / name
        (self.folder / "events").mkdir(parents=True, exist_ok=True)
        (self.folder / "base_state.json").write_text(json.dumps(base or base_state(), ensure_ascii=False))
        self.n = 0

    def add(self, *docs: dict[str, Any] | bytes) -> list[Path]:
        out = []
        for doc in docs:
            path = self.folder / "events" / f"event-{self.n:05d}-{uuid.uuid4()}.json"
            path.write_bytes(doc if isinstance(doc, bytes) else json.dumps(doc, ensure_ascii=False, indent=1).encode())
            out.append(path)
            self.n += 1
        return out


def first_turn() -> list[dict[str, Any]]:
    return [
        system_prompt(),
        msg(2, "user", "PROMPT_OH1 迁移失败 ERR_MIGRATE_77"),
        action(
            3,
            {"kind": "TerminalAction", "command": "pytest -q 测试", "is_input": False},
            thought="我来运行测试。",
            reasoning="THINK_OH1 run the tests",
        ),
        observation(4, "TOOLOUT_OH1 1 failed", exit_code=1),
        msg(5, "agent", "REPLY_OH1 修正しました"),
    ]


@pytest.fixture
def convs(tmp_path: Path) -> Path:
    return tmp_path / "oh" / "conversations"


def env_for(convs: Path) -> dict[str, str]:
    return {"VOYAGER_OPENHANDS_HOME": str(convs.parent)}


def sources(convs: Path) -> list[Source]:
    return [s for s in ADAPTER.discover(env_for(convs)) if isinstance(s, Source)]


def read_all(convs: Path) -> list[Any]:
    out: list[Any] = []
    for src in ADAPTER.discover(env_for(convs)):
        out.append(src)
        if isinstance(src, Source):
            out.extend(ADAPTER.read(src))
    return out


# -- mapping -------------------------------------------------------------------------------------


def test_a_conversation_maps_every_kind_once(convs: Path) -> None:
    c = Conversation(convs)
    c.add(*first_turn())
    items = read_all(convs)
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [
        ("user", "human"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
    ]
    assert "STALE" not in " ".join(e.text for e in evs)
    call, result = evs[3], evs[4]
    assert call.text == "pytest -q 测试" and call.tool == "terminal" and call.call_id == result.call_id == "call_1"
    assert result.exit_code == 1 and not result.is_error
    s = last_session(items)
    assert s.id == f"openhands:{UUID}" and s.native_id == UUID and s.cwd == CWD and s.model == "openai/mock-model"
    assert (s.tokens_in, s.tokens_out) == (310, 62) and s.parent is None and s.title is None
    assert s.resume == f"cd {shlex.quote(CWD)} && openhands --resume {UUID}"
    assert s.started == evs[0].ts and s.updated == evs[-1].ts
    assert not notices(items)


def test_every_other_event_kind(convs: Path) -> None:
    c = Conversation(convs)
    c.add(
        msg(1, "user", "do it", extended_content=[{"type": "text", "text": "<SKILL>repo rules INJECTED_OH</SKILL>"}]),
        action(
            2,
            {"kind": "FileEditorAction", "command": "", "path": "/src/数据.py", "old_str": "a", "new_str": "b"},
            tool="file_editor",
            call_id="c2",
        ),
        observation(3, "edited", kind="FileEditorObservation", tool="file_editor", call_id="c2"),
        action(4, None, call_id="c3", arguments='{"command": "echo \\u8f93\\u51fa"}'),
        {
            "kind": "UserRejectObservation",
            "id": "r",
            "timestamp": _ts(5),
            "source": "user",
            "tool_name": "terminal",
            "tool_call_id": "c3",
            "rejection_reason": "not on prod",
            "action_id": "a",
        },
        action(6, {"kind": "TerminalAction", "command": "sleep 999"}, call_id="c4"),
        observation(7, "still running", exit_code=-1, call_id="c4"),
        {
            "kind": "AgentErrorEvent",
            "id": "e",
            "timestamp": _ts(8),
            "source": "agent",
            "tool_name": "terminal",
            "tool_call_id": "c5",
            "error": "tool crashed",
        },
        action(9, {"kind": "ThinkAction", "thought": "PONDER_OH weigh options"}, tool="think", call_id="c6"),
        observation(10, "Your thought has been logged.", kind="ThinkObservation", tool="think", call_id="c6"),
        {
            "kind": "Condensation",
            "id": "k",
            "timestamp": _ts(11),
            "source": "environment",
            "forgotten_event_ids": [],
            "summary": "SUMMARY_OH earlier work",
            "llm_response_id": "x",
        },
        {"kind": "ConversationStateUpdateEvent", "id": "s", "timestamp": _ts(12), "source": "environment", "key": "k"},
        action(13, {"kind": "FinishAction", "message": "FINAL_OH all done"}, tool="finish", call_id="c7"),
        observation(14, "FINAL_OH all done", kind="FinishObservation", tool="finish", call_id="c7"),
        {"kind": "HolographicEvent", "id": "h", "timestamp": _ts(15), "source": "agent"},
    )
    items = read_all(convs)
    got = [(e.kind, e.origin, e.text) for e in events(items)]
    assert got == [
        ("user", "human", "do it"),
        ("meta", "provider", "<SKILL>repo rules INJECTED_OH</SKILL>"),
        ("tool_call", "agent", '{"path":"/src/数据.py","old_str":"a","new_str":"b"}'),
        ("tool_result", "tool", "edited"),
        ("tool_call", "agent", "echo 输出"),
        ("tool_result", "tool", "Action rejected: not on prod"),
        ("tool_call", "agent", "sleep 999"),
        ("tool_result", "tool", "still running"),
        ("tool_result", "tool", "tool crashed"),
        ("reasoning", "agent", "PONDER_OH weigh options"),
        ("meta", "provider", "SUMMARY_OH earlier work"),
        ("assistant", "agent", "FINAL_OH all done"),
    ]
    evs = events(items)
    assert evs[5].is_error and evs[8].is_error and not evs[3].is_error
    assert evs[7].exit_code is None  # -1: still running after the soft timeout, not an exit status
    [notice] = notices(items)
    assert "HolographicEvent" in notice.reason and "OpenHands" in notice.reason


def test_zoneless_times_are_this_machines_local_time(convs: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    Conversation(convs).add(msg(2, "user", "hello"))
    utc = events(read_all(convs))[0].ts
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        tokyo = events(read_all(convs))[0].ts
    finally:
        monkeypatch.undo()
        time.tzset()
    assert utc is not None and tokyo is not None and utc - tokyo == pytest.approx(9 * 3600)


# -- reading on: only what was added ---------------------------------------------------------------


def test_a_re_read_yields_partial_and_only_the_new_files(convs: Path) -> None:
    c = Conversation(convs)
    c.add(*first_turn())
    cur = cursor_of(list(ADAPTER.read(sources(convs)[0])))
    assert cur.state["files"] == 5 and cur.state["next_seq"] == 6
    c.add(msg(20, "user", "PROMPT2_OH1 第二轮"), msg(21, "agent", "NOTE_OH1"))
    items = list(ADAPTER.read(sources(convs)[0], cur))
    [partial] = [i for i in items if isinstance(i, Partial)]
    assert partial.from_seq == 6
    assert [(e.seq, e.text) for e in events(items)] == [(6, "PROMPT2_OH1 第二轮"), (7, "NOTE_OH1")]
    s = last_session(items)
    assert s.started < s.updated and s.updated == events(items)[-1].ts


def test_a_removed_or_renamed_earlier_file_means_a_whole_re_read(convs: Path) -> None:
    c = Conversation(convs)
    paths = c.add(*first_turn())
    cur = cursor_of(list(ADAPTER.read(sources(convs)[0])))
    paths[2].unlink()
    items = list(ADAPTER.read(sources(convs)[0], cur))
    assert not [i for i in items if isinstance(i, Partial)]
    assert [e.seq for e in events(items)] == [0, 1, 2] and events(items)[0].text.startswith("PROMPT_OH1")


def test_a_half_written_file_is_read_again_once_complete(convs: Path) -> None:
    c = Conversation(convs)
    c.add(*first_turn())
    [half] = c.add(b'{"kind": "MessageEvent", "source": "agent", "llm_message": {"content": [{"type": "te')
    c.add(msg(30, "user", "AFTER_HALF"))
    items = list(ADAPTER.read(sources(convs)[0]))
    assert [n for n in notices(items) if half.name in n.source and n.transient and not n.fatal]
    assert events(items)[-1].text == "AFTER_HALF"
    cur = cursor_of(items)
    assert cur.state["files"] == 5 and cur.state["next_seq"] == 6
    half.write_text(json.dumps(msg(29, "agent", "HALF_DONE")))
    again = list(ADAPTER.read(sources(convs)[0], cur))
    assert [(e.seq, e.text) for e in events(again)] == [(6, "HALF_DONE"), (7, "AFTER_HALF")]


def test_a_growing_conversation_through_the_cli(home: Path, run) -> None:
    convs = home / ".openhands" / "conversations"
    c = Conversation(convs)
    c.add(*first_turn())
    first = json.loads(run("scan", "--json").stdout)
    assert first["new"] == 1 and first["events_added"] == 6
    assert json.loads(run("scan", "--json").stdout)["unchanged"] == 1
    c.add(msg(20, "user", "PROMPT2_OH1 第二轮"), msg(21, "agent", "NOTE_OH1"))
    second = json.loads(run("scan", "--json").stdout)
    assert second["changed"] == 1 and second["events_added"] == 2 and second["events_removed"] == 0
    hits = run.json("search", "PROMPT2_OH1", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"], h["seq"]) for h in hits] == [("user", "human", 6)]
    assert len(run.json("search", "PROMPT_OH1", "--json", "--no-refresh", "--kind", "user")["hits"]) == 1
    [s] = run.json("list", "--json")["sessions"]
    assert s["events"] == 8 and s["title"].startswith("PROMPT_OH1")
    # Only base_state.json changed (execution status, stats): nothing to add, nothing lost.
    (c.folder / "base_state.json").write_text(json.dumps(base_state() | {"execution_status": "idle"}))
    third = json.loads(run("scan", "--json").stdout)
    assert third["changed"] == 1 and third["events_added"] == 0 and third["events_removed"] == 0
    assert run.json("list", "--json")["sessions"][0]["events"] == 8


# -- subagents, V0, probing ----------------------------------------------------------------------------


def test_a_subagent_conversation_links_its_parent(convs: Path) -> None:
    Conversation(convs).add(*first_turn())
    child_hex = "0123456789abcdef0123456789abcdef"
    Conversation(convs / HEX / "subagents", child_hex, base_state(dashed(child_hex))).add(
        msg(1, "user", "SUBTASK_OH list files"), msg(2, "agent", "SUBREPLY_OH")
    )
    by_id = {}
    for src in sources(convs):
        items = list(ADAPTER.read(src))
        by_id[last_session(items).id] = (last_session(items), events(items))
    child, evs = by_id[f"openhands:{dashed(child_hex)}"]
    assert child.parent == f"openhands:{UUID}"
    assert child.resume.endswith(f"openhands --resume {UUID}")
    assert (evs[0].kind, evs[0].origin) == ("user", "provider")


def test_v0_sessions(tmp_path: Path) -> None:
    home = tmp_path / "oh"
    folder = home / "sessions" / "abc123"
    (folder / "events").mkdir(parents=True)
    (folder / "metadata.json").write_text(
        json.dumps(
            {
                "conversation_id": "abc123",
                "title": "V0 标题",
                "llm_model": "gpt-4o",
                "created_at": "2025-06-01T10:00:00",
            }
        )
    )
    v0 = [
        {
            "id": 0,
            "timestamp": "2025-06-01T10:00:00",
            "source": "agent",
            "action": "system",
            "args": {"content": "STALE"},
        },
        {
            "id": 1,
            "timestamp": "2025-06-01T10:00:01",
            "source": "user",
            "action": "message",
            "args": {"content": "PROMPT_V0 fix it", "image_urls": []},
        },
        {
            "id": 2,
            "timestamp": "2025-06-01T10:00:02",
            "source": "agent",
            "action": "run",
            "args": {"command": "make test", "thought": "Running the tests"},
        },
        {
            "id": 3,
            "timestamp": "2025-06-01T10:00:03",
            "source": "agent",
            "observation": "run",
            "cause": 2,
            "content": "TOOLOUT_V0 2 failed",
            "extras": {"command": "make test", "metadata": {"exit_code": 2}},
        },
        {
            "id": 4,
            "timestamp": "2025-06-01T10:00:04",
            "source": "agent",
            "observation": "agent_state_changed",
            "content": "",
            "extras": {"agent_state": "running"},
        },
        {
            "id": 5,
            "timestamp": "2025-06-01T10:00:05",
            "source": "agent",
            "action": "finish",
            "args": {"final_thought": "REPLY_V0 fixed", "outputs": {}},
        },
    ]
    for doc in v0:
        (folder / "events" / f"{doc['id']}.json").write_text(json.dumps(doc))
    # numbers sort as numbers, not as text
    (folder / "events" / "10.json").write_text(
        json.dumps(
            {
                "id": 10,
                "timestamp": "2025-06-01T10:00:10",
                "source": "user",
                "action": "message",
                "args": {"content": "LAST_V0"},
            }
        )
    )
    found = [s for s in ADAPTER.discover({"VOYAGER_OPENHANDS_HOME": str(home)}) if isinstance(s, Source)]
    assert [probe(s.path) for s in found] == ["v0-session"]
    items = list(ADAPTER.read(found[0]))
    assert [(e.kind, e.origin, e.text) for e in events(items)] == [
        ("user", "human", "PROMPT_V0 fix it"),
        ("assistant", "agent", "Running the tests"),
        ("tool_call", "agent", "make test"),
        ("tool_result", "tool", "TOOLOUT_V0 2 failed"),
        ("assistant", "agent", "REPLY_V0 fixed"),
        ("user", "human", "LAST_V0"),
    ]
    assert events(items)[3].exit_code == 2 and events(items)[3].call_id == events(items)[2].call_id == "2"
    s = last_session(items)
    assert (s.id, s.title, s.title_source, s.model, s.resume) == (
        "openhands:abc123",
        "V0 标题",
        "agent",
        "gpt-4o",
        None,
    )


# -- where OpenHands lives, hostile input, read-only -------------------------------------------------------


def test_voyager_openhands_home_is_authoritative_then_openhands_own_variables(tmp_path: Path) -> None:
    names = {
        "ours": tmp_path / "ours" / "conversations",
        "convdir": tmp_path / "convdir",
        "persist": tmp_path / "persist" / "conversations",
        "home": tmp_path / "home" / ".openhands" / "conversations",
    }
    for i, where in enumerate(names.values()):
        Conversation(where, f"{i:032x}").add(msg(1, "user", "hi"))
    env = {
        "HOME": str(tmp_path / "home"),
        "OPENHANDS_PERSISTENCE_DIR": str(tmp_path / "persist"),
        "OPENHANDS_CONVERSATIONS_DIR": str(tmp_path / "convdir"),
        "VOYAGER_OPENHANDS_HOME": str(tmp_path / "ours"),
    }

    def found() -> list[str]:
        return [Path(s.path).parent.as_posix() for s in ADAPTER.discover(env) if isinstance(s, Source)]

    for key, var in (
        ("ours", "VOYAGER_OPENHANDS_HOME"),
        ("convdir", "OPENHANDS_CONVERSATIONS_DIR"),
        ("persist", "OPENHANDS_PERSISTENCE_DIR"),
        ("home", None),
    ):
        assert found() == [names[key].as_posix()], key
        if var:
            del env[var]


HOSTILE = 'x\'; rm -rf ~ $(touch pwned) `id` "q" \nnext'  # a folder name: no slash


def test_resume_commands_quote_hostile_ids_and_paths(convs: Path) -> None:
    Conversation(convs, HOSTILE, base_state(HOSTILE, cwd=HOSTILE + "/dir")).add(msg(1, "user", "hi"))
    Conversation(convs, HEX, base_state(cwd="/tmp/a b/$(reboot)/'q'")).add(msg(1, "user", "hi"))
    sessions = [i for i in read_all(convs) if hasattr(i, "resume")]
    assert {s.native_id for s in sessions} == {HOSTILE, UUID}
    for s in sessions:
        assert subprocess.run(["sh", "-n", "-c", s.resume], capture_output=True).returncode == 0
        argv = shlex.split(s.resume)
        assert argv == ["cd", s.cwd, "&&", "openhands", "--resume", s.native_id]


def test_scanning_changes_nothing_beside_the_store(home: Path, run) -> None:
    convs = home / ".openhands" / "conversations"
    c = Conversation(convs)
    c.add(*first_turn())
    Conversation(convs / HEX / "subagents", "f" * 32).add(msg(1, "user", "sub"))
    before = sha256_tree(home / ".openhands")
    listing = sorted(str(p) for p in (home / ".openhands").rglob("*"))
    assert run("scan").exit_code == 0
    assert sha256_tree(home / ".openhands") == before
    assert sorted(str(p) for p in (home / ".openhands").rglob("*")) == listing
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "openhands")
    assert report["indexed_sessions"] == 2 and report["shapes"] == {"v1-conversation": 2}


def test_an_empty_store_and_a_folder_without_events(home: Path, run) -> None:
    convs = home / ".openhands" / "conversations"
    convs.mkdir(parents=True)
    summary = json.loads(run("scan", "--json").stdout)
    assert summary["sessions"] == 0 and summary["failed"] == 0 and summary["skipped"] == []
    (convs / HEX).mkdir()
    summary = json.loads(run("scan", "--json").stdout)
    assert [s["source"] for s in summary["skipped"]] == [str(convs / HEX)]
    # A conversation OpenHands created but nobody spoke in yet: a session with no events, no error.
    Conversation(convs, "e" * 32)
    summary = json.loads(run("scan", "--json").stdout)
    assert summary["failed"] == 0 and summary["sessions"] == 1
    assert not any("e" * 32 in s["source"] for s in summary["skipped"])


def test_a_fifo_named_like_an_event_never_blocks(convs: Path) -> None:
    c = Conversation(convs)
    c.add(msg(1, "user", "hi"))
    os.mkfifo(c.folder / "events" / f"event-00001-{uuid.uuid4()}.json")
    assert [e.text for e in events(read_all(convs))] == ["hi"]


@pytest.mark.parametrize("evil", EVIL)
def test_resume_commands_run_the_agent_with_the_exact_id_in_the_exact_directory(tmp_path: Path, evil: str) -> None:
    pwned = tmp_path / "pwned"
    ident = evil.format(pwned=pwned).replace("/", "_")  # the id is a folder name
    cwd = tmp_path / f"dir {evil.format(pwned=pwned)}".replace("/", "_")
    cwd.mkdir()
    convs = tmp_path / "oh" / "conversations"
    Conversation(convs, ident, base_state(ident, cwd=str(cwd))).add(msg(1, "user", "hi"))
    bin_dir, log = tmp_path / "bin", tmp_path / "argv.log"
    bin_dir.mkdir()
    _stub(bin_dir, "openhands", log)
    env = dict(os.environ, PATH=f"{bin_dir}{os.pathsep}{os.environ['PATH']}")
    s = last_session(read_all(convs))
    proc = subprocess.run(["sh", "-c", s.resume], capture_output=True, text=True, env=env, timeout=30)
    assert proc.returncode == 0, (s.resume, proc.stderr)
    assert not pwned.exists()
    assert [json.loads(line) for line in log.read_text().splitlines()] == [[str(cwd), "--resume", ident]]


def test_call_arguments_nested_too_deeply_are_kept_as_written() -> None:
    from voyager_sessions.ingest.adapters.openhands import _call_text

    deep = '{"command": ' + "[" * 1000 + "]" * 1000 + "}"  # RecursionError escaped the read before
    assert _call_text(None, {"arguments": deep}) == deep


def test_an_event_whose_kind_is_a_list_or_an_object_is_named_not_fatal(convs: Path) -> None:
    # `kind not in _BOOKKEEPING` raised TypeError (unhashable) out of the read: every event of the conversation lost.
    c = Conversation(convs)
    odd = msg(6, "user", "odd")
    c.add(*first_turn(), {**odd, "kind": ["MessageEvent"]}, {**msg(7, "user", "odd"), "kind": {"k": 1}})
    items = read_all(convs)
    assert len(events(items)) == 6 and "PROMPT_OH1" in events(items)[0].text
    assert len(notices(items)) == 1


def test_an_observation_kind_or_acp_status_that_is_a_list_or_an_object_is_no_error(convs: Path) -> None:
    # Both were tested against frozensets: TypeError (unhashable) out of the read, the conversation lost.
    c = Conversation(convs)
    odd = observation(6, "ODD_RESULT", kind="x")
    odd["observation"]["kind"] = {"k": 1}
    acp = {"kind": "ACPToolCallEvent", "id": "acp1", "timestamp": _ts(7), "status": ["completed"], "title": "t"}
    c.add(*first_turn(), odd, acp)
    texts = [e.text for e in events(read_all(convs))]
    assert "ODD_RESULT" in texts and any("PROMPT_OH1" in t for t in texts)
