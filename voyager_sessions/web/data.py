"""What the web UI reads, as plain documents: the one place the HTTP handlers meet the application API.

Every handler calls a method of :class:`Library`, which asks the API (:mod:`voyager_sessions.api`) on
a pool of open readers (``api.readers.ReaderPool``: ``voyager serve``'s when the page is served from the
server's process, else one of its own) and nothing below it. Requests are the API's own Structs
(``api.SearchRequest`` and friends: :func:`search_request` reads one from the page's parameters, by the
web spellings the Struct declares), and documents are the JSON contract's Structs (``SearchResult``,
``Facets``, ``SessionList``, ``Timeline``) or dicts around them, so a script reading ``/api/…`` sees what
``voyager … --json`` prints.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import msgspec

from voyager_sessions import api
from voyager_sessions.api.browse import week_bounds
from voyager_sessions.api.readers import PooledBackend, ReaderPool
from voyager_sessions.api.requests import ExportRequest, SearchRequest, SessionRequest, ShowRequest, spelled
from voyager_sessions.core.errors import UserError
from voyager_sessions.core.model import SCHEMA_VERSION, SearchResult
from voyager_sessions.core.paths import DataDir

#: The largest page of results or events a request may ask for.
MAX_LIMIT = 500
#: Events per page of the session view (lazy rendering of long sessions).
EVENT_PAGE = 200


def search_request(params: Mapping[str, str], lists: Mapping[str, Sequence[str]]) -> tuple[SearchRequest, bool]:
    """The search a page asks for (its query parameters by the web spellings :class:`SearchRequest` declares), and
    whether it wants rows at all (``limit=0``: the facets alone). ``week=YYYY-MM-DD`` is that week's since/until.

    A bad value is a one-line UserError naming the parameter, as the command line names its option.
    """
    fields: dict[str, Any] = {}
    info = msgspec.inspect.type_info(SearchRequest)
    assert isinstance(info, msgspec.inspect.StructType)
    list_fields = {
        f.name
        for f in info.fields
        if isinstance(f.type.type if isinstance(f.type, msgspec.inspect.Metadata) else f.type, msgspec.inspect.ListType)
    }
    names = spelled(SearchRequest, "web")
    for field, param in names.items():
        if field in list_fields:
            values = [v for v in lists.get(param, ()) if v]
            if values:
                fields[field] = values
        elif params.get(param):
            fields[field] = params[param]
    week = params.get("week")
    if week:
        try:
            fields["since"], fields["until"] = week_bounds(week)
        except ValueError:
            raise UserError(f"week must be a date (YYYY-MM-DD), not {week!r}") from None
    rows = True
    if str(fields.get("limit", "")).strip() == "0":
        fields.pop("limit")
        rows = False
    fields.update(sessions=True, refresh=False)
    try:
        req = msgspec.convert(fields, SearchRequest, strict=False)
    except msgspec.ValidationError as exc:
        message = api.explain("search", str(exc))
        for field, param in names.items():  # the page's name for the parameter, not the API's
            message = message.replace(f"{field} must", f"{param} must", 1) if message.startswith(field) else message
        raise UserError(message) from None
    return msgspec.structs.replace(req, limit=min(req.limit, MAX_LIMIT)), rows


class Library:
    """The data dir as the web UI reads it: pooled readers (fresh after any scan), answering documents."""

    def __init__(self, ddir: DataDir, *, readers: int = 4, pool: ReaderPool | None = None) -> None:
        """``pool``: a pool to borrow (``voyager serve``'s, kept open by it); else one of its own."""
        self.ddir = ddir
        self._own_pool = pool is None
        self.pool = ReaderPool(ddir, readers) if pool is None else pool
        self.backend = PooledBackend(self.pool)

    def close(self) -> None:
        if self._own_pool:
            self.pool.close()

    def search(self, req: SearchRequest, *, rows: bool = True, with_facets: bool = True) -> dict[str, Any]:
        """Sessions matching ``req`` grouped (best hit, hit count), a page of them, with facets over all of them.

        With no query, the newest sessions the filters keep (``api.browse``). The facets come from
        aggregations over every matching session (``api.browse.facets``), no row read; ``rows=False`` asks
        for the facets and the total alone: what the page's second request asks for, so it never waits for
        rows it does not show.
        """
        from voyager_sessions.api import browse

        ddir, backend = self.ddir, self.backend
        text = req.query.strip()
        if text and _meaning_here():
            # A person describes what they look for: meaning too, where the model is installed (a row found by
            # meaning alone says so).
            req = msgspec.structs.replace(req, meaning=True)
        result: SearchResult | None = None
        if rows:
            result = (
                api.search(req, data_dir=ddir, backend=backend)
                if text
                else browse.browse(req, data_dir=ddir, backend=backend)
            )
        facets = browse.facets(req, data_dir=ddir, backend=backend) if with_facets or result is None else None
        if result is None and req.meaning:
            # The total the rows' request gives: with meaning it counts the sessions meaning brought in too.
            result = api.search(msgspec.structs.replace(req, limit=1), data_dir=ddir, backend=backend)
            result.hits = []
        if result is None:
            assert facets is not None
            result = SearchResult(
                schema_version=SCHEMA_VERSION, query=text, total=facets.total, offset=req.offset, hits=[]
            )
        return {
            "schema_version": SCHEMA_VERSION,
            "result": result,
            "facets": facets if with_facets else None,
            "repos": {h.session_id: h.project for h in result.hits},
            # While the index is built: how far (the page's status line says so); on the result too.
            "indexing": result.indexing if rows else self.indexing(),
        }

    def indexing(self) -> Any:
        """How far the index is built while a scan is building it (None when whole): the page's second request."""
        return api.indexing(data_dir=self.ddir, backend=self.backend)

    def sessions(self, *, provider: str | None, limit: int, offset: int) -> Any:
        """``voyager list --json``'s document."""
        return api.list_sessions(
            api.ListRequest(provider=provider, limit=limit, offset=offset), data_dir=self.ddir, backend=self.backend
        )

    def timeline(self, ref: str, *, start: int | None = None, count: int | None = None) -> dict[str, Any]:
        """``voyager show --json``'s document, or the page of ``count`` events from seq ``start``, with where the next begins."""
        from voyager_sessions.api import sessions

        row = sessions.session(SessionRequest(session=ref), data_dir=self.ddir, backend=self.backend).session
        if start is None or count is None:
            doc = api.show(ShowRequest(session=row.session_id), data_dir=self.ddir, backend=self.backend)
            nxt = None
        else:
            # Voyager's own events (title, checkpoint) have negative seqs: the first page holds them.
            lo = min(start, -10) if start <= 0 else start
            hi = start + count - 1
            half = (hi - lo + 2) // 2  # the window reaches one past hi: is there more?
            doc = api.show(
                ShowRequest(session=row.session_id, around=lo + half, window=half),
                data_dir=self.ddir,
                backend=self.backend,
            )
            more = any(e.seq > hi for e in doc.events) or hi + 1 < row.events
            doc = msgspec.structs.replace(doc, events=[e for e in doc.events if lo <= e.seq <= hi])
            nxt = hi + 1 if more else None
        return {"schema_version": SCHEMA_VERSION, "session": doc.session, "events": doc.events, "next": nxt}

    def resume_command(self, ref: str) -> str | None:
        """The shell command that reopens the session in its agent, or None when the agent has none."""
        from voyager_sessions.api import sessions

        return sessions.resume(SessionRequest(session=ref), data_dir=self.ddir, backend=self.backend).command

    def checkpoint(self, session_id: str) -> Any:
        """The session's saved checkpoint as an export shows it, or None."""
        from voyager_sessions.api import sessions

        return sessions.checkpoint(SessionRequest(session=session_id), data_dir=self.ddir)

    def export(self, ref: str, fmt: str, *, redact: bool) -> tuple[str, bytes]:
        """The session exported (``voyager export``'s bytes) and its id."""
        from voyager_sessions.api import sessions
        from voyager_sessions.export import render

        got = sessions.export(ExportRequest(session=ref, redact=redact), data_dir=self.ddir, backend=self.backend)
        return got.doc.timeline.session.session_id, render(got.doc, fmt)

    def prompt(self, session_id: str, q: str) -> dict[str, Any] | None:
        """What a row found by the session's title shows instead of the title again (``Door.title_prompt``)."""
        from voyager_sessions.api.door import Door

        try:
            found = Door(self.ddir, use_server=False, local=self.backend).title_prompt(session_id, q)
        except UserError:
            return None
        return None if found is None else msgspec.structs.asdict(found)

    def agent(self, provider: str) -> str:
        from voyager_sessions.api.sessions import agent_label

        return agent_label(provider)


def _meaning_here() -> bool:
    from voyager_sessions.api import meaning_available

    return meaning_available()


def query_terms(query: str) -> list[str]:
    """The words and phrases a query searches for (what the session view highlights), filters left out."""
    return api.query_terms(query)


__all__ = ["EVENT_PAGE", "Library", "MAX_LIMIT", "query_terms", "search_request", "week_bounds"]
