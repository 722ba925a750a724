"""``voyager search`` without click: its options (one table), a strict argv reader, and the command itself.

``SEARCH_OPTIONS`` is the one definition of the command's options: :mod:`voyager_sessions.cli`
builds the click command from it, and :func:`parse_search_args` reads argv with it so
that a plain ``voyager search …`` never imports click (about 20 ms, a third of the wall
time of a search). The reader accepts only spellings whose meaning is certain and returns
exactly the values click would pass; for anything else (``--help``, an unknown or
malformed option, an out-of-range value, ``-n5``-style bundling) it returns None and
click parses, reports and exits as it always did. ``tests/test_cli_fast.py`` holds the
two to the same results. Text output still goes through ``click.echo`` (imported then),
so ``--json`` and ``--jsonl`` are the click-free paths.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any

from voyager_sessions.cmdutil import (
    EXIT_NONE,
    EXIT_OK,
    MAX_INT,
    Busy,
    UserError,
    VoyagerError,
    data_dir,
    echo,
    emit_json,
    run_scan,
    use_color,
)


class SearchOption:
    """One option of ``voyager search``: how click declares it and how the fast reader reads it.

    ``kind`` is ``flag`` (no value), ``text``, ``int`` (within ``bounds``, inclusive) or
    ``choice`` (one of ``choices``). ``default`` is None where click has none (text
    options give None, flags False, ``multiple`` options an empty tuple). A plain
    class because creating a NamedTuple class costs about 1.5 ms at import.
    """

    __slots__ = ("bounds", "choices", "decls", "default", "dest", "help", "kind", "multiple", "show_default")

    def __init__(self, decls: tuple[str, ...], dest: str, kind: str, default: int | str | None = None, *,
                 multiple: bool = False, bounds: tuple[int, int] = (0, 0), choices: tuple[str, ...] = (),
                 help: str | None = None, show_default: bool = False) -> None:
        self.decls = decls
        self.dest = dest
        self.kind = kind
        self.default = default
        self.multiple = multiple
        self.bounds = bounds
        self.choices = choices
        self.help = help
        self.show_default = show_default

    def __repr__(self) -> str:
        return f"SearchOption({'/'.join(self.decls)} -> {self.dest})"


#: The positional words of the query (click: an argument with ``nargs=-1``).
QUERY_PARAM = "query"

SEARCH_OPTIONS: tuple[SearchOption, ...] = (
    SearchOption(("-n", "--limit"), "limit", "int", 20, bounds=(1, 10_000), show_default=True),
    SearchOption(("--offset",), "offset", "int", 0, bounds=(0, MAX_INT), help="Skip this many hits (pagination)."),
    SearchOption(("--provider",), "providers", "text", multiple=True, help="Only this agent (repeatable)."),
    SearchOption(("--kind",), "kinds", "text", multiple=True,
                 help="user, assistant, reasoning, tool (tool_call, tool_result), meta, checkpoint."),
    SearchOption(("--repo",), "repo", "text", help="Sessions whose git repo or cwd contains this."),
    SearchOption(("--cwd",), "cwd", "text", help="Sessions whose working directory contains this."),
    SearchOption(("--session",), "session", "text", help="One session (id, native id or prefix)."),
    SearchOption(("--since",), "since", "text", help="Newer than: 7d, 12h, 2026-11-01 …"),
    SearchOption(("--until",), "until", "text", help="Older than: a date or 7d …"),
    SearchOption(("--sort",), "sort", "choice", "relevance", choices=("relevance", "recent"), show_default=True),
    SearchOption(("--sessions",), "by_session", "flag", help="One row per session: its best hit and hit count."),
    SearchOption(("-C", "--context"), "context", "int", 0, bounds=(0, 50),
                 help="Show N events before and after each hit."),
    SearchOption(("--json",), "as_json", "flag", help="One JSON document on stdout."),
    SearchOption(("--jsonl",), "as_jsonl", "flag", help="One JSON hit per line on stdout."),
    SearchOption(("--no-refresh",), "no_refresh", "flag", help="Don't look for new agent history first."),
    SearchOption(("--color",), "color", "choice", "auto", choices=("auto", "always", "never"), show_default=True),
)

_BY_DECL: dict[str, SearchOption] = {d: o for o in SEARCH_OPTIONS for d in o.decls}


def parse_search_args(args: Sequence[str]) -> dict[str, Any] | None:
    """The parameters click would pass for ``voyager search ARGS``, or None to leave ``args`` to click.

    Read: words (anywhere; all of them after ``--``), ``--opt VALUE``, ``--opt=VALUE``,
    ``-n VALUE``, ``-C VALUE`` and flags. A value is taken as given, as click takes it;
    an int must be plain ASCII digits within its bounds, a choice one of its choices.
    Repeating a non-multiple option keeps the last value, as click does.
    """
    values: dict[str, Any] = {}
    words: list[str] = []
    i, n = 0, len(args)
    while i < n:
        arg = args[i]
        i += 1
        if arg == "--":
            words.extend(args[i:])
            break
        if arg[:1] != "-" or arg == "-":
            words.append(arg)
            continue
        name, eq, inline = arg.partition("=")
        if eq and not name.startswith("--"):
            return None  # click reads "-n=5" as "-n" with value "=5"; let it say so
        opt = _BY_DECL.get(name)
        if opt is None:
            return None
        if opt.kind == "flag":
            if eq:
                return None
            values[opt.dest] = True
            continue
        if eq:
            raw = inline
        elif i < n:
            raw = args[i]
            i += 1
        else:
            return None
        value = _convert(opt, raw)
        if value is None:
            return None
        if opt.multiple:
            values[opt.dest] = (*values.get(opt.dest, ()), value)
        else:
            values[opt.dest] = value
    params: dict[str, Any] = {QUERY_PARAM: tuple(words)}
    for opt in SEARCH_OPTIONS:
        if opt.dest in values:
            params[opt.dest] = values[opt.dest]
        else:
            params[opt.dest] = () if opt.multiple else False if opt.kind == "flag" else opt.default
    return params


def _convert(opt: SearchOption, raw: str) -> int | str | None:
    """``raw`` as ``opt``'s value, or None where click would refuse it or read it in a way not copied here."""
    if opt.kind == "int":
        # Plain ASCII digits, and not many of them: Python refuses to parse over 4,300
        # digits, leading zeros included, and click then reports the value itself.
        if not (raw.isascii() and raw.isdigit()) or len(raw) > 100:
            return None
        number = int(raw)
        lo, hi = opt.bounds
        return number if lo <= number <= hi else None
    if opt.kind == "choice":
        return raw if raw in opt.choices else None
    return raw


def search_command(query: tuple[str, ...], limit: int, offset: int, providers: tuple[str, ...],
                   kinds: tuple[str, ...], repo: str | None, cwd: str | None, session: str | None,
                   since: str | None, until: str | None, sort: str, by_session: bool, context: int, as_json: bool,
                   as_jsonl: bool, no_refresh: bool, color: str) -> None:
    """Run ``voyager search`` with parsed parameters; exits 0 when something matched, 1 when nothing did."""
    from voyager_sessions.api import NO_INDEX
    from voyager_sessions.paths import DataDir
    from voyager_sessions.search.engine import SearchOptions
    from voyager_sessions.search.query import QueryError

    text = " ".join(query).strip()
    if not text and not any([providers, kinds, repo, cwd, session, since, until]):
        raise UserError("nothing to search for: give a query, e.g. voyager search \"connection refused\"")
    from voyager_sessions.search.query import parse as parse_query

    try:
        parse_query(text)  # a malformed query fails before any work
    except QueryError as exc:
        raise UserError(f"bad query: {exc}") from None
    ddir = data_dir()
    if not no_refresh or not DataDir(ddir).has_index():
        try:
            run_scan(quiet=not sys.stderr.isatty() or as_json or as_jsonl, ddir=ddir)
        except Busy:
            pass  # a scan is running: search what it has committed so far
        except VoyagerError as exc:
            if not DataDir(ddir).has_index():
                raise
            # The refresh could not write (a full disk, say): answer from what is indexed, and say so.
            from voyager_sessions.textsafe import printable

            echo(f"voyager: not refreshed ({printable(str(exc))}); searching what is indexed", err=True)
        if not DataDir(ddir).has_index():
            raise UserError(NO_INDEX)
    opts = SearchOptions(limit=limit, offset=offset, providers=list(providers), kinds=list(kinds), repo=repo,
                         cwd=cwd, session=session, since=since, until=until, sort=sort, sessions=by_session,
                         context=context)
    from voyager_sessions.api import search as run_search

    try:
        result = run_search(ddir, text, opts)
    except QueryError as exc:
        raise UserError(f"bad query: {exc}") from None
    from voyager_sessions.lastsearch import remember

    remember(DataDir(ddir), text, result.hits)  # what `voyager resume -` reopens; never fails the search
    if as_json:
        emit_json(result)
    elif as_jsonl:
        import msgspec

        from voyager_sessions.textsafe import escape_json_controls

        enc = msgspec.json.Encoder()
        out = sys.stdout.buffer
        for h in result.hits:
            out.write(escape_json_controls(enc.encode(h)) + b"\n")
        out.flush()
    else:
        _render_hits(result, use_color(color), by_session)
    sys.exit(EXIT_OK if result.total else EXIT_NONE)


def _render_hits(result: Any, color: bool, by_session: bool) -> None:
    from voyager_sessions.render import render_hit

    if not result.hits:
        echo("No matches." if result.total == 0 else f"No hits on this page ({result.total} in all).", err=True)
        return
    for h in result.hits:
        echo(render_hit(h, color=color, by_session=by_session), color=color)
    shown_to = result.offset + len(result.hits)
    noun = "sessions" if by_session else "hits"
    more = f"; next page: --offset {shown_to}" if shown_to < result.total else ""
    echo(f"{result.offset + 1}-{shown_to} of {result.total} {noun}{more}", err=True)
