"""``voyager ui``: the click command that opens the terminal picker (:mod:`voyager_sessions.tui`).

Loaded only when ``ui`` runs (``LAZY_COMMANDS`` in :mod:`voyager_sessions.cli.app`); ``voyager``
with no arguments on a terminal opens the picker too, and ``voyager ui`` without options does so without
click (:mod:`voyager_sessions.cli.main`); both through :mod:`voyager_sessions.cli.picker`. Textual is
imported there and nowhere on the ``voyager search`` path.
"""

from __future__ import annotations

import click


@click.command()
@click.argument("query", nargs=-1)
def ui(query: tuple[str, ...]) -> None:
    """Find a session as you type, read it, and resume it (Enter) — a full-screen terminal app.

    QUERY, if given, is typed into the search box. Keys: ? in the app.
    """
    from voyager_sessions.cli.picker import open_picker

    open_picker(query)
