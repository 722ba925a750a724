"""The normalized data model every stage shares: sessions and their events.

These msgspec Structs are the one schema of Voyager. Adapters in ``voyager_sessions.ingest``
produce them from provider formats, ``voyager_sessions.search`` indexes them, ``voyager_sessions.store``
keeps session metadata, and the CLI encodes them (and the result Structs below) as
the JSON contract. Nothing here knows a provider format, Tantivy or SQL.

Times are float seconds since the Unix epoch (UTC) or ``None`` when the provider did
not say; nothing is invented.
"""

from __future__ import annotations

from typing import Literal

import msgspec

from voyager_sessions.core.isotime import iso as iso  # re-exported: where the model's users find it

#: What an event is. ``meta`` is context a provider injected (system prompts,
#: environment blocks, compaction summaries): searchable, never a human turn.
#: ``checkpoint`` is task state a person saved with ``voyager checkpoint save``; ``title`` is a
#: session's title as the agent or the person named it (never a copy of the first prompt), so
#: that searching for what a session is called finds it.
Kind = Literal["user", "assistant", "reasoning", "tool_call", "tool_result", "meta", "checkpoint", "title"]
KINDS: tuple[str, ...] = ("user", "assistant", "reasoning", "tool_call", "tool_result", "meta", "checkpoint", "title")

#: Where a session's title came from, strongest first: a person named it (``user``), the
#: agent generated it (``agent``), or it is the first prompt cut short (``prompt``).
TitleSource = Literal["user", "agent", "prompt"]
TITLE_RANK: dict[str | None, int] = {"user": 3, "agent": 2, None: 2, "prompt": 1}

#: Who produced an event's text: a person typing (``human``), the model (``agent``),
#: a tool run (``tool``), the agent software itself (``provider``: injected context,
#: synthetic turns, subagent prompts) or Voyager (``voyager``: checkpoints).
Origin = Literal["human", "agent", "tool", "provider", "voyager"]

#: Version of the JSON documents the CLI prints. Bump on any incompatible change.
SCHEMA_VERSION = 1


class Session(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One conversation with one agent, as the provider stored it.

    ``id`` is Voyager's id, ``"<provider>:<native_id>"``, unique across agents.
    """

    id: str
    provider: str
    native_id: str
    title: str | None = None
    #: Who named the session (see ``TitleSource``); None when the adapter cannot tell
    #: (the title then ranks as the agent's, above the first prompt).
    title_source: TitleSource | None = None
    cwd: str | None = None
    git_branch: str | None = None
    git_repo: str | None = None
    model: str | None = None
    started: float | None = None
    updated: float | None = None
    parent: str | None = None
    resume: str | None = None
    source: str | None = None
    tokens_in: int | None = None
    tokens_out: int | None = None
    #: The version of the agent that wrote the session's files, where they say (the newest a session
    #: names): ``voyager doctor`` compares it with the versions Voyager was tested on.
    agent_version: str | None = None


class Event(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True):
    """One searchable thing that happened in a session: a message, a tool call, its result.

    ``seq`` is a stable per-session counter assigned by the adapter in stream order,
    so a rescan of unchanged input yields the identical stream. ``exit_code`` is
    ``None`` unless the provider recorded one (0 stays 0).
    """

    session: str
    seq: int
    kind: Kind
    origin: Origin
    text: str
    ts: float | None = None
    tool: str | None = None
    call_id: str | None = None
    exit_code: int | None = None
    is_error: bool = False


def session_id(provider: str, native_id: str) -> str:
    """Voyager's id for a provider's session: unique across agents, stable across scans."""
    return f"{provider}:{native_id}"


class SessionRecord(msgspec.Struct, kw_only=True):
    """A session as the state store keeps it: the Session plus how many events are indexed for it.

    ``active``: when it was last active as far as its source can prove: its last stamp (``updated``, else
    ``started``) but no later than its source file was last modified (nor a day past the read): what orders
    sessions and breaks ties, so a session stamped 9999-12-31 in a file of last week sorts as last week. The
    Session keeps its stamps as given (they are shown). None: not known yet (computed when stored).
    """

    session: Session
    events: int
    active: float | None = None


# ---------------------------------------------------------------------------
# Result documents: what the CLI prints with --json. One schema for search, show
# and list, versioned by SCHEMA_VERSION and pinned by tests/test_json_contract.py.
# ---------------------------------------------------------------------------


#: How one row matched: as its result's level, or ``meaning`` (by meaning alone).
RowMatch = Literal["all", "partial", "meaning"]


class Hit(msgspec.Struct, kw_only=True):
    """One matching event with the session facts a reader needs to act on it."""

    session_id: str
    provider: str
    seq: int
    kind: str
    origin: str
    timestamp: str | None
    cwd: str | None
    title: str | None
    snippet: str
    highlights: list[tuple[int, int]]
    score: float
    resume: str | None
    tool: str | None = None
    exit_code: int | None = None
    hit_count: int | None = None
    context: list[Event] | None = None
    #: With ``--sessions``: each query term the session holds, with its best event there.
    matched_terms: list[TermHit] | None = None
    #: The session's project: its git repository, else its working directory (what ``--repo`` matches).
    project: str | None = None
    #: How the row matched: ``all`` (every query term), ``partial`` (some: no session holds every term) or
    #: ``meaning`` (none of the words: found by what it is about, with ``--meaning``).
    match: RowMatch = "all"


class TermHit(msgspec.Struct, kw_only=True):
    """One query term as a session holds it: the term as typed and the event that says it best."""

    term: str
    seq: int
    kind: str
    snippet: str
    highlights: list[tuple[int, int]]


#: Whether a result's sessions hold every query term (``all``) or, since none does, the most of them (``partial``).
MatchLevel = Literal["all", "partial"]


class Indexing(msgspec.Struct, kw_only=True):
    """How far the index a search answered from is built, while a scan is still building it (or one stopped).

    The search answered from what was committed: the sessions counted in ``sessions_done`` whole, and the
    prompts and replies of ``sessions_words`` (a long first scan indexes what people and agents wrote first,
    tool output after). ``sessions_total`` counts the sessions known so far; it grows when a source not read
    yet turns out to hold several. ``running``: a scan is building it now (else one stopped before the end:
    the next scan, or the next search's refresh, goes on with it).
    """

    sessions_done: int
    sessions_total: int
    sessions_words: int
    running: bool


class MeaningReady(msgspec.Struct, kw_only=True):
    """How much of the history meaning could search (``--meaning``): sessions with a vector of their current
    text, of all sessions with events. Vectors are computed in the background; a search never waits for them."""

    sessions_ready: int
    sessions_total: int


class SearchResult(msgspec.Struct, kw_only=True):
    """The document ``voyager search --json`` prints."""

    schema_version: int
    query: str
    total: int
    offset: int
    hits: list[Hit]
    #: ``partial`` when no session holds every term: the hits come from the sessions that hold the most.
    match: MatchLevel = "all"
    #: The query's terms as a session must hold them (words, quoted phrases, OR alternatives, groups).
    terms: list[str] = []
    #: False when ``total`` counts only part of the matches (a broad query ranked without visiting them all,
    #: ``search.tiers``): then it is a lower bound.
    total_exact: bool = True
    #: Set while the index is still being built: the search saw only what is indexed so far (see ``Indexing``).
    indexing: Indexing | None = None
    #: With ``--meaning`` only (absent otherwise): how many sessions meaning could rank.
    meaning: MeaningReady | msgspec.UnsetType = msgspec.UNSET


class Facets(msgspec.Struct, kw_only=True):
    """How many sessions a search (or, with no query, a browse) matches, by agent, project (git repository, else
    working directory) and week (its Monday, ``YYYY-MM-DD``, UTC): what a UI's filters show beside the rows."""

    schema_version: int
    #: Matching sessions (with no query: every session the filters keep; the counts cover the newest 500).
    total: int
    #: (value, sessions), most sessions first.
    agent: list[tuple[str, int]]
    project: list[tuple[str, int]]
    #: (Monday, sessions with a matching event that week), in order.
    week: list[tuple[str, int]]
    #: ``partial`` when no session holds every term of the query (those holding the most are counted).
    match: MatchLevel = "all"


class SessionRow(msgspec.Struct, kw_only=True):
    """A session as ``voyager list`` shows it."""

    session_id: str
    provider: str
    native_id: str
    title: str | None
    cwd: str | None
    git_branch: str | None
    git_repo: str | None
    model: str | None
    started: str | None
    updated: str | None
    events: int
    parent: str | None
    resume: str | None
    source: str | None
    #: Where the title came from: ``user``, ``agent`` or ``prompt`` (see ``TitleSource``).
    title_source: str | None = None


class SessionList(msgspec.Struct, kw_only=True):
    """The document ``voyager list --json`` prints."""

    schema_version: int
    total: int
    sessions: list[SessionRow]
    #: Set while the index is still being built: the list holds only what is indexed so far (see ``Indexing``).
    indexing: Indexing | None = None


class Timeline(msgspec.Struct, kw_only=True):
    """The document ``voyager show --json`` prints: a session and (a window of) its events."""

    schema_version: int
    session: SessionRow
    events: list[Event]


def session_row(rec: SessionRecord) -> SessionRow:
    """The JSON contract's view of a stored session."""
    s = rec.session
    return SessionRow(
        session_id=s.id,
        provider=s.provider,
        native_id=s.native_id,
        title=s.title,
        cwd=s.cwd,
        git_branch=s.git_branch,
        git_repo=s.git_repo,
        model=s.model,
        started=iso(s.started),
        updated=iso(s.updated),
        events=rec.events,
        parent=s.parent,
        resume=s.resume,
        source=s.source,
        title_source=s.title_source,
    )
