"""The reading commands without click: ``voyager search``, ``list``, ``show`` and ``stats`` themselves.

Each command's options are one table in :mod:`voyager_sessions.cli.options`:
:mod:`voyager_sessions.cli.app` builds the click command from it, and
:func:`voyager_sessions.cli.commands.parse` reads argv with it, so that a plain
``voyager search …`` never imports click (about 20 ms, a third of the wall time of a
search) and :mod:`voyager_sessions.cli.main` can hand a plain command to a running server.
Each command is an application API call rendered by :mod:`voyager_sessions.cli.present`
(``common.run_reading_command``): a client of ``voyager serve`` renders the server's
answer with that same renderer. Text output goes through ``click.echo`` (imported then),
so ``--json`` and ``--jsonl`` are the click-free paths.
"""

from __future__ import annotations

from typing import Any

from voyager_sessions.cli.common import run_reading_command


def search_command(**params: Any) -> None:
    """Run ``voyager search`` with the parameters click passes; exits 0 when something matched, 1 when nothing did."""
    run_reading_command("search", params)


def list_command(**params: Any) -> None:
    """Sessions, newest first; exits 0 when the page has any, 1 when it has none."""
    run_reading_command("list", params)


def show_command(**params: Any) -> None:
    """A session's timeline (id, native id or unambiguous prefix), or the window around seq ``around``."""
    run_reading_command("show", params)


def stats_command(**params: Any) -> None:
    """Sessions and events per agent, index size, the last scan that changed something."""
    run_reading_command("stats", params)
