"""``voyager list``, ``show`` and ``stats`` without click: the commands themselves.

As for ``search`` (:mod:`voyager_sessions.search_cmd`), each command's options are one
table in :mod:`voyager_sessions.options`: :mod:`voyager_sessions.cli` builds the click
command from it, and :func:`voyager_sessions.argv.parse_args` reads argv with it so that
:mod:`voyager_sessions.main` can hand a plain ``voyager list …`` to a running server
without importing click. Each is an application API call rendered by
:mod:`voyager_sessions.present` (``cmdutil.run_reading_command``), as a client of the
server renders the document the server sends.
"""

from __future__ import annotations

from typing import Any

from voyager_sessions.cmdutil import run_reading_command


def list_command(**params: Any) -> None:
    """Sessions, newest first; exits 0 when the page has any, 1 when it has none."""
    run_reading_command("list", params)


def show_command(**params: Any) -> None:
    """A session's timeline (id, native id or unambiguous prefix), or the window around seq ``around``."""
    run_reading_command("show", params)


def stats_command(**params: Any) -> None:
    """Sessions and events per agent, index size, the last scan that changed something."""
    run_reading_command("stats", params)
