"""``voyager serve`` keeps a file-system watcher: its background refresh reads only what changed, a request's
refresh is still a full stat pass, and with the watcher working or disabled every search sees what a full
rescan would (appends, a new session, a deleted one)."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from tests.conftest import claude_session_lines, write_claude
from tests.serve.conftest import ServerProcess, cli, scanned_env

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
