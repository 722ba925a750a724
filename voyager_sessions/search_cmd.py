"""``voyager search`` without click: the command itself.

Its options are one table, ``SEARCH_OPTIONS`` in :mod:`voyager_sessions.options`:
:mod:`voyager_sessions.cli` builds the click command from it, and
:func:`voyager_sessions.commands.parse` reads argv with it so that a plain
``voyager search …`` never imports click (about 20 ms, a third of the wall time of a
search). Text output still goes through ``click.echo`` (imported then), so ``--json`` and
``--jsonl`` are the click-free paths. The command writes and reads through
:mod:`voyager_sessions.invocation`, so ``voyager serve`` runs this very function for its
clients and their output is the same bytes.
"""

from __future__ import annotations

import sys
from typing import Any

from voyager_sessions import invocation
from voyager_sessions.cmdutil import (
    EXIT_NONE,
    EXIT_OK,
    Busy,
    UserError,
    VoyagerError,
    data_dir,
    echo,
    emit_json,
    emit_jsonl,
    open_reader,
    refresh_scan,
    use_color,
)


def search_command(query: tuple[str, ...], limit: int, offset: int, providers: tuple[str, ...],
                   kinds: tuple[str, ...], repo: str | None, cwd: str | None, session: str | None,
                   since: str | None, until: str | None, sort: str, by_session: bool, context: int, as_json: bool,
                   as_jsonl: bool, no_refresh: bool, color: str) -> None:
    """Run ``voyager search`` with parsed parameters; exits 0 when something matched, 1 when nothing did."""
    from voyager_sessions.api import check_query
    from voyager_sessions.paths import DataDir
    from voyager_sessions.search.engine import SearchOptions

    text = " ".join(query).strip()
    if not text and not any([providers, kinds, repo, cwd, session, since, until]):
        raise UserError("nothing to search for: give a query, e.g. voyager search \"connection refused\"")
    check_query(text)  # a malformed query fails before any work
    ddir = DataDir(data_dir())
    if not no_refresh or not ddir.has_index():
        try:
            refresh_scan(ddir.root, quiet=not invocation.isatty(err=True) or as_json or as_jsonl)
        except Busy:
            pass  # a scan is running: search what it has committed so far (none yet: the reader says so)
        except VoyagerError as exc:
            if not ddir.has_index():
                raise
            # The refresh could not write (a full disk, say): answer from what is indexed, and say so.
            from voyager_sessions.textsafe import printable

            echo(f"voyager: not refreshed ({printable(str(exc))}); searching what is indexed", err=True)
    opts = SearchOptions(limit=limit, offset=offset, providers=list(providers), kinds=list(kinds), repo=repo,
                         cwd=cwd, session=session, since=since, until=until, sort=sort, sessions=by_session,
                         context=context)
    with open_reader(ddir.root) as reader:  # "no index yet" when there is none
        result = reader.search(text, opts)
    if invocation.remembers():
        from voyager_sessions.lastsearch import remember

        remember(ddir, text, result.hits)  # what `voyager resume -` reopens; never fails the search
    if result.match == "partial":
        # One line, whatever the output format: the hits hold some of the terms, not all.
        echo(f"voyager: no session holds all {len(result.terms)} terms; showing the sessions that hold the most first", err=True)
    if as_json:
        emit_json(result)
    elif as_jsonl:
        emit_jsonl(result.hits)
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
