"""``voyager search`` without click: the command itself.

Its options are one table, ``SEARCH_OPTIONS`` in :mod:`voyager_sessions.options`:
:mod:`voyager_sessions.cli` builds the click command from it, and
:func:`voyager_sessions.commands.parse` reads argv with it so that a plain
``voyager search …`` never imports click (about 20 ms, a third of the wall time of a
search). The command is the application API's :func:`voyager_sessions.api.search` and
the renderer of :mod:`voyager_sessions.present` (``cmdutil.run_reading_command``): a
client of ``voyager serve`` renders the server's answer with that same renderer. Text
output goes through ``click.echo`` (imported then), so ``--json`` and ``--jsonl`` are the
click-free paths.
"""

from __future__ import annotations

from typing import Any

from voyager_sessions.cmdutil import run_reading_command


def search_command(**params: Any) -> None:
    """Run ``voyager search`` with the parameters click passes; exits 0 when something matched, 1 when nothing did."""
    run_reading_command("search", params)
