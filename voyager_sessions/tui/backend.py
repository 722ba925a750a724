"""What the terminal UI asks of Voyager, answered through the application API (never CLI output).

The UI asks four things, all from worker threads so the screen never waits: the sessions
matching a query (one row per session, best hit first, with how many events matched), the
events of one session around a hit, the seqs of a session's events that match the query (for
``n``/``N``), and the agents with something indexed. Each is an API request
(:mod:`voyager_sessions.api`), typed, through ``api.ask``: answered by ``voyager serve`` when one runs
for the data dir (the index is already open and fresh there), otherwise in this process on one
reader kept open for the app's life (``api.LentBackend``). A refresh —
the cheap stat pass ``voyager search`` makes — runs right behind the first search (before it
when there is no index yet) and then periodically, so sessions appended while the UI is open
appear without restarting it.

The lent reader serialises its requests: Textual's thread workers may overlap when a keystroke
supersedes a running search, and the reader is one connection.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from voyager_sessions.core.errors import Busy, VoyagerError
from voyager_sessions.api.door import Door
from voyager_sessions.core.model import Indexing, MeaningReady, Timeline
from voyager_sessions.core.paths import DataDir

#: Rows the result list shows (one per session).
ROWS = 60

#: Events shown each side of the hit in the preview.
PREVIEW_WINDOW = 12

#: Most matches inside one session ``n``/``N`` walk through.
MAX_MATCHES = 500

#: Seconds a search with meaning that found no session with a vector is believed (vectors are computed in the
#: background, by ``voyager serve`` or ``voyager scan --meaning``): until then queries are searched by words alone.
NO_VECTORS_FOR = 10.0


def _meaning_available() -> bool:
    from voyager_sessions import api

    return api.meaning_available()


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
    #: The tool a tool call hit called (its excerpt is drawn as people read the call).
    tool: str | None = None
    snippet: str = ""
    highlights: list[tuple[int, int]] = []
    resume: str | None = None
    #: The query terms the session holds (several-term queries match sessions on the words they hold).
    terms: list[str] = []
    #: The session's project: its git repository, else its working directory.
    project: str | None = None
    #: How it matched: ``all``, ``partial`` or ``meaning`` (none of the words: found by what it is about).
    match: str = "all"


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
        from voyager_sessions import api

        self.ddir = ddir if isinstance(ddir, DataDir) else DataDir(ddir)
        self.refreshing = refresh
        self.use_server = use_server
        self._scan = scan or _refresh_scan
        #: This process's reader, opened on first use (never, while a server answers), used from worker threads
        #: one at a time.
        self._local = api.LentBackend(self._open_reader)
        self.door = Door(self.ddir, use_server=use_server, local=self._local)
        #: When a search with meaning last found no session with a vector (meaning could rank nothing), or None.
        self._no_vectors: float | None = None

    @property
    def served(self) -> bool:
        """A server answered the last request (the status line says so)."""
        return self.door.served

    # -- life ---------------------------------------------------------------------------------

    def _open_reader(self) -> Any:
        from voyager_sessions import api

        api.require_index(self.ddir)
        return api.Reader(self.ddir, shared=True)

    def close(self) -> None:
        from voyager_sessions import api

        reader = self._local.opened()
        if reader is not None:
            with self._local.reader(self.ddir.root):  # not while a worker reads
                reader.close()
        self._local = api.LentBackend(self._open_reader)
        self.door.local = self._local

    def has_index(self) -> bool:
        """There is an index to answer from (a server's, or the one in the data dir)."""
        return self.ddir.has_index()

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
        if self._local.opened() is not None:
            with self._local.reader(self.ddir.root) as reader:
                reader.reload()
        return None

    def _server_runs(self) -> bool:
        if not self.use_server:
            return False
        from voyager_sessions.serve import control

        return control.status(self.ddir, timeout=0.2) is not None

    # -- questions ------------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        sort: str = "relevance",
        providers: tuple[str, ...] = (),
        project: str | None = None,
        since: str | None = None,
        meaning: bool | None = None,
    ) -> Answer:
        """Sessions matching ``query`` (the newest sessions the filters keep when it is empty), or the query's
        one-line error. ``providers``, ``project`` and ``since`` narrow it as ``--provider``, ``--repo`` (a
        project: the git repository, else the working directory) and ``--since`` do. ``meaning``: rank by
        meaning beside the words (None: where the model is installed, :meth:`fuses`)."""
        from voyager_sessions.api import SearchRequest

        text = query.strip()
        if meaning is None:
            meaning = self.fuses(query, sort)
        req = SearchRequest(
            query=text,
            limit=ROWS,
            sessions=True,
            refresh=False,
            sort="recent" if sort == "recent" else "relevance",
            providers=list(providers),
            repo=project,
            since=since,
            meaning=meaning,
        )
        try:
            result = self.door.search(req) if text else self.door.browse(req)
        except VoyagerError as exc:
            return Answer(query=query, error=str(exc))
        if meaning and isinstance(result.meaning, MeaningReady):
            self._no_vectors = time.monotonic() if result.meaning.sessions_ready == 0 else None
        rows = [
            SessionHit(
                session_id=h.session_id,
                provider=h.provider,
                title=h.title,
                cwd=h.cwd,
                when=h.timestamp,
                hits=h.hit_count or 1 if text else 0,
                seq=h.seq if text else None,
                kind=h.kind if text else None,
                tool=h.tool if text else None,
                snippet=h.snippet,
                highlights=[(a, b) for a, b in h.highlights],
                resume=h.resume,
                terms=[t.term for t in h.matched_terms or ()],
                project=h.project,
                match=h.match,
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

    def fuses(self, query: str, sort: str = "relevance") -> bool:
        """Whether a search for ``query`` ranks by meaning too: a person describes what they look for, so where
        the model is installed, for words ranked by relevance (an empty box lists the newest sessions, and the
        newest-first order is the words' alone), and unless no session had a vector a moment ago (then meaning
        would rank nothing: the second search would only cost the next keystroke's answer its time)."""
        if not query.strip() or sort == "recent" or not _meaning_available():
            return False
        return self._no_vectors is None or time.monotonic() - self._no_vectors > NO_VECTORS_FOR

    def timeline(self, session_id: str, around: int | None = None, window: int = PREVIEW_WINDOW) -> Timeline:
        """The session's events (a window around seq ``around``, or all): the API's Timeline document."""
        from voyager_sessions.api import ShowRequest

        if around is None:
            return self.door.show(ShowRequest(session=session_id, window=0))
        # A hit on the title (seq -2) or another event before the conversation: its window is the start.
        return self.door.show(ShowRequest(session=session_id, around=max(around, 0), window=window))

    def matches(self, session_id: str, query: str) -> list[int]:
        """Seqs of the session's events that match ``query``, in order (for ``n``/``N``)."""
        from voyager_sessions.api import SearchRequest

        text = query.strip()
        if not text:
            return []
        try:
            result = self.door.search(SearchRequest(query=text, limit=MAX_MATCHES, session=session_id, refresh=False))
        except VoyagerError:
            return []
        return sorted({h.seq for h in result.hits if h.session_id == session_id})

    def prompt(self, session_id: str, query: str) -> dict[str, Any] | None:
        """What a row found by the session's title shows instead of the title again (``Door.title_prompt``): the
        fields of a :class:`SessionHit` to replace, or None."""
        try:
            found = self.door.title_prompt(session_id, query)
        except VoyagerError:
            return None
        return None if found is None else msgspec.structs.asdict(found)

    def generation(self) -> tuple[object, ...]:
        """What changes when a scan commits (events indexed, the last scan): re-search when it moved."""
        stats = self.door.stats()
        return (stats.index_events, msgspec.json.encode(stats.last_scan))

    def providers(self) -> list[tuple[str, int]]:
        """(provider, sessions) of every agent with something indexed, most sessions first."""
        stats = self.door.stats()
        counts = [(p, v["sessions"]) for p, v in stats.providers.items() if v["sessions"]]
        return sorted(counts, key=lambda pc: (-pc[1], pc[0]))

    def projects(self) -> list[tuple[str, int]]:
        """(project, sessions) of the newest sessions, most sessions first: a project is the git repository, else
        the working directory (as on the web page, and as the ``repo`` filter matches it)."""
        from voyager_sessions.api import SearchRequest

        return list(self.door.facets(SearchRequest()).project)

    def resume_command(self, session_id: str) -> str | None:
        """The quoted shell command that reopens the session in its agent, or None when its agent has none."""
        from voyager_sessions.api import SessionRequest

        return self.door.resume(SessionRequest(session=session_id)).command

    def export(self, session_id: str, fmt: str, folder: Path) -> Path:
        """Write the session as ``fmt`` (md, html) into ``folder`` as ``voyager-<id>.<fmt>``, private; the path."""
        from voyager_sessions.api import ExportRequest
        from voyager_sessions.export import render, write_private

        doc = self.door.export(ExportRequest(session=session_id)).doc
        safe = "".join(c if c.isalnum() or c in "-_." else "_" for c in session_id)[:80]
        path = folder / f"voyager-{safe}.{fmt}"
        write_private(path, render(doc, fmt), force=True)
        return path


def _refresh_scan(root: Path) -> None:
    """The refresh, in a process of its own: on a thread here it held the interpreter's lock while the person typed
    (see :mod:`voyager_sessions.api.apart`)."""
    from voyager_sessions.api.apart import refresh_apart

    refresh_apart(root)
