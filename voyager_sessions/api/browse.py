"""Browsing sessions beside searching them: the newest sessions a filter keeps, and the facets a UI counts.

Two operations every UI needs beside :func:`~voyager_sessions.api.search`, on the same request
(:class:`~voyager_sessions.api.SearchRequest`), so a filter means one thing on every screen:

- :func:`browse`: with no query, the newest sessions that the request's filters keep (agents, project,
  working folder, time), in the shape of a grouped search (one hit a session, ``kind`` ``session``), so a
  list shows one kind of row whether the box is empty or not;
- :func:`facets`: how many sessions match, by agent, by project and by week (the web page's side bar, the
  picker's filter menus) — from Tantivy aggregations over every matching session for a query
  (``search.facets``), from the browsed sessions without one.

A **project** is a session's git repository, else its working directory, everywhere (the ``repo`` filter
matches either; :attr:`Facets.project` counts by it; every hit carries it).
"""

from __future__ import annotations

from collections import Counter
from datetime import datetime, timedelta, timezone
from pathlib import Path

from voyager_sessions.api import Backend, LocalBackend, Reader, _search_options, _where, parse_query
from voyager_sessions.api.requests import SearchRequest
from voyager_sessions.core.errors import UserError
from voyager_sessions.core.isotime import iso
from voyager_sessions.core.model import SCHEMA_VERSION, Facets, Hit, SearchResult, SessionRecord
from voyager_sessions.core.paths import DataDir

#: With no query, facets count over this many of the newest sessions the filters keep.
BROWSE_WINDOW = 500


def week_of(stamp: str | None) -> str | None:
    """The Monday (``YYYY-MM-DD``, UTC) of the week an ISO time falls in."""
    if not stamp:
        return None
    try:
        day = datetime.fromisoformat(stamp.replace("Z", "+00:00")).astimezone(timezone.utc).date()
    except ValueError:
        return None
    return (day - timedelta(days=day.weekday())).isoformat()


def week_bounds(monday: str) -> tuple[str, str]:
    """``since`` and ``until`` values covering the week that starts on ``monday`` (a ValueError when it is no date)."""
    start = datetime.fromisoformat(monday).date()
    return start.isoformat(), (start + timedelta(days=6)).isoformat()


def _times(req: SearchRequest) -> tuple[float | None, float | None]:
    """The request's ``since``/``until`` as epoch seconds, read as the query language reads them."""
    from voyager_sessions.search.syntax import QueryError, parse_time

    try:
        return (
            parse_time(req.since) if req.since else None,
            parse_time(req.until, end=True) if req.until else None,
        )
    except QueryError as exc:
        raise UserError(f"bad query: {exc}") from None


def _browsed(r: Reader, req: SearchRequest, *, limit: int, offset: int) -> tuple[int, list[SessionRecord]]:
    since, until = _times(req)
    return r.state.list_sessions(
        providers=req.providers,
        project=req.repo,
        cwd=req.cwd,
        since=since,
        until=until,
        limit=limit,
        offset=offset,
    )


def session_hit(rec: SessionRecord) -> Hit:
    """A session as a row of a grouped search: no matching event, its newest time, every event counted."""
    s = rec.session
    return Hit(
        session_id=s.id,
        provider=s.provider,
        seq=0,
        kind="session",
        origin="",
        cwd=s.cwd,
        timestamp=iso(s.updated or s.started),
        title=s.title,
        snippet="",
        highlights=[],
        score=0.0,
        resume=s.resume,
        hit_count=rec.events,
        project=s.git_repo or s.cwd,
    )


def browse(
    req: SearchRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None
) -> SearchResult:
    """The newest sessions ``req``'s filters keep (its query, if any, is not read), a page of them."""
    ddir = _where(data_dir)
    with (backend or LocalBackend()).reader(ddir.root) as r:
        total, recs = _browsed(r, req, limit=req.limit, offset=req.offset)
        indexing = r.indexing()
    return SearchResult(
        schema_version=SCHEMA_VERSION,
        query="",
        total=total,
        offset=req.offset,
        hits=[session_hit(x) for x in recs],
        indexing=indexing,
    )


def facets(req: SearchRequest, *, data_dir: DataDir | Path | None = None, backend: Backend | None = None) -> Facets:
    """The matching sessions counted by agent, project and week (see :class:`Facets`); no row is ranked or read."""
    ddir = _where(data_dir)
    text = req.query.strip()
    with (backend or LocalBackend()).reader(ddir.root) as r:
        if not text:
            total, recs = _browsed(r, req, limit=BROWSE_WINDOW, offset=0)
            return _count_rows(recs, total)
        found = r.facets(text, _search_options(req), parse_query(text))
        projects = r.projects(found.sessions)
    agents: Counter[str] = Counter(sid.partition(":")[0] for sid in found.sessions)
    projects_: Counter[str] = Counter(p for sid in found.sessions if (p := projects.get(sid)))
    epoch = datetime(1970, 1, 1, tzinfo=timezone.utc)
    weeks = sorted(
        ((epoch + timedelta(milliseconds=monday)).date().isoformat(), len(ids)) for monday, ids in found.weeks.items()
    )
    return Facets(
        schema_version=SCHEMA_VERSION,
        total=len(found.sessions),
        agent=agents.most_common(),
        project=projects_.most_common(30),
        week=weeks,
        match="partial" if found.match == "partial" else "all",
    )


def _count_rows(recs: list[SessionRecord], total: int) -> Facets:
    agents: Counter[str] = Counter()
    projects: Counter[str] = Counter()
    weeks: Counter[str] = Counter()
    for rec in recs:
        s = rec.session
        agents[s.provider] += 1
        if project := s.git_repo or s.cwd:
            projects[project] += 1
        if week := week_of(iso(s.updated or s.started)):
            weeks[week] += 1
    return Facets(
        schema_version=SCHEMA_VERSION,
        total=total,
        agent=agents.most_common(),
        project=projects.most_common(30),
        week=sorted(weeks.items()),
    )
