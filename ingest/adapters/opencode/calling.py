"""Which OpenCode session is calling an MCP tool right now, read from OpenCode's own database.

OpenCode (1.18.33) tells an MCP server nothing about the session that calls it: ``tools/call`` carries
only a progress token in ``_meta``, and one OpenCode process (``OPENCODE_PID``) serves every session of
its project from the same server process. But before it calls, OpenCode writes the call to its
database: a ``part`` row ``{"type": "tool", "tool": "<server>_<tool>", "state": {"status":
"running", "input": {…}}}`` in the calling session, the tool's input exactly the call's arguments.
So the calling session is the one session holding a running part for this tool with these
arguments. Two sessions making the identical call at the same moment cannot be told apart: then
no session is named (nothing is left out) rather than a guess.

The database is opened read-only (:func:`voyager_sessions.ingest.sqlite.connect_readonly`), only its
newest parts are read, and a store that cannot be read names no session.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Mapping
from typing import Any

from voyager_sessions.ingest.adapters.opencode.product import OPENCODE, Product
from voyager_sessions.ingest.sqlite import connect_readonly

#: Only parts this recent are looked at (a call's part is written as the model streams it, seconds before).
RECENT_MS = 10 * 60 * 1000
#: And at most this many of the newest parts (a busy store writes many parts a minute).
NEWEST_PARTS = 5000
#: OpenCode writes the running state as the call starts; the call may reach the server a moment before the
#: write lands, so an empty look is repeated for this long.
WAIT_S = 1.0


def calling_session(
    env: Mapping[str, str], tool: str, arguments: Mapping[str, Any], *, product: Product = OPENCODE
) -> str | None:
    """The Voyager id of the session whose running call of MCP tool ``tool`` has ``arguments``, or None."""
    db = product.named_db(env) or product.data_dir(env) / product.db_name
    if not db.is_file():
        return None
    deadline = time.monotonic() + WAIT_S
    while True:
        found = _running(db, tool, arguments)
        if found is not None:
            return product.session_id(found) if len(found) else None
        if time.monotonic() >= deadline:
            return None
        time.sleep(0.05)


def _running(db: Any, tool: str, arguments: Mapping[str, Any]) -> str | None:
    """The one session with such a running call; ``""`` when several have one; None when none does (yet)."""
    try:
        conn = connect_readonly(db, row_factory=False)
    except (sqlite3.Error, OSError):
        return ""  # unreadable: nothing will name it
    try:
        # The newest rows by rowid (no index on time: a scan of every part would cost a big store seconds).
        rows = conn.execute(
            "SELECT session_id, data FROM (SELECT rowid, session_id, time_updated, data FROM part "
            "ORDER BY rowid DESC LIMIT ?) WHERE time_updated >= ? AND data LIKE '%running%'",
            (NEWEST_PARTS, int(time.time() * 1000) - RECENT_MS),
        ).fetchall()
    except sqlite3.Error:
        return ""
    finally:
        conn.close()
    sessions = {sid for sid, data in rows if isinstance(sid, str) and _is_the_call(data, tool, arguments)}
    if not sessions:
        return None
    return next(iter(sessions)) if len(sessions) == 1 else ""


def _is_the_call(data: Any, tool: str, arguments: Mapping[str, Any]) -> bool:
    try:
        part = json.loads(data)
    except (TypeError, ValueError):
        return False
    if not isinstance(part, dict) or part.get("type") != "tool":
        return False
    state = part.get("state")
    name = part.get("tool")
    # OpenCode names an MCP tool `<server>_<tool>`, the server as the user keyed it in opencode.json.
    if not isinstance(state, dict) or not isinstance(name, str) or not name.endswith(f"_{tool}"):
        return False
    return state.get("status") == "running" and state.get("input") == dict(arguments)
