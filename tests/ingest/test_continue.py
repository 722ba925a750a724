"""The Continue adapter against session files built here in the shape ``cn`` 1.5.47 wrote.

The capture itself is checked by ``test_captures.py``; these tests cover what it does not
show: context items, thinking messages and reasoning, a failed tool call, the IDE's
separate ``tool`` messages (and that a call's output is not indexed twice), placeholder
titles, ``sessions.json``'s creation time, hostile types, a rewritten file adding only its
new turn through the CLI, the places and their precedence, hostile ids in the resume
command, and that nothing is written.
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
from tests.support.items import events, last_session, notices
from tests.support.samples.continue_cli import CWD, SID, assistant, doc, history, user, write_session
from voyager_sessions.ingest.adapters.base import Cursor, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.continue_cli import ADAPTER, resume_command


def write_index(root: Path, entries: list[Any]) -> None:
    (root / "sessions").mkdir(parents=True, exist_ok=True)
    (root / "sessions" / "sessions.json").write_text(json.dumps(entries, ensure_ascii=False), encoding="utf-8")


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    return list(ADAPTER.read(Source(provider="continue", path=str(path), fingerprint=fingerprint(path)), cursor))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / ".continue"


# -- mapping -------------------------------------------------------------------------------------


def test_every_message_maps_to_one_event(root: Path) -> None:
    items = read(write_session(root, doc(history())))
    got = [(e.kind, e.origin, e.text, e.tool, e.call_id, e.is_error) for e in events(items)]
    assert got == [
        ("meta", "provider", "# 项目 README CONTEXT_CONT", None, None, False),
        ("user", "human", "迁移失败 ERR_CONT_7 帮我看看", None, None, False),
        ("reasoning", "agent", "Check the log THINK_CONT", None, None, False),
        ("reasoning", "agent", "IDE reasoning REASON_CONT", None, None, False),
        ("assistant", "agent", "我来看看。", None, None, False),
        ("tool_call", "agent", "tail -n 5 数据.log", "Bash", "call_1", False),
        ("tool_result", "tool", "relation missing\n", "Bash", "call_1", False),
        ("tool_call", "agent", '{"path":"a.py"}', "Read", "call_2", False),
        ("tool_result", "tool", "denied", "Read", "call_2", True),
        ("tool_result", "tool", "IDE tool output TOOLMSG_CONT", None, "call_9", False),
        ("meta", "provider", "You are in agent mode", None, None, False),
        ("assistant", "agent", "数据库迁移完成 REPLY_CONT", None, None, False),
    ]
    assert all(e.exit_code is None for e in events(items)) and not notices(items)


def test_session_facts(root: Path) -> None:
    path = write_session(root, doc(history()))
    write_index(
        root,
        [
            {
                "sessionId": SID,
                "title": "Untitled Session",
                "dateCreated": "1796167076014",
                "workspaceDirectory": CWD,
                "messageCount": 7,
            }
        ],
    )
    s = last_session(read(path))
    assert s.id == f"continue:{SID}" and s.cwd == CWD and s.title is None, "the placeholder is no title"
    assert s.model == "mock-model" and (s.tokens_in, s.tokens_out) == (400, 80)
    assert s.started == pytest.approx(1796167076.014) and s.updated == pytest.approx(path.stat().st_mtime)
    assert s.resume == f"cd {shlex.quote(CWD)} && cn --fork {SID}"


def test_a_real_title_is_kept(root: Path) -> None:
    assert last_session(read(write_session(root, doc(history(), title="迁移 数据库")))).title == "迁移 数据库"


def test_user_content_as_parts(root: Path) -> None:
    parts = [{"type": "text", "text": "看这张图"}, {"type": "imageUrl", "imageUrl": {"url": "data:…"}}]
    assert [e.text for e in events(read(write_session(root, doc([user(parts)]))))] == ["看这张图"]


@pytest.mark.parametrize(
    "body",
    [
        doc(
            [
                user("kept"),
                {"message": {"role": "oracle", "content": "?"}},
                "junk",
                {"no": "message"},
                {
                    "message": {"role": "assistant", "content": "ok", "toolCalls": "x"},
                    "toolCallStates": [
                        {"toolCallId": ["x"], "status": ["errored"]},
                        {"toolCallId": "c", "status": ["done"], "output": 7},
                    ],
                },
            ]
        ),
    ],
)
def test_hostile_types_cost_only_themselves(root: Path, body: Any) -> None:
    items = read(write_session(root, body))
    assert [e.text for e in events(items)][:2] == ["kept", "ok"]
    [notice] = notices(items)
    assert "role:oracle" in notice.reason and "Continue" in notice.reason


@pytest.mark.parametrize(
    "body, reason",
    [
        ("", "empty file"),
        ('{"sessionId": "x", "history": [', "skipped"),
        (json.dumps({"sessionId": SID, "history": {"not": "a list"}}), "no 'history' list"),
        (json.dumps([1, 2]), "not an object"),
    ],
)
def test_a_broken_file_is_named(root: Path, body: str, reason: str) -> None:
    items = read(write_session(root, body))
    assert not events(items) and reason in notices(items)[0].reason


def test_a_reread_of_the_same_file_changes_nothing(root: Path) -> None:
    path = write_session(root, doc(history()))
    first = read(path)
    again = read(path, [i for i in first if isinstance(i, Cursor)][0])
    assert [i for i in again if isinstance(i, Unchanged)] and not events(again)


def test_reading_leaves_files_byte_identical(root: Path) -> None:
    path = write_session(root, doc(history()))
    write_index(root, [{"sessionId": SID}])
    listing = sorted(p.name for p in path.parent.iterdir())
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    read(path)
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in path.parent.iterdir()) == listing


# -- where Voyager looks --------------------------------------------------------------------------


def _found(env: dict[str, str]) -> set[str]:
    return {Path(s.path).stem for s in ADAPTER.discover(env) if isinstance(s, Source)}


def test_homes_and_their_precedence(tmp_path: Path) -> None:
    home = tmp_path / "h"
    write_session(home / ".continue", doc([user("a")]), "a")
    write_index(home / ".continue", [{"sessionId": "a"}])
    write_session(tmp_path / "global", doc([user("b")]), "b")
    write_session(tmp_path / "voyager", doc([user("c")]), "c")
    assert _found({"HOME": str(home)}) == {"a"}, "sessions.json is the index, not a session"
    assert _found({"HOME": str(home), "CONTINUE_GLOBAL_DIR": str(tmp_path / "global")}) == {"b"}
    assert _found(
        {
            "HOME": str(home),
            "CONTINUE_GLOBAL_DIR": str(tmp_path / "global"),
            "VOYAGER_CONTINUE_HOME": str(tmp_path / "voyager"),
        }
    ) == {"c"}


HOSTILE = ["x; rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "two words", "line\nbreak", "-rf"]


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_ids_and_cwds_are_quoted(evil: str) -> None:
    command = resume_command(f"/tmp/{evil}", evil)
    assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0
    argv = shlex.split(command)
    assert argv == ["cd", f"/tmp/{evil}", "&&", "cn", *option_words("--fork", evil)]  # a dash id: data (issue 38)
    assert shlex.split(resume_command(None, evil)) == ["cn", *option_words("--fork", evil)]


# -- through the CLI -------------------------------------------------------------------------------


def test_a_rewritten_file_adds_only_its_new_turn(home: Path, run) -> None:
    root = home / ".continue"
    path = write_session(root, doc(history()))
    first = run.json("scan", "--json")
    assert (first["new"], first["events_added"]) == (1, 12)
    body = doc([*history(), user("第二轮 PROMPT2_CONTTEST"), assistant("好的 REPLY2_CONTTEST")])
    path.write_text(json.dumps(body, ensure_ascii=False, indent=2), encoding="utf-8")
    second = run.json("scan", "--json")
    assert (second["changed"], second["events_added"], second["events_removed"]) == (1, 2, 0)
    hits = run.json("search", "PROMPT2_CONTTEST", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"], h["provider"]) for h in hits] == [("user", "human", "continue")]
    assert run.json("scan", "--json")["unchanged"] >= 1


def test_an_empty_store_is_no_error(home: Path, run) -> None:
    (home / ".continue" / "sessions").mkdir(parents=True)
    write_index(home / ".continue", [])
    doc_ = json.loads(run("scan", "--json").stdout)
    assert doc_["failed"] == 0 and doc_.get("providers", {}).get("continue", 0) == 0


def test_an_index_without_its_session_files_is_named(home: Path, run) -> None:
    write_index(home / ".continue", [{"sessionId": SID, "title": "Untitled Session"}])
    res = run("scan", "--json")
    assert res.exit_code == 0 and "lists 1 session but no session file" in res.stderr


@pytest.mark.parametrize("created", ["²³", "9" * 40, "", None, ["1"], "2026-12-01T23:17:56Z"])
def test_a_hostile_creation_time_costs_only_itself(root: Path, created: Any) -> None:
    path = write_session(root, doc([user("kept")]))
    write_index(root, [{"sessionId": SID, "dateCreated": created}])
    items = read(path)
    assert [e.text for e in events(items)] == ["kept"]
    started = last_session(items).started
    assert started is None or started == pytest.approx(1796167076.0)
