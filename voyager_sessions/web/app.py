"""The routes of ``voyager web``: two pages, their static files, the JSON API and exports.

Handlers are thin: they read parameters, call :class:`~voyager_sessions.web.data.Library`
and encode its documents with msgspec (the same documents ``--json`` prints). The pages
(``/`` and ``/session/<id>``) are static shells; their modules fetch ``/api/…`` and the
session view's pre-rendered event HTML from ``/ui/…`` (rendered by :mod:`.render`). A user
error (a bad query, an unknown session) is ``{"error": "…"}`` with 400 or 404.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from urllib.parse import quote

import msgspec
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import FileResponse, PlainTextResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from voyager_sessions.core import toolview
from voyager_sessions.core.errors import UserError
from voyager_sessions.core.model import SCHEMA_VERSION
from voyager_sessions.web import render
from voyager_sessions.web.data import EVENT_PAGE, MAX_LIMIT, Library, query_terms, search_request

STATIC = Path(__file__).with_name("static")
EXPORT_TYPES = {"md": "text/markdown; charset=utf-8", "json": "application/json", "html": "text/html; charset=utf-8"}


def attachment(name: str) -> str:
    """A ``Content-Disposition`` for a download named ``name`` (RFC 6266): an ASCII ``filename`` for old clients
    and, when the name is not ASCII, ``filename*`` (RFC 8187: UTF-8, percent-encoded) that browsers prefer. A
    header holds Latin-1 at most: a session named in Chinese must not make the answer fail."""
    plain = "".join(c if c.isascii() and (c.isalnum() or c in "-_.") else "_" for c in name)
    if plain == name:
        return f'attachment; filename="{plain}"'
    return f"attachment; filename=\"{plain}\"; filename*=UTF-8''{quote(name, safe='')}"


def _json(doc: Any, status: int = 200) -> Response:
    return Response(msgspec.json.encode(doc), status_code=status, media_type="application/json")


def _int(request: Request, name: str, default: int, lo: int, hi: int) -> int:
    raw = request.query_params.get(name)
    if raw is None or raw == "":
        return default
    try:
        return max(lo, min(hi, int(raw)))
    except ValueError:
        raise UserError(f"{name} must be a whole number, not {raw!r}") from None


def _error(exc: UserError) -> Response:
    msg = str(exc)
    return _json({"schema_version": SCHEMA_VERSION, "error": msg}, 404 if msg.startswith("no session") else 400)


def excerpts(hits: list[Any]) -> dict[str, dict[str, Any]]:
    """Rows whose excerpt reads otherwise than their hit's snippet: a tool call's arguments without JSON's
    punctuation and escapes (``core/toolview.py``), highlights moved along. Session id → snippet, highlights."""
    out = {}
    for h in hits:
        if h.kind == "tool_call":
            text, spans = toolview.readable_snippet(h.kind, h.tool, h.snippet, h.highlights)
            if text != h.snippet:
                out[h.session_id] = {"snippet": text, "highlights": spans}
    return out


def build_app(library: Library) -> Starlette:
    """The ASGI app over ``library`` (unguarded: :class:`~voyager_sessions.web.guard.Guard` wraps it)."""

    def page(name: str):  # noqa: ANN202 - a route endpoint
        def endpoint(request: Request) -> Response:
            return FileResponse(STATIC / name, media_type="text/html; charset=utf-8")

        return endpoint

    def search(request: Request) -> Response:
        p = request.query_params
        try:
            req, rows = search_request(p, {k: p.getlist(k) for k in p})
            doc = library.search(req, rows=rows, with_facets=p.get("facets", "1") != "0")
            doc["excerpts"] = excerpts(doc["result"].hits)
            return _json(doc)
        except UserError as exc:
            return _error(exc)

    def sessions(request: Request) -> Response:
        try:
            return _json(
                library.sessions(
                    provider=request.query_params.get("provider") or None,
                    limit=_int(request, "limit", 50, 1, MAX_LIMIT),
                    offset=_int(request, "offset", 0, 0, 10**9),
                )
            )
        except UserError as exc:
            return _error(exc)

    def session(request: Request) -> Response:
        """``voyager show --json``'s document; ``?start=SEQ&limit=N`` pages it (``next``: the next page's start)."""
        p = request.query_params
        try:
            if "start" in p or "limit" in p:
                doc = library.timeline(
                    request.path_params["sid"],
                    start=_int(request, "start", 0, -10, 10**9),
                    count=_int(request, "limit", EVENT_PAGE, 1, 5000),
                )
            else:
                doc = library.timeline(request.path_params["sid"])
            return _json(doc)
        except UserError as exc:
            return _error(exc)

    def ui_session(request: Request) -> Response:
        """What the session view's header shows: the row, the agent's name, the resume command, the checkpoint."""
        try:
            doc = library.timeline(request.path_params["sid"], start=0, count=1)
            row = doc["session"]
            return _json(
                {
                    "schema_version": SCHEMA_VERSION,
                    "session": row,
                    "agent": library.agent(row.provider),
                    "resume": library.resume_command(row.session_id),
                    "checkpoint": library.checkpoint(row.session_id),
                    "terms": query_terms(request.query_params.get("q", "")),
                }
            )
        except UserError as exc:
            return _error(exc)

    def ui_prompts(request: Request) -> Response:
        """For rows found by their session's title (``?id=`` each, up to 100): what the session's prompt says."""
        q = request.query_params.get("q", "")
        ids = request.query_params.getlist("id")[:100]
        prompts = {}
        for sid in dict.fromkeys(ids):
            found = library.prompt(sid, q) if q.strip() else None
            if found is not None:
                found["snippet"], found["highlights"] = toolview.readable_snippet(
                    found["kind"], found["tool"], found["snippet"], found["highlights"]
                )
                prompts[sid] = found
        return _json({"schema_version": SCHEMA_VERSION, "prompts": prompts})

    def ui_events(request: Request) -> Response:
        """A page of events with their bodies as HTML (escaped, Markdown rendered safely)."""
        try:
            doc = library.timeline(
                request.path_params["sid"],
                start=_int(request, "start", 0, -10, 10**9),
                count=_int(request, "limit", EVENT_PAGE, 1, 2000),
            )
        except UserError as exc:
            return _error(exc)
        events = [
            {
                "seq": e.seq,
                "kind": e.kind,
                "origin": e.origin,
                "ts": e.ts,
                "tool": e.tool,
                "exit_code": e.exit_code,
                "is_error": e.is_error,
                "html": render.event_html(e.kind, e.text, e.tool),
            }
            for e in doc["events"]
        ]
        return _json({"schema_version": SCHEMA_VERSION, "events": events, "next": doc["next"]})

    def export(request: Request) -> Response:
        fmt = request.path_params["fmt"]
        if fmt not in EXPORT_TYPES:
            return _error(UserError(f"format must be one of md, json, html, not {fmt!r}"))
        redact = request.query_params.get("redact") in ("1", "true", "yes")
        try:
            sid, data = library.export(request.path_params["sid"], fmt, redact=redact)
        except UserError as exc:
            return _error(exc)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in sid)[:120]
        # An attachment: the exported HTML never renders inside this origin.
        return Response(
            data,
            media_type=EXPORT_TYPES[fmt],
            headers={"content-disposition": attachment(f"{name}{'-redacted' if redact else ''}.{fmt}")},
        )

    def auth(request: Request) -> Response:
        """204: the token the request carries is this server's (the guard let it through). The page asks before
        it keeps a token."""
        return Response(status_code=204)

    def highlight_css(request: Request) -> Response:
        return Response(render.pygments_css(), media_type="text/css")

    def not_found(request: Request, exc: Exception) -> Response:
        return PlainTextResponse("not found", status_code=404)

    routes = [
        Route("/", page("search.html")),
        Route("/session/{sid:path}", page("session.html")),
        Route("/api/auth", auth),
        Route("/api/search", search),
        Route("/api/sessions", sessions),
        Route("/api/sessions/{sid:path}", session),
        Route("/ui/session/{sid:path}", ui_session),
        Route("/ui/events/{sid:path}", ui_events),
        Route("/ui/prompts", ui_prompts),
        Route("/export/{fmt}/{sid:path}", export),
        Route("/highlight.css", highlight_css),
        Mount("/static", StaticFiles(directory=STATIC), name="static"),
    ]
    return Starlette(routes=routes, exception_handlers={404: not_found})
