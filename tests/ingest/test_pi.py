"""The Pi adapter against session files built here from Pi's documented and observed shapes.

The capture Pi 0.73.1 wrote is checked by ``test_captures.py``; these tests cover what it
does not show: every entry kind, branches and forks, a bash run the person typed, a
half-written last line, unknown entries, a second scan reading only what was added, the
environment variables, hostile ids in the resume command, and that nothing is written.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.shell import option_words
from tests.support.items import append, cursor_of, events, last_session, notices, write
from voyager_sessions.ingest.adapters.base import Cursor, Source, fingerprint
from voyager_sessions.ingest.adapters.pi import ADAPTER, native_id_of_file, render_call, resume_command

SID = "01a230a1-0593-76d6-b8f3-3073a559b69b"
CWD = "/home/dev/支付 service"
T0 = 1796112188000  # epoch ms, as Pi writes message timestamps


def header(sid: str = SID, cwd: str = CWD, **extra: Any) -> dict[str, Any]:
    return {"type": "session", "version": 3, "id": sid, "timestamp": "2026-12-01T08:03:08.820Z", "cwd": cwd, **extra}


def entry(kind: str, eid: str, parent: str | None, **fields: Any) -> dict[str, Any]:
    return {"type": kind, "id": eid, "parentId": parent, "timestamp": "2026-12-01T08:03:09.000Z", **fields}


def message(eid: str, parent: str | None, n: int, **msg: Any) -> dict[str, Any]:
    return entry("message", eid, parent, message={**msg, "timestamp": T0 + n * 1000})


def user(eid: str, parent: str | None, n: int, text: str) -> dict[str, Any]:
    return message(eid, parent, n, role="user", content=[{"type": "text", "text": text}])


def assistant(eid: str, parent: str | None, n: int, *blocks: dict[str, Any], **extra: Any) -> dict[str, Any]:
    return message(
        eid,
        parent,
        n,
        role="assistant",
        content=list(blocks),
        provider="anthropic",
        model="claude-sonnet-4-5",
        usage={"input": 100, "output": 20, "cacheRead": 5, "cacheWrite": 1, "totalTokens": 126},
        **{"stopReason": "stop", **extra},
    )


def session_file(root: Path, sid: str = SID, project: str = "--home-dev-proj--") -> Path:
    return root / "sessions" / project / f"2026-12-01T08-03-08-820Z_{sid}.jsonl"


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    return list(
        ADAPTER.read(Source(provider="pi", path=str(path), fingerprint=fingerprint(path), append_only=True), cursor)
    )


def full_session() -> list[dict[str, Any]]:
    """A session touching every entry kind, with a branch: entry c2 is a second child of a1."""
    return [
        header(),
        entry("model_change", "m0", None, provider="anthropic", modelId="claude-sonnet-4-5"),
        entry("thinking_level_change", "t0", "m0", thinkingLevel="high"),
        user("u1", "t0", 1, "数据库迁移失败了 ERR_PI_0042, 帮我看看"),
        assistant(
            "a1",
            "u1",
            2,
            {"type": "thinking", "thinking": "Check the migration log first"},
            {"type": "text", "text": "我来看看日志。"},
            {"type": "toolCall", "id": "call_1", "name": "bash", "arguments": {"command": "tail -n 5 migrate.log"}},
        ),
        message(
            "r1",
            "a1",
            3,
            role="toolResult",
            toolCallId="call_1",
            toolName="bash",
            content=[{"type": "text", "text": "relation users does not exist"}],
            isError=True,
        ),
        assistant(
            "a2", "r1", 4, {"type": "toolCall", "id": "call_2", "name": "read", "arguments": {"path": "src/db.py"}}
        ),
        entry("branch_summary", "b1", "a1", fromId="a2", summary="Abandoned branch tried reading src/db.py"),
        user("c2", "b1", 5, "try the 日本語 path instead"),
        message(
            "x1",
            "c2",
            6,
            role="bashExecution",
            command="make migrate",
            output="ok\n",
            exitCode=2,
            cancelled=False,
            truncated=False,
        ),
        entry("custom_message", "cm", "x1", customType="todo", content="Injected TODO context", display=True),
        entry(
            "compaction",
            "k1",
            "cm",
            summary="Summary: migration fixed by creating users",
            firstKeptEntryId="c2",
            tokensBefore=50000,
        ),
        entry("label", "l1", "k1", targetId="u1", label="checkpoint-1"),
        entry("custom", "e1", "l1", customType="my-extension", data={"count": 42}),
        entry("session_info", "s1", "e1", name="Fix the 데이터베이스 migration"),
        assistant(
            "a3",
            "s1",
            7,
            {"type": "text", "text": "Rate limited"},
            stopReason="error",
            errorMessage="429 Too Many Requests",
        ),
    ]


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "agent"


# -- mapping -------------------------------------------------------------------------------------


def test_every_entry_kind_maps_to_one_event(root: Path) -> None:
    items = read(write(session_file(root), full_session()))
    got = [(e.kind, e.origin, e.text, e.tool) for e in events(items)]
    assert got == [
        ("meta", "provider", "model: anthropic/claude-sonnet-4-5", None),
        ("meta", "provider", "thinking level: high", None),
        ("user", "human", "数据库迁移失败了 ERR_PI_0042, 帮我看看", None),
        ("reasoning", "agent", "Check the migration log first", None),
        ("assistant", "agent", "我来看看日志。", None),
        ("tool_call", "agent", "tail -n 5 migrate.log", "bash"),
        ("tool_result", "tool", "relation users does not exist", "bash"),
        ("tool_call", "agent", '{"path":"src/db.py"}', "read"),
        ("meta", "provider", "Abandoned branch tried reading src/db.py", None),
        ("user", "human", "try the 日本語 path instead", None),
        ("tool_call", "human", "make migrate", "bash"),
        ("tool_result", "tool", "ok\n", "bash"),
        ("meta", "provider", "Injected TODO context", None),
        ("meta", "provider", "Summary: migration fixed by creating users", None),
        ("meta", "provider", "label: checkpoint-1", None),
        ("assistant", "agent", "Rate limited", None),
        ("meta", "provider", "429 Too Many Requests", None),
    ]
    evs = events(items)
    assert [e.seq for e in evs] == list(range(len(evs)))
    result = evs[6]
    assert result.call_id == "call_1" and result.is_error and result.exit_code is None, "Pi records no exit code"
    bash_result = evs[11]
    assert bash_result.exit_code == 2 and bash_result.is_error
    assert evs[2].ts == pytest.approx((T0 + 1000) / 1000), "the message's epoch-ms time"
    assert evs[-1].is_error and not notices(items)


def test_session_fields_and_the_name_a_person_gave(root: Path) -> None:
    s = last_session(read(write(session_file(root), full_session())))
    assert s.id == f"pi:{SID}" and s.native_id == SID and s.cwd == CWD
    assert (s.title, s.title_source) == ("Fix the 데이터베이스 migration", "user")
    assert s.model == "claude-sonnet-4-5" and (s.tokens_in, s.tokens_out) == (3 * 106, 3 * 20)
    assert s.started == pytest.approx(1796112188.82) and s.parent is None
    assert s.resume == f"cd {shlex.quote(CWD)} && pi --session {SID}"


def test_an_empty_name_clears_the_title(root: Path) -> None:
    lines = [
        header(),
        entry("session_info", "s1", None, name="first"),
        entry("session_info", "s2", "s1", name=""),
        user("u1", "s2", 1, "hello"),
    ]
    assert last_session(read(write(session_file(root), lines))).title is None


def test_a_fork_links_to_the_session_it_was_forked_from(root: Path) -> None:
    origin = "/home/dev/.pi/agent/sessions/--home-dev-proj--/2026-11-30T10-00-00-000Z_0badf00d-0000-4000-8000-000000000001.jsonl"
    lines = [header(parentSession=origin), user("u1", None, 1, "continue here")]
    s = last_session(read(write(session_file(root), lines)))
    assert s.parent == "pi:0badf00d-0000-4000-8000-000000000001"
    assert [e.origin for e in events(read(session_file(root)))] == ["human"], "a fork's prompts are still a person's"


def test_without_a_header_the_file_name_names_the_session(root: Path) -> None:
    items = read(write(session_file(root), [user("u1", None, 1, "no header here")]))
    assert last_session(items).id == f"pi:{SID}" and last_session(items).cwd is None
    assert last_session(items).resume == f"pi --session {SID}"


def test_unknown_entries_and_roles_are_named_once(root: Path) -> None:
    lines = [
        header(),
        user("u1", None, 1, "kept"),
        entry("hologram", "h1", "u1", data=1),
        message("q1", "h1", 2, role="oracle", content="?"),
        entry("hologram", "h2", "q1", data=2),
    ]
    items = read(write(session_file(root), lines))
    assert [e.text for e in events(items)] == ["kept"]
    [notice] = notices(items)
    assert (
        "hologram ×2" in notice.reason
        and "message:oracle" in notice.reason
        and "Pi (session format v3)" in notice.reason
    )


def test_render_call() -> None:
    assert render_call("bash", {"command": "ls -la", "timeout": 5}) == "ls -la"
    assert render_call("edit", {"path": "a.py", "old": "x", "new": "数据"}) == '{"path":"a.py","old":"x","new":"数据"}'
    assert render_call("bash", "not a dict") == "not a dict"  # a shell tool's bare string is its command


def test_native_id_of_file() -> None:
    assert native_id_of_file(f"2026-12-01T08-03-08-820Z_{SID}.jsonl") == SID
    assert native_id_of_file("plain.jsonl") == "plain"


# -- streaming: cursor, half-written lines, broken lines ---------------------------------------------


def test_resume_after_append_yields_only_new_events(root: Path) -> None:
    path = write(session_file(root), full_session()[:6])
    first = read(path)
    cursor = cursor_of(first)
    assert cursor.offset == path.stat().st_size and cursor.session == f"pi:{SID}"
    append(path, full_session()[6:])
    again = read(path, cursor)
    full = read(path)
    assert events(first) + events(again) == events(full)
    assert last_session(again) == last_session(full)


def test_a_truncated_last_line_is_not_consumed(root: Path) -> None:
    tail = json.dumps(user("u2", "u1", 2, "second prompt")).encode()
    path = write(session_file(root), [header(), user("u1", None, 1, "first")], raw_tail=tail[:30])
    items = read(path)
    assert [e.text for e in events(items)] == ["first"]
    cursor = cursor_of(items)
    assert cursor.offset == path.stat().st_size - 30 and cursor.next_seq == 1
    with open(path, "ab") as fh:
        fh.write(tail[30:] + b"\n")
    assert [(e.seq, e.text) for e in events(read(path, cursor))] == [(1, "second prompt")]


def test_a_malformed_line_costs_only_itself(root: Path) -> None:
    path = write(
        session_file(root),
        [header(), user("u1", None, 1, "before"), b'{"type": "message", "message": {\n', user("u3", "u1", 3, "after")],
    )
    items = read(path)
    assert [e.text for e in events(items)] == ["before", "after"]
    [notice] = notices(items)
    assert notice.where == "line 3" and not notice.fatal


def test_reading_leaves_files_byte_identical(root: Path) -> None:
    path = write(session_file(root), full_session())
    listing = sorted(p.name for p in path.parent.iterdir())
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    read(path, cursor_of(read(path)))
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in path.parent.iterdir()) == listing


# -- where Voyager looks --------------------------------------------------------------------------


def _found(env: dict[str, str]) -> set[str]:
    return {Path(s.path).name for s in ADAPTER.discover(env) if isinstance(s, Source)}


def test_homes_and_their_precedence(tmp_path: Path) -> None:
    home = tmp_path / "h"
    write(session_file(home / ".pi" / "agent", "aaaa"), [header("aaaa")])
    write(session_file(tmp_path / "custom-agent", "bbbb"), [header("bbbb")])
    write(tmp_path / "only-sessions" / "cccc.jsonl", [header("cccc")])
    write(session_file(home / ".omp" / "agent", "dddd"), [header("dddd")])
    write(session_file(tmp_path / "voyager-pi", "eeee"), [header("eeee")])
    names = lambda *ids: {f"2026-12-01T08-03-08-820Z_{i}.jsonl" if i != "cccc" else "cccc.jsonl" for i in ids}  # noqa: E731
    assert _found({"HOME": str(home)}) == names("aaaa", "dddd")
    assert _found({"HOME": str(home), "PI_CODING_AGENT_DIR": str(tmp_path / "custom-agent")}) == names("bbbb", "dddd")
    # The sessions dir named outright is read beside the agent dir's own.
    assert _found({"HOME": str(home), "PI_CODING_AGENT_SESSION_DIR": str(tmp_path / "only-sessions")}) == names(
        "cccc", "aaaa", "dddd"
    )
    # VOYAGER_PI_HOME is authoritative for Pi: neither Pi variable is looked at.
    assert _found(
        {
            "HOME": str(home),
            "VOYAGER_PI_HOME": str(tmp_path / "voyager-pi"),
            "PI_CODING_AGENT_DIR": str(tmp_path / "custom-agent"),
            "PI_CODING_AGENT_SESSION_DIR": str(tmp_path / "only-sessions"),
        }
    ) == names("eeee", "dddd")
    assert _found({"HOME": str(home), "VOYAGER_OMP_HOME": str(tmp_path / "nowhere")}) == names("aaaa")


def test_oh_my_pi_sessions_resume_with_omp(tmp_path: Path) -> None:
    path = write(session_file(tmp_path / "h" / ".omp" / "agent"), [header(), user("u1", None, 1, "hi")])
    s = last_session(read(path))
    assert s.provider == "pi" and s.resume == f"cd {shlex.quote(CWD)} && omp --resume {SID}"


HOSTILE = ["x; rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "two words", "line\nbreak", "-rf"]


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_ids_and_cwds_are_quoted(evil: str) -> None:
    for binary in ("pi", "omp"):
        command = resume_command(binary, f"/tmp/{evil}", evil)
        assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0
        argv = shlex.split(command)
        flag = "--session" if binary == "pi" else "--resume"
        assert argv == ["cd", f"/tmp/{evil}", "&&", binary, *option_words(flag, evil)]  # issue 38


# -- through the CLI -------------------------------------------------------------------------------


def test_a_second_scan_reads_only_the_appended_turn(home: Path, run) -> None:
    path = write(session_file(home / ".pi" / "agent"), full_session()[:6])
    first = run.json("scan", "--json")
    assert (first["new"], first["events_added"]) == (1, 7)
    append(path, [user("u9", "r1", 9, "第二轮 PROMPT2_PITEST")])
    second = run.json("scan", "--json")
    assert (second["grown"], second["changed"], second["events_added"], second["events_removed"]) == (1, 0, 1, 0)
    hits = run.json("search", "PROMPT2_PITEST", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"], h["provider"]) for h in hits] == [("user", "human", "pi")]
    assert run.json("scan", "--json")["unchanged"] >= 1


def test_an_empty_sessions_dir_is_no_error(home: Path, run) -> None:
    (home / ".pi" / "agent" / "sessions").mkdir(parents=True)
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    assert doc["failed"] == 0 and doc.get("providers", {}).get("pi", 0) == 0


def test_an_entry_whose_type_is_a_list_or_an_object_is_named_not_fatal(root: Path) -> None:
    # `kind not in _NOT_CONVERSATION` raised TypeError (unhashable) out of the read: the session lost.
    odd = [entry("x", "o1", "u1"), entry("x", "o2", "u1")]
    odd[0]["type"], odd[1]["type"] = ["message"], {"t": 1}
    items = read(write(session_file(root), [header(), user("u1", None, 1, "kept"), *odd, user("u2", "u1", 2, "later")]))
    assert [e.text for e in events(items)] == ["kept", "later"] and len(notices(items)) == 1


# -- Prime Agent (documented, agentsview `pi.go`): Pi's format, flat in its own sessions dir -------------------


def prime_session(home: Path, sid: str, name: str, *entries: dict[str, Any], **head: Any) -> Path:
    path = home / ".prime/agent/sessions" / name
    return write(path, [header(sid, **head), *entries])


def prime_lines() -> list[dict[str, Any]]:
    return [
        user("u1", None, 1, "重构支付模块 PROMPT_PRIME"),
        assistant(
            "a1",
            "u1",
            2,
            {"type": "thinking", "thinking": "先读代码 THINK_PRIME"},
            {"type": "toolCall", "id": "c1", "name": "bash", "arguments": {"command": "rg 支付_prime"}},
        ),
        message(
            "r1",
            "a1",
            3,
            role="toolResult",
            toolCallId="c1",
            toolName="bash",
            content=[{"type": "text", "text": "TOOLOUT_PRIME"}],
        ),
        assistant("a2", "r1", 4, {"type": "text", "text": "完成了 REPLY_PRIME。日本語: 完了"}),
    ]


def test_prime_agent_sessions_hold_to_the_contract(home: Path, run) -> None:
    from tests.support.scanning import sessions
    from tests.support.documented import check_sample

    sid = "7b3c9d2e-1f0a-4b5c-8d7e-6f5a4b3c2d1e"
    prime_session(home, sid, "2026-12-01T08-03-08-820Z_0a0a0a0a-file-name-differs.jsonl", *prime_lines())
    markers = {
        "prompt": ["重构支付模块 PROMPT_PRIME"],
        "thinking": ["THINK_PRIME"],
        "call": ["rg 支付_prime"],
        "result": ["TOOLOUT_PRIME"],
        "reply": ["REPLY_PRIME"],
    }
    check_sample(run, home, "pi", markers)
    (row,) = sessions(run).values()
    # The header's id names the session (not the file's), and no resume command is known for Prime Agent.
    assert (row["session_id"], row["resume"], row["cwd"]) == (f"pi:{sid}", None, CWD)


def test_a_prime_fork_names_its_parent_by_the_forked_files_header(tmp_path: Path) -> None:
    home = tmp_path / "home"
    parent_file = prime_session(home, "parent-header-id", "2026_parent-file.jsonl", *prime_lines())
    child = prime_session(
        home, "child-id", "2026_child-file.jsonl", user("u9", None, 9, "fork"), parentSession=str(parent_file)
    )
    items = list(ADAPTER.read(Source(provider="pi", path=str(child), fingerprint=fingerprint(child))))
    assert last_session(items).parent == "pi:parent-header-id"
    assert last_session(items).resume is None


def test_child_usage_attributed_replaces_an_assistant_messages_usage(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("HOME", str(tmp_path))
    lines = prime_lines()
    path = prime_session(tmp_path, "u-sid", "x_u-sid.jsonl", *lines)
    source = Source(provider="pi", path=str(path), fingerprint=fingerprint(path))
    first = list(ADAPTER.read(source))
    s = last_session(first)
    assert (s.tokens_in, s.tokens_out) == (212, 40)
    attributed = entry(
        "child_usage_attributed", "x1", "a2", targetId="a1", aggregateUsage={"input": 1000, "output": 300}
    )
    append(path, [attributed])
    items = list(ADAPTER.read(Source(provider="pi", path=str(path), fingerprint=fingerprint(path)), cursor_of(first)))
    s = last_session(items)
    assert (s.tokens_in, s.tokens_out) == (1106, 320) and not notices(items)
    # A target that is not an assistant message it knows changes nothing.
    append(path, [entry("child_usage_attributed", "x2", "x1", targetId="nope", aggregateUsage={"input": 9})])
    assert (last_session(list(ADAPTER.read(source))).tokens_in) == 1106


def test_prime_agents_place(tmp_path: Path) -> None:
    roots = ADAPTER.roots({"HOME": str(tmp_path)})
    assert roots[-1] == tmp_path / ".prime/agent/sessions"
    assert ADAPTER.roots({"HOME": "/h", "PRIME_AGENT_SESSION_DIR": "/p"})[-1] == Path("/p")
    assert ADAPTER.roots({"HOME": "/h", "PRIME_AGENT_SESSION_DIR": "/p", "VOYAGER_PRIME_AGENT_HOME": "/v"})[-1] == Path(
        "/v"
    )
