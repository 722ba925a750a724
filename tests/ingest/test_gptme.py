"""The gptme adapter against conversation folders built here in the shape gptme 0.35.1 wrote.

The capture itself is checked by ``test_captures.py``; these tests cover what it does not
show: gptme's ``<system>`` nudges in the user role, markdown-mode shell output, a broken
or half-written line, unknown roles, an append read from the cursor (directly and through
the CLI), ``config.toml`` and the ``workspace`` symlink, the places and their precedence,
hostile ids in the resume command, and that nothing is written.
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

from tests.support.shell import option_words
from tests.support.items import append, cursor_of, events, last_session, notices, write
from voyager_sessions.ingest.adapters.base import Cursor, Source, fingerprint
from voyager_sessions.ingest.adapters.gptme import ADAPTER, resume_command, split_assistant

CID = "2026-12-01-brave-tiny-otter"
SYSTEM = "You are gptme v0.35.1, a general-purpose AI assistant powered by LLMs."
NUDGE = "<system>No tool call detected in last message. Did you mean to finish?</system>"


def msg(role: str, content: Any, n: int = 0, **extra: Any) -> dict[str, Any]:
    return {"role": role, "content": content, "timestamp": f"2026-12-01T23:17:{n:02d}.000000", **extra}


def conversation() -> list[dict[str, Any]]:
    call = '@shell(call_1): {"command": "ls -la 数据"}'
    return [
        msg("system", SYSTEM, 0, pinned=True, hide=True),
        msg("system", "## System Information\n\n**Working Directory:** /home/dev/proj", 1, pinned=True, hide=True),
        msg("user", "迁移失败 ERR_GPTME_7 帮我看看", 2),
        msg(
            "assistant",
            f"<think>\nCheck the directory first\n</think>\n\n我来看看。\n{call}",
            3,
            metadata={"model": "local/mock-model", "usage": {"input_tokens": 100, "output_tokens": 20}},
        ),
        msg("system", "Ran command: `ls -la 数据`\n\ntotal 0\n", 4, call_id="call_1", metadata={"tool": "shell"}),
        msg(
            "assistant",
            "目录是空的。",
            5,
            metadata={"model": "local/mock-model", "usage": {"input_tokens": 7, "output_tokens": 3}},
        ),
        msg("user", NUDGE, 6),
        msg("assistant", "```shell\nmake migrate\n```", 7),
        msg("system", "Ran command: `make migrate`\n\nok\n", 8),
        msg("system", "<budget:token_budget>128000</budget:token_budget>", 9, hide=True),
    ]


def folder(root: Path, cid: str = CID) -> Path:
    return root / cid


def write_config(path: Path, name: str | None = "迁移 数据库", workspace: str | None = "~/proj") -> None:
    lines = ["[chat]", 'model = "local/mock-model"']
    if workspace is not None:
        lines.append(f"workspace = {json.dumps(workspace, ensure_ascii=False)}")
    if name is not None:
        lines.append(f"name = {json.dumps(name, ensure_ascii=False)}")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n".join([*lines, "", "[env]", ""]), encoding="utf-8")


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    return list(
        ADAPTER.read(Source(provider="gptme", path=str(path), fingerprint=fingerprint(path), append_only=True), cursor)
    )


@pytest.fixture
def root(tmp_path: Path) -> Path:
    return tmp_path / "logs"


# -- mapping -------------------------------------------------------------------------------------


def test_every_role_maps_to_the_right_kind(root: Path) -> None:
    path = write(folder(root) / "conversation.jsonl", conversation())
    items = read(path)
    got = [(e.kind, e.origin, e.text, e.tool, e.call_id) for e in events(items)]
    assert got == [
        ("meta", "provider", "## System Information\n\n**Working Directory:** /home/dev/proj", None, None),
        ("user", "human", "迁移失败 ERR_GPTME_7 帮我看看", None, None),
        ("reasoning", "agent", "Check the directory first", None, None),
        ("assistant", "agent", "我来看看。", None, None),
        ("tool_call", "agent", "ls -la 数据", "shell", "call_1"),
        ("tool_result", "tool", "Ran command: `ls -la 数据`\n\ntotal 0\n", "shell", "call_1"),
        ("assistant", "agent", "目录是空的。", None, None),
        ("meta", "provider", NUDGE, None, None),
        ("assistant", "agent", "```shell\nmake migrate\n```", None, None),
        ("tool_result", "tool", "Ran command: `make migrate`\n\nok\n", "shell", None),
        ("meta", "provider", "<budget:token_budget>128000</budget:token_budget>", None, None),
    ]
    assert "You are gptme" not in " ".join(e.text for e in events(items)), "the system prompt is boilerplate"
    assert [e.seq for e in events(items)] == list(range(11)) and not notices(items)
    assert all(e.exit_code is None for e in events(items)), "gptme records no exit code"


def test_session_facts_title_and_cwd_from_config(root: Path) -> None:
    path = write(folder(root) / "conversation.jsonl", conversation())
    write_config(folder(root) / "config.toml")
    s = last_session(read(path))
    assert s.id == f"gptme:{CID}" and s.native_id == CID
    assert (s.title, s.title_source) == ("迁移 数据库", "agent")
    assert s.cwd == os.path.expanduser("~/proj") and s.model == "local/mock-model"
    assert (s.tokens_in, s.tokens_out) == (107, 23)
    assert s.resume == f"cd {shlex.quote(s.cwd)} && gptme --name {CID}"
    assert s.started is not None and s.updated is not None and s.updated - s.started == pytest.approx(9)


def test_the_workspace_symlink_names_the_cwd_absolutely(root: Path, tmp_path: Path) -> None:
    path = write(folder(root) / "conversation.jsonl", conversation())
    write_config(folder(root) / "config.toml", workspace="~/elsewhere")
    project = tmp_path / "项目 dir"
    project.mkdir()
    os.symlink(project, folder(root) / "workspace")
    assert last_session(read(path)).cwd == str(project)
    # Discovery does not walk into the project through the symlink.
    write(project / "sub" / "conversation.jsonl", conversation())
    found = [
        s.path
        for s in ADAPTER.discover({"HOME": str(tmp_path), "VOYAGER_GPTME_HOME": str(root)})
        if isinstance(s, Source)
    ]
    assert found == [str(path)]


def test_a_name_gptme_made_up_is_no_title_a_given_one_is_the_persons(root: Path) -> None:
    path = write(folder(root) / "conversation.jsonl", conversation())
    write_config(folder(root) / "config.toml", name=CID)
    assert last_session(read(path)).title is None
    given = write(folder(root, "fix-迁移") / "conversation.jsonl", conversation())
    write_config(folder(root, "fix-迁移") / "config.toml", name="fix-迁移")
    assert (last_session(read(given)).title, last_session(read(given)).title_source) == ("fix-迁移", "user")


def test_a_hostile_config_costs_only_the_title(root: Path) -> None:
    path = write(folder(root) / "conversation.jsonl", conversation())
    (folder(root) / "config.toml").write_bytes(b"[chat\nname = \xff\xfe [[[ \x00")
    items = read(path)
    assert last_session(items).title is None and len(events(items)) == 11


def test_unknown_roles_are_named_with_the_version(root: Path) -> None:
    lines = [msg("system", SYSTEM, 0), msg("user", "kept", 1), msg("oracle", "?", 2), ["not", "an", "object"]]
    items = read(write(folder(root) / "conversation.jsonl", lines))
    assert [e.text for e in events(items)] == ["kept"]
    [notice] = notices(items)
    assert "role:oracle" in notice.reason and "gptme 0.35.1" in notice.reason


def test_split_assistant_keeps_text_that_only_looks_like_a_call() -> None:
    parts = list(split_assistant("before\n@shell(c1): not json at all\nafter"))
    assert parts == [("assistant", None, None, "before\n\nafter"), ("tool_call", "shell", "c1", "not json at all")]
    assert list(split_assistant("<thinking>a</thinking>b")) == [
        ("reasoning", None, None, "a"),
        ("assistant", None, None, "b"),
    ]


def test_a_system_prompt_alone_still_names_the_session(root: Path) -> None:
    items = read(write(folder(root) / "conversation.jsonl", [msg("system", SYSTEM, 0)]))
    assert last_session(items).id == f"gptme:{CID}" and not events(items)


# -- streaming -------------------------------------------------------------------------------------


def test_resume_after_append_yields_only_new_events(root: Path) -> None:
    path = write(folder(root) / "conversation.jsonl", conversation()[:4])
    first = read(path)
    cursor = cursor_of(first)
    append(path, conversation()[4:])
    again = read(path, cursor)
    full = read(path)
    assert events(first) + events(again) == events(full)
    assert last_session(again) == last_session(full)


def test_a_truncated_last_line_is_not_consumed(root: Path) -> None:
    tail = json.dumps(msg("user", "second prompt", 9)).encode()
    path = write(folder(root) / "conversation.jsonl", [msg("user", "first", 1)], raw_tail=tail[:20])
    items = read(path)
    assert [e.text for e in events(items)] == ["first"]
    cursor = cursor_of(items)
    with open(path, "ab") as fh:
        fh.write(tail[20:] + b"\n")
    assert [(e.seq, e.text) for e in events(read(path, cursor))] == [(1, "second prompt")]


def test_a_malformed_line_costs_only_itself(root: Path) -> None:
    path = write(
        folder(root) / "conversation.jsonl",
        [msg("user", "before", 1), b'{"role": "user", "content": \n', msg("user", "after", 3)],
    )
    items = read(path)
    assert [e.text for e in events(items)] == ["before", "after"]
    [notice] = notices(items)
    assert notice.where == "line 2" and not notice.fatal


def test_reading_leaves_files_byte_identical(root: Path) -> None:
    path = write(folder(root) / "conversation.jsonl", conversation())
    write_config(folder(root) / "config.toml")
    listing = sorted(p.name for p in path.parent.iterdir())
    before = hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns
    read(path, cursor_of(read(path)))
    assert (hashlib.sha256(path.read_bytes()).hexdigest(), path.stat().st_mtime_ns) == before
    assert sorted(p.name for p in path.parent.iterdir()) == listing


# -- where Voyager looks --------------------------------------------------------------------------


def _found(env: dict[str, str]) -> set[str]:
    return {Path(s.path).parent.name for s in ADAPTER.discover(env) if isinstance(s, Source)}


def test_homes_and_their_precedence(tmp_path: Path) -> None:
    home = tmp_path / "h"
    write(home / ".local/share/gptme/logs/a/conversation.jsonl", [msg("user", "a")])
    write(tmp_path / "xdg/gptme/logs/b/conversation.jsonl", [msg("user", "b")])
    write(tmp_path / "logs-home/c/conversation.jsonl", [msg("user", "c")])
    write(tmp_path / "voyager/d/conversation.jsonl", [msg("user", "d")])
    write(home / "Library/Application Support/gptme/logs/e/events.jsonl", [msg("user", "copy")])
    assert _found({"HOME": str(home)}) == {"a"}
    assert _found({"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg")}) == {"b"}
    assert _found(
        {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg"), "GPTME_LOGS_HOME": str(tmp_path / "logs-home")}
    ) == {"c"}
    assert _found(
        {
            "HOME": str(home),
            "GPTME_LOGS_HOME": str(tmp_path / "logs-home"),
            "VOYAGER_GPTME_HOME": str(tmp_path / "voyager"),
        }
    ) == {"d"}


HOSTILE = ["x; rm -rf ~", "$(touch pwned)", "`id`", 'it\'s "quoted"', "two words", "line\nbreak", "-rf"]


@pytest.mark.parametrize("evil", HOSTILE)
def test_hostile_ids_and_cwds_are_quoted(evil: str) -> None:
    command = resume_command(f"/tmp/{evil}", evil)
    assert subprocess.run(["sh", "-n", "-c", command], capture_output=True).returncode == 0
    argv = shlex.split(command)
    assert argv == ["cd", f"/tmp/{evil}", "&&", "gptme", *option_words("--name", evil)]  # a dash id: data (issue 38)


# -- through the CLI -------------------------------------------------------------------------------


def test_a_second_scan_reads_only_the_appended_turn_and_the_new_title(home: Path, run) -> None:
    logs = home / ".local/share/gptme/logs"
    path = write(folder(logs) / "conversation.jsonl", conversation()[:3])
    first = run.json("scan", "--json")
    assert (first["new"], first["events_added"]) == (1, 2)
    append(path, [msg("user", "第二轮 PROMPT2_GPTMETEST", 20)])
    write_config(folder(logs) / "config.toml", name="新标题 TITLE_GPTMETEST")
    second = run.json("scan", "--json")
    assert (second["grown"], second["changed"], second["events_added"], second["events_removed"]) == (1, 0, 1, 0)
    hits = run.json("search", "PROMPT2_GPTMETEST", "--json", "--no-refresh")["hits"]
    assert [(h["kind"], h["origin"], h["provider"]) for h in hits] == [("user", "human", "gptme")]
    titles = run.json("search", "TITLE_GPTMETEST", "--json", "--no-refresh")["hits"]
    assert [h["kind"] for h in titles] == ["title"]
    assert run.json("scan", "--json")["unchanged"] >= 1


def test_an_empty_logs_dir_is_no_error(home: Path, run) -> None:
    (home / ".local/share/gptme/logs").mkdir(parents=True)
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["failed"] == 0 and doc.get("providers", {}).get("gptme", 0) == 0


def test_a_folder_with_only_the_event_log_is_named(home: Path, run) -> None:
    logs = home / ".local/share/gptme/logs"
    write(
        folder(logs) / "events.jsonl", [{"seq": 1, "type": "message_append", "payload": {"message": msg("user", "x")}}]
    )
    res = run("scan", "--json")
    assert res.exit_code == 0 and "events.jsonl but no conversation.jsonl" in res.stderr
    assert json.loads(res.stdout).get("providers", {}).get("gptme", 0) == 0


def test_unclosed_reasoning_tags_stay_text_and_cost_linear_time() -> None:
    assert list(split_assistant("<think>never closed")) == [("assistant", None, None, "<think>never closed")]
    hostile = "<think>" * 200_000
    parts = list(split_assistant(hostile))  # would be quadratic with a lazy regex over the rest of the text
    assert parts == [("assistant", None, None, hostile)]


def test_an_undo_that_rewrites_the_log_replaces_what_was_undone(home: Path, run) -> None:
    # /undo (and edits) make gptme write conversation.jsonl anew, shorter: the undone turn must go.
    logs = home / ".local/share/gptme/logs"
    path = write(folder(logs) / "conversation.jsonl", [*conversation()[:3], msg("user", "撤销 UNDONE_GPTMETEST", 30)])
    run.json("scan", "--json")
    assert run.json("search", "UNDONE_GPTMETEST", "--json", "--no-refresh")["hits"]
    write(path, [*conversation()[:3], msg("user", "重做 REDONE_GPTMETEST", 31)])
    doc = run.json("scan", "--json")
    assert doc["failed"] == 0
    assert not run.json("search", "UNDONE_GPTMETEST", "--json", "--no-refresh")["hits"]
    assert [h["kind"] for h in run.json("search", "REDONE_GPTMETEST", "--json", "--no-refresh")["hits"]] == ["user"]
