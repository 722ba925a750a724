"""What the terminal UI asks of Voyager, answered through the application API (never CLI output).

The UI asks four things, all from worker threads so the screen never waits: the sessions
matching a query (one row per session, best hit first, with how many events matched), the
events of one session around a hit, the seqs of a session's events that match the query (for
``n``/``N``), and the agents with something indexed. Each is an API request
(:mod:`voyager_sessions.api`): through ``voyager serve`` when one runs for the data dir (the
index is already open and fresh there; ``api.call`` returns the result document), otherwise
in this process on one reader kept open for the app's life (``api.LentBackend``). A refresh —
the cheap stat pass ``voyager search`` makes — runs before the first search and then
periodically, so sessions appended while the UI is open appear without restarting it.

One lock serialises the in-process reader: Textual's thread workers may overlap when a
keystroke supersedes a running search, and the reader is one connection.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from voyager_sessions.core.errors import Busy, VoyagerError
from voyager_sessions.core.model import Indexing
from voyager_sessions.core.paths import DataDir

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
    #: The query's terms, as a session must hold them (what the preview marks).
    terms: list[str] = []
    #: Set while the index is still being built: how far (what the status line says, and no match is no answer).
    indexing: Indexing | None = None


class Backend:
    """The API for one data dir: through a running server, or in-process on a reader kept open."""

    def __init__(
        self,
        ddir: DataDir | Path,
        *,
        refresh: bool = True,
        use_server: bool = True,
        scan: Callable[[Path], None] | None = None,
    ) -> None:
        self.ddir = ddir if isinstance(ddir, DataDir) else DataDir(ddir)
        self.refreshing = refresh
        self.use_server = use_server
        self._scan = scan or _refresh_scan
        self._lock = threading.Lock()
        self._reader: Any = None
        #: A server answered the last request (the status line says so).
        self.served = False

    # -- life ---------------------------------------------------------------------------------

    def _lent(self) -> Any:
        """The in-process backend: one reader, opened on first use and lent to every request."""
        from voyager_sessions import api

        if self._reader is None:
            api.require_index(self.ddir)
            self._reader = api.Reader(self.ddir, shared=True)  # used from worker threads, one at a time
        return api.LentBackend(self._reader)

    def close(self) -> None:
        with self._lock:
            if self._reader is not None:
                self._reader.close()
                self._reader = None

    def refresh(self) -> str | None:
        """Index what changed since the last look; a one-line reason when it could not (never raises).

        With a server running, the server keeps the index fresh itself: nothing to do here.
        """
        if not self.refreshing or self._server_runs():
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

    def _server_runs(self) -> bool:
        if not self.use_server:
            return False
        from voyager_sessions.serve import control

        return control.status(self.ddir, timeout=0.2) is not None

    def _ask(self, op: str, fields: dict[str, Any], result: type) -> Any:
        """Operation ``op`` for ``fields``: the server's answer when one runs, else this process's."""
        from voyager_sessions import api

        if self.use_server:
            from voyager_sessions.core import remote as client

            got = client.ask(op, fields, str(self.ddir.root))
            if got is not None:
                header, body = got
                if "failure" in header:
                    raise api.Refused(header["failure"].removeprefix("voyager: "), header["exit"])
                self.served = True
                return msgspec.json.decode(body, type=result)
        self.served = False
        req = api.decode_request(op, fields)
        with self._lock:
            return api.FUNCTIONS[op](req, data_dir=self.ddir, backend=self._lent())

    # -- questions ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        sort: str = "relevance",
        providers: tuple[str, ...] = (),
        cwd: str | None = None,
        since: str | None = None,
    ) -> Answer:
        """Sessions matching ``query`` (recent sessions when it is empty and nothing narrows them), or the query's
        one-line error. ``providers``, ``cwd`` and ``since`` narrow it as ``--provider``, ``--cwd``, ``--since`` do."""
        from voyager_sessions.core.model import SearchResult

        text = query.strip()
        try:
            if not text and not providers and not cwd and not since:
                return self._recent()
            result = self._ask(
                "search",
                {
                    "query": text,
                    "limit": ROWS,
                    "sessions": True,
                    "refresh": False,
                    "sort": "recent" if sort == "recent" else "relevance",
                    "providers": list(providers),
                    "cwd": cwd,
                    "since": since,
                },
                SearchResult,
            )
        except VoyagerError as exc:
            return Answer(query=query, error=str(exc))
        rows = [
            SessionHit(
                session_id=h.session_id,
                provider=h.provider,
                title=h.title,
                cwd=h.cwd,
                when=h.timestamp,
                hits=h.hit_count or 1,
                seq=h.seq,
                kind=h.kind,
                snippet=h.snippet,
                highlights=[(a, b) for a, b in h.highlights],
                resume=h.resume,
                terms=[t.term for t in h.matched_terms or ()],
            )
            for h in result.hits
        ]
        return Answer(
            query=query,
            rows=rows,
            total=result.total,
            partial=result.match == "partial",
            terms=list(result.terms),
            indexing=result.indexing,
        )

    def _recent(self) -> Answer:
        from voyager_sessions.core.model import SessionList

        listed = self._ask("list", {"limit": ROWS}, SessionList)
        rows = [
            SessionHit(
                session_id=s.session_id,
                provider=s.provider,
                title=s.title,
                cwd=s.cwd,
                when=s.updated or s.started,
                hits=0,
                resume=s.resume,
            )
            for s in listed.sessions
        ]
        return Answer(query="", rows=rows, total=listed.total, indexing=listed.indexing)

    def timeline(self, session_id: str, around: int | None = None, window: int = PREVIEW_WINDOW) -> Any:
        """The session's events (a window around seq ``around``, or all): the API's Timeline document."""
        from voyager_sessions.core.model import Timeline

        fields: dict[str, Any] = {"session": session_id, "window": window if around is not None else 0}
        if around is not None:
            # A hit on the title (seq -2) or another event before the conversation: its window is the start.
            fields["around"] = max(around, 0)
        return self._ask("show", fields, Timeline)

    def matches(self, session_id: str, query: str) -> list[int]:
        """Seqs of the session's events that match ``query``, in order (for ``n``/``N``)."""
        from voyager_sessions.core.model import SearchResult

        text = query.strip()
        if not text:
            return []
        try:
            result = self._ask(
                "search", {"query": text, "limit": MAX_MATCHES, "session": session_id, "refresh": False}, SearchResult
            )
        except VoyagerError:
            return []
        return sorted({h.seq for h in result.hits if h.session_id == session_id})

    def generation(self) -> tuple[object, ...]:
        """What changes when a scan commits (events indexed, the last scan): re-search when it moved."""
        from voyager_sessions.api import Stats

        stats = self._ask("stats", {}, Stats)
        return (stats.index_events, msgspec.json.encode(stats.last_scan))

    def providers(self) -> list[tuple[str, int]]:
        """(provider, sessions) of every agent with something indexed, most sessions first."""
        from voyager_sessions.api import Stats

        stats = self._ask("stats", {}, Stats)
        counts = [(p, v["sessions"]) for p, v in stats.providers.items() if v["sessions"]]
        return sorted(counts, key=lambda pc: (-pc[1], pc[0]))

    def projects(self, sessions: int = 5000) -> list[tuple[str, int]]:
        """(working directory, sessions) of the newest ``sessions`` sessions, most sessions first."""
        from voyager_sessions.core.model import SessionList

        listed = self._ask("list", {"limit": sessions}, SessionList)
        counts: dict[str, int] = {}
        for s in listed.sessions:
            if s.cwd:
                counts[s.cwd] = counts.get(s.cwd, 0) + 1
        return sorted(counts.items(), key=lambda pc: (-pc[1], pc[0]))

    def export(self, session_id: str, fmt: str, folder: Path) -> Path:
        """Write the session as ``fmt`` (md, html) into ``folder`` as ``voyager-<id>.<fmt>``, private; the path."""
        from voyager_sessions.export import build, render, write_private

        with self._lock:
            self._lent()
            doc, _ = build(self._reader, session_id, redact=False)
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:80]
        path = folder / f"voyager-{safe}.{fmt}"
        write_private(path, render(doc, fmt), force=True)
        return path


def _refresh_scan(root: Path) -> None:
    from voyager_sessions.api import LocalBackend

    LocalBackend().refresh(root, lambda text, quiet_ok: None)  # skipped pieces: `voyager doctor` names them
