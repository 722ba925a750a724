"""The web server's security, over HTTP: the token (a header, never a cookie), Host and Origin checks, methods,
headers."""

from __future__ import annotations

from tests.support.webpage import PORT, TOKEN


def test_without_the_token_no_data_is_served(client):
    """Every path that answers with session data needs the token; the refusal is JSON saying how to get in."""
    for path in (
        "/api/search?q=marmalade",
        "/api/sessions",
        "/api/sessions/x",
        "/ui/session/x",
        "/ui/events/x",
        "/export/md/x",
        "/api/auth",
        "/nope",
    ):
        res = client.get(path)
        assert res.status_code == 401, path
        assert "token" in res.json()["error"] and "marmalade" not in res.text


def test_the_pages_shells_load_without_the_token_and_hold_no_data(client):
    """A bookmark opens: the shells and their static files need no token (they hold no session data), and the
    page then asks for the token of the server now running."""
    for path in ("/", "/?q=marmalade", "/session/claude:x", "/static/search.js", "/static/common.js", "/highlight.css"):
        res = client.get(path)
        assert res.status_code == 200, path
        assert "marmalade" not in res.text.replace("q=marmalade", "")


def test_no_cookie_opens_anything_and_none_is_ever_set(client):
    """A cookie of 127.0.0.1 goes to every port of 127.0.0.1 (RFC 6265 §8.5): a token is never one."""
    for cookie in (f"voyager-web-{PORT}={TOKEN}", f"token={TOKEN}", f"voyager-token={TOKEN}"):
        res = client.get("/api/sessions", headers={"Cookie": cookie})
        assert res.status_code == 401, cookie
    for res in (client.get(f"/?token={TOKEN}"), client.get("/"), client.get("/api/sessions")):
        assert "set-cookie" not in res.headers


def test_a_token_in_the_query_moves_to_the_fragment(client):
    """The old printed URL (``/?token=``): the token goes where no server sees it again, the rest stays."""
    res = client.get(f"/?q=marmalade&token={TOKEN}")
    assert res.status_code == 303
    assert res.headers["location"] == f"/?q=marmalade#token={TOKEN}"
    wrong = client.get("/?token=wrong")
    assert wrong.status_code == 403 and "location" not in wrong.headers
    assert client.get(f"/api/sessions?token={TOKEN}").status_code == 401  # data never by a token in the URL


def test_the_redirect_stays_on_this_origin(client):
    res = client.get(f"/session/claude%3Aab%2Fc?token={TOKEN}&q=%E6%95%B0")
    assert res.status_code == 303 and res.headers["location"] == f"/session/claude%3Aab%2Fc?q=%E6%95%B0#token={TOKEN}"
    # A path of `//host` (which an HTTP client library would not even send) must not become `Location: //host`.
    import asyncio

    from voyager_sessions.web.guard import Guard

    sent = []

    async def send(message):
        sent.append(message)

    async def app(scope, receive, send):  # never reached: the guard answers the token itself
        raise AssertionError

    scope = {
        "type": "http",
        "method": "GET",
        "path": "/session///evil.example/x",
        "raw_path": b"//session//evil.example/x",
        "query_string": f"token={TOKEN}".encode(),
        "headers": [(b"host", f"127.0.0.1:{PORT}".encode())],
    }
    asyncio.run(Guard(app, TOKEN, PORT)(scope, None, send))
    assert dict(sent[0]["headers"])[b"location"].startswith(b"/session//evil.example/x#")


def test_a_bearer_header_serves_scripts(client):
    res = client.get("/api/sessions", headers={"Authorization": f"Bearer {TOKEN}"})
    assert res.status_code == 200
    assert client.get("/api/sessions", headers={"X-Voyager-Token": TOKEN}).status_code == 200
    assert client.get("/api/auth", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 204
    assert client.get("/api/sessions", headers={"Authorization": "Bearer nope"}).status_code == 401


def test_a_foreign_host_is_refused_even_with_the_token(authed):
    for host in (
        "evil.example",
        f"evil.example:{PORT}",
        "127.0.0.1",
        f"127.0.0.1:{PORT + 1}",
        f"localhost.evil:{PORT}",
    ):
        res = authed.get("/api/sessions", headers={"Host": host, "Authorization": f"Bearer {TOKEN}"})
        assert res.status_code == 403, host
    for host in (f"localhost:{PORT}", f"[::1]:{PORT}", f"127.0.0.1:{PORT}"):
        assert authed.get("/api/sessions", headers={"Host": host}).status_code == 200, host


def test_a_foreign_origin_is_refused(authed):
    for origin in ("http://evil.example", f"http://evil.example:{PORT}", "null", f"https://127.0.0.1:{PORT}"):
        assert authed.get("/api/sessions", headers={"Origin": origin}).status_code == 403, origin
    assert authed.get("/api/sessions", headers={"Origin": f"http://127.0.0.1:{PORT}"}).status_code == 200
    assert authed.get("/api/sessions", headers={"Sec-Fetch-Site": "cross-site"}).status_code == 403


def test_no_cors_is_granted(authed):
    res = authed.get("/api/sessions")
    assert not any(h.startswith("access-control-") for h in res.headers)
    assert authed.options("/api/sessions", headers={"Origin": f"http://127.0.0.1:{PORT}"}).status_code == 405


def test_state_changing_methods_are_refused_and_post_needs_the_token_header(client):
    for method in ("PUT", "DELETE", "PATCH"):
        assert client.request(method, "/api/sessions").status_code == 405, method
    assert client.post("/api/sessions").status_code == 401
    assert client.post("/", headers={"Origin": f"http://127.0.0.1:{PORT}"}).status_code == 401  # a shell is GET only
    assert client.post("/api/sessions", headers={"X-Voyager-Token": TOKEN}).status_code == 405  # no POST route


def test_every_answer_carries_a_strict_csp(authed, client):
    for res in (
        authed.get("/"),
        authed.get("/api/sessions"),
        authed.get("/static/search.js"),
        authed.get("/nope"),
        client.get("/", headers={"Host": "evil.example"}),
    ):
        csp = res.headers["content-security-policy"]
        assert "default-src 'none'" in csp and "script-src 'self'" in csp and "frame-ancestors 'none'" in csp
        assert "unsafe-inline" not in csp and "http" not in csp.replace("'self'", "")
        assert res.headers["x-content-type-options"] == "nosniff"
        assert res.headers["cache-control"] == "no-store"


def test_the_pages_hold_no_inline_script_or_external_origin(authed):
    from voyager_sessions.web.app import STATIC

    for page in STATIC.glob("*.html"):
        html = page.read_text()
        assert "<script>" not in html and " on" not in html.replace("\n", " ").split("<body", 1)[-1].split(">", 1)[0]
        assert "http://" not in html and "https://" not in html and "//cdn" not in html
    for asset in STATIC.iterdir():  # nothing the page loads names another origin
        assert "https://" not in asset.read_text() and "//cdn" not in asset.read_text(), asset.name
