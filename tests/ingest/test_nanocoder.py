"""The Nanocoder adapter against session files built here in the shape Nanocoder 1.30.0 wrote.

The capture itself is checked by ``test_captures.py``; these tests cover what it does not
show: a failing command's ``EXIT_CODE``, arguments as JSON text, a title that follows the
latest prompt (never indexed as a title) and one that does not, hostile types, a
rewritten file adding only its new turn through the CLI, the places and their
precedence, hostile ids in the resume command, and that nothing is written.
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
from tests.support.samples.nanocoder import CWD, SID, doc, messages, write_session
from voyager_sessions.ingest.adapters.base import Cursor, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.nanocoder import ADAPTER, resume_command, split_exit, title_source


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    return list(ADAPTER.read(Source(provider="nanocoder", path=str(path), fingerprint=fingerprint(path)), cursor))


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "nanocoder"


# -- mapping -------------------------------------------------------------------------------------


def test_every_message_maps_to_one_event(root: Path) -> None:
    items = read(write_session(root, doc(messages())))
    got = [(e.kind, e.origin, e.text, e.tool, e.call_id, e.exit_code, e.is_error) for e in events(items)]
    assert got == [
        ("meta", "provider", "You are Nanocoder SYSTEM_NANO", None, None, None, False),
        ("user", "human", "迁移失败 ERR_NANO_7 帮我看看", None, None, None, False),
        ("reasoning", "agent", "Check the log THINK_NANO", None, None, None, False),
        ("assistant", "agent", "我来看看。", None, None, None, False),
        ("tool_call", "agent", "tail -n 5 数据.log", "execute_bash", "call_1", None, False),
        ("tool_call", "agent", '{"path":"a.py"}', "read_file", "call_2", None, False),
        ("tool_result", "tool", "relation missing\n", "execute_bash", "call_1", 2, True),
        ("tool_result", "tool", "print('hi')", "read_file", "call_2", None, False),
        ("assistant", "agent", "数据库迁移完成 REPLY_NANO", None, None, None, False),
    ]
    assert not notices(items)


def test_session_facts(root: Path) -> None:
    s = last_session(read(write_session(root, doc(messages()))))
    assert s.id == f"nanocoder:{SID}" and s.cwd == CWD and s.model == "mock-model"
    assert s.started == pytest.approx(1796167090.933) and s.updated == pytest.approx(1796167120.586)
    assert s.resume == f"cd {shlex.quote(CWD)} && nanocoder --resume {SID}"
    assert (s.title, s.title_source) == ("迁移失败 ERR_NANO_7 帮我...", "prompt"), "the prompt cut short"


def test_a_title_that_is_no_prompt_is_kept_as_the_agents(root: Path) -> None:
    s = last_session(read(write_session(root, doc(messages(), title="数据库 修复"))))
    assert (s.title, s.title_source) == ("数据库 修复", None)


def test_title_source_and_split_exit() -> None:
    prompts = ["first prompt", "请运行这个命令并告诉我结果: `echo X` — 迁移 任务"]
    assert title_source("请运行这个命令并告诉我结果: `echo X` — ...", prompts) == "prompt"
    assert title_source("something else", prompts) is None and title_source("...", prompts) is None
    assert split_exit("EXIT_CODE: 0\nok\n") == ("ok\n", 0)
    assert split_exit("EXIT_CODE: 127") == ("", 127)
    assert split_exit("no code\nEXIT_CODE: 1\n") == ("no code\nEXIT_CODE: 1\n", None)
    assert split_exit("EXIT_CODE: 99999999999999999999\n")[1] is None, "not a code a shell can return"


def test_hostile_types_cost_only_themselves(root: Path) -> None:
    body = doc(
        [
            {"role": "user", "content": "kept"},
            "junk",
            {"role": ["user"]},
            {"role": "oracle", "content": "?"},
            {"role": "assistant", "content": 7, "reasoning": ["x"], "tool_calls": [None, {"function": "x"}, 3]},
            {"role": "tool", "content": {"a": 1}, "name": ["x"]},
            {"role": "user", "content": [{"type": "text", "text": "parts too"}]},
        ],
        title=["not", "text"],
        createdAt="never",
        workingDirectory=5,
    )
    items = read(write_session(root, body))
    assert [e.text for e in events(items)] == ["kept", "parts too"]
    [notice] = notices(items)
    assert "role:oracle" in notice.reason and "Nanocoder" in notice.reason
    s = last_session(items)
    assert s.title is None and s.started is None and s.cwd is None and s.resume == f"nanocoder --resume {SID}"


@pytest.mark.parametrize(
    "body, reason",
    [
        ("", "empty file"),
        ('{"id": "x", "messages": [', "skipped"),
        (json.dumps({"id": SID, "messages": {"not": "a list"}}), "no 'messages' list"),
        (json.dumps([1, 2]), "not an object"),
    ],
)
def test_a_broken_file_is_named(root: Path, body: str, reason: str) -> None:
    items = read(write_session(root, body))
    assert not events(items) and reason in notices(items)[0].reason


def test_a_reread_of_the_same_file_changes_nothing(root: Path) -> None:
    path = write_session(root, doc(messages()))
    first = read(path)
    again = read(path, [i for i in first if isinstance(i, Cursor)][0])
    assert [i for i in again if isinstance(i, Unchanged)] and not events(again)


def test_reading_leaves_files_byte_identical(root: Path) -> None:
    path = write_session(root, doc(messages()))
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
    write_session(home / ".local/share/nanocoder", doc([]), "a")
    (home / ".local/share/nanocoder/sessions/sessions.json").write_text("[]")
    write_session(tmp_path / "xdg/nanocoder", doc([]), "b")
    write_session(tmp_path / "data", doc([]), "c")
    write_session(tmp_path / "voyager", doc([]), "d")
    write_session(home / "Library/Application Support/nanocoder", doc([]), "e")
    assert _found({"HOME": str(home)}) == {"a", "e"}, "sessions.json is the index, not a session"
    assert _found({"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg")}) == {"b", "e"}
    assert _found(
        {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg"), "NANOCODER_DATA_DIR": str(tmp_path / "data")}
    ) == {"c", "e"}
    assert _found(
        {
            "HOME": str(home),
            "NANOCODER_DATA_DIR": str(tmp_path / "data"),
            "VOYAGER_NANOCODER_HOME": str(tmp_path / "voyager"),
        }
    ) == {"d"}


HOSTILE = ["x; rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "two words", "line\nbreak", "-rf"]


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_ids_and_cwds_are_quoted(evil: str) -> None:
    command = resume_command(f"/tmp/{evil}", evil)
    assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0
    argv = shlex.split(command)
    assert argv == ["cd", f"/tmp/{evil}", "&&", "nanocoder", *option_words("--resume", evil)]  # issue 38


# -- through the CLI -------------------------------------------------------------------------------


def test_a_rewritten_file_adds_only_its_new_turn(home: Path, run) -> None:
    root = home / ".local/share/nanocoder"
    path = write_session(root, doc(messages()))
    first = run.json("scan", "--json")
    assert (first["new"], first["events_added"]) == (1, 9)
    more = [
        *messages(),
        {"role": "user", "content": "第二轮 PROMPT2_NANOTEST"},
        {"role": "assistant", "content": "好的 REPLY2_NANOTEST"},
    ]
    path.write_text(json.dumps(doc(more, title="第二轮 PROMPT2_NANOTEST"), ensure_ascii=False), encoding="utf-8")
    second = run.json("scan", "--json")
    assert (second["changed"], second["events_added"], second["events_removed"]) == (1, 2, 0)
    hits = run.json("search", "PROMPT2_NANOTEST", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"], h["provider"]) for h in hits] == [("user", "human", "nanocoder")], (
        "the title that repeats the latest prompt is not indexed again"
    )
    assert run.json("scan", "--json")["unchanged"] >= 1


def test_an_empty_store_is_no_error(home: Path, run) -> None:
    (home / ".local/share/nanocoder/sessions").mkdir(parents=True)
    (home / ".local/share/nanocoder/sessions/sessions.json").write_text("[]")
    out = json.loads(run("scan", "--json").stdout)
    assert out["failed"] == 0 and out.get("providers", {}).get("nanocoder", 0) == 0


def test_an_index_without_its_session_files_is_named(home: Path, run) -> None:
    sessions = home / ".local/share/nanocoder/sessions"
    sessions.mkdir(parents=True)
    (sessions / "sessions.json").write_text(json.dumps([{"id": SID}, {"id": "other"}]))
    res = run("scan", "--json")
    assert res.exit_code == 0 and "lists 2 sessions but no session file" in res.stderr
