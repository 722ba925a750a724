"""What the terminal UI asks of Voyager, answered through the application API (never CLI output).

The UI calls three things, all from worker threads so the screen never waits: the sessions
matching a query (one row per session, best hit first, with how many events matched), the
events of one session around a hit, and the seqs of a session's events that match the query
(for ``n``/``N``). :class:`Backend` answers them in-process through
:class:`voyager_sessions.api.Reader`; a refresh (the same cheap stat pass ``voyager search``
makes) runs before the first search and then periodically, so sessions appended while the UI
is open appear without restarting it.

One lock serialises the reader: Textual's thread workers may overlap when a keystroke
supersedes a running search, and the reader is one connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import msgspec

from voyager_sessions.errors import Busy, UserError, VoyagerError
from voyager_sessions.paths import DataDir

#: Rows the result list shows (one per session).
ROWS = 60

#: Events shown each side of the hit in the preview.
PREVIEW_WINDOW = 12

#: Most matches inside one session ``n``/``N`` walk through.
MAX_MATCHES = 500


class SessionHit(msgspec.Struct, kw_only=True):
    """One row of the result list: a session and its best matching event (None for recent sessions)."""

    session_id: str
    provider: str
    title: str | None
    cwd: str | None
    when: str | None
    hits: int
    seq: int | None = None
    kind: str | None = None
    snippet: str = ""
    highlights: list[tuple[int, int]] = []
    resume: str | None = None
    #: The query terms the session holds (several-term queries match sessions on the words they hold).
    terms: list[str] = []


class Answer(msgspec.Struct, kw_only=True):
    """The result list for one query, or the one-line error that replaces it."""

    query: str
    rows: list[SessionHit] = []
    total: int = 0
    error: str | None = None
    #: No session holds every term: these hold the most of them (``match: partial`` in the JSON).
    partial: bool = False
    #: The query's terms, as a session must hold them.
    terms: list[str] = []


class Backend:
    """The data dir's index and state, opened once and reused; refreshed on demand."""

    def __init__(self, ddir: DataDir | Path, *, refresh: bool = True,
                 scan: Callable[[Path], None] | None = None) -> None:
        self.ddir = ddir if isinstance(ddir, DataDir) else DataDir(ddir)
        self.refreshing = refresh
        self._scan = scan or _refresh_scan
        self._lock = threading.Lock()
        self._reader = None

    # -- life ---------------------------------------------------------------------------------

    def _open(self):  # noqa: ANN202 - api.Reader, imported lazily
        if self._reader is None:
            from voyager_sessions import api

            api.require_index(self.ddir)
            self._reader = api.Reader(self.ddir, shared=True)  # used from worker threads, one at a time
        return self._reader

    def close(self) -> None:
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def refresh(self) -> str | None:
        """Index what changed since the last look; a one-line reason when it could not (never raises)."""
        if not self.refreshing:
            return None
        try:
            self._scan(self.ddir.root)
        except Busy:
            return None  # another scan is writing: its commit shows up at the next refresh
        except VoyagerError as exc:
            return str(exc)
        with self._lock:
            if self._reader is not None:
                self._reader.reload()
        return None

    # -- questions ------------------------------------------------------------------------------

    def search(self, query: str, *, sort: str = "relevance", providers: tuple[str, ...] = ()) -> Answer:
        """Sessions matching ``query`` (recent sessions when it is empty), or the query's one-line error."""
        text = query.strip()
        try:
            with self._lock:
                reader = self._open()
                if not text and not providers:
                    return self._recent(reader)
                from voyager_sessions.search.engine import SearchOptions

                opts = SearchOptions(limit=ROWS, sessions=True, sort="recent" if sort == "recent" else "relevance",
                                     providers=list(providers))
                result = reader.search(text, opts)
        except UserError as exc:
            return Answer(query=query, error=str(exc))
        except VoyagerError as exc:
            return Answer(query=query, error=str(exc))
        rows = [SessionHit(session_id=h.session_id, provider=h.provider, title=h.title, cwd=h.cwd, when=h.timestamp,
                           hits=h.hit_count or 1, seq=h.seq, kind=h.kind, snippet=h.snippet,
                           highlights=[tuple(x) for x in h.highlights], resume=h.resume,  # type: ignore[misc]
                           terms=[t.term for t in h.matched_terms or ()])
                for h in result.hits]
        return Answer(query=query, rows=rows, total=result.total, partial=result.match == "partial",
                      terms=list(result.terms))

    def _recent(self, reader) -> Answer:  # noqa: ANN001
        listed = reader.list_sessions(limit=ROWS)
        rows = [SessionHit(session_id=s.session_id, provider=s.provider, title=s.title, cwd=s.cwd,
                           when=s.updated or s.started, hits=0, resume=s.resume) for s in listed.sessions]
        return Answer(query="", rows=rows, total=listed.total)

    def timeline(self, session_id: str, around: int | None = None, window: int = PREVIEW_WINDOW):  # noqa: ANN201
        """The session's events (a window around seq ``around``, or all): ``api``'s Timeline document."""
        with self._lock:
            return self._open().show(session_id, around=around, window=window)

    def matches(self, session_id: str, query: str) -> list[int]:
        """Seqs of the session's events that match ``query``, in order (for ``n``/``N``)."""
        text = query.strip()
        if not text:
            return []
        from voyager_sessions.search.engine import SearchOptions

        try:
            with self._lock:
                result = self._open().search(text, SearchOptions(limit=MAX_MATCHES, session=session_id))
        except VoyagerError:
            return []
        return sorted({h.seq for h in result.hits if h.session_id == session_id})

    def generation(self) -> tuple[object, ...]:
        """What changes when a scan commits (events indexed, the last scan's time): re-search when it moved."""
        with self._lock:
            reader = self._open()
            return (reader.index.num_events(), reader.state.last_scan())

    def export(self, session_id: str, fmt: str, folder: Path) -> Path:
        """Write the session as ``fmt`` (md, html) into ``folder`` as ``voyager-<id>.<fmt>``, private; the path."""
        from voyager_sessions.export import build, render, write_private

        with self._lock:
            reader = self._open()
            doc, _ = build(reader, session_id, redact=False)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:80]
        path = folder / f"voyager-{safe}.{fmt}"
        write_private(path, render(doc, fmt), force=True)
        return path

    def providers(self) -> list[tuple[str, int]]:
        """(provider, sessions) of every agent with something indexed, most sessions first."""
        with self._lock:
            stats = self._open().stats()
        counts = [(p, v["sessions"]) for p, v in stats["providers"].items() if v["sessions"]]
        return sorted(counts, key=lambda pc: (-pc[1], pc[0]))


def _refresh_scan(root: Path) -> None:
    from voyager_sessions.cmdutil import refresh_scan

    refresh_scan(root, quiet=True)
