"""Every request the application API answers: one msgspec Struct each, the one definition of its fields.

A field carries its type, bounds, default and a one-line description (``msgspec.Meta``), and in
``Meta.extra`` how each front end spells it (:func:`spelled`):

- ``cli``: the command line's option strings (``("-n", "--limit")``), ``"ARG"`` for the positional
  argument, or ``None`` when the command line does not offer it (said in ``why``);
- ``mcp``: the MCP tool's argument name (None: not offered to agents);
- ``web``: the web page's query parameter (None: not offered there).

The CLI's option tables (``cli/options.py``, read without importing msgspec on the lean path), the MCP
tools' ``inputSchema`` (``mcp/server.py``), the web page's parameter parsing (``web/app.py``) and the
option tables of the docs are each held to these by a test (``tests/api/test_requests.py``), so adding a
filter means adding one field here and its spelling in each front end.

Bounds are what a front end may ask, whoever asks: ``msgspec.convert`` checks them for a request built
from a socket line, an MCP tool's arguments or a web page's parameters, as click checks argv.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal, overload

import msgspec

from voyager_sessions.core.errors import MAX_INT
from voyager_sessions.core.filters import BY_NAME

#: The field's own name, for a front end that spells it as the API does.
SAME = "="
#: How a front end spells a field: a name (an MCP argument, a web parameter), or the command line's option
#: strings (``("-n", "--limit")``; ``"ARG"`` for the argument).
Spelling = str | tuple[str, ...]


def described(
    description: str,
    *,
    cli: tuple[str, ...] | str | None = None,
    mcp: str | None = SAME,
    web: str | None = SAME,
    why: str | None = None,
    ge: int | None = None,
    le: int | None = None,
    max_length: int | None = None,
) -> msgspec.Meta:
    """A field's ``Meta``: its description, bounds (``ge`` and ``le`` for a number, ``max_length`` for a list) and
    front-end spellings."""
    extra = {"cli": cli, "mcp": mcp, "web": web, "why": why}
    if max_length is not None:
        return msgspec.Meta(description=description, extra=extra, max_length=max_length)
    return msgspec.Meta(description=description, extra=extra, ge=ge, le=le)


@overload
def spelled(struct: type[msgspec.Struct], front_end: Literal["mcp", "web"]) -> dict[str, str]: ...
@overload
def spelled(struct: type[msgspec.Struct], front_end: Literal["cli"]) -> dict[str, Spelling]: ...
def spelled(
    struct: type[msgspec.Struct], front_end: Literal["cli", "mcp", "web"]
) -> dict[str, str] | dict[str, Spelling]:
    """Field name -> how ``front_end`` (``cli``, ``mcp``, ``web``) spells it, for the fields it offers: a name for
    MCP and the web page (``described`` takes only a name there), option strings or ``"ARG"`` for the CLI."""
    out: dict[str, Spelling] = {}
    info = msgspec.inspect.type_info(struct)
    assert isinstance(info, msgspec.inspect.StructType)
    for f in info.fields:
        extra = _extra(f.type)
        spelling = extra.get(front_end, SAME if front_end != "cli" else None)
        if spelling is not None:
            out[f.name] = f.name if spelling == SAME else spelling
    return out


def _extra(t: msgspec.inspect.Type) -> dict[str, Any]:
    if isinstance(t, msgspec.inspect.Metadata):
        return dict(t.extra or {})
    if isinstance(t, msgspec.inspect.UnionType):
        for member in t.types:
            found = _extra(member)
            if found:
                return found
    return {}


class SearchRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``voyager search``: the query and every option of the command."""

    query: Annotated[
        str,
        described(
            'What to find: words, "phrases", -not, a OR b, prefix*, and filters such as provider:codex or since:7d.',
            cli="ARG",
            web="q",
        ),
    ] = ""
    limit: Annotated[
        int, described("Most hits to return (rows, with sessions).", cli=("-n", "--limit"), ge=1, le=10_000)
    ] = 20
    offset: Annotated[int, described("Skip this many hits (pagination).", cli=("--offset",), ge=0, le=MAX_INT)] = 0
    providers: Annotated[
        list[str],
        described(
            "Only these agents (claude, codex, gemini, opencode …).",
            cli=("--provider",),
            mcp="provider",
            web="provider",
        ),
    ] = []
    kinds: Annotated[
        list[str],
        described(
            "Only events of these kinds: user, assistant, reasoning, tool (tool_call, tool_result), meta, checkpoint, title.",
            cli=("--kind",),
            mcp="kind",
            web="kind",
        ),
    ] = []
    # The session-attribute filters: a row each in core.filters (their help, and all that reads them).
    repo: Annotated[str | None, described(BY_NAME["repo"].help, cli=("--repo",), web="project")] = None
    cwd: Annotated[str | None, described(BY_NAME["cwd"].help, cli=("--cwd",))] = None
    branch: Annotated[str | None, described(BY_NAME["branch"].help, cli=("--branch",))] = None
    session: Annotated[str | None, described("Only this session (id, native id or prefix).", cli=("--session",))] = None
    since: Annotated[str | None, described("Newer than: 7d, 12h, 2026-11-01, yesterday …", cli=("--since",))] = None
    until: Annotated[str | None, described("Older than: a date, or 7d …", cli=("--until",))] = None
    sort: Annotated[
        Literal["relevance", "recent"], described("Order of the hits: best first, or newest first.", cli=("--sort",))
    ] = "relevance"
    sessions: Annotated[
        bool, described("One row per session: its best hit and hit count.", cli=("--sessions",), web=None)
    ] = False
    context: Annotated[
        int, described("Events before and after each hit.", cli=("-C", "--context"), web=None, ge=0, le=50)
    ] = 0
    snippet_width: Annotated[
        int,
        described(
            "Characters of a hit's snippet.",
            mcp=None,
            web=None,
            why="a front end's own layout: the picker sizes snippets to its width",
            ge=16,
            le=100_000,
        ),
    ] = 240
    exclude_sessions: Annotated[
        list[str],
        described(
            "Sessions whose events are left out (an agent's own current session).",
            mcp=None,
            web=None,
            why="set by the MCP server from the caller's identity, never typed",
            max_length=1000,
        ),
    ] = []
    refresh: Annotated[
        bool,
        described(
            "Look for new agent history first (with no index yet, always).",
            cli=("--no-refresh",),
            mcp=None,
            web=None,
            why="agents and the web page search what `voyager serve` or the page's watcher keeps fresh",
        ),
    ] = True
    remember: Annotated[
        bool,
        described(
            "Record it as the last search, for `voyager resume -`: a person's search, not an agent's.",
            mcp=None,
            web=None,
            why="the command line sets it: a person's search; agents' and pages' searches are never remembered",
        ),
    ] = False
    meaning: Annotated[
        bool,
        described(
            "Rank by meaning too: find a session you describe, in any language (needs voyager-sessions[semantic]).",
            cli=("-m", "--meaning"),
            web=None,
            why="the page ranks by meaning wherever the model is installed, as the picker does",
        ),
    ] = False


class ListRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``voyager list``: sessions, newest first."""

    provider: Annotated[str | None, described("Only this agent.", cli=("--provider",))] = None
    limit: Annotated[int, described("Most sessions to list.", cli=("-n", "--limit"), ge=1, le=MAX_INT)] = 50
    offset: Annotated[int, described("Skip this many sessions.", cli=("--offset",), ge=0, le=MAX_INT)] = 0


class ShowRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``voyager show``: a session (id, native id or unambiguous prefix), or a window around seq ``around``."""

    session: Annotated[str, described("The session: id, native id or unambiguous prefix.", cli="ARG")]
    around: (
        Annotated[int, described("Only a window of events around this seq.", cli=("--around",), ge=-1, le=MAX_INT)]
        | None
    ) = None
    window: Annotated[int, described("Events each side of around.", cli=("-C", "--context"), ge=0, le=100_000)] = 10


class StatsRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``voyager stats``: nothing to ask but the data dir."""


class SessionRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """One session by reference (``voyager resume``): an id, a native id, an unambiguous prefix, or ``-``
    (the first hit of the last ``voyager search``)."""

    session: Annotated[
        str, described("The session: id, native id, unambiguous prefix, or - (the last search's first hit).", cli="ARG")
    ]


class ExportRequest(msgspec.Struct, kw_only=True, forbid_unknown_fields=True):
    """``voyager export``: the session, and whether to redact secrets first."""

    session: Annotated[
        str, described("The session: id, native id, unambiguous prefix, or - (the last search's first hit).", cli="ARG")
    ]
    redact: Annotated[bool, described("Replace API keys, tokens and passwords first.", cli=("--redact",), mcp=None)] = (
        False
    )
