"""Hostile session text over HTTP: the pre-rendered event HTML holds no live markup, and JSON is never HTML.

The session's prompt, answer, tool output, title and working directory carry `</script>`,
`<img onerror>`, `javascript:` links, SVG and CSS (tests/web/conftest.py); the browser
test checks the same pages with a real Chromium.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

from tests.support.webpage import HOSTILE_SID, PAYLOADS, TOKEN

AUTH = {"Authorization": f"Bearer {TOKEN}"}
#: The elements the renderer may emit (Markdown's, the folds, Pygments' spans); anything else is live markup.
TAGS = {
    "p",
    "a",
    "em",
    "strong",
    "code",
    "pre",
    "span",
    "ul",
    "ol",
    "li",
    "blockquote",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "hr",
    "br",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "s",
    "details",
    "summary",
    "div",
    "dl",
    "dt",
    "dd",
}
ATTRS = {"href", "class", "rel", "target", "start", "title"}


class Markup(HTMLParser):
    """Collects what a browser would make elements and attributes of."""

    def __init__(self) -> None:
        super().__init__()
        self.bad: list[str] = []

    def handle_starttag(self, tag, attrs):  # noqa: ANN001 - HTMLParser's signature
        if tag not in TAGS:
            self.bad.append(f"<{tag}>")
        for name, value in attrs:
            if name not in ATTRS:
                self.bad.append(f"{tag}[{name}]")
            if name == "href" and not re.match(r"(https?|mailto):", value or "", re.I):
                self.bad.append(f"href={value}")


def text_of(html: str) -> str:
    """What a browser would show of ``html`` as text."""
    parts: list[str] = []
    parser = HTMLParser()
    parser.handle_data = parts.append  # type: ignore[method-assign]
    parser.feed(html)
    parser.close()
    return "".join(parts)


def live_markup(html: str) -> list[str]:
    parser = Markup()
    parser.feed(html)
    parser.close()
    return parser.bad


def test_event_html_holds_no_live_markup(client):
    doc = client.get(f"/ui/events/claude:{HOSTILE_SID}", params={"start": 0, "limit": 500}, headers=AUTH).json()
    bodies = [e["html"] for e in doc["events"]]
    assert any("hostilemarker" in b for b in bodies)
    for body in bodies:
        assert live_markup(body) == [], body
    joined = "".join(bodies)
    assert "&lt;script&gt;" in joined and "&lt;img src=x onerror" in joined


def test_tool_calls_are_drawn_readably_and_escaped():
    """An edit, a written file, a command and a known tool's fields, each holding HTML and terminal escapes: the
    structure is Voyager's, every string from the call is text."""
    import json

    from voyager_sessions.web.render import tool_call_html

    payload = PAYLOADS[0] + PAYLOADS[1] + "\x1b[2J"
    calls = [
        ("Edit", {"file_path": f"/p/{payload}.py", "old_string": payload, "new_string": f"</pre>{payload}"}),
        ("Write", {"file_path": "/p/page.html", "content": f"<h1>x</h1>{payload}"}),
        ("Write", {"file_path": '/p/x.py"><script>window.__pwned=1</script>', "content": payload}),
        ("Bash", {"command": f"echo '{payload}'"}),
        ("Grep", {"pattern": payload, payload: payload}),
        ("mcp__x", {"a": payload, "b": [payload, {"c": payload + "\nline"}]}),
    ]
    for tool, args in calls:
        html = tool_call_html(tool, json.dumps(args))
        assert live_markup(html) == [], html
        assert "\x1b" not in html and "␛[2J" in html
        assert "<script>window.__pwned=1</script>" in text_of(html), html  # shown as text
    diff = tool_call_html("Edit", json.dumps({"file_path": "a.py", "old_string": "a\nb", "new_string": "a\nc"}))
    assert '<span class="del">- b\n</span><span class="add">+ c\n</span>' in diff


def test_markdown_links_only_to_safe_schemes():
    from voyager_sessions.web.render import markdown

    out = markdown(
        "[a](javascript:alert(1)) [b](JaVaScRiPt:alert(1)) [c](data:text/html,x) [d](vbscript:x) "
        "[e](https://example.com) [f](mailto:a@b.c) ![g](https://example.com/i.png) <https://x.y>"
    )
    hrefs = re.findall(r'href="([^"]*)"', out)
    assert hrefs == ["https://example.com", "mailto:a@b.c", "https://example.com/i.png", "https://x.y"]
    assert "<img" not in out


def test_fenced_code_is_highlighted_and_escaped():
    from voyager_sessions.web.render import markdown

    out = markdown("```python\nx = '</script><script>alert(1)</script>'\n```\n```\n<b>plain</b>\n```")
    assert 'class="hl-' in out and "<script" not in out and "<b>" not in out


def test_long_output_is_folded():
    from voyager_sessions.web.render import FOLD_LINES, event_html

    assert event_html("tool_result", "x\n" * 3).startswith("<pre>")
    assert event_html("tool_result", "x\n" * (FOLD_LINES + 5)).startswith("<details>")


def test_json_answers_are_json_not_html(client):
    for path in (
        "/api/search?q=hostilemarker",
        f"/api/sessions/claude:{HOSTILE_SID}",
        f"/ui/events/claude:{HOSTILE_SID}",
        f"/ui/session/claude:{HOSTILE_SID}",
    ):
        res = client.get(path, headers=AUTH)
        assert res.headers["content-type"] == "application/json", path
        assert res.headers["x-content-type-options"] == "nosniff"


def test_static_modules_insert_session_strings_as_text():
    """The pages' code sets innerHTML in one place only: the server-rendered event body."""
    from voyager_sessions.web.app import STATIC

    uses = [
        (p.name, line.strip())
        for p in STATIC.glob("*.js")
        for line in p.read_text().splitlines()
        if "innerHTML" in line or "outerHTML" in line or "insertAdjacentHTML" in line or "document.write" in line
    ]
    assert uses == [
        (
            "session.js",
            "body.innerHTML = e.html;  // rendered and escaped by the server (render.py); never raw session text",
        )
    ]
