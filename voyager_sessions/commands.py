"""The reading commands a running server can answer: their names, argv readers and functions.

``search``, ``list``, ``show`` and ``stats`` only read the index, so ``voyager serve``
can run them for a client (see :mod:`voyager_sessions.serve`). This table is where the
entry point (:mod:`voyager_sessions.main`), the click CLI and the server find each one:
its option table and positional argument (read without click by
:func:`voyager_sessions.argv.parse_args`) and the function click would call with the
parameters read. Modules are imported on first use: reading argv must stay cheap.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (every `voyager search` pays for it)
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence
    from typing import Any

    from voyager_sessions.argv import Option, Positional

#: name -> (module of the command, options table and positional argument in voyager_sessions.options, function)
READ_COMMANDS: dict[str, tuple[str, str, str | None, str]] = {
    "search": ("voyager_sessions.search_cmd", "SEARCH_OPTIONS", "SEARCH_QUERY", "search_command"),
    "list": ("voyager_sessions.read_cmd", "LIST_OPTIONS", None, "list_command"),
    "show": ("voyager_sessions.read_cmd", "SHOW_OPTIONS", "SHOW_SESSION", "show_command"),
    "stats": ("voyager_sessions.read_cmd", "STATS_OPTIONS", None, "stats_command"),
}


def tables(name: str) -> tuple[Sequence[Option], Positional | None]:
    """Command ``name``'s option table and its positional argument (None when it takes none)."""
    from voyager_sessions import options

    _, table, positional, _ = READ_COMMANDS[name]
    return getattr(options, table), getattr(options, positional) if positional else None


def parse(name: str, args: Sequence[str]) -> dict[str, Any] | None:
    """The parameters click would pass to command ``name`` for ``args``, or None to leave them to click."""
    from voyager_sessions.argv import parse_args

    options, positional = tables(name)
    return parse_args(options, args, positional)


def function(name: str) -> Callable[..., None]:
    """The function that runs command ``name`` (looked up at call time, so a test may replace it)."""
    module_name, _, _, func = READ_COMMANDS[name]
    return getattr(importlib.import_module(module_name), func)


def validate(name: str, args: Any) -> dict[str, Any]:
    """``args`` (decoded JSON from a client) as the parameters of command ``name``; ValueError saying what is wrong.

    A server must not trust its clients more than click trusts argv: every parameter is
    checked against the command's table (names, types, bounds, choices) and nothing
    else is accepted, so whatever reaches the command is something argv could give.
    """
    if name not in READ_COMMANDS:
        raise ValueError(f"unknown command {name!r}: one of {', '.join(READ_COMMANDS)}")
    if not isinstance(args, dict):
        raise ValueError("args must be an object")
    options, positional = tables(name)
    expected = {o.dest for o in options} | ({positional.dest} if positional else set())
    unknown = sorted(set(args) - expected)
    if unknown:
        raise ValueError(f"unknown argument(s) for {name}: {', '.join(map(str, unknown))}")
    missing = sorted(expected - set(args))
    if missing:
        raise ValueError(f"missing argument(s) for {name}: {', '.join(missing)}")
    params: dict[str, Any] = {}
    if positional is not None:
        value = args[positional.dest]
        if positional.nargs == -1:
            if not isinstance(value, list) or not all(isinstance(w, str) for w in value):
                raise ValueError(f"{positional.dest} must be a list of strings")
            params[positional.dest] = tuple(value)
        elif not isinstance(value, str):
            raise ValueError(f"{positional.dest} must be a string")
        else:
            params[positional.dest] = value
    for opt in options:
        params[opt.dest] = _checked(opt, args[opt.dest])
    return params


def _checked(opt: Any, value: Any) -> Any:
    if opt.multiple:
        if not isinstance(value, list):
            raise ValueError(f"{opt.dest} must be a list")
        return tuple(_checked_one(opt, v) for v in value)
    if value is None and opt.default is None and opt.kind != "flag":
        return None  # an option without a default that was not given
    return _checked_one(opt, value)


def _checked_one(opt: Any, value: Any) -> Any:
    if opt.kind == "flag":
        if not isinstance(value, bool):
            raise ValueError(f"{opt.dest} must be true or false")
        return value
    if opt.kind == "int":
        lo, hi = opt.bounds
        if isinstance(value, bool) or not isinstance(value, int) or not lo <= value <= hi:
            raise ValueError(f"{opt.dest} must be an integer from {lo} to {hi}")
        return value
    if not isinstance(value, str):
        raise ValueError(f"{opt.dest} must be a string")
    if opt.kind == "choice" and value not in opt.choices:
        raise ValueError(f"{opt.dest} must be one of {', '.join(opt.choices)}")
    return value


def run_captured(name: str, params: dict[str, Any], inv: Any) -> int:
    """Run command ``name`` with ``params`` as invocation ``inv``; its output is in ``inv.capture``; the exit code.

    A failure is reported into the capture exactly as the CLI reports it on stderr
    (:func:`voyager_sessions.cmdutil.failure`), so a client replays the same line.
    """
    from voyager_sessions.cmdutil import echo, failure
    from voyager_sessions.invocation import invoked

    with invoked(inv):
        try:
            function(name)(**params)
        except SystemExit as exc:
            code = exc.code
            return code if isinstance(code, int) else 0 if code is None else 1
        except Exception as exc:  # noqa: BLE001 - reported as the CLI reports it
            line, code = failure(exc)
            echo(line, err=True)
            return code
    return 0
