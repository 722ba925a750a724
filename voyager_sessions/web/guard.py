"""The security every request to ``voyager web`` passes, as one ASGI middleware around the app.

The server shows everything a person ever pasted into an agent, so a request is answered
only when all of these hold (else 403, or 405 for a method the app never takes):

- ``Host`` is a loopback name with the server's port (``127.0.0.1``, ``localhost``,
  ``[::1]``): a page on another site that rebinds its DNS name to 127.0.0.1 sends its own
  name and is refused.
- ``Origin``, when the browser sends one, is ``http://`` + such a host: no other site's
  script may call the API (there is no CORS, so nothing grants it either).
- It carries the per-start token: the ``voyager-web-<port>`` cookie (HttpOnly,
  SameSite=Strict: set when the URL printed at start is opened with ``?token=``) or an
  ``Authorization: Bearer`` header (scripts). A POST (the only state-changing method) needs
  the token in a header, never the cookie alone.

Every answer carries a strict Content-Security-Policy (scripts and styles from this server
only, no inline script, no other origin, no frames), ``nosniff``, ``no-referrer`` and
``no-store``.
"""

from __future__ import annotations

import hmac
from collections.abc import Awaitable, Callable, MutableMapping
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

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


def cookie_name(port: int) -> str:
    """One cookie per port: two servers on one machine keep their own tokens."""
    return f"voyager-web-{port}"


class Guard:
    """Wraps the app: refuses what :mod:`this module's docstring <voyager_sessions.web.guard>` refuses."""

    def __init__(self, app: ASGIApp, token: str, port: int) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.hosts = {f"{n}:{port}" for n in LOOPBACK_NAMES}
        self.origins = {f"http://{h}" for h in self.hosts}
        self.cookie = cookie_name(port)

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
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1")))
        if "token" in query and scope["method"] in READ_METHODS:
            if not self._is_token(query["token"]):
                await _plain(send_secured, 403, "wrong token: open the URL `voyager web` printed")
                return
            # Trade the URL's token for a cookie, and drop it from the address bar (and history).
            rest = urlencode([(k, v) for k, v in parse_qsl(scope["query_string"].decode("latin-1")) if k != "token"])
            # The path as it came (still percent-encoded), one leading slash: `//host` would leave this origin.
            path = (scope.get("raw_path") or scope.get("path", "/").encode("utf-8")).decode("latin-1")
            where = "/" + path.lstrip("/\\") + (f"?{rest}" if rest else "")
            cookie = f"{self.cookie}={self.token}; HttpOnly; SameSite=Strict; Path=/"
            await send_secured(
                {
                    "type": "http.response.start",
                    "status": 303,
                    "headers": [
                        (b"location", where.encode("latin-1")),
                        (b"set-cookie", cookie.encode()),
                        (b"content-length", b"0"),
                    ],
                }
            )
            await send_secured({"type": "http.response.body", "body": b""})
            return
        if not self._authorized(scope, headers):
            await _plain(send_secured, 403, "forbidden: open the URL `voyager web` printed (it holds the token)")
            return
        await self.app(scope, receive, send_secured)

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

    def _authorized(self, scope: Scope, headers: dict[str, str]) -> bool:
        auth = headers.get("authorization", "")
        if auth[:7].lower() == "bearer " and self._is_token(auth[7:].strip()):
            return True
        if scope["method"] not in READ_METHODS:
            return self._is_token(headers.get("x-voyager-token", ""))  # a POST: the cookie alone is not enough
        jar = SimpleCookie()
        try:
            jar.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed Cookie header is no token
            return False
        morsel = jar.get(self.cookie)
        return morsel is not None and self._is_token(morsel.value)


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
