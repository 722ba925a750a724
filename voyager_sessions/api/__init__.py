"""The application API: typed requests in, result documents out; the one path every front end takes.

Each operation is a request Struct and one function: :class:`SearchRequest` and
:func:`search`, :class:`ListRequest` and :func:`list_sessions`, :class:`ShowRequest` and
:func:`show`, :class:`StatsRequest` and :func:`stats` (the checkpoint operations are in
:mod:`voyager_sessions.api.checkpoints`). The click CLI reads argv into a request, calls
the function and renders the result; ``voyager serve`` decodes a request from its socket
(``msgspec.convert`` checks every field, bounds included, so a client gets no more than
argv could give), calls the same function and sends the result back as JSON data;
``voyager mcp`` and the UIs do the same, in-process or through the server. Nothing here
prints: a search's refresh reports its notices through a callback.

A search query is parsed once per request (:func:`parse_query`, counted by
:func:`query_parses`): before any work, so a malformed query costs no refresh, and the
parsed query is what the engine runs.

This is where the layers meet: the search engine is handed the state store as its session
catalog and the registry's provider names; ``show`` reads capped texts back through the adapters.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol, cast

import msgspec

from voyager_sessions.core.errors import StoreError, UserError, VoyagerError
from voyager_sessions.core.model import (
    SCHEMA_VERSION,
    Indexing,
    MeaningReady,
    SearchResult,
    SessionList,
    SessionRecord,
    Timeline,
    session_row,
)
from voyager_sessions.api.requests import ExportRequest as ExportRequest
from voyager_sessions.api.requests import ListRequest as ListRequest
from voyager_sessions.api.requests import SearchRequest as SearchRequest
from voyager_sessions.api.requests import SessionRequest as SessionRequest
from voyager_sessions.api.requests import ShowRequest as ShowRequest
from voyager_sessions.api.requests import StatsRequest as StatsRequest
from voyager_sessions.core.paths import DataDir

if TYPE_CHECKING:
    from voyager_sessions.core.reports import DoctorReport, ImportList, ImportResult
    from voyager_sessions.ingest.adapters.base import Notice as SkippedPiece
    from voyager_sessions.search.embed import Matrix, Model
    from voyager_sessions.search.engine import SearchOptions
    from voyager_sessions.search.facets import SessionFacets
    from voyager_sessions.search.syntax import ParsedQuery
    from voyager_sessions.store.vectors import Stamp, VectorStore

#: What a command that needs the index says when there is none.
NO_INDEX = "no index yet: run `voyager scan` (or `voyager demo` to try it)"


def meaning_available() -> bool:
    """Whether meaning search can run here: the model is installed (nothing is imported to find out).
    Front ends that fuse by default ask this, so that without the model they search words alone, silently."""
    from voyager_sessions.api.meaning import available

    return available()


def require_index(ddir: DataDir) -> None:
    """Raise the one-line "no index yet" error unless a scan has written an index."""
    if not ddir.has_index():
        raise UserError(NO_INDEX)


# -- requests: every request Struct is defined once, in ``requests.py`` (fields with bounds, descriptions and
# each front end's spelling); re-exported above, where callers have always found them.


class Stats(msgspec.Struct, kw_only=True):
    """The document ``voyager stats --json`` prints (fields in the order docs/json.md gives)."""

    schema_version: int
    data_dir: str
    providers: dict[str, dict[str, int]]
    index_events: int
    index_bytes: int
    index_segments: int
    last_scan: dict[str, object] | None


class Operation(NamedTuple):
    """One operation of the API: its request Struct, and where its function and result type live (imported on
    first use: a plain ``voyager search`` pays only for what it runs)."""

    request: type[msgspec.Struct]
    function: str
    result: str

    def run(self) -> Callable[..., msgspec.Struct]:
        function: Callable[..., msgspec.Struct] = _named(self.function)
        return function

    def result_type(self) -> type[msgspec.Struct]:
        result: type[msgspec.Struct] = _named(self.result)
        return result


def _named(where: str) -> Any:
    import importlib

    module, _, name = where.partition(":")
    return getattr(importlib.import_module(module), name)


#: Every operation a front end may ask (through ``voyager serve`` too): name -> :class:`Operation`.
OPERATIONS: dict[str, Operation] = {
    "search": Operation(SearchRequest, f"{__name__}:search", "voyager_sessions.core.model:SearchResult"),
    "list": Operation(ListRequest, f"{__name__}:list_sessions", "voyager_sessions.core.model:SessionList"),
    "show": Operation(ShowRequest, f"{__name__}:show", "voyager_sessions.core.model:Timeline"),
    "stats": Operation(StatsRequest, f"{__name__}:stats", f"{__name__}:Stats"),
    "browse": Operation(SearchRequest, f"{__name__}.browse:browse", "voyager_sessions.core.model:SearchResult"),
    "facets": Operation(SearchRequest, f"{__name__}.browse:facets", "voyager_sessions.core.model:Facets"),
    "session": Operation(SessionRequest, f"{__name__}.sessions:session", f"{__name__}.sessions:Resolved"),
    "export": Operation(ExportRequest, f"{__name__}.sessions:export", f"{__name__}.sessions:Exported"),
    "resume": Operation(SessionRequest, f"{__name__}.sessions:resume", f"{__name__}.sessions:ResumePlan"),
}


def decode_request(op: str, fields: object) -> msgspec.Struct:
    """``fields`` (decoded JSON) as operation ``op``'s request; ValueError saying what is wrong."""
    if op not in OPERATIONS:
        raise ValueError(f"unknown operation {op!r}: one of {', '.join(OPERATIONS)}")
    if not isinstance(fields, dict):
        raise ValueError("request must be an object")
    try:
        return msgspec.convert(fields, OPERATIONS[op].request)
    except msgspec.ValidationError as exc:
        raise ValueError(explain(op, str(exc))) from None


def explain(op: str, message: str) -> str:
    """msgspec's complaint about a request as one line naming the field and what it takes (as a CLI option's)."""
    import re

    found = re.search(r"unknown field `([^`]*)`", message)
    if found:
        return f"unknown field for {op}: {found.group(1)}"
    found = re.search(r"missing required field `([^`]*)`", message)
    if found:
        return f"missing field for {op}: {found.group(1)}"
    found = re.search(r"at `\$\.(\w+)", message)
    if not found:
        return message
    name = found.group(1)
    struct = msgspec.inspect.type_info(OPERATIONS[op].request)
    fields = struct.fields if isinstance(struct, msgspec.inspect.StructType) else ()
    info = {f.name: f.type for f in fields}.get(name)
    if isinstance(info, msgspec.inspect.UnionType):  # X | None: what X takes
        info = next((t for t in info.types if not isinstance(t, msgspec.inspect.NoneType)), info)
    if isinstance(info, msgspec.inspect.Metadata):  # a described field: what it wraps
        info = info.type
    if isinstance(info, msgspec.inspect.IntType):
        return f"{name} must be an integer from {info.ge} to {info.le}"
    if isinstance(info, msgspec.inspect.LiteralType):
        return f"{name} must be one of {', '.join(map(str, info.values))}"
    if isinstance(info, msgspec.inspect.BoolType):
        return f"{name} must be true or false"
    if isinstance(info, msgspec.inspect.ListType):
        return (
            f"{name} must be a list of strings (at most {info.max_length})"
            if info.max_length
            else f"{name} must be a list of strings"
        )
    if isinstance(info, msgspec.inspect.StrType):
        return f"{name} must be a string"
    return message


# -- the query, parsed once ------------------------------------------------------------------


class _Counter:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.value = 0

    def add(self) -> None:
        with self._lock:
            self.value += 1


_parses = _Counter()


def query_parses() -> int:
    """How many queries this process has parsed (a test, and ``voyager serve status``, read it: one a search)."""
    return _parses.value


def parse_query(query: str) -> ParsedQuery:
    """``query`` parsed (``search.syntax.ParsedQuery``); the one-line "bad query" UserError when it is malformed."""
    from voyager_sessions.search.syntax import QueryError, parse

    _parses.add()
    try:
        return parse(query)
    except QueryError as exc:
        raise UserError(f"bad query: {exc}") from None


def query_terms(query: str) -> list[str]:
    """The words and phrases ``query`` searches for (what a reader looks for in a session: the UIs mark them),
    filters and negated words left out; empty when the query is malformed."""
    from voyager_sessions.search.syntax import QueryError, parse

    try:
        parsed = parse(query)
    except QueryError:
        return []
    return list(dict.fromkeys(t.text.strip() for t in parsed.texts if t.text.strip()))


def check_query(query: str) -> None:
    """Raise the one-line "bad query" UserError when ``query`` is malformed (before any work is done for it)."""
    parse_query(query)


def _excluding(parsed: ParsedQuery, session_ids: list[str]) -> ParsedQuery:
    """``parsed`` with every event of ``session_ids`` left out (a ``-session:ID`` each)."""
    from voyager_sessions.search import syntax as qlang

    if not session_ids:
        return parsed
    # An AND that code adds (not grouped): the engine keeps it out of the query's own terms.
    nots = tuple(qlang.Not(qlang.filter_node("session", sid)) for sid in session_ids)
    nodes = ((parsed.root,) if parsed.root is not None else ()) + nots
    return qlang.ParsedQuery(root=nodes[0] if len(nodes) == 1 else qlang.And(nodes), texts=parsed.texts)


def warm_up() -> None:
    """Import what a first search needs, ahead of it (a front end that waits for its first request, such as
    ``voyager mcp`` after its handshake, runs this in the background so that request pays less)."""
    import voyager_sessions.scan.run  # noqa: F401
    import voyager_sessions.search.engine  # noqa: F401


def preload_search() -> None:
    """Import what answering a search runs (the engine and the index), ahead of it: the lean entry point imports
    them during start-up, so that they are frozen with the rest of what start-up imported."""
    import voyager_sessions.search.engine  # noqa: F401
    import voyager_sessions.search.index  # noqa: F401


def agent_variables() -> list[str]:
    """Every environment variable the agent manifest reads to find agents' stores (a server compares them)."""
    from voyager_sessions.ingest.manifest import agent_variables as names

    return names()


def provider_names() -> tuple[str, ...]:
    """Every registered provider, in registry order (what ``provider:`` accepts)."""
    from voyager_sessions.ingest.adapters import PROVIDERS

    return PROVIDERS


class _ModelWhenNeeded:
    """The meaning model, loaded when a query is first embedded (``search.fusion`` embeds one only when some
    session has a vector): a search where none has one yet never imports numpy and the engine, 60-130 ms of CPU
    that the picker's first typed query waited for."""

    def query(self, text: str) -> Any:
        from voyager_sessions.search.embed import model

        return model().query(text)


class Reader:
    """The index and the state store opened for reading: one per request, or several a server keeps.

    ``shared``: a server's reader, lent to one request thread at a time (see
    ``voyager_sessions.api.readers.ReaderPool``).
    """

    def __init__(self, ddir: DataDir, *, shared: bool = False) -> None:
        from voyager_sessions.search.engine import Searcher
        from voyager_sessions.search.index import SearchIndex
        from voyager_sessions.store.state import StateStore

        self.ddir = ddir
        self.index = SearchIndex(ddir.index, create=False)
        try:
            # Reading never writes: a read-only connection keeps search working on a full disk.
            self.state = StateStore(ddir.state_db, readonly=True, lendable=shared)
        except StoreError:  # a schema upgrade is due: the one write a read may need
            self.state = StateStore(ddir.state_db, lendable=shared)
        self.searcher = Searcher(self.index, self.state, provider_names())
        self._shared = shared
        if shared:  # a server's: its aggregations by session are keyed by the integer key (search.sessions.KeyMap)
            from voyager_sessions.search.sessions import keep_keys

            keep_keys()
        self._vector_store: VectorStore | None = None  # opened on the first meaning search
        self._matrix: tuple[tuple[int, int], Matrix] | None = None  # (the databases' data versions, their vectors)
        self._stored: tuple[int, Matrix, list[Stamp]] | None = None  # (meaning.db's version, every vector, stamps)

    def close(self) -> None:
        self.state.close()
        if self._vector_store is not None:
            self._vector_store.close()

    def reload(self) -> None:
        """See what was committed since this reader opened (a server calls it after a scan)."""
        self.index.reload()

    def indexing(self) -> Indexing | None:
        """How far the index is built while a scan is building it (or one stopped before the end); None when whole."""
        from voyager_sessions.scan import progress

        record = progress.decode(self.state.get_meta(progress.META_KEY))
        if record is None:
            return None
        return Indexing(
            sessions_done=record.sessions_done,
            sessions_total=max(record.sessions_total, record.sessions_done),
            sessions_words=max(record.sessions_words, record.sessions_done),
            running=progress.building(record, self.ddir.lock),
        )

    # -- the documents ------------------------------------------------------------

    def search(self, query: str, opts: SearchOptions | None = None, parsed: ParsedQuery | None = None) -> SearchResult:
        """The hits of ``query`` (``opts``: ``search.engine.SearchOptions``; ``parsed``: it parsed already, or None)."""
        from voyager_sessions.search.syntax import QueryError

        if parsed is None:
            parsed = parse_query(query)
        try:
            result = self.searcher.search(query, opts, parsed=parsed)
        except QueryError as exc:  # a filter's value is checked only here (provider:, since: …)
            raise UserError(f"bad query: {exc}") from None
        for h in result.hits:
            h.match = result.match
        return result

    def search_meaning(self, query: str, opts: SearchOptions, parsed: ParsedQuery) -> SearchResult:
        """``query`` ranked by words and meaning (``search.fusion``); ``ModelMissing`` without the model (said when
        a query is embedded: where no session has a vector yet, the words rank alone and the model is not loaded)."""
        from voyager_sessions.search.fusion import search_with_meaning
        from voyager_sessions.search.syntax import QueryError

        try:
            result, used = search_with_meaning(
                self.searcher, query, parsed, opts, cast("Model", _ModelWhenNeeded()), self.meaning_matrix
            )
        except QueryError as exc:
            raise UserError(f"bad query: {exc}") from None
        if used:  # a filter-only query, or one sorted by time, is the words' alone: nothing to say of meaning
            ready, total = self.meaning_counts()
            result.meaning = MeaningReady(sessions_ready=ready, sessions_total=total)
        return result

    def meaning_matrix(self) -> Matrix:
        """The usable vectors. The stored vectors are read again (and made a matrix) only when meaning.db
        changed; when only state.db did (a scan's commit that dropped no vector: new sessions, sessions not
        embedded yet), only which of them are still their sessions' is: at 10,000 sessions ~16 ms of CPU instead
        of ~28 (docs/bench.md)."""
        from voyager_sessions.search.embed import MODEL_ID, Matrix

        store = self._vectors()
        if store is None:
            return Matrix([], [])
        key = store.data_version()
        if self._stored is None or self._stored[0] != key[0]:
            ids, stamps, vecs = store.every(MODEL_ID)
            self._stored = (key[0], Matrix(ids, vecs), stamps)
            self._matrix = None
        if self._matrix is None or self._matrix[0] != key:
            _, every, stamps = self._stored
            self._matrix = (key, every.usable(store.usable(every.ids, stamps)))
        return self._matrix[1]

    def meaning_counts(self) -> tuple[int, int]:
        """(sessions meaning can rank, sessions with events)."""
        # The vectors a search can use are the matrix's (read again only when a database changed).
        return len(self.meaning_matrix()), self.state.count_sessions_with_events()

    def _vectors(self) -> VectorStore | None:
        from voyager_sessions.store.vectors import VectorStore

        if self._vector_store is None:
            self._vector_store = VectorStore.open_if_exists(
                self.ddir.meaning_db, self.ddir.state_db, readonly=True, lendable=self._shared
            )
        return self._vector_store

    def facets(self, query: str, opts: SearchOptions | None = None, parsed: ParsedQuery | None = None) -> SessionFacets:
        """Which sessions ``query`` matches and the weeks of their matching events (``search.facets.SessionFacets``):
        what a UI counts, without ranking or reading a hit."""
        from voyager_sessions.search.engine import SearchOptions
        from voyager_sessions.search.facets import session_facets
        from voyager_sessions.search.syntax import QueryError

        if parsed is None:
            parsed = parse_query(query)
        try:
            return session_facets(self.searcher, query, opts or SearchOptions(), parsed)
        except QueryError as exc:
            raise UserError(f"bad query: {exc}") from None

    def projects(self, ids: Iterable[str]) -> dict[str, str | None]:
        """Each session's project (git repository, else working directory), in one lookup."""
        return self.state.session_projects(ids)

    def list_sessions(self, *, provider: str | None = None, limit: int | None = 50, offset: int = 0) -> SessionList:
        total, recs = self.state.list_sessions(provider=provider, limit=limit, offset=offset)
        return SessionList(
            schema_version=SCHEMA_VERSION,
            total=total,
            sessions=[session_row(r) for r in recs],
            indexing=self.indexing(),
        )

    def resolve(self, ref: str) -> SessionRecord:
        """The one session ``ref`` names (id, native id or unambiguous prefix), or a one-line UserError."""
        ids = resolve_ids(self.state, ref)
        return self.state.sessions_by_id(ids)[ids[0]]

    def show(self, ref: str, *, around: int | None = None, window: int = 10) -> Timeline:
        """A session's timeline (or the window of ``window`` events each side of seq ``around``)."""
        from voyager_sessions.search.prepare import TRUNCATION_MARKER

        rec = self.resolve(ref)
        sid = rec.session.id
        lo = hi = None
        if around is not None:
            lo, hi = max(0, around - window), around + window
        events = self.index.session_events(sid, lo=lo, hi=hi)
        suffix = TRUNCATION_MARKER.rpartition("; ")[2]  # how a capped event's stored text ends
        capped = {e.seq for e in events if e.text.endswith(suffix) and e.seq >= 0}
        if capped and rec.session.source:
            from voyager_sessions.ingest.reread import full_texts

            texts = full_texts(rec.session.provider, rec.session.source, sid, capped)
            events = [msgspec.structs.replace(e, text=texts[e.seq]) if e.seq in texts else e for e in events]
        return Timeline(schema_version=SCHEMA_VERSION, session=session_row(rec), events=events)

    def stats(self) -> Stats:
        counts = self.state.counts()
        last = self.state.last_scan()
        return Stats(
            schema_version=SCHEMA_VERSION,
            data_dir=str(self.ddir.root),
            providers={p: {"sessions": s, "events": e or 0} for p, s, e in counts},
            index_events=self.index.num_events(),
            index_bytes=self.index.size_bytes(),
            index_segments=self.index.num_segments(),
            last_scan=None if last is None else {"finished": last[1], "summary": msgspec.json.decode(last[2])},
        )


@contextmanager
def reader(ddir: DataDir | Path) -> Iterator[Reader]:
    """A :class:`Reader` for one request; "no index yet" when there is none."""
    ddir = ddir if isinstance(ddir, DataDir) else DataDir(ddir)
    require_index(ddir)
    r = Reader(ddir)
    try:
        yield r
    finally:
        r.close()


class SessionResolver(Protocol):
    """What names sessions by reference: the state store, or the checkpoint tools' own catalog."""

    def resolve_session(self, ref: str, limit: int = ...) -> list[str]: ...


def resolve_ids(catalog: SessionResolver, ref: str) -> list[str]:
    """The one id ``ref`` names, as a one-element list; a one-line UserError when it names none or several."""
    ids = catalog.resolve_session(ref)
    if not ids:
        raise UserError(f"no session matches '{ref}' (see `voyager list`)")
    if len(ids) > 1:
        raise UserError(
            f"'{ref}' is ambiguous: {', '.join(ids[:10])}{' …' if len(ids) > 10 else ''}; give more of the id"
        )
    return ids


# -- where a request reads from --------------------------------------------------------------

#: How a search's refresh reports what it met: ``notice(text, quiet_ok)``; ``text`` without the
#: ``voyager: `` prefix; ``quiet_ok``: a skipped piece, which a quiet front end leaves out.
Notice = Callable[[str, bool], None]


def _ignore(text: str, quiet_ok: bool) -> None:
    pass


class Backend(Protocol):
    """Where a request reads from and how a search refreshes the index first."""

    def reader(self, ddir: Path) -> AbstractContextManager[Reader]:
        """A :class:`Reader` for the ``with`` block; "no index yet" when there is none."""

    def refresh(self, ddir: Path, notice: Notice) -> None:
        """Scan for new agent history, reporting skipped pieces to ``notice``; raise as ``scan`` raises."""


class LocalBackend:
    """This process: a reader opened for each request, the refresh scan run here.

    ``progress``: the scan's progress callback (the CLI draws a bar on its own terminal).
    """

    def __init__(self, progress: Callable[[Any], None] | None = None) -> None:
        self.progress = progress

    def reader(self, ddir: Path) -> AbstractContextManager[Reader]:
        return reader(ddir)

    def refresh(self, ddir: Path, notice: Notice) -> None:
        """The refresh before a search: a scan with a budget; what it leaves, a scan in the background reads."""
        from voyager_sessions.scan import scan
        from voyager_sessions.scan.background import continue_scan, refresh_budget

        summary = scan(
            ddir,
            None,
            progress=self.progress,
            on_notice=lambda n: notice(notice_text(n), not n.repair),
            budget=refresh_budget(),
        )
        if summary.remaining:
            continue_scan(ddir)


class LentBackend:
    """One reader, lent to every request in turn; no refresh (``voyager demo``, the picker, a benchmark, a test).

    ``lent``: the reader, or a function that opens it on first use (a picker whose server answers never
    opens one). Requests from several threads take turns: a reader is one SQLite connection.
    """

    def __init__(self, lent: Reader | Callable[[], Reader]) -> None:
        self._lent = lent if isinstance(lent, Reader) else None
        self._open = None if isinstance(lent, Reader) else lent
        self._lock = threading.RLock()

    @contextmanager
    def _lend(self) -> Iterator[Reader]:
        with self._lock:
            if self._lent is None:
                assert self._open is not None
                self._lent = self._open()
            yield self._lent

    def reader(self, ddir: Path) -> AbstractContextManager[Reader]:
        return self._lend()

    def refresh(self, ddir: Path, notice: Notice) -> None:
        pass  # what is open is what is answered: the caller refreshed, or means not to

    def opened(self) -> Reader | None:
        """The reader, if it was opened (to reload or close it)."""
        return self._lent


def notice_text(notice: SkippedPiece) -> str:
    """How a skipped piece met during a scan is reported (after ``voyager: ``)."""
    from voyager_sessions.core.textsafe import printable

    return f"{'' if notice.repair else 'skipped '}{printable(notice.describe())}"


def _where(data_dir: DataDir | Path | None) -> DataDir:
    if isinstance(data_dir, DataDir):
        return data_dir
    if data_dir is None:
        from voyager_sessions.core.paths import data_dir as default_data_dir

        return DataDir(default_data_dir())
    return DataDir(data_dir)


# -- the operations ----------------------------------------------------------------------------


def _search_options(req: SearchRequest) -> SearchOptions:
    """``req``'s filters and paging as the engine takes them (``search.engine.SearchOptions``): every field the
    two share, by name, and the session-attribute filters (``core.filters``) given, so a filter added to both
    (or to that table) needs nothing here."""
    from voyager_sessions.search.engine import SearchOptions

    shared = {name: getattr(req, name) for name in SearchOptions.__struct_fields__ if name != "where"}
    return SearchOptions(**shared, where=_session_filters(req))


def _session_filters(req: SearchRequest) -> dict[str, str]:
    """The session-attribute filters ``req`` gives (``core.filters``), by name."""
    from voyager_sessions.core.filters import SESSION_FILTERS

    return {f.name: value for f in SESSION_FILTERS if (value := getattr(req, f.name))}


def search(
    req: SearchRequest,
    *,
    data_dir: DataDir | Path | None = None,
    backend: Backend | None = None,
    notice: Notice = _ignore,
) -> SearchResult:
    """Answer ``req``: refresh first (unless ``req.refresh`` is false and there is an index), then search.

    A malformed query fails before any work, with the one-line "bad query" UserError; a
    refresh that finds another scan running searches what that scan has committed; one
    that cannot write (a full disk) is reported to ``notice`` and the search answers from
    what is indexed.
    """
    text = req.query.strip()
    if not text and not any([req.providers, req.kinds, _session_filters(req), req.session, req.since, req.until]):
        raise UserError('nothing to search for: give a query, e.g. voyager search "connection refused"')
    parsed = _excluding(parse_query(text), req.exclude_sessions)  # the one parse of this request
    ddir = _where(data_dir)
    backend = backend or LocalBackend()
    if req.refresh or not ddir.has_index():
        from voyager_sessions.core.lock import ScanBusy
        from voyager_sessions.search.index import IndexBusy

        try:
            backend.refresh(ddir.root, notice)
        except (ScanBusy, IndexBusy):
            pass  # a scan is running: search what it has committed so far (none yet: the reader says so)
        except VoyagerError as exc:
            if not ddir.has_index():
                raise
            from voyager_sessions.core.textsafe import printable

            notice(f"not refreshed ({printable(str(exc))}); searching what is indexed", False)
    opts = _search_options(req)
    meaning = req.meaning
    if meaning:
        from voyager_sessions.search.embed import INSTALL_HINT, available

        if not available():  # said once; the words' answer is given as if meaning had not been asked
            notice(INSTALL_HINT, False)
            meaning = False
    with backend.reader(ddir.root) as r:  # "no index yet" when there is none
        result = r.search_meaning(text, opts, parsed) if meaning else r.search(text, opts, parsed)
        indexing = r.indexing()
    if indexing is not None:
        result = msgspec.structs.replace(result, indexing=indexing)
    if req.remember:
        from voyager_sessions.core.lastsearch import remember

        remember(ddir, text, result.hits)  # what `voyager resume -` reopens; never fails the search
    return result


def list_sessions(
    req: ListRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None
) -> SessionList:
    """Sessions, newest first (a page of them)."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        return r.list_sessions(provider=req.provider, limit=req.limit, offset=req.offset)


def show(req: ShowRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None) -> Timeline:
    """A session's timeline, or the window of ``req.window`` events each side of seq ``req.around``."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        return r.show(req.session, around=req.around, window=req.window)


def stats(req: StatsRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None) -> Stats:
    """Sessions and events per agent, the index's size, the last scan that changed something."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        return r.stats()


def indexing(*, data_dir: DataDir | Path | None = None, backend: Backend | None = None) -> Indexing | None:
    """How far the index is built while a scan is building it (or one stopped before the end); None when whole."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        return r.indexing()


class Refused(VoyagerError):
    """A request a running server answered with a failure: its one line (without ``voyager: ``) and exit code."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def ask(
    op: str,
    req: msgspec.Struct,
    *,
    data_dir: DataDir | Path | None = None,
    use_server: bool = True,
    backend: Backend | None = None,
) -> msgspec.Struct:
    """Operation ``op``'s typed result for ``req`` (``OPERATIONS[op]``'s result type: :class:`door.Door` names it): from ``voyager serve`` when one answers for the data dir
    (decoded into the operation's result type), else answered in this process through ``backend``.

    The one transport for a front end that wants objects (the picker; the web page reads its own pool): which
    process answers is decided here, below every front end. A failure raises as the API raises (through a
    server: :class:`Refused`, whose text and exit code are the same).
    """
    return ask_where(op, req, data_dir=data_dir, use_server=use_server, backend=backend)[0]


def ask_where(
    op: str,
    req: msgspec.Struct,
    *,
    data_dir: DataDir | Path | None = None,
    use_server: bool = True,
    backend: Backend | None = None,
) -> tuple[msgspec.Struct, bool]:
    """:func:`ask`'s result, and whether a server answered it (a UI's status line says so)."""
    operation = OPERATIONS[op]
    ddir = _where(data_dir)
    if use_server:
        from voyager_sessions.core import remote

        got = remote.ask(op, msgspec.to_builtins(req), str(ddir.root))
        if got is not None:
            header, body = got
            if "failure" in header:
                raise Refused(header["failure"].removeprefix("voyager: "), header["exit"])
            return msgspec.json.decode(body, type=operation.result_type()), True
    return operation.run()(req, data_dir=ddir, backend=backend), False


def call(op: str, fields: Mapping[str, object], *, data_dir: Path | None = None, use_server: bool = True) -> bytes:
    """Operation ``op``'s result document as JSON bytes, for request ``fields``: from ``voyager serve`` when one
    answers for the data dir (the index already open and fresh), else answered in this process.

    For a front end that wants data, not objects (``voyager mcp``, a UI): either way the
    bytes are what ``--json`` prints. A request that is malformed is a ValueError before
    anything is asked; a failure raises as the API raises (through a server:
    :class:`Refused`, whose text and exit code are the same), so ``errors.failure`` words
    it alike.
    """
    req = decode_request(op, fields)  # checked here: a malformed request never reaches a server
    ddir = _where(data_dir)
    if use_server:
        from voyager_sessions.core import remote as client

        got = client.ask(op, fields, str(ddir.root))
        if got is not None:
            header, body = got
            if "failure" in header:
                raise Refused(header["failure"].removeprefix("voyager: "), header["exit"])
            return body
    return msgspec.json.encode(OPERATIONS[op].run()(req, data_dir=ddir))


def doctor(ddir: DataDir, env: Mapping[str, str]) -> DoctorReport:
    """``voyager doctor``'s document: every agent (where Voyager looked, what it found and could not use) and health."""
    from voyager_sessions.core.reports import DoctorReport, Health
    from voyager_sessions.core.errors import IndexDamaged
    from voyager_sessions.ingest.diagnose import diagnose
    from voyager_sessions.store.db import integrity

    from voyager_sessions.ingest.adapters.base import Hints

    indexed: dict[str, tuple[int, int]] = {}
    idx = None
    failed: dict[str, list[str]] = {}
    noted: dict[str, list[str]] = {}
    versions: dict[str, dict[str, int]] = {}
    hints = Hints()
    index_health, state_health = "missing", "missing"
    index_numbers: dict[str, int] = {}  # events, segments, bytes: when an index could be opened
    if ddir.has_index():
        from voyager_sessions.search.index import SearchIndex
        from voyager_sessions.store.state import StateStore

        store = StateStore(ddir.state_db)
        try:
            indexed = {p: (s, e or 0) for p, s, e in store.counts()}
            failed = store.failed_sources()
            noted = store.noted_sources()
            versions = store.versions_seen()
            hints = Hints(cwds=frozenset(store.known_cwds()), imports=frozenset(store.imports()))
        finally:
            store.close()
        state_health = integrity(ddir.state_db)
        try:
            idx = SearchIndex(ddir.index, create=False)
        except IndexDamaged as exc:
            index_health = str(exc)
            idx = None
    if idx is not None:
        state_events = sum(e for _, e in indexed.values())
        num_events = idx.num_events()
        # Checkpoint and title events are Voyager's own, not counted in the scan state.
        index_events = num_events - idx.count_kind("checkpoint") - idx.count_kind("title")
        index_health = (
            "ok"
            if index_events == state_events
            else f"out of step: {index_events} events indexed, the scan state says {state_events} "
            "(the next scan repairs it; `voyager scan`)"
        )
        index_numbers = {"events": num_events, "segments": idx.num_segments(), "bytes": idx.size_bytes()}
    from voyager_sessions.ingest import zstd

    from voyager_sessions.scan.meaning import status as meaning_status
    from voyager_sessions.search.embed import INSTALL_HINT

    meaning = meaning_status(ddir)
    health = Health(
        data_dir=str(ddir.root),
        index=index_health,
        state_db=state_health,
        index_events=index_numbers.get("events"),
        index_segments=index_numbers.get("segments"),
        index_bytes=index_numbers.get("bytes"),
        checkpoints_db=integrity(ddir.checkpoints_db) if ddir.checkpoints_db.exists() else None,
        # Which agents' stores can be decompressed at all (the adapters name each store it blocks).
        zstd=zstd.backend()
        or f"not installed (an incomplete install): `pip install {zstd.INSTALL_HINT}` to read DeepSeek Harness and Zed sessions",
        meaning=f"{meaning.sessions_ready} of {meaning.sessions_total} sessions searchable by meaning"
        + ("" if meaning.sessions_ready == meaning.sessions_total else " (`voyager scan --meaning` completes it)")
        if meaning.model
        else f"not installed: {INSTALL_HINT}",
    )
    return DoctorReport(
        schema_version=SCHEMA_VERSION,
        providers=diagnose(env, indexed, failed, noted, hints, versions),
        health=health,
        meaning=meaning,
    )


def imports(ddir: DataDir, env: Mapping[str, str]) -> ImportList:
    """``voyager import --list``: every recorded export and every file in the imports folder, with its kind
    (``chatgpt``, ``claude-ai``, or None when it is neither) and whether it is there."""
    import os

    from voyager_sessions.core.reports import ImportList, ImportRow
    from voyager_sessions.ingest.adapters import _exports
    from voyager_sessions.ingest.adapters.base import Hints
    from voyager_sessions.store.state import StateStore

    recorded: list[str] = []
    if ddir.state_db.exists():
        store = StateStore(ddir.state_db, readonly=True)
        try:
            recorded = store.imports()
        finally:
            store.close()
    out: list[ImportRow] = []
    folder = {str(p) for p in _exports.candidates(env, Hints())}
    for path in [*recorded, *sorted(folder - set(recorded))]:
        try:
            kind = _export_kind(path) if os.path.exists(path) else None
            present = os.path.exists(path)
        except OSError:
            kind, present = None, False
        out.append(ImportRow(path=path, kind=kind, present=present, recorded=path in recorded))
    return ImportList(imports=out)


def _export_kind(path: str) -> str | None:
    """The kind of the export at ``path``: a file's, or (a folder) its first conversations file's."""
    import os

    from voyager_sessions.ingest.adapters import _exports

    if os.path.isdir(path):
        files = _exports.conversation_files(Path(path))
        return _exports.kind_of(files[0]) if files else None
    return _exports.kind_of(path)


def import_export(ddir: DataDir, path: str, *, forget: bool = False) -> ImportResult:
    """``voyager import PATH``: record a ChatGPT, Claude.ai or Gemini Apps export (``conversations.json``, its folder, or the
    zip) so every later scan reads it; ``forget`` drops it again. A path that is no export is a UserError."""
    import os

    from voyager_sessions.core.paths import ensure_private_dir
    from voyager_sessions.core.reports import ImportResult
    from voyager_sessions.store.state import StateStore

    absolute = os.path.abspath(os.path.expanduser(path))
    if not forget:
        if not os.path.exists(absolute):
            raise UserError(f"{path}: no such file or folder")
        try:
            kind = _export_kind(absolute)
        except OSError as exc:
            raise UserError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        if kind is None:
            raise UserError(
                f"{path}: not a ChatGPT, Claude.ai or Gemini Apps export (expected conversations.json, a "
                "Takeout's My Activity page, their folder, or the export's .zip)"
            )
    ensure_private_dir(ddir.root)
    store = StateStore(ddir.state_db)
    try:
        recorded = store.imports()
        if forget:
            if absolute not in recorded:
                raise UserError(f"{path}: not a recorded import (see `voyager import --list`)")
            store.set_imports([p for p in recorded if p != absolute])
            return ImportResult(path=absolute, kind=None, recorded=False, already=False)
        already = absolute in recorded
        if not already:
            store.set_imports([*recorded, absolute])
    finally:
        store.close()
    return ImportResult(path=absolute, kind=kind, recorded=True, already=already)
