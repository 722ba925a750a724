"""``voyager ui``: the click command that opens the terminal picker (:mod:`voyager_sessions.tui`).

Loaded only when ``ui`` runs (``LAZY_COMMANDS`` in :mod:`voyager_sessions.cli.app`); ``voyager``
with no arguments on a terminal runs it too (:mod:`voyager_sessions.cli.main`). Textual is imported
here and nowhere on the ``voyager search`` path.
"""

from __future__ import annotations

import sys

import click

from voyager_sessions.cli.common import UserError, data_dir


@click.command()
@click.argument("query", nargs=-1)
def ui(query: tuple[str, ...]) -> None:
    """Find a session as you type, read it, and resume it (Enter) — a full-screen terminal app.

    QUERY, if given, is typed into the search box. Keys: ? in the app.
    """
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise UserError("voyager ui needs a terminal (for scripts: voyager search … --json)")
    try:
        import textual  # noqa: F401
    except ImportError:
        raise UserError("voyager ui needs Textual: pip install textual (it comes with voyager-sessions)") from None
    from voyager_sessions import tui

    tui.run(data_dir(), " ".join(query))
