"""Changes made to a SQLite store (OpenCode's) while Voyager watches: shared by the watcher's tests (scan and server).

Each step is followed by ``check(name)``: the caller compares what a search sees with a scan from scratch.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

import synth
from synth import opencode as synth_opencode


def create_and_change_opencode(db: Path, check: Callable[[str], None]) -> None:
    """A store appears with three sessions; then one is retitled and one deleted in one transaction."""
    convs = [synth.generate(seed=70 + i, messages=6, session_id=f"ses_{i:04d}abcdef") for i in range(3)]
    synth_opencode.write_v1(db, convs)  # a SQLite store appears
    check("sqlite-create")
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE session SET title = 'zanzibar retitled', time_updated = time_updated + 1 WHERE id = 'ses_0001abcdef'"
    )
    conn.execute("DELETE FROM session WHERE id = 'ses_0002abcdef'")
    conn.commit()
    conn.close()
    check("sqlite-change")
