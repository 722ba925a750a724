"""A scanned data dir with ordinary and hostile sessions, and the web app over it behind its guard.

The app is driven in-process by Starlette's TestClient (HTTP-level tests) or served by a
real uvicorn on a loopback port (the browser tests in test_browser.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.sessions import claude_session_lines, write_claude
from tests.support.webpage import HOSTILE_SID, PAYLOADS, PORT, TOKEN

pytest.importorskip("starlette", reason="the web extra is not installed: pip install 'voyager-sessions[web]'")

BASE = f"http://127.0.0.1:{PORT}"
HOSTILE = " ".join(PAYLOADS)


def hostile_lines() -> list[str]:
    """A Claude Code session with the payloads in its prompt, answer, tool output, cwd, branch, model and tool name."""
    out = []
    for line in claude_session_lines(sid=HOSTILE_SID, cwd='/home/dev/<img src=x onerror="window.__pwned=1">'):
        line = line.replace("parse_config_v2", "parse_config_v2 hostilemarker " + json.dumps(HOSTILE)[1:-1])
        line = line.replace("TypeError: ", "TypeError: hostilemarker " + json.dumps(HOSTILE)[1:-1] + " ")
        # The session's facts too: its branch, its model, a tool's name.
        line = line.replace('"gitBranch": "main"', '"gitBranch": ' + json.dumps(PAYLOADS[0]))
        line = line.replace('"model": "claude-sonnet-4"', '"model": ' + json.dumps(PAYLOADS[3]))
        line = line.replace('"name": "Bash"', '"name": ' + json.dumps(PAYLOADS[1]))
        out.append(line)
    return out


@pytest.fixture
def scanned(corpus, home, run) -> Path:
    """The standard corpus plus the hostile session, scanned; the data dir."""
    write_claude(home, hostile_lines(), sid=HOSTILE_SID, project="-home-dev-evil")
    res = run("scan")
    assert res.exit_code == 0, res.stderr
    return home / "voyager-data"


@pytest.fixture
def client(scanned):
    """A TestClient of the guarded app, its requests addressed to 127.0.0.1:PORT, without the token."""
    from starlette.testclient import TestClient

    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.web.app import build_app
    from voyager_sessions.web.data import Library
    from voyager_sessions.web.guard import Guard

    library = Library(DataDir(scanned))
    with TestClient(Guard(build_app(library), TOKEN, PORT), base_url=BASE, follow_redirects=False) as c:
        yield c
    library.close()


@pytest.fixture
def authed(client):
    """The client with the token in the header every request for data carries (as the page's scripts send it)."""
    client.headers["Authorization"] = f"Bearer {TOKEN}"
    return client
