"""The security every request to ``voyager web`` passes, as one ASGI middleware around the app.

The server shows everything a person ever pasted into an agent, so a request is answered
only when all of these hold (else 401, 403, or 405 for a method the app never takes):

- ``Host`` is a loopback name with the server's port (``127.0.0.1``, ``localhost``,
  ``[::1]``): a page on another site that rebinds its DNS name to 127.0.0.1 sends its own
  name and is refused.
- ``Origin``, when the browser sends one, is ``http://`` + such a host: no other site's
  script may call the API (there is no CORS, so nothing grants it either).
- A request for data (``/api/…``, ``/ui/…``, ``/export/…``, anything but the pages' shells
  and their static files) carries the per-start token in a header: ``Authorization:
  Bearer TOKEN`` (the page's scripts and other scripts) or ``X-Voyager-Token``. Never a
  cookie: a browser sends a cookie of 127.0.0.1 to *every* port of 127.0.0.1 (RFC 6265
  §8.5), so any other server on loopback the browser visits would receive it. The page
  keeps the token in its origin's storage (``localStorage``, which *is* isolated by port),
  taken from the fragment of the URL ``voyager web`` opens (``/#token=…``: a fragment is
  never sent to any server) or typed in when a bookmarked page finds it stale.
- The shells (``/``, ``/session/<id>``) and their scripts and styles hold no session data:
  they load without the token, so a bookmark opens and then asks for the token of the
  server now running. A shell requested with the old ``?token=`` query is sent to the
  same address with the token moved into the fragment (``303``): it never stays in a URL
  the server or a log sees again.

Every answer carries a strict Content-Security-Policy (scripts and styles from this server
only, no inline script, no other origin, no frames), ``nosniff``, ``no-referrer`` and
``no-store``.
"""

from __future__ import annotations

import hmac
import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any
from urllib.parse import parse_qsl, quote, urlencode

from voyager_sessions.core.model import SCHEMA_VERSION

Scope = MutableMapping[str, Any]
ASGIApp = Callable[[Scope, Callable[[], Awaitable[Any]], Callable[[Any], Awaitable[None]]], Awaitable[None]]

CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; "
    "font-src 'none'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)
HEADERS = [
    (b"content-security-policy", CSP.encode()),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
    (b"cache-control", b"no-store"),
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
]
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
READ_METHODS = ("GET", "HEAD")


#: What a page's shell needs, none of it data: loaded without the token (see the module's docstring).
PUBLIC_PREFIXES = ("/static/", "/session/")
PUBLIC_PATHS = frozenset({"/", "/highlight.css", "/favicon.ico"})


def is_public(path: str) -> bool:
    """True for the shells of the two pages and their static files: nothing there is session data."""
    return path in PUBLIC_PATHS or path.startswith(PUBLIC_PREFIXES)


class Guard:
    """Wraps the app: refuses what :mod:`this module's docstring <voyager_sessions.web.guard>` refuses."""

    def __init__(self, app: ASGIApp, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.hosts = {f"{n}:{port}" for n in LOOPBACK_NAMES}
        self.origins = {f"http://{h}" for h in self.hosts}

    async def __call__(self, scope: Scope, receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            await self.app(scope, receive, send)
            return
        if scope["type"] != "http":  # no websockets: nothing here needs one
            return
        headers = _headers(scope)

        async def send_secured(message: dict[str, Any]) -> None:
            if message["type"] == "http.response.start":
                message.setdefault("headers", [])
                message["headers"] = [h for h in message["headers"] if h[0].lower() not in {k for k, _ in HEADERS}]
                message["headers"].extend(HEADERS)
            await send(message)

        refusal = self._refusal(scope, headers)
        if refusal is not None:
            await _plain(send_secured, *refusal)
            return
        path = scope.get("path", "/")
        read = scope["method"] in READ_METHODS
        pairs = parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)
        if read and is_public(path):
            if any(k == "token" for k, _ in pairs):
                await self._to_fragment(scope, pairs, send_secured)
                return
            await self.app(scope, receive, send_secured)
            return
        if not self._authorized(headers):
            await _json(send_secured, 401, NEEDS_TOKEN)
            return
        await self.app(scope, receive, send_secured)

    async def _to_fragment(self, scope: Scope, pairs: list[tuple[str, str]], send: Any) -> None:
        """``/x?token=T&q=…`` → ``/x?q=…#token=T``: the page takes the token from the fragment (never sent to a
        server) into its own storage. A wrong token is refused here, so the page never stores one."""
        token = next(v for k, v in pairs if k == "token")
        if not self._is_token(token):
            await _plain(send, 403, "wrong token: open the URL `voyager web` printed")
            return
        rest = urlencode([(k, v) for k, v in pairs if k != "token"])
        # The path as it came (still percent-encoded), one leading slash: `//host` would leave this origin.
        raw = (scope.get("raw_path") or scope.get("path", "/").encode("utf-8")).decode("latin-1")
        where = "/" + raw.lstrip("/\\") + (f"?{rest}" if rest else "") + "#token=" + quote(token, safe="")
        await send(
            {
                "type": "http.response.start",
                "status": 303,
                "headers": [(b"location", where.encode("latin-1")), (b"content-length", b"0")],
            }
        )
        await send({"type": "http.response.body", "body": b""})

    def _refusal(self, scope: Scope, headers: dict[str, str]) -> tuple[int, str] | None:
        if headers.get("host", "").lower() not in self.hosts:
            return 403, "forbidden: not a loopback Host"
        origin = headers.get("origin")
        if origin is not None and origin.lower() not in self.origins:
            return 403, "forbidden: cross-origin request"
        if headers.get("sec-fetch-site") == "cross-site":
            return 403, "forbidden: cross-site request"
        if scope["method"] not in (*READ_METHODS, "POST"):
            return 405, "method not allowed"
        return None

    def _is_token(self, value: str) -> bool:
        return hmac.compare_digest(value.encode("utf-8", "surrogateescape"), self.token.encode())

    def _authorized(self, headers: dict[str, str]) -> bool:
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer " and self._is_token(auth[7:].strip()):
            return True
        return self._is_token(headers.get("x-voyager-token", ""))


#: What a request for data without the token is told (a page shows it and asks for the token).
NEEDS_TOKEN = (
    "this needs the token of the `voyager web` now running (each start makes a new one): "
    "open the URL it printed, or send it as `Authorization: Bearer TOKEN`"
)


def _headers(scope: Scope) -> dict[str, str]:
    # A repeated header (two Hosts, say) keeps its last value; Host must then still match.
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers", [])}


async def _plain(send: Any, status: int, text: str) -> None:
    body = (text + "\n").encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [(b"content-type", b"text/plain; charset=utf-8"), (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


async def _json(send: Any, status: int, error: str) -> None:
    body = json.dumps({"schema_version": SCHEMA_VERSION, "error": error}).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"www-authenticate", b'Bearer realm="voyager"'),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
