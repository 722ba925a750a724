"""The option tables of the reading commands (``search``, ``list``, ``show``, ``stats``): one definition each.

The options that are request fields spell what the API's request Structs declare (``api/requests.py``: the
option strings, bounds, defaults and help of each field, held equal by ``tests/api/test_requests.py``); the
rest (``--json``, ``--flat``, ``--color`` …) are the command line's own: how it shows a result.

:mod:`voyager_sessions.cli.app` builds the click commands from these tables and
:func:`voyager_sessions.cli.argv.parse_args` reads argv with them, so the two agree by
construction (``tests/test_search_fast_path.py``, ``tests/test_argv.py``). They live apart from
the commands so that handing a command to a running server (``voyager_sessions.cli.main``)
imports nothing but this, the argv reader and the client: every module on that path is
paid for by every ``voyager search``.
"""

from __future__ import annotations

from voyager_sessions.cli.argv import Option, Positional
from voyager_sessions.core.errors import MAX_INT
from voyager_sessions.core.filters import SESSION_FILTERS

#: The positional words of the query (click: an argument with ``nargs=-1``).
QUERY_PARAM = "query"

SEARCH_OPTIONS: tuple[Option, ...] = (
    Option(
        ("-n", "--limit"),
        "limit",
        "int",
        20,
        bounds=(1, 10_000),
        show_default=True,
        help="Most hits to return (rows, with sessions).",
    ),
    Option(("--offset",), "offset", "int", 0, bounds=(0, MAX_INT), help="Skip this many hits (pagination)."),
    Option(
        ("--provider",),
        "providers",
        "text",
        multiple=True,
        help="Only these agents (claude, codex, gemini, opencode …).",
    ),
    Option(
        ("--kind",),
        "kinds",
        "text",
        multiple=True,
        help="Only events of these kinds: user, assistant, reasoning, tool (tool_call, tool_result), meta, checkpoint, "
        "title.",
    ),
    # The session-attribute filters (--repo, --cwd …): one row each in core.filters.
    *(Option((f"--{f.name}",), f.name, "text", help=f.help) for f in SESSION_FILTERS),
    Option(("--session",), "session", "text", help="Only this session (id, native id or prefix)."),
    Option(("--since",), "since", "text", help="Newer than: 7d, 12h, 2026-11-01, yesterday …"),
    Option(("--until",), "until", "text", help="Older than: a date, or 7d …"),
    Option(
        ("--sort",),
        "sort",
        "choice",
        "relevance",
        choices=("relevance", "recent"),
        show_default=True,
        help="Order of the hits: best first, or newest first.",
    ),
    Option(("--sessions",), "by_session", "flag", help="One row per session: its best hit and hit count."),
    Option(
        ("-m", "--meaning"),
        "meaning",
        "flag",
        help="Rank by meaning too: find a session you describe, in any language (needs voyager-sessions[semantic]).",
    ),
    Option(
        ("--flat",),
        "flat",
        "flag",
        help="One hit after another, each with its session (on a terminal hits are grouped under their session).",
    ),
    Option(("-C", "--context"), "context", "int", 0, bounds=(0, 50), help="Events before and after each hit."),
    Option(("--json",), "as_json", "flag", help="One JSON document on stdout."),
    Option(("--jsonl",), "as_jsonl", "flag", help="One JSON hit per line on stdout."),
    Option(
        ("--no-refresh",),
        "no_refresh",
        "flag",
        help="Don't look for new agent history first (with no index yet, always).",
    ),
    Option(("--color",), "color", "choice", "auto", choices=("auto", "always", "never"), show_default=True),
)

SEARCH_QUERY = Positional(QUERY_PARAM, -1)

LIST_OPTIONS: tuple[Option, ...] = (
    Option(("--provider",), "provider", "text", help="Only this agent."),
    Option(
        ("-n", "--limit"), "limit", "int", 50, bounds=(1, MAX_INT), show_default=True, help="Most sessions to list."
    ),
    Option(("--offset",), "offset", "int", 0, bounds=(0, MAX_INT), help="Skip this many sessions."),
    Option(("--json",), "as_json", "flag"),
)

SHOW_SESSION = Positional("session", 1)
SHOW_OPTIONS: tuple[Option, ...] = (
    Option(("--around",), "around", "int", bounds=(-1, MAX_INT), help="Only a window of events around this seq."),
    Option(
        ("-C", "--context"),
        "window",
        "int",
        10,
        bounds=(0, 100_000),
        show_default=True,
        help="Events each side of around.",
    ),
    Option(("--json",), "as_json", "flag"),
    Option(("--color",), "color", "choice", "auto", choices=("auto", "always", "never")),
)

STATS_OPTIONS: tuple[Option, ...] = (Option(("--json",), "as_json", "flag"),)
