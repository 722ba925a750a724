"""``voyager ui``'s backend asks a running ``voyager serve`` (the index open and fresh there) and falls back to
its own reader when none runs: the same rows either way."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

pytest.importorskip("textual")

from voyager_sessions.tui.backend import Backend  # noqa: E402


def test_the_picker_asks_the_server_when_one_runs(served, monkeypatch) -> None:
    env, server = served
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    data = Path(env["VOYAGER_HOME"])
    through = Backend(data)
    answer = through.search("数据库")
    assert through.served and answer.rows and answer.error is None
    timeline = through.timeline(answer.rows[0].session_id, around=answer.rows[0].seq)
    assert through.served and timeline.events
    local = Backend(data, use_server=False)
    assert [r.session_id for r in local.search("数据库").rows] == [r.session_id for r in answer.rows]
    assert not local.served
    through.close()
    local.close()
    assert os.environ["VOYAGER_HOME"] == env["VOYAGER_HOME"]
