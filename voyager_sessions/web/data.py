"""What the web UI reads, as plain documents: the one place the HTTP handlers meet the application API.

Every handler calls a method of :class:`Library`; nothing else in ``voyager_sessions.web``
imports ``voyager_sessions.api`` or knows ``SearchOptions``. When the API becomes typed
request/result Structs, this module is what changes. Documents are the JSON contract's
Structs (``SearchResult``, ``SessionList``, ``Timeline``) or dicts around them, so a
script reading ``/api/…`` sees what ``voyager … --json`` prints.
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from typing import Any

import msgspec

from voyager_sessions.core.errors import UserError
from voyager_sessions.core.model import SCHEMA_VERSION, Hit, SearchResult
from voyager_sessions.core.paths import DataDir

#: With an empty query the page lists the newest sessions: the facets count over this many of them.
FACET_WINDOW = 500
#: The largest page of results or events a request may ask for.
MAX_LIMIT = 500
#: Events per page of the session view (lazy rendering of long sessions).
EVENT_PAGE = 200


class SearchRequest(msgspec.Struct, kw_only=True, frozen=True):
    """A search as the page (and ``GET /api/search``) asks for it: the query and its filters."""

    q: str = ""
    providers: tuple[str, ...] = ()
    project: str | None = None
    since: str | None = None
    until: str | None = None
    sort: str = "relevance"
    limit: int = 50
    offset: int = 0


def week_of(stamp: str | None) -> str | None:
    """The Monday (``YYYY-MM-DD``, UTC) of the week an ISO time falls in."""
    if not stamp:
        return None
    try:
        day = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(timezone.utc).date()
    except ValueError:
        return None
    return (day - timedelta(days=day.weekday())).isoformat()


def _epoch(stamp: str | None) -> float | None:
    if not stamp:
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def week_bounds(monday: str) -> tuple[str, str]:
    """``since`` and ``until`` values covering the week that starts on ``monday``."""
    start = datetime.fromisoformat(monday).date()
    return start.isoformat(), (start + timedelta(days=6)).isoformat()


def count_facets(found: Any, projects: dict[str, str | None]) -> dict[str, list[tuple[str, int]]]:
    """Counts of matching sessions by agent, project and week, largest first (weeks in order).

    ``found``: ``Reader.facets``' answer (every matching session, and per week those with a
    matching event in it); ``projects``: each session's git repo, else cwd.
    """
    agents: Counter[str] = Counter(sid.partition(":")[0] for sid in found.sessions)
    projects_: Counter[str] = Counter(p for sid in found.sessions if (p := projects.get(sid)))
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    weeks = sorted(
        ((epoch + timedelta(milliseconds=monday)).date().isoformat(), len(ids)) for monday, ids in found.weeks.items()
    )
    return {"agent": agents.most_common(), "project": projects_.most_common(30), "week": weeks}


def facets_of_rows(hits: list[Hit], repos: dict[str, str | None]) -> dict[str, list[tuple[str, int]]]:
    """Counts of listed sessions by agent, project (git repo, else cwd) and week, largest first (weeks in order)."""
    agents: Counter[str] = Counter()
    projects: Counter[str] = Counter()
    weeks: Counter[str] = Counter()
    for h in hits:
        agents[h.provider] += 1
        project = repos.get(h.session_id) or h.cwd
        if project:
            projects[project] += 1
        week = week_of(h.timestamp)
        if week:
            weeks[week] += 1
    return {"agent": agents.most_common(), "project": projects.most_common(30), "week": sorted(weeks.items())}


class Library:
    """The data dir as the web UI reads it: pooled readers (fresh after any scan), answering documents."""

    def __init__(self, ddir: DataDir, *, readers: int = 4, pool: Any = None) -> None:
        """``pool``: a ``serve.fresh.ReaderPool`` to borrow (``voyager serve``'s, kept open by it); else one of its own."""
        from voyager_sessions.serve.fresh import ReaderPool

        self.ddir = ddir
        self._own_pool = pool is None
        self.pool = ReaderPool(ddir, readers) if pool is None else pool

    def close(self) -> None:
        if self._own_pool:
            self.pool.close()

    def search(self, req: SearchRequest, *, with_facets: bool = True) -> dict[str, Any]:
        """Sessions matching ``req`` grouped (best hit, hit count), a page of them, with facets over all of them.

        The rows are the grouped search's (each costs a stored document and a snippet); the
        facets come from aggregations over every matching session (``Reader.facets``), no row
        read. ``limit=0`` asks for the facets and the total alone: what the page's second
        request asks for, so it never waits for rows it does not show.
        """
        from voyager_sessions.search.engine import SearchOptions

        if not req.q.strip():
            return self._recent(req, with_facets=with_facets)
        opts = SearchOptions(
            limit=max(req.limit, 1),
            offset=req.offset,
            providers=list(req.providers),
            since=req.since,
            until=req.until,
            sort="recent" if req.sort == "recent" else "relevance",
            sessions=True,
            repo=req.project or None,
        )
        counted = None
        with self.pool.reader() as r:
            if req.limit > 0:
                result = r.search(req.q, opts)
                repos = self._repos(r, [h.session_id for h in result.hits])
            else:
                result, repos = None, {}
            if with_facets or result is None:
                found = r.facets(req.q, opts)
                if with_facets:
                    counted = count_facets(found, r.projects(found.sessions))
            indexing = r.indexing()
        if result is None:
            result = SearchResult(
                schema_version=SCHEMA_VERSION, query=req.q, total=len(found.sessions), offset=req.offset, hits=[]
            )
        return {
            "schema_version": SCHEMA_VERSION,
            "result": result,
            "facets": counted,
            "repos": {h.session_id: repos.get(h.session_id) for h in result.hits},
            "indexing": indexing,
        }

    def _recent(self, req: SearchRequest, *, with_facets: bool) -> dict[str, Any]:
        """No query: the newest sessions, in the shape of a grouped search (so the page shows one list)."""
        from voyager_sessions.search.query import QueryError, parse_time

        provider = req.providers[0] if len(req.providers) == 1 else None
        try:  # the query language's times (2026-11-01, 7d), as the search path reads them
            lo = parse_time(req.since) if req.since else None
            hi = parse_time(req.until, end=True) if req.until else None
        except QueryError as exc:
            raise UserError(f"bad query: {exc}") from None
        with self.pool.reader() as r:
            doc = r.list_sessions(provider=provider, limit=FACET_WINDOW)
            indexing = doc.indexing

        def within(stamp: str | None) -> bool:
            when = _epoch(stamp)
            return (lo is None or (when is not None and when >= lo)) and (
                hi is None or (when is not None and when < hi)
            )

        rows = [
            s
            for s in doc.sessions
            if (not req.project or req.project.lower() in f"{s.git_repo or ''}\n{s.cwd or ''}".lower())
            and within(s.updated or s.started)
        ]
        hits = [
            Hit(
                session_id=s.session_id,
                provider=s.provider,
                seq=0,
                kind="session",
                origin="",
                cwd=s.cwd,
                timestamp=s.updated or s.started,
                title=s.title,
                snippet="",
                highlights=[],
                score=0.0,
                resume=s.resume,
                hit_count=s.events,
            )
            for s in rows
        ]
        page = hits[req.offset : req.offset + req.limit]
        result = SearchResult(schema_version=SCHEMA_VERSION, query="", total=len(hits), offset=req.offset, hits=page)
        repos = {s.session_id: s.git_repo for s in rows}
        return {
            "schema_version": SCHEMA_VERSION,
            "result": result,
            "facets": facets_of_rows(hits, repos) if with_facets else None,
            "repos": {h.session_id: repos.get(h.session_id) for h in page},
            "indexing": indexing,
        }

    @staticmethod
    def _repos(reader: Any, ids: list[str]) -> dict[str, str | None]:
        """Each session's git repository, in one lookup (a Hit names the cwd, not the repo).

        The reader's session catalog answers it: the application API has no batch lookup yet
        (the typed API of issue #23 is where it belongs).
        """
        recs = reader.state.sessions_by_id(dict.fromkeys(ids))
        return {sid: rec.session.git_repo for sid, rec in recs.items()}

    def sessions(self, *, provider: str | None, limit: int, offset: int) -> Any:
        """``voyager list --json``'s document."""
        with self.pool.reader() as r:
            return r.list_sessions(provider=provider, limit=limit, offset=offset)

    def timeline(self, ref: str, *, start: int | None = None, count: int | None = None) -> dict[str, Any]:
        """``voyager show --json``'s document, or the page of ``count`` events from seq ``start``, with where the next begins."""
        with self.pool.reader() as r:
            rec = r.resolve(ref)
            if start is None or count is None:
                doc = r.show(rec.session.id)
                nxt = None
            else:
                # Voyager's own events (title, checkpoint) have negative seqs: the first page holds them.
                lo = min(start, -10) if start <= 0 else start
                hi = start + count - 1
                half = (hi - lo + 2) // 2  # the window reaches one past hi: is there more?
                doc = r.show(rec.session.id, around=lo + half, window=half)
                more = any(e.seq > hi for e in doc.events) or hi + 1 < rec.events
                doc = msgspec.structs.replace(doc, events=[e for e in doc.events if lo <= e.seq <= hi])
                nxt = hi + 1 if more else None
        return {"schema_version": SCHEMA_VERSION, "session": doc.session, "events": doc.events, "next": nxt}

    def resume_command(self, ref: str) -> str | None:
        """The shell command that reopens the session in its agent, or None when the agent has none."""
        from voyager_sessions.api.resume import recipe

        with self.pool.reader() as r:
            rec = r.resolve(ref)
        how = recipe(rec.session)
        return how.command() if how else None

    def checkpoint(self, session_id: str) -> Any:
        """The session's saved checkpoint as an export shows it, or None."""
        from voyager_sessions.export import load_checkpoint

        return load_checkpoint(self.ddir, session_id)

    def export(self, ref: str, fmt: str, *, redact: bool) -> tuple[str, bytes]:
        """The session exported (``voyager export``'s bytes) and its id."""
        from voyager_sessions.export import build, render

        with self.pool.reader() as r:
            rec = r.resolve(ref)
            doc, _ = build(r, rec.session.id, redact=redact)
        return rec.session.id, render(doc, fmt)

    def agent(self, provider: str) -> str:
        from voyager_sessions.export import agent_label

        return agent_label(provider)


def query_terms(query: str) -> list[str]:
    """The words and phrases a query searches for (what the session view highlights), filters left out."""
    from voyager_sessions.search.query import QueryError, parse

    try:
        parsed = parse(query)
    except QueryError:
        return []
    # Not-ed words are not what a reader looks for in the session; the page matches the rest case-insensitively.
    return list(dict.fromkeys(t.text.strip() for t in parsed.texts if t.text.strip()))


__all__ = ["EVENT_PAGE", "FACET_WINDOW", "Library", "MAX_LIMIT", "SearchRequest", "query_terms", "week_bounds"]
