"""Titles people recognise: a person's name for a session beats the agent's, which beats the first prompt,
whichever read or source brought each, and every title is indexed once."""

from __future__ import annotations

import json
import os
import shutil

from tests.support.sessions import (
    CLAUDE_SID,
    CODEX_SID,
    json_line,
    claude_session_lines,
    codex_session_lines,
    write_claude,
    write_codex,
)
from voyager_sessions.core.model import Session
from voyager_sessions.core.paths import data_dir
from voyager_sessions.scan import scan
from voyager_sessions.scan.source_read import merge_session


def _sessions(run) -> dict[str, dict]:
    return {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}


def _title_hits(run, sid: str) -> list[dict]:
    doc = run.json("search", "--kind", "title", "--session", sid, "--no-refresh", "--json", "-n", "50")
    return [h for h in doc["hits"] if h["kind"] == "title"]


def _s(**kw) -> Session:
    return Session(id="claude:x", provider="claude", native_id="x", **kw)


def test_merge_ranks_user_over_agent_over_prompt() -> None:
    prompt = _s(title="fix the bug in…", title_source="prompt")
    agent = _s(title="Bug fix in parser", title_source="agent")
    user = _s(title="Parser rewrite", title_source="user")
    assert merge_session(prompt, agent).title == "Bug fix in parser"
    assert merge_session(agent, prompt).title == "Bug fix in parser"
    assert merge_session(agent, user).title == "Parser rewrite"
    assert merge_session(user, agent) == user
    renamed = merge_session(user, _s(title="Parser, again", title_source="user"))
    assert (renamed.title, renamed.title_source) == ("Parser, again", "user")


def test_merge_keeps_title_and_source_together() -> None:
    """A read without a title (an appended tail) must not relabel the title it keeps."""
    known = _s(title="first prompt cut short", title_source="prompt", cwd="/a")
    tail = _s(title_source="user", cwd="/b")  # an adapter that says who names titles, with none found
    merged = merge_session(known, tail)
    assert (merged.title, merged.title_source, merged.cwd) == ("first prompt cut short", "prompt", "/b")
    assert merge_session(None, tail).title_source is None


def test_user_title_survives_an_appended_tail_without_it(home, run) -> None:
    lines = claude_session_lines()
    rename = json_line({"type": "custom-title", "customTitle": "Migration hotfix", "sessionId": CLAUDE_SID})
    path = write_claude(home, [*lines[:3], rename])
    scan(data_dir())
    sid = f"claude:{CLAUDE_SID}"
    assert (_sessions(run)[sid]["title"], _sessions(run)[sid]["title_source"]) == ("Migration hotfix", "user")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write("".join(lines[3:]))
    assert scan(data_dir()).grown == 1
    row = _sessions(run)[sid]
    assert (row["title"], row["title_source"]) == ("Migration hotfix", "user")
    assert [h["snippet"] for h in _title_hits(run, sid)] == ["Migration hotfix"]


def test_prompt_title_is_not_relabelled_by_a_later_read(home, run) -> None:
    path = write_codex(home, codex_session_lines())
    scan(data_dir())
    sid = f"codex:{CODEX_SID}"
    assert _sessions(run)[sid]["title_source"] == "prompt"
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(
            json_line(
                {
                    "timestamp": "2026-11-21T08:01:00.000Z",
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "one more reply"}],
                    },
                }
            )
        )
    assert scan(data_dir()).grown == 1
    assert _sessions(run)[sid]["title_source"] == "prompt"
    assert _title_hits(run, sid) == []  # a prompt is indexed as the prompt, never again as a title


def test_a_later_rename_replaces_the_title_and_its_event(home, run) -> None:
    path = write_codex(home, codex_session_lines())
    (home / ".codex" / "session_index.jsonl").write_text(
        json.dumps({"id": CODEX_SID, "thread_name": "DB outage"}) + "\n"
    )
    scan(data_dir())
    sid = f"codex:{CODEX_SID}"
    assert _sessions(run)[sid]["title"] == "DB outage"
    with open(home / ".codex" / "session_index.jsonl", "a") as fh:
        fh.write(json.dumps({"id": CODEX_SID, "thread_name": "Postgres outage"}) + "\n")
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(
            json_line(
                {
                    "timestamp": "2026-11-21T08:01:00.000Z",
                    "type": "response_item",
                    "payload": {
                        "type": "message",
                        "role": "assistant",
                        "content": [{"type": "output_text", "text": "one more reply"}],
                    },
                }
            )
        )
    scan(data_dir())
    assert (_sessions(run)[sid]["title"], _sessions(run)[sid]["title_source"]) == ("Postgres outage", "user")
    assert [h["snippet"] for h in _title_hits(run, sid)] == ["Postgres outage"]


def test_user_title_wins_across_sources(home, run) -> None:
    """The same session in two project folders (a copied file): the copy without the rename,
    read after the one with it, keeps the person's title, and the title is indexed once."""
    lines = claude_session_lines()
    rename = json_line({"type": "custom-title", "customTitle": "Migration hotfix", "sessionId": CLAUDE_SID})
    first = write_claude(home, [*lines, rename], project="-a-first")
    copy = write_claude(home, lines, project="-b-copy")
    # Newest first: the renamed one is read first when it is the newer file.
    os.utime(copy, (copy.stat().st_atime, copy.stat().st_mtime - 60))
    os.utime(first, (first.stat().st_atime, copy.stat().st_mtime + 30))
    scan(data_dir())
    sid = f"claude:{CLAUDE_SID}"
    assert (_sessions(run)[sid]["title"], _sessions(run)[sid]["title_source"]) == ("Migration hotfix", "user")
    assert len(_title_hits(run, sid)) == 1


def test_moved_session_keeps_one_title_event(home, run) -> None:
    """An archived Codex rollout is the same session from a new source: still one title event."""
    path = write_codex(home, codex_session_lines())
    (home / ".codex" / "session_index.jsonl").write_text(
        json.dumps({"id": CODEX_SID, "thread_name": "DB outage"}) + "\n"
    )
    scan(data_dir())
    archived = home / ".codex" / "archived_sessions"
    archived.mkdir()
    shutil.move(str(path), archived / path.name)
    scan(data_dir())
    sid = f"codex:{CODEX_SID}"
    assert (_sessions(run)[sid]["title"], _sessions(run)[sid]["source"]) == ("DB outage", str(archived / path.name))
    assert [h["snippet"] for h in _title_hits(run, sid)] == ["DB outage"]


def test_title_is_shown_in_list_search_sessions_and_show(home, run) -> None:
    rename = json_line({"type": "custom-title", "customTitle": "Migration hotfix", "sessionId": CLAUDE_SID})
    write_claude(home, [*claude_session_lines(), rename])
    scan(data_dir())
    listed = run("list")
    assert "Migration hotfix" in listed.stdout
    by_session = run("search", "parse_config_v2", "--sessions", "--no-refresh", "--color", "never")
    assert "Migration hotfix" in by_session.stdout.splitlines()[0]
    shown = run("show", CLAUDE_SID[:8], "--color", "never")
    assert "title:   Migration hotfix" in shown.stdout


def test_a_rename_in_a_side_index_reaches_the_title_without_touching_the_session(home, run):
    # Codex keeps thread names in session_index.jsonl, Claude Code in each project's
    # sessions-index.json: a rename changes only that file, and the next scan sees it.
    from tests.support.sessions import (
        CLAUDE_SID,
        CODEX_SID,
        claude_session_lines,
        codex_session_lines,
        write_claude,
        write_codex,
    )

    claude = write_claude(home, claude_session_lines())
    write_codex(home, codex_session_lines())
    assert run("scan").exit_code == 0
    (home / ".codex" / "session_index.jsonl").write_text(
        json.dumps({"id": CODEX_SID, "thread_name": "Zeppelin retry plan", "updated_at": "2026-11-21T09:00:00Z"}) + "\n"
    )
    (claude.parent / "sessions-index.json").write_text(
        json.dumps({"version": 1, "entries": [{"sessionId": CLAUDE_SID, "customTitle": "Marmoset migration"}]})
    )
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["grown"] == 2 and doc["events_added"] == 0  # read on from the offset: nothing new, only the title
    rows = {r["provider"]: r for r in run.json("list", "--json")["sessions"]}
    assert (rows["codex"]["title"], rows["codex"]["title_source"]) == ("Zeppelin retry plan", "user")
    assert (rows["claude"]["title"], rows["claude"]["title_source"]) == ("Marmoset migration", "user")
    for words, provider in (("zeppelin retry", "codex"), ("marmoset", "claude")):
        hits = run.json("search", words, "--json", "--no-refresh")["hits"]
        assert [(h["provider"], h["kind"]) for h in hits] == [(provider, "title")], words
