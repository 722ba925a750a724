"""The Aider adapter against chat histories written here in Aider's Markdown shape (0.86), and its discovery rule."""

from __future__ import annotations

import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import cursor_of, events, notices
from tests.support.sessions import claude_session_lines, write_claude
from tests.support.shell import HOSTILE_NAMES, run_with_stub, shell_words
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.aider import ADAPTER, HISTORY_NAME, cut_prompt
from voyager_sessions.ingest.adapters.base import Cursor, Hints, Notice, Source, fingerprint

ECHO = "> /usr/bin/aider --model openai/gpt-x --message {prompt}  \n"


def run_text(when: str, prompt: str, reply: str, *, echo: bool = True, extra_status: str = "") -> str:
    """One Aider run as 0.86 writes it: heading, status block (command-line echo first), prompt, reply, tokens."""
    prompt_lines = "  \n".join(f"#### {ln}" for ln in prompt.split("\n"))
    status = (
        ECHO.format(prompt=prompt) if echo else ""
    ) + "> Aider v0.86.2  \n> Model: openai/gpt-x with diff edit format  \n"
    return (
        f"\n# aider chat started at {when}\n\n{status}{extra_status}\n{prompt_lines}  \n\n{reply}\n\n"
        "> Tokens: 2.5k sent, 120 received. Cost: $0.01 message, $0.01 session.  \n"
    )


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(text.encode())
    return path


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    src = Source(provider="aider", path=str(path), fingerprint=fingerprint(path), append_only=True)
    return list(ADAPTER.read(src, cursor))


def sessions(items: list[Any]) -> dict[str, Session]:
    out: dict[str, Session] = {}
    for i in items:
        if isinstance(i, Session):
            out[i.id] = i
    return out


def by_kind(items: list[Any], kind: str) -> list[str]:
    return [e.text for e in events(items) if e.kind == kind]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return tmp_path / "home" / "shop"


# -- the format ------------------------------------------------------------------------------------


def test_one_run_kinds_origins_and_the_echo_copy(project: Path) -> None:
    path = write(
        project / HISTORY_NAME,
        run_text("2026-11-20 10:00:00", "修复数据库迁移 ERR_AIDER_7 please", "数据库迁移完成。日本語: 完了しました。"),
    )
    items = read(path)
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [
        ("meta", "provider"),
        ("user", "human"),
        ("assistant", "agent"),
        ("meta", "provider"),
    ]
    assert by_kind(items, "user") == ["修复数据库迁移 ERR_AIDER_7 please"]
    echo = evs[0].text
    assert "ERR_AIDER_7" not in echo, "the command-line echo's copy of the prompt is cut"
    assert echo.startswith("/usr/bin/aider --model openai/gpt-x --message …\nAider v0.86.2")
    assert evs[2].text == "数据库迁移完成。日本語: 完了しました。"
    assert [e.seq for e in evs] == [0, 1, 2, 3]
    s = sessions(items)[evs[0].session]
    assert s.native_id == f"{path}#1" and s.cwd == str(project) and s.model == "openai/gpt-x"
    assert (s.tokens_in, s.tokens_out) == (2500, 120)
    assert s.resume == f"cd {project} && aider --restore-chat-history"
    assert s.updated == pytest.approx(path.stat().st_mtime)


def test_each_heading_is_a_session_with_its_local_start_time(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TZ", "JST-9")  # a POSIX zone: 9 hours east of UTC, no tz database needed
    time.tzset()
    try:
        path = write(
            project / HISTORY_NAME,
            run_text("2026-11-20 10:00:00", "first", "one") + run_text("2026-11-20 11:30:00", "second", "two"),
        )
        items = read(path)
    finally:
        monkeypatch.delenv("TZ")
        time.tzset()
    found = sessions(items)
    assert len(found) == 2
    first, second = sorted(found.values(), key=lambda s: s.started or 0)
    assert first.started == pytest.approx(1795136400.0)  # 2026-11-20T01:00:00Z
    assert second.started - first.started == pytest.approx(5400.0)
    assert {e.session for e in events(items) if e.text == "second"} == {second.id}
    # ids are the heading's byte offset: stable across reads
    assert sessions(read(path)).keys() == found.keys()
    assert all(e.ts == first.started for e in events(items) if e.session == first.id)


def test_multi_line_prompt_markdown_in_replies_and_multi_line_status(project: Path) -> None:
    reply = "Here is the plan.\n\n#### Step 1\n\n> a quote in the reply\n\n```python\nprint('x')\n```"
    text = run_text(
        "2026-11-20 10:00:00",
        "line one\nline two",
        reply,
        extra_status="> Added shop/db.py to the chat\nwhich spans two lines  \n",
    )
    path = write(project / HISTORY_NAME, text + "\n#### <blank>  \n\n#### and a follow-up  \n\nok\n")
    items = read(path)
    assert by_kind(items, "user") == ["line one\nline two", "and a follow-up"]
    assert by_kind(items, "assistant") == [reply, "ok"], "a reply's own '#### ' heading and '> ' quote stay in it"
    metas = by_kind(items, "meta")
    assert "Added shop/db.py to the chat\nwhich spans two lines" in metas[0]
    assert "line one" not in metas[0], "a multi-line prompt's copy is cut from the echo too"


def test_an_interactive_run_keeps_its_echo_whole(project: Path) -> None:
    text = "\n# aider chat started at 2026-11-20 10:00:00\n\n> aider --model x  \n> Aider v0.86.2  \n\n#### hello  \n\nhi\n"
    items = read(write(project / HISTORY_NAME, text))
    assert by_kind(items, "meta") == ["aider --model x\nAider v0.86.2"]
    assert cut_prompt("aider -m fixed", "fix") == "aider -m fixed", "only a whole argument is a copy"
    assert cut_prompt("aider --mfix", "fix") == "aider --mfix"
    assert cut_prompt("aider -m fix", "fix") == "aider -m …"


def test_lines_before_the_first_heading_and_an_empty_file_are_named(project: Path) -> None:
    items = read(write(project / HISTORY_NAME, "stray text\n" + run_text("2026-11-20 10:00:00", "p", "r")))
    assert by_kind(items, "user") == ["p"]
    assert any("1 line before the first" in n.reason for n in notices(items))
    items = read(write(project / "empty" / HISTORY_NAME, ""))
    assert [n.reason for n in notices(items)] == ["empty file: nothing to index yet"]
    assert not events(items)


def test_garbage_and_control_characters_do_not_break_the_rest(project: Path) -> None:
    raw = b"\xff\xfe\x00garbage\n" + run_text(
        "2026-11-20 10:00:00", "p \x1b[31mred\x1b[0m", "caf\xe9"
    ).encode().replace("café".encode(), b"caf\xe9")
    project.mkdir(parents=True)
    (project / HISTORY_NAME).write_bytes(raw)
    items = read(project / HISTORY_NAME)
    assert by_kind(items, "user") == ["p \x1b[31mred\x1b[0m"]
    assert by_kind(items, "assistant") == ["caf\ufffd"]


# -- reading from the byte: the last block may grow, a new heading is a new session --------------------


def test_resume_reads_only_what_was_added_and_replaces_the_open_block(project: Path) -> None:
    path = write(project / HISTORY_NAME, run_text("2026-11-20 10:00:00", "first prompt", "first reply"))
    first = read(path)
    cur = cursor_of(first)
    (sid,) = sessions(first)
    # The last status block may still grow: the cursor stops before it, with its seq.
    assert cur.session == sid and cur.next_seq == 3 and cur.offset < path.stat().st_size
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n#### second prompt  \n\nsecond reply\n")
    second = read(path, cur)
    assert isinstance(second[0], Session) and second[0].id == sid
    evs = events(second)
    assert [(e.seq, e.kind) for e in evs] == [(3, "meta"), (4, "user"), (5, "assistant")]
    assert by_kind(second, "user") == ["second prompt"]
    # A new run: a new session after the cursor, numbered from 0.
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(run_text("2026-11-20 12:00:00", "third prompt", "third reply"))
    third = read(path, cursor_of(second))
    new = [s for s in sessions(third) if s != sid]
    assert len(new) == 1
    assert [(e.seq, e.kind) for e in events(third) if e.session == new[0]] == [
        (0, "meta"),
        (1, "user"),
        (2, "assistant"),
        (3, "meta"),
    ]
    assert [e.seq for e in events(third) if e.session == sid] == [5], "only the old session's open block again"
    assert cursor_of(third).session == f"aider:{new[0].split(':', 1)[1]}"


def test_a_half_written_line_is_read_again(project: Path) -> None:
    path = write(project / HISTORY_NAME, run_text("2026-11-20 10:00:00", "p", "r") + "\n#### half a pro")
    items = read(path)
    assert by_kind(items, "user")[-1] == "half a pro"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("mpt  \n\nanswer\n")
    again = read(path, cursor_of(items))
    assert by_kind(again, "user") == ["half a prompt"]
    last_user = [e for e in events(items) if e.kind == "user"][-1]
    assert [e for e in events(again) if e.kind == "user"][0].seq == last_user.seq


def test_nothing_new_keeps_the_cursor(project: Path) -> None:
    path = write(project / HISTORY_NAME, run_text("2026-11-20 10:00:00", "p", "r"))
    cur = cursor_of(read(path))
    again = read(path, cur)
    assert cursor_of(again) == cur
    assert [e.seq for e in events(again)] == [3], "only the open block, with its old seq"


def test_scan_twice_through_the_cli_grows_and_never_duplicates(home: Path, run) -> None:
    path = write(home / "shop" / HISTORY_NAME, run_text("2026-11-20 10:00:00", "alpha ZEBRA_ONE", "reply one"))
    first = json.loads(run("scan", "--json").stdout)
    assert first["new"] == 1 and first["providers"]["aider"] == 1
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n#### beta ZEBRA_TWO  \n\nreply two\n" + run_text("2026-11-20 12:00:00", "gamma ZEBRA_THREE", "r3"))
    second = json.loads(run("scan", "--json").stdout)
    assert second["grown"] == 1 and second["changed"] == 0 and second["providers"]["aider"] == 2
    # meta "Tokens" (seq 3) was re-read and replaced: +3 in the first run, +4 in the new one.
    assert second["events_added"] == 1 + 2 + 4 and second["events_removed"] == 1
    for word in ("ZEBRA_ONE", "ZEBRA_TWO", "ZEBRA_THREE"):
        hits = run.json("search", word, "--json", "--no-refresh")["hits"]
        assert [(h["kind"], h["origin"]) for h in hits] == [("user", "human")], word
    listed = run.json("list", "--json", "--provider", "aider")["sessions"]
    assert sorted(s["events"] for s in listed) == [4, 6]
    third = json.loads(run("scan", "--json").stdout)
    assert third["unchanged"] >= 1 and third["events_added"] == 0


# -- where histories are found ----------------------------------------------------------------------


def paths_of(found: list[Any]) -> list[str]:
    return [s.path for s in found if isinstance(s, Source)]


def test_discovery_rule(tmp_path: Path) -> None:
    home = tmp_path / "home"
    at_home = write(home / HISTORY_NAME, "")
    child = write(home / "proj" / HISTORY_NAME, "")
    write(home / "a" / "deep" / HISTORY_NAME, "")  # two levels down: only a root or a cwd finds it
    root_child = write(tmp_path / "src" / "api" / HISTORY_NAME, "")
    repo = write(tmp_path / "work" / "repo" / HISTORY_NAME, "")
    (tmp_path / "work" / "repo" / "sub" / "dir").mkdir(parents=True)
    env = {"HOME": str(home)}
    assert paths_of(ADAPTER.discover(env, Hints())) == [str(at_home), str(child)]
    env["VOYAGER_AIDER_ROOTS"] = os.pathsep.join([str(tmp_path / "src"), str(tmp_path / "missing")])
    hints = Hints(cwds=frozenset({str(tmp_path / "work" / "repo" / "sub" / "dir"), "relative/ignored", "/nul\x00byte"}))
    assert paths_of(ADAPTER.discover(env, hints)) == [str(at_home), str(child), str(root_child), str(repo)]
    # The override is authoritative: nothing else is looked at.
    only = {**env, "VOYAGER_AIDER_HOME": str(tmp_path / "src")}
    assert paths_of(ADAPTER.discover(only, hints)) == [str(root_child)]
    assert ADAPTER.roots(only) == [tmp_path / "src"]
    assert ADAPTER.roots(env) == [home, tmp_path / "src", tmp_path / "missing"]


def test_aider_chat_history_file_is_honoured(tmp_path: Path) -> None:
    home = tmp_path / "home"
    custom = write(home / "proj" / "chat.md", run_text("2026-11-20 10:00:00", "custom name", "r"))
    default = write(home / "proj" / HISTORY_NAME, "")
    named = write(tmp_path / "logs" / "aider.md", run_text("2026-11-20 10:00:00", "absolute", "r"))
    env = {"HOME": str(home), "AIDER_CHAT_HISTORY_FILE": "chat.md"}
    assert paths_of(ADAPTER.discover(env, Hints())) == [str(custom), str(default)]
    env["AIDER_CHAT_HISTORY_FILE"] = str(named)
    assert paths_of(ADAPTER.discover(env, Hints())) == [str(named), str(default)]
    s = sessions(read(named))
    (only,) = s.values()
    assert only.cwd is None, "a history named outright says nothing about the project"
    assert shell_words(only.resume) == ["aider", "--chat-history-file", str(named), "--restore-chat-history"]
    (c,) = sessions(read(custom)).values()
    assert c.cwd is None and "--chat-history-file" in c.resume


def test_one_file_reached_twice_is_one_source_and_a_fifo_is_named(tmp_path: Path) -> None:
    home = tmp_path / "home"
    real = write(tmp_path / "real" / HISTORY_NAME, "")
    (home).mkdir()
    (home / "link").symlink_to(tmp_path / "real")
    os.mkfifo(home / HISTORY_NAME)
    found = list(ADAPTER.discover({"HOME": str(home)}, Hints(cwds=frozenset({str(tmp_path / "real")}))))
    assert paths_of(found) == [str(real)]
    assert any(isinstance(n, Notice) and "FIFO" in n.reason for n in found)


@pytest.mark.parametrize("name", HOSTILE_NAMES)
def test_resume_command_survives_hostile_directory_names(tmp_path: Path, name: str) -> None:
    project = tmp_path / name
    path = write(project / HISTORY_NAME, run_text("2026-11-20 10:00:00", "p", "r"))
    (s,) = sessions(read(path)).values()
    assert s.cwd == str(project)
    assert shell_words(s.resume) == ["cd", str(project), "&&", "aider", "--restore-chat-history"]
    assert run_with_stub(s.resume, "aider", tmp_path) == (str(project), ["--restore-chat-history"])


def test_one_scan_follows_the_cwds_other_agents_name(home: Path, tmp_path: Path, run) -> None:
    deep = tmp_path / "code" / "team" / "shop"
    write_claude(home, claude_session_lines(cwd=str(deep / "src")))
    write(deep / HISTORY_NAME, run_text("2026-11-20 10:00:00", "found through claude's cwd KIWI_77", "r"))
    before = {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in deep.rglob("*") if p.is_file()}
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["providers"].get("aider") == 1, doc
    hits = run.json("search", "KIWI_77", "--json", "--no-refresh")["hits"]
    assert [(h["provider"], h["kind"]) for h in hits] == [("aider", "user")]
    assert {p: hashlib.sha256(p.read_bytes()).hexdigest() for p in deep.rglob("*") if p.is_file()} == before
    assert os.listdir(deep) == [HISTORY_NAME], "nothing created beside the history"
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "aider")
    assert report["evidence"] == "observed" and report["sources"] == 1 and report["indexed_sessions"] == 1


def test_a_long_append_then_a_new_run_loses_nothing(home: Path, run) -> None:
    """More appended events than one index batch, then a new run: the new run must not delete the old run's tail."""
    path = write(home / "shop" / HISTORY_NAME, run_text("2026-11-20 10:00:00", "start", "r"))
    run("scan", "--json")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(f"\n#### prompt {i}  \n\nreply {i}\n" for i in range(1100)))
        fh.write(run_text("2026-11-20 12:00:00", "the next run", "r"))
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["grown"] == 1
    listed = {s["events"] for s in run.json("list", "--json", "--provider", "aider")["sessions"]}
    assert listed == {4 + 2200, 4}
    stats = run.json("stats", "--json")
    assert stats["providers"]["aider"]["events"] == 4 + 2200 + 4
    assert run.json("search", '"prompt 7"', "--json", "--no-refresh")["total"] == 1
    assert run.json("search", "reply", "--json", "--no-refresh", "--kind", "assistant")["total"] == 1100
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n#### one more  \n\nanswer\n")
    doc = json.loads(run("scan", "--json").stdout)
    # Only the last run's open block ("Tokens", 1 event) was read again and replaced.
    assert (doc["grown"], doc["events_added"], doc["events_removed"]) == (1, 3, 1)


def test_a_line_beyond_the_cap_is_skipped_and_the_cursor_stays_exact(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("VOYAGER_MAX_LINE_BYTES", str(1 << 16))
    huge = "x" * 70_000
    path = write(project / HISTORY_NAME, run_text("2026-11-20 10:00:00", "before", f"start\n{huge}\nend"))
    items = read(path)
    (reply,) = by_kind(items, "assistant")
    assert reply.startswith("start\n[70,001 bytes not read") and reply.endswith("\nend")
    assert any("longer than 65,536 bytes" in n.reason for n in notices(items))
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("\n#### after  \n\nfine\n")
    again = read(path, cursor_of(items))
    assert by_kind(again, "user") == ["after"] and by_kind(again, "assistant") == ["fine"]


def test_a_garbled_heading_costs_its_time_not_its_run(project: Path) -> None:
    # A heading that was not exactly "# aider chat started at <time>" (junk after it, or the time itself
    # garbled) was not a heading: every line of its run was skipped as before-the-first-heading.
    text = run_text("2026-11-20 10:00:00 \x1b[2J junk", "first 请求 GARBLED_TAIL", "ok") + run_text(
        "2026-1\ufffd\ufffd-20 11:00:00", "second 请求 GARBLED_TIME", "ok"
    )
    items = read(write(project / HISTORY_NAME, text))
    assert {p.split(" ")[0] for p in by_kind(items, "user")} == {"first", "second"}
    starts = sorted((s.started for s in sessions(items).values()), key=lambda t: t is None)
    assert starts[0] is not None and starts[1] is None
    assert not [n for n in notices(items) if "heading" in n.reason]
