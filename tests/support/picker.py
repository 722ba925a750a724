"""The terminal picker's test helpers: a session holding hostile text, and ``settle`` (wait until the app's workers
have answered).
"""

from __future__ import annotations

import asyncio
import json

from tests.support.sessions import json_line, claude_session_lines
from voyager_sessions.tui.app import VoyagerApp

HOSTILE_SID = "7a7a7a7a-0000-4000-8000-00000000e5c0"


def hostile_lines() -> list[str]:
    """A Claude session whose text holds terminal escapes and Rich markup."""
    lines = claude_session_lines(sid=HOSTILE_SID, cwd="/home/dev/evil")
    rec = json.loads(lines[1])
    rec["message"]["content"] = (
        "ESCAPEMARK \x1b[2J\x1b]0;pwned\x07 [bold red]not markup[/] [link=https://x]y[/link] "
        "\x1b]52;c;Y2xpcA==\x07 终端转义"
    )
    lines[1] = json_line(rec)
    return lines


async def settle(app: VoyagerApp, pilot, searches: int, timeout: float = 20.0) -> None:
    """Wait until the app has applied ``searches`` answers and its workers are idle (no wall-time assertion)."""
    for _ in range(int(timeout / 0.05)):
        if app.searches >= searches and not any(w.is_running for w in app.workers):
            await pilot.pause()
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"the app applied {app.searches} answers, expected {searches}")
