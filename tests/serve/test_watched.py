"""``voyager serve`` keeps a file-system watcher: its background refresh reads only what changed, a request's
refresh is still a full stat pass, and with the watcher working or disabled every search sees what a full
rescan would (appends, a new session, a deleted one)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.support.serving import ServerProcess, cli, scanned_env
from tests.support.sessions import claude_session_lines, write_claude

pytest.importorskip("watchfiles")


def _wait(pred, timeout: float = 60.0) -> None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError("never happened")


@pytest.mark.slow
@pytest.mark.parametrize("watching", [True, False], ids=["watcher", "no-watcher"])
def test_background_refresh_and_searches_see_every_change(tmp_path: Path, watching: bool) -> None:
    env = scanned_env(tmp_path)
    if not watching:
        env["VOYAGER_NO_WATCH"] = "1"
    server = ServerProcess(env, interval=0.5)
    try:
        status = json.loads(cli(env, "serve", "status", "--json").out)
        assert status["watcher"].startswith("watching") == watching, status["watcher"]
        home = Path(env["HOME"])
        sid = "aaaaaaaa-bbbb-4ccc-8ddd-eeeeeeeeeeee"
        lines = claude_session_lines(sid=sid)
        path = write_claude(home, lines[:3], sid=sid, project="-home-dev-watched")
        # The background refresh finds the new session without any search asking for it.
        _wait(
            lambda: (
                b'"total":1'
                in cli(env, "search", "marmalade", "--json", "--no-refresh", "--session", sid).out.replace(b" ", b"")
            )
        )
        with path.open("a", encoding="utf-8") as f:
            f.write("".join(lines[3:]))
        # A request's refresh sees an append made just before it, whatever the watcher has seen.
        assert cli(env, "search", "fixed the guard", "--json", "--session", sid).code == 0
        path.unlink()
        _wait(lambda: cli(env, "search", "marmalade", "--json", "--no-refresh", "--session", sid).code != 0)
        watched = json.loads(cli(env, "serve", "status", "--json").out)["watched_scans"]
        assert (watched > 0) == watching
    finally:
        server.stop()


AIDER_RUN = "\n# aider chat started at 2026-11-20 10:00:00\n\n> aider --model x  \n> Aider v0.86.2  \n\n#### {prompt}  \n\n{reply}\n"
QUERIES = ("zanzibar", "the", "migration")


def _found(result_json: bytes) -> tuple[int, list]:
    """What a search found, whatever the order and scores (an index grown by refreshes scores differently)."""
    doc = json.loads(result_json)
    return doc["total"], sorted(
        (h["session_id"], h["seq"], h["kind"], h["snippet"], h["title"] or "") for h in doc["hits"]
    )


@pytest.mark.slow
@pytest.mark.parametrize("watching", [True, False], ids=["watcher", "no-watcher"])
def test_every_served_search_sees_what_a_full_rescan_sees(tmp_path: Path, watching: bool) -> None:
    """A request's own refresh (the background one is kept out of the way): after each change to the sources
    (appended, rewritten, created, deleted; JSONL files, a side file, a SQLite store, and an Aider history found
    through a session's project folder), the served search answers what a search over a scan from scratch does."""
    import shutil

    from tests.support.sessions import CLAUDE_SID, codex_session_lines, write_codex
    from tests.support.store_changes import create_and_change_opencode

    env = scanned_env(tmp_path)
    home = Path(env["HOME"])
    db = home / "oc" / "opencode.db"
    db.parent.mkdir()
    env["VOYAGER_OPENCODE_DB"] = str(db)
    if not watching:
        env["VOYAGER_NO_WATCH"] = "1"
    project = home / "proj"
    project.mkdir()
    lines = claude_session_lines(sid="bbbbbbbb-bbbb-4ccc-8ddd-eeeeeeeeeeee", cwd=str(project))
    claude = write_claude(home, lines[:3], sid="bbbbbbbb-bbbb-4ccc-8ddd-eeeeeeeeeeee", project="-home-proj")
    assert cli(env, "scan", "-q", server=False).code == 0
    server = ServerProcess(env, interval=3600)  # the background refresh runs once, at the start
    searches = 0
    try:
        status = server.status() or {}
        assert status.get("watcher", "").startswith("watching") == watching, status

        def check(step: str) -> None:
            nonlocal searches
            fresh = {**env, "VOYAGER_HOME": str(tmp_path / f"fresh-{step}")}
            for query in QUERIES:
                served = cli(env, "search", query, "--json", "--limit", "100")
                searches += 1
                scratch = cli(fresh, "search", query, "--json", "--limit", "100", server=False)
                assert served.code == scratch.code, (step, query, served, scratch)
                if scratch.code == 0:
                    assert _found(served.out) == _found(scratch.out), (step, query)

        with open(claude, "a", encoding="utf-8") as fh:  # append
            fh.write("".join(lines[3:]).replace("fixed the guard", "fixed the zanzibar guard"))
        check("append")
        write_claude(home, claude_session_lines(sid="cccccccc-bbbb-4ccc-8ddd-eeeeeeeeeeee"), project="-home-new")
        check("create")
        claude.write_text("".join(lines[:4]).replace("marmalade", "zanzibar"), encoding="utf-8")  # rewrite
        check("rewrite")
        entries = [{"sessionId": CLAUDE_SID, "customTitle": "zanzibar named"}]
        (home / ".claude" / "projects" / "-home-dev-shop" / "sessions-index.json").write_text(
            json.dumps({"version": 1, "entries": entries})
        )
        check("side-file")
        aider = project / ".aider.chat.history.md"  # found through the session's cwd (a hint), not a store
        aider.write_text(AIDER_RUN.format(prompt="zanzibar in aider", reply="done"), encoding="utf-8")
        check("hinted-create")
        with open(aider, "a", encoding="utf-8") as fh:
            fh.write(AIDER_RUN.format(prompt="the second zanzibar run", reply="ok"))
        check("hinted-append")
        create_and_change_opencode(db, check)
        aider.unlink()
        check("hinted-delete")
        next((home / ".codex").rglob("*.jsonl")).unlink()  # delete
        check("delete")
        shutil.rmtree(claude.parent)  # a whole project folder goes
        check("delete-folder")
        write_codex(home, codex_session_lines())
        check("recreate")
        status = server.status() or {}
    finally:
        server.stop()
    assert status["answered"] >= searches, status  # every search was the server's, with its refresh
    refreshes = status["refreshes"]
    if watching:
        assert refreshes["watched"] + refreshes["quiet"] >= len(QUERIES) * 10, refreshes  # the change sets answered
    else:
        assert refreshes["watched"] == 0 and refreshes["quiet"] == 0, refreshes
