"""``voyager list``, ``show`` and ``stats`` without click: the commands themselves.

As for ``search`` (:mod:`voyager_sessions.search_cmd`), each command's options are one
table in :mod:`voyager_sessions.options`: :mod:`voyager_sessions.cli` builds the click
command from it, and :func:`voyager_sessions.argv.parse_args` reads argv with it so that
:mod:`voyager_sessions.main` can hand a plain ``voyager list …`` to a running server
without importing click. The commands read and write through
:mod:`voyager_sessions.invocation`, so ``voyager serve`` runs these very functions for its
clients and the bytes they print are the same whichever process printed them.
"""

from __future__ import annotations

import sys
from typing import Any

from voyager_sessions.cmdutil import (
    EXIT_NONE,
    EXIT_OK,
    data_dir,
    data_dir_label,
    echo,
    emit_json,
    open_reader,
    use_color,
)
from voyager_sessions.plural import count


def list_command(provider: str | None, limit: int, offset: int, as_json: bool) -> None:
    """Sessions, newest first; exits 0 when the page has any, 1 when it has none."""
    with open_reader(data_dir()) as r:
        doc = r.list_sessions(provider=provider, limit=limit, offset=offset)
    if as_json:
        emit_json(doc)
    else:
        from voyager_sessions.render import render_row

        for row in doc.sessions:
            echo(render_row(row))
        echo(f"{offset + len(doc.sessions)} of {count(doc.total, 'session')}", err=True)
    sys.exit(EXIT_OK if doc.sessions else EXIT_NONE)


def show_command(session: str, around: int | None, window: int, as_json: bool, color: str) -> None:
    """A session's timeline (id, native id or unambiguous prefix), or the window around seq ``around``."""
    with open_reader(data_dir()) as r:
        doc = r.show(session, around=around, window=window)
    if as_json:
        emit_json(doc)
        return
    from voyager_sessions.render import render_timeline

    colored = use_color(color)
    echo(render_timeline(doc.session, doc.events, color=colored), color=colored)


def stats_command(as_json: bool) -> None:
    """Sessions and events per agent, index size, the last scan that changed something."""
    with open_reader(data_dir()) as r:
        doc: dict[str, Any] = r.stats()
    doc["data_dir"] = data_dir_label()  # as the user named it (a server knows the same dir by another spelling)
    if as_json:
        emit_json(doc)
        return
    echo(f"data dir: {doc['data_dir']}")
    for p, c in doc["providers"].items():
        echo(f"  {p:<9} {c['sessions']:>6} {'session ' if c['sessions'] == 1 else 'sessions'} {c['events']:>9} {'event' if c['events'] == 1 else 'events'}")
    echo(f"index: {doc['index_events']} events, {doc['index_bytes'] / 1e6:.1f} MB, {doc['index_segments']} segments")
    if doc["last_scan"]:
        from voyager_sessions.model import iso

        echo(f"last scan: {iso(doc['last_scan']['finished'])}")
