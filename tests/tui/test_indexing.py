"""While a first index is built, the picker's status line says how far it is, and that no match is no answer yet."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

pytest.importorskip("textual")

from tests.support.paused import marked_history, paused_scan  # noqa: E402
from tests.support.picker import settle  # noqa: E402
from voyager_sessions.tui.app import VoyagerApp  # noqa: E402
from voyager_sessions.tui.backend import Backend  # noqa: E402


def _status(app: VoyagerApp) -> str:
    return str(app.query_one("#status").render())


async def _look(data: Path, typed: str) -> tuple[str, str]:
    app = VoyagerApp(Backend(data, refresh=False, use_server=False), live=False)
    async with app.run_test(size=(140, 30)) as pilot:
        await settle(app, pilot, 1)
        first = _status(app)
        await pilot.press(*typed)
        await settle(app, pilot, 2)
        return first, _status(app)


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_the_status_line_says_the_index_is_still_being_built(home, monkeypatch):
    marked_history(home, 6)
    data = Path(os.environ["VOYAGER_HOME"])
    with paused_scan(monkeypatch, data, 2):
        recent, missing = asyncio.run(_look(data, "marker0"))  # the oldest: not read yet
    assert "indexing: 2 of 6 sessions searched" in recent
    assert "no session matches yet" in missing and "indexing: 2 of 6" in missing
    recent, found = asyncio.run(_look(data, "marker0"))
    assert "indexing" not in recent and "indexing" not in found and "1 session" in found
