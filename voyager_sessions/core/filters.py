"""The session-attribute filters of a search (``--repo`` / ``repo:``, ``--cwd`` / ``cwd:`` …): one row each.

A session-attribute filter keeps the sessions one of whose recorded attributes (the state store's columns of
the ``sessions`` table) *contains* its text, case-insensitively: ``repo:voy`` keeps a session of
``/home/me/voyager``. One row here is the whole filter below the request Struct and the docs: the query
language's ``name:`` (``search.syntax``), the engine's option (``search.plan.SearchOptions.where``) and its
resolver (``search.engine``), the command line's ``--name`` (``cli.options``, ``cli.present``), the API's
"is anything asked?" (``api.search``) and the help texts all read this table, and the state store turns the
columns it names into its own SQL (``store.state.StateStore.session_ids_where``, which only knows columns
it can match). What is left to add a filter is its field in ``api/requests.py`` (its type, description and
spellings, which the MCP schema and the web page's parameters are derived from) and the docs.

Pure data and the standard library: the command line reads it on the lean ``voyager search`` path.
"""

from __future__ import annotations


class SessionFilter:
    """One session-attribute filter (a plain class: ``typing`` is not imported on the served search's path)."""

    __slots__ = ("name", "columns", "metavar", "example", "help")

    def __init__(self, name: str, columns: tuple[str, ...], metavar: str, example: str, help: str) -> None:
        #: Its name: the request field, the command line's ``--name`` and the query language's ``name:``.
        self.name = name
        #: The sessions' attributes (the state store's columns) its text is looked for in: any of them.
        self.columns = columns
        #: What its value is, for the syntax an agent is told (``repo:NAME``).
        self.metavar = metavar
        #: A value for the query language's "needs a value, e.g. name:…" error.
        self.example = example
        #: The command line's help (the request field's description says the same: a test holds them equal).
        self.help = help

    def __repr__(self) -> str:
        return f"SessionFilter({self.name!r}, {self.columns!r})"


#: Every session-attribute filter, in the order the command line lists them and the plan ANDs them.
SESSION_FILTERS: tuple[SessionFilter, ...] = (
    SessionFilter(
        "repo",
        ("git_repo", "cwd"),
        "NAME",
        "voyager",
        "Only sessions whose project (git repository, else working directory) contains this.",
    ),
    SessionFilter("cwd", ("cwd",), "PATH", "/home/me/project", "Only sessions whose working directory contains this."),
    SessionFilter("branch", ("git_branch",), "NAME", "feature/x", "Only sessions whose git branch contains this."),
)

#: Name -> filter.
BY_NAME: dict[str, SessionFilter] = {f.name: f for f in SESSION_FILTERS}
