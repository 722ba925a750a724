"""The console entry point (``voyager`` and ``python -m voyager_sessions``): plain reading commands skip click.

Importing click and building the command tree costs more than answering a search of a
million events, so ``voyager search`` (and ``list``, ``show``, ``stats``) whose
arguments :func:`voyager_sessions.commands.parse` reads completely go another way:

1. to a running ``voyager serve`` for this data dir, through :mod:`voyager_sessions.serve.client`,
   which imports only the standard library and prints exactly what the command would
   have printed here (the server runs the very same function);
2. when none answers, ``search`` runs here directly, and the others through click.

Everything else (another command, ``--help``, a mistake in the arguments, shell
completion) goes to the click CLI in :mod:`voyager_sessions.cli`, which also reports
anything the direct run raises, so messages and exit codes are the same every way.

Start-up runs with the cyclic garbage collector off, and what it imported is then
frozen out of later collections (:func:`_started`): imports allocate a lot and free
nothing, so collecting during them, and walking all of it again in the interpreter's
final collections at exit, is wasted work (about 10 ms of a 60 ms search).
"""

from __future__ import annotations

import gc
import os
import sys

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (2-3 ms of every command)
if TYPE_CHECKING:
    from typing import NoReturn

#: click's shell-completion variable for prog_name ``voyager``; when set, click must answer.
COMPLETE_VAR = "_VOYAGER_COMPLETE"

#: The commands read without click (see voyager_sessions.commands.READ_COMMANDS).
_READING = ("search", "list", "show", "stats")


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``); always exits."""
    collecting = gc.isenabled()
    gc.disable()
    args = sys.argv[1:] if argv is None else list(argv)
    if args[:1] and args[0] in _READING and not os.environ.get(COMPLETE_VAR):
        from voyager_sessions.commands import parse

        params = parse(args[0], args[1:])
        if params is not None:
            _forward(args[0], params)
            if args[0] == "search":
                _search(params, collecting)
    if args == ["mcp"] and not os.environ.get(COMPLETE_VAR):
        _mcp()
    from voyager_sessions.cli import main as cli_main

    _started(collecting)
    cli_main(argv)  # None stays None: click reads sys.argv itself, as it always did


def _forward(cmd: str, params: dict) -> None:
    """Exit with the server's answer when a server for this data dir gives one; return when none does."""
    from voyager_sessions.serve.client import forward

    os.umask(0o077)  # cmdutil.private_umask, without importing it: nothing here writes, but stay alike
    code = forward(cmd, params)
    if code is not None:
        # Everything is written and flushed: skip the interpreter's teardown (~2 ms of a ~15 ms command).
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def _mcp() -> NoReturn:
    """``voyager mcp`` without click: an agent waits for its ``initialize`` answer (Codex about a second)."""
    from voyager_sessions.serve.mcp_server import run_stdio

    os.umask(0o077)  # cmdutil.private_umask: a refresh scan may create the data dir
    run_stdio()
    sys.stdout.flush()
    sys.exit(0)


def _started(collecting: bool) -> None:
    """Start-up is over: keep what it imported out of every later collection, then collect as before."""
    gc.freeze()
    if collecting:
        gc.enable()


def _search(params: dict, collecting: bool) -> NoReturn:
    """``voyager search`` with parsed ``params``, as the click group runs it (umask first, errors reported alike)."""
    from voyager_sessions import search_cmd
    from voyager_sessions.cmdutil import private_umask

    private_umask()
    try:
        try:
            from voyager_sessions import api  # noqa: F401  (most of what a search imports: frozen with the rest)
            from voyager_sessions.search import engine, index  # noqa: F401
        finally:
            _started(collecting)
        search_cmd.search_command(**params)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported below exactly as click reports it
        failure: BaseException = exc
    else:
        sys.exit(0)
    from voyager_sessions.cli import exit_as_command_error

    exit_as_command_error(failure)
