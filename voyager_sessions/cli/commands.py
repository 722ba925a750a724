"""The reading commands a running server can answer: their names, argv readers and functions.

``search``, ``list``, ``show`` and ``stats`` only read the index, so each
can be answered by a running server (see :mod:`voyager_sessions.serve`). This table is
where the entry point (:mod:`voyager_sessions.cli.main`) and the click CLI find each one: its
option table and positional argument (read without click by
:func:`voyager_sessions.cli.argv.parse_args`) and the function click would call with the
parameters read. (The server takes requests, not these parameters: see
:mod:`voyager_sessions.cli.present` and :mod:`voyager_sessions.api`.) Modules are imported
on first use: reading argv must stay cheap.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every `voyager search` pays for it)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from voyager_sessions.cli.argv import Option, Positional

#: name -> (module of the command, options table and positional argument in voyager_sessions.cli.options, function)
READ_COMMANDS: dict[str, tuple[str, str, str | None, str]] = {
    "search": ("voyager_sessions.cli.reading", "SEARCH_OPTIONS", "SEARCH_QUERY", "search_command"),
    "list": ("voyager_sessions.cli.reading", "LIST_OPTIONS", None, "list_command"),
    "show": ("voyager_sessions.cli.reading", "SHOW_OPTIONS", "SHOW_SESSION", "show_command"),
    "stats": ("voyager_sessions.cli.reading", "STATS_OPTIONS", None, "stats_command"),
}


def tables(name: str) -> tuple[Sequence[Option], Positional | None]:
    """Command ``name``'s option table and its positional argument (None when it takes none)."""
    from voyager_sessions.cli import options

    _, table, positional, _ = READ_COMMANDS[name]
    return getattr(options, table), getattr(options, positional) if positional else None


def parse(name: str, args: Sequence[str]) -> dict[str, Any] | None:
    """The parameters click would pass to command ``name`` for ``args``, or None to leave them to click."""
    from voyager_sessions.cli.argv import parse_args

    options, positional = tables(name)
    return parse_args(options, args, positional)


def function(name: str) -> Callable[..., None]:
    """The function that runs command ``name`` (looked up at call time, so a test may replace it)."""
    module_name, _, _, func = READ_COMMANDS[name]
    return getattr(importlib.import_module(module_name), func)
