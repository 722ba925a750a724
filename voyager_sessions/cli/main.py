"""The console entry point (``voyager`` and ``python -m voyager_sessions``): plain reading commands skip click.

Importing click and building the command tree costs more than answering a search of a
million events, so ``voyager search`` (and ``list``, ``show``, ``stats``) whose
arguments :func:`voyager_sessions.cli.commands.parse` reads completely go another way:

1. to a running ``voyager serve`` for this data dir, through :mod:`voyager_sessions.core.remote`:
   the command's parameters become an API request (:func:`voyager_sessions.cli.present.request`),
   the server answers with the result document as data, and it is rendered here by the
   very renderer the command uses in its own process (:func:`voyager_sessions.cli.present.render`),
   all with the standard library only;
2. when none answers, ``search`` runs here directly, and the others through click.

Everything else (another command, ``--help``, a mistake in the arguments, shell
completion) goes to the click CLI in :mod:`voyager_sessions.cli.app`, which also reports
anything the direct run raises, so messages and exit codes are the same every way.

Start-up runs with the cyclic garbage collector off, and what it imported is then
frozen out of later collections (:func:`_started`): imports allocate a lot and free
nothing, so collecting during them, and walking all of it again in the interpreter's
final collections at exit, is wasted work (about 10 ms of a 60 ms search).

msgspec imports ``typing_extensions`` whenever it is installed (for its ``get_type_hints``;
the picker's and the watcher's libraries install it), and that brings ``inspect``, ``ast``
and ``dis`` with it: a third of a search's imports. Voyager's Structs need nothing of it
(the standard ``typing`` reads their annotations alike), so in this process msgspec's import
of it is refused (:func:`_lean_msgspec`); any other library (Textual in the picker) still gets it. ``tests/cli/test_startup_imports.py`` lists what a
search imports.
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

#: The commands read without click (see voyager_sessions.cli.commands.READ_COMMANDS).
_READING = ("search", "list", "show", "stats")


def main(argv: list[str] | None = None) -> NoReturn:
    """Run the CLI on ``argv`` (default ``sys.argv[1:]``); always exits."""
    collecting = gc.isenabled()
    gc.disable()
    _lean_msgspec()
    args = sys.argv[1:] if argv is None else list(argv)
    if not args and argv is None and sys.stdin.isatty() and sys.stdout.isatty() and not os.environ.get(COMPLETE_VAR):
        argv = args = ["ui"]  # `voyager` alone on a terminal opens the picker; on a pipe it prints help as before
    if args[:1] and args[0] in _READING and not os.environ.get(COMPLETE_VAR):
        from voyager_sessions.cli.commands import parse

        params = parse(args[0], args[1:])
        if params is not None:
            _forward(args[0], params)
            if args[0] == "search":
                _search(params, collecting)
    if args[:1] == ["ui"] and not os.environ.get(COMPLETE_VAR) and not any(a.startswith("-") for a in args[1:]):
        _ui(args[1:], collecting)
    if args == ["mcp"] and not os.environ.get(COMPLETE_VAR):
        _mcp()
    from voyager_sessions.cli.app import main as cli_main

    _started(collecting)
    cli_main(argv)  # None stays None: click reads sys.argv itself, as it always did
    raise AssertionError("the click CLI always exits")  # pragma: no cover


def _forward(cmd: str, params: dict) -> None:
    """Exit with the server's answer, rendered here, when a server for this data dir gives one; return when none does."""
    from voyager_sessions.core import wire as protocol

    if not (protocol.is_utf8(getattr(sys.stdout, "encoding", None)) and hasattr(sys.stdout, "buffer")):
        return  # click would re-encode for a misconfigured stream: leave that to it
    from voyager_sessions.cli import present
    from voyager_sessions.core.remote import ask

    os.umask(0o077)  # common.private_umask, without importing it: nothing here writes, but stay alike
    fields, view = present.request(cmd, params, _color)
    got = ask(cmd, fields)
    if got is None:
        return
    header, body = got
    out = present.Streams()
    try:
        quiet = present.quiet(view, _isatty(sys.stderr))
        for text, quiet_ok in header["notices"]:
            if not (quiet and quiet_ok):
                out.text(present.notice_line(text), err=True)
        if "failure" in header:
            out.text(header["failure"], err=True)
            code = header["exit"]
        else:
            code = present.render(cmd, fields, body, view, out)
    except BrokenPipeError:
        os._exit(0)  # `voyager search … | head` closed the pipe: not an error (as in-process)
    # Everything is written and flushed: skip the interpreter's teardown (~2 ms of a ~15 ms command).
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)


def _color(mode: str) -> bool:
    """``--color MODE`` against this process's stdout: what ``common.use_color`` decides (a test holds them equal)."""
    if mode == "always":
        return True
    if mode == "never" or os.environ.get("NO_COLOR"):
        return False
    return _isatty(sys.stdout)


def _isatty(stream: object) -> bool:
    """Whether ``stream`` is a terminal: False for a stream without ``isatty`` (a test's) or a closed one."""
    isatty = getattr(stream, "isatty", None)
    try:
        return callable(isatty) and bool(isatty())
    except ValueError:
        return False


def _mcp() -> NoReturn:
    """``voyager mcp`` without click: an agent waits for its ``initialize`` answer (Codex about a second)."""
    from voyager_sessions.mcp.server import run_stdio

    os.umask(0o077)  # common.private_umask: a refresh scan may create the data dir
    run_stdio()
    sys.stdout.flush()
    sys.exit(0)


def _started(collecting: bool) -> None:
    """Start-up is over: keep what it imported out of every later collection, then collect as before."""
    gc.freeze()
    if collecting:
        gc.enable()


def _ui(query: list[str], collecting: bool) -> NoReturn:
    """``voyager ui [QUERY]`` (and ``voyager`` alone on a terminal) without click: the picker's first frame waits
    for nothing it does not draw (click and its command tree were a tenth of it); errors reported as click does."""
    from voyager_sessions.cli.common import private_umask

    private_umask()
    try:
        from voyager_sessions.cli.picker import open_picker

        # Textual and the app are imported before the collector runs again (it ran ~95 times in their import,
        # ~30 ms of CPU), and frozen out of the app's own collections.
        open_picker(query, loaded=lambda: _started(collecting))
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported below exactly as click reports it
        failure: BaseException = exc
    else:
        sys.exit(0)
    from voyager_sessions.cli.app import exit_as_command_error

    exit_as_command_error(failure)


class _Unseen:
    """An import finder that tells msgspec, and only msgspec, that ``typing_extensions`` is not installed."""

    def find_spec(self, name: str, path: object = None, target: object = None) -> None:
        if name == "typing_extensions":
            frame = sys._getframe(1)
            while frame is not None:
                if frame.f_globals.get("__name__") == "msgspec._utils":
                    raise ModuleNotFoundError("typing_extensions is left out of Voyager's start-up", name=name)
                frame = frame.f_back  # type: ignore[assignment]
        return None


def _lean_msgspec() -> None:
    """Whenever this process imports msgspec, without ``typing_extensions`` (see the module's docstring)."""
    if "msgspec" not in sys.modules and not any(isinstance(f, _Unseen) for f in sys.meta_path):
        sys.meta_path.insert(0, _Unseen())


def _search(params: dict, collecting: bool) -> NoReturn:
    """``voyager search`` with parsed ``params``, as the click group runs it (umask first, errors reported alike)."""
    from voyager_sessions.cli import reading
    from voyager_sessions.cli.common import private_umask

    private_umask()
    try:
        try:
            from voyager_sessions import api  # most of what a search imports: frozen with the rest

            api.preload_search()
        finally:
            _started(collecting)
        reading.search_command(**params)
    except (Exception, KeyboardInterrupt) as exc:  # noqa: BLE001 - reported below exactly as click reports it
        failure: BaseException = exc
    else:
        sys.exit(0)
    from voyager_sessions.cli.app import exit_as_command_error

    exit_as_command_error(failure)
