"""The web UI in a real headless Chromium (Debian's `chromium`, driven by Playwright for Python).

A real uvicorn serves the guarded app on a free loopback port in this process. The tests
type queries, read grouped results, click facets, go back, open sessions, jump between
matches, copy the resume command and export; a hostile session must show its HTML as text
and run no script (``window.__pwned``, which every payload tries to set, stays unset).
With ``VOYAGER_UPDATE_SCREENSHOTS=1`` the screenshot test writes docs/web-search.png and
docs/web-session.png (the README shows the first).

Playwright never downloads a browser here: it launches /usr/bin/chromium (never run
``playwright install``). Without Chromium or Playwright the tests are skipped, saying why.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.demo import DEMO
from tests.support.sessions import json_line, write_claude
from tests.support.webpage import HOSTILE_SID, PAYLOADS, TOKEN, Served

playwright_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright for Python is not installed (the test extra)"
)
expect = playwright_api.expect
CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(CHROMIUM is None, reason="no Chromium: `apt-get install -y chromium` (.ci/run installs it)"),
]
ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    # A foreign name that resolves to this machine: what a DNS-rebinding page would use.
    "--host-resolver-rules=MAP rebind.test 127.0.0.1",
]
DOCS = Path(__file__).resolve().parents[2] / "docs"
LONG_SID = "7a7a7a7a-0000-4000-8000-000000005000"


@pytest.fixture(scope="module")
def browser() -> Iterator:
    with playwright_api.sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def served(scanned) -> Iterator[Served]:
    s = Served(scanned)
    yield s
    s.stop()


@pytest.fixture
def page(browser, served):
    ctx = browser.new_context(viewport={"width": 1280, "height": 860})
    ctx.grant_permissions(["clipboard-read", "clipboard-write"], origin=served.base)
    pg = ctx.new_page()
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error" and "403" not in msg.text else None)
    opened(pg, served)
    yield pg
    assert errors == []  # no script error, and no CSP violation reported on the console
    ctx.close()


def opened(pg, served: Served) -> None:
    """Open the printed URL (``/#token=…``): the page keeps the token and drops it from the address."""
    pg.goto(served.url)
    expect(pg).to_have_url(served.base + "/")
    assert pg.evaluate("localStorage.getItem('voyager-token')") == served.url.rsplit("=", 1)[1]


def results(pg) -> list[str]:
    return pg.locator("#results li .title").all_inner_texts()


def search(pg, query: str, n: int) -> None:
    pg.fill("#q", query)
    # Playwright's expect() polls without eval (the page's CSP forbids eval, and wait_for_function uses it).
    expect(pg.locator("#results")).to_have_attribute("data-q", query)
    expect(pg.locator("#results > li.hit")).to_have_count(n)


def test_type_a_query_see_grouped_results_narrow_by_facet_and_go_back(page, served):
    search(page, "connection OR parse_config_v2", 3)
    assert page.locator("#results li .agent").all_inner_texts().count("claude") == 2
    assert page.locator("#results li mark").count() >= 3  # the snippets' highlights
    expect(page.locator("#facets [data-facet=provider]")).to_have_count(2)  # the facets come behind the rows
    page.click("#facets [data-facet=provider][data-value=codex]")
    expect(page.locator("#results > li.hit")).to_have_count(1)
    assert "provider=codex" in page.url and page.locator("#results .agent").inner_text() == "codex"
    page.go_back()
    expect(page.locator("#results > li.hit")).to_have_count(3)
    assert "provider" not in page.url
    page.go_forward()
    expect(page.locator("#results > li.hit")).to_have_count(1)
    page.click(".histogram .bar")  # the one week: narrows to it
    expect(page).to_have_url(re.compile(r"week=2026-11-16"))
    page.select_option("#sort", "recent")
    expect(page).to_have_url(re.compile(r"sort=recent"))
    # A bookmark of this state shows it again.
    page.goto(page.url)
    expect(page.locator("#results > li.hit")).to_have_count(1)
    assert page.input_value("#q") == "connection OR parse_config_v2" and page.input_value("#sort") == "recent"


def test_a_cjk_query(page):
    search(page, "数据库", 2)
    assert all("数据库" in t for t in page.locator("#results li mark").all_inner_texts())
    search(page, "데이터베이스", 1)


def test_open_a_session_jump_between_matches_copy_resume_and_export(page, served, tmp_path):
    search(page, "parse_config_v2", 2)
    page.locator("#results li .title").first.click()
    page.wait_for_selector("body[data-loaded='1']")
    assert page.url.startswith(f"{served.base}/session/")
    marks = page.locator("#events mark.hit")
    assert marks.count() >= 2
    info = page.inner_text("#matchinfo")
    assert info.startswith("1 / ")  # arriving with a query jumps to the first match
    page.click("#next")
    assert page.inner_text("#matchinfo").startswith("2 / ")
    page.click("#prev")
    page.click("#prev")
    assert page.inner_text("#matchinfo").startswith(f"{marks.count()} / ")  # wraps around
    assert page.locator("mark.hit.current").count() == 1
    # Kinds are styled apart, output folded, Markdown rendered.
    assert page.locator("article.k-user").count() >= 1 and page.locator("article.k-tool_result").count() >= 1
    # Permalinks.
    page.click("article[id='2'] a.seq")
    assert page.url.endswith("#2")
    # Copy the resume command.
    resume = page.inner_text("#resume-cmd")
    assert "claude --resume" in resume
    page.click("#copy")
    expect(page.locator("#copied")).to_have_text("copied")
    assert page.evaluate("navigator.clipboard.readText()") == resume
    # Export.
    with page.expect_download() as dl:
        page.click("#exports button:text('Markdown')")
    path = tmp_path / "export.md"
    dl.value.save_as(path)
    assert dl.value.suggested_filename.endswith(".md") and "The migration returns None" in path.read_text()
    with page.expect_download() as dl:
        page.click("#exports button:text('JSON')")
    dl.value.save_as(tmp_path / "export.json")
    assert json.loads((tmp_path / "export.json").read_text())["schema_version"] == 1
    with page.expect_download() as dl:
        page.click("#export-redacted")
    assert dl.value.suggested_filename.endswith("-redacted.md")


def test_hostile_html_shows_as_text_and_runs_nothing(page, served):
    search(page, "hostilemarker", 1)
    assert page.evaluate("window.__pwned") is None
    title = page.locator("#results li .title").inner_text()
    assert "</script>" in title
    assert page.locator("#results img, #results svg, #results script, #facets img").count() == 0
    expect(page.locator("#facets [data-facet=project]")).to_have_count(1)
    assert (
        page.locator("#facets [data-facet=project]").get_attribute("title")
        == '/home/dev/<img src=x onerror="window.__pwned=1">'
    )
    page.goto(f"{served.base}/session/claude:{HOSTILE_SID}?q=hostilemarker")
    page.wait_for_selector("body[data-loaded='1']")
    page.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    assert page.evaluate("window.__pwned") is None
    events = page.locator("#events")
    assert events.locator("img, svg, script, style, iframe").count() == 0
    text = events.inner_text()
    assert "<script>window.__pwned=1</script>" in text and '<img src=x onerror="window.__pwned=1">' in text
    hrefs = events.locator("a[href]").evaluate_all("as => as.map(a => a.getAttribute('href'))")
    assert all(h.startswith(("#", "http:", "https:", "mailto:")) for h in hrefs), hrefs
    # The injected CSS changed nothing.
    assert page.evaluate("getComputedStyle(document.body).backgroundImage") == "none"
    facts = page.inner_text("#facts")
    assert (
        "<img src=x" in facts
        and PAYLOADS[0] in facts
        and page.locator("#head img, #head script, #head svg").count() == 0
    )
    assert PAYLOADS[1] in page.locator("article.k-tool_call .who").first.inner_text()
    assert page.evaluate("window.__pwned") is None


def test_without_the_token_or_from_a_foreign_host_the_browser_is_refused(browser, served):
    ctx = browser.new_context()
    pg = ctx.new_page()
    assert pg.goto(served.base + "/").status == 200  # the shell: it holds no data, and asks for the token
    expect(pg.locator("#token-form")).to_be_visible()
    assert pg.locator("#results > li").count() == 0
    assert pg.goto(served.base + "/?token=guess").status == 403
    port = served.base.rsplit(":", 1)[1]
    # DNS rebinding: a foreign name resolving to 127.0.0.1 is refused even with the token.
    assert pg.goto(f"http://rebind.test:{port}/?token={TOKEN}").status == 403
    assert pg.goto(f"http://rebind.test:{port}/#token={TOKEN}").status == 403
    assert pg.goto(f"http://localhost:{port}/?token={TOKEN}").status == 200  # a loopback name is fine
    expect(pg).to_have_url(f"http://localhost:{port}/")
    ctx.close()


def test_a_bookmark_survives_a_restart(browser, scanned) -> None:
    """Issue 38: a bookmarked page after `voyager web` restarts (a new token, the same --port) says the token it
    kept is from an earlier start and takes the new one (the URL pasted), then shows what the bookmark named;
    before, it was a bare 403."""
    first = Served(scanned, token="first-token-" + "a" * 20)
    port = first.port
    ctx = browser.new_context()
    try:
        pg = ctx.new_page()
        opened(pg, first)
        bookmark = f"{first.base}/session/claude:{HOSTILE_SID}?q=hostilemarker"
        pg.goto(bookmark)
        pg.wait_for_selector("body[data-loaded='1']")
    finally:
        first.stop()
    second = Served(scanned, port=port, token="second-token-" + "b" * 20)
    try:
        pg.goto(bookmark)
        form = pg.locator("#token-form")
        expect(form).to_be_visible()
        expect(form).to_contain_text("earlier start")
        pg.fill("#token-input", "not-it")
        pg.click("#token-form button")
        expect(pg.locator("#token-status")).to_have_text("not this server's token")
        pg.fill("#token-input", second.url)  # the URL `voyager web` printed, pasted whole
        pg.click("#token-form button")
        pg.wait_for_selector("body[data-loaded='1']")
        assert pg.url == bookmark and pg.locator("#token-form").count() == 0
        assert pg.locator("article.k-user").count() >= 1
        assert pg.evaluate("localStorage.getItem('voyager-token')") == "second-token-" + "b" * 20
    finally:
        ctx.close()
        second.stop()


def long_session(n: int) -> list[str]:
    """A Claude Code session of ``n`` messages: prompts and Markdown answers with code, alternating."""
    base = {
        "sessionId": LONG_SID,
        "cwd": "/home/dev/long",
        "version": "2.0.14",
        "isSidechain": False,
        "userType": "external",
    }
    lines = []
    for i in range(n):
        ts = f"2026-11-20T{10 + i // 3600:02d}:{i // 60 % 60:02d}:{i % 60:02d}.000Z"
        if i % 2 == 0:
            msg = {"role": "user", "content": f"step {i}: why does the widget {i} fail?"}
            lines.append(json_line({**base, "type": "user", "uuid": f"u{i}", "timestamp": ts, "message": msg}))
        else:
            text = f"Widget **{i}** fails because:\n\n- the cache\n- the `lock`\n\n```python\nx = {i}\n```"
            msg = {
                "id": f"m{i}",
                "model": "claude-sonnet-4",
                "role": "assistant",
                "type": "message",
                "content": [{"type": "text", "text": text}],
                "stop_reason": "end_turn",
            }
            lines.append(json_line({**base, "type": "assistant", "uuid": f"a{i}", "timestamp": ts, "message": msg}))
    return lines


def test_a_5000_message_session_renders_lazily(browser, home, run):
    write_claude(home, long_session(5000), sid=LONG_SID, project="-home-dev-long")
    assert run("scan").exit_code == 0
    served = Served(home / "voyager-data")
    try:
        ctx = browser.new_context()
        pg = ctx.new_page()
        opened(pg, served)
        t0 = time.monotonic()
        pg.goto(f"{served.base}/session/claude:{LONG_SID}")
        pg.wait_for_selector("article[id='0']")
        first = time.monotonic() - t0
        shown = pg.locator("#events article").count()
        pg.wait_for_selector("body[data-loaded='1']", timeout=120_000)
        whole = time.monotonic() - t0
        assert pg.locator("#events article").count() >= 5000
        # The first page is a page, not the session: the rest comes behind it.
        assert shown < 5000
        pg.goto(f"{served.base}/session/claude:{LONG_SID}#4321")
        pg.wait_for_selector("article[id='4321']")
        print(f"\n5,000-message session: first events shown after {first:.2f}s, all {whole:.2f}s")
        ctx.close()
    finally:
        served.stop()


def test_screenshots(browser, demo, home):
    served = Served(home / "voyager-data")
    try:
        ctx = browser.new_context(viewport={"width": 1280, "height": 800}, color_scheme="light")
        pg = ctx.new_page()
        opened(pg, served)
        pg.fill("#q", "parse_config_v2 OR retry")
        expect(pg.locator("#results")).to_have_attribute("data-q", "parse_config_v2 OR retry")
        shots = {"web-search.png": pg.screenshot()}
        pg.goto(f"{served.base}/session/{DEMO['claude-config']}?q=parse_config_v2")
        pg.wait_for_selector("body[data-loaded='1']")
        pg.set_viewport_size({"width": 1280, "height": 1000})
        pg.locator("mark.hit.current").scroll_into_view_if_needed()
        shots["web-session.png"] = pg.screenshot()
        ctx.close()
    finally:
        served.stop()
    for name, png in shots.items():
        assert png[:8] == b"\x89PNG\r\n\x1a\n" and len(png) > 10_000, name
        if os.environ.get("VOYAGER_UPDATE_SCREENSHOTS") == "1":
            (DOCS / name).write_bytes(png)


def test_more_sessions_than_a_page(browser, home, run):
    from tests.support.sessions import claude_session_lines

    for i in range(55):
        sid = f"00000000-0000-4000-8000-{i:012d}"
        lines = [line.replace("marmalade", "pelican") for line in claude_session_lines(sid=sid, cwd=f"/home/dev/p{i}")]
        write_claude(home, lines, sid=sid, project=f"-home-dev-p{i}")
    assert run("scan").exit_code == 0
    served = Served(home / "voyager-data")
    try:
        ctx = browser.new_context()
        pg = ctx.new_page()
        opened(pg, served)
        search(pg, "pelican", 50)
        expect(pg.locator("#status")).to_contain_text("55 sessions match (showing 50)")
        pg.click("#results button.more")
        expect(pg.locator("#results > li.hit")).to_have_count(55)
        assert pg.locator("#results button.more").count() == 0
        assert len(set(pg.locator("#results li.hit .title").evaluate_all("as => as.map(a => a.href)"))) == 55
        ctx.close()
    finally:
        served.stop()


# -- the page fits, lands on the match, and answers the keyboard --------------------------------------------

#: What agents' real CLIs wrote (long CJK prompts, an agent name of 16 characters), beside the readable calls.
PAGE_CAPTURES = ("claude-2.1.328", "codex-0.169.0", "gemini-0.61.0", "gptme-0.35.1", "interpreter-0.4.3")
SIZES = [(1280, 900), (390, 844)]
LONG = "x" * 300  # an unbroken word longer than any window


@pytest.fixture
def real(home, run) -> Iterator[Served]:
    """The captures, the session of tool calls and one whose title, prompt and directory are a 300-character word."""
    import shutil

    from tests.support import toolcalls
    from tests.support.captures import CAPTURES
    from tests.support.sessions import claude_session_lines

    for name in PAGE_CAPTURES:
        shutil.copytree(
            CAPTURES / name, home, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json")
        )
    write_claude(home, toolcalls.lines(), sid=toolcalls.SID, project=toolcalls.PROJECT)
    long_sid = "4c4c4c4c-0000-4000-8000-00000000f175"
    lines = [
        line.replace("parse_config_v2", f"parse_config_v2 {LONG}")
        for line in claude_session_lines(long_sid, f"/home/dev/{LONG}")
    ]
    write_claude(home, lines, sid=long_sid, project="-home-dev-long")
    assert run("scan", "-q").exit_code == 0
    served = Served(home / "voyager-data")
    yield served
    served.stop()


def fits(pg) -> None:  # noqa: ANN001 - a Playwright page
    assert pg.evaluate("document.documentElement.scrollWidth <= innerWidth"), pg.evaluate(
        "[document.documentElement.scrollWidth, innerWidth]"
    )


def in_view(pg, selector: str) -> bool:  # noqa: ANN001
    return pg.locator(selector).evaluate(
        "m => { const r = m.getBoundingClientRect(); return r.height > 0 && r.top >= 0 && r.bottom <= innerHeight; }"
    )


@pytest.mark.parametrize("size", SIZES, ids=["1280x900", "390x844"])
def test_both_pages_fit_the_window_and_a_search_lands_on_its_first_match(browser, real, size) -> None:
    ctx = browser.new_context(viewport={"width": size[0], "height": size[1]})
    pg = ctx.new_page()
    pg.goto(real.url)
    for query, n in (("迁移", 7), ("parse_config_v2", 1)):
        search(pg, query, n)
        fits(pg)
    # Results first: on a phone the filters fold above them; on a wide screen they stand beside.
    first = pg.locator("#results li.hit").first
    if size[0] < 700:
        assert not pg.locator("#filters").evaluate("d => d.open") and first.bounding_box()["y"] < 300
        pg.click("#filters > summary")
        expect(pg.locator("#facets [data-facet=provider]").first).to_be_visible()
        fits(pg)
    else:
        expect(pg.locator("#facets [data-facet=provider]").first).to_be_visible()
    search(pg, "迁移", 7)
    # The session opened from a search lands on the query's first match, inside the window.
    first.locator("a.title").click()
    pg.wait_for_selector("body[data-loaded='1']")
    expect(pg.locator("#matchinfo")).to_have_text(re.compile(r"^1 / \d+$"))
    assert "#" not in pg.url  # no event number, and never the title's internal one (#-2)
    pg.wait_for_timeout(300)  # what content-visibility lays out late must not push the match away
    assert in_view(pg, "mark.hit.current")
    fits(pg)
    # The session of readable tool calls, and the one of a 300-character word: they fit too.
    for sid, q in (("claude:3c3c3c3c-0000-4000-8000-0000000ed170", "EDITMARK"), ("claude:4c4c4c4c", "parse_config_v2")):
        pg.goto(f"{real.base}/session/{sid}?q={q}")
        pg.wait_for_selector("body[data-loaded='1']")
        expect(pg.locator("#matchinfo")).to_have_text(re.compile(r"^1 / \d+$"))
        assert in_view(pg, "mark.hit.current")
        fits(pg)
    ctx.close()


def test_the_keyboard_reaches_a_result_in_two_keys_and_walks_the_matches(browser, real) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.goto(real.url)
    search(pg, "迁移", 7)
    titles = pg.locator("#results li.hit a.title")
    pg.keyboard.press("ArrowDown")  # 1: the first result
    assert pg.evaluate("document.activeElement.closest('li.hit') !== null")
    expect(titles.nth(0)).to_be_focused()
    pg.keyboard.press("j")
    expect(titles.nth(1)).to_be_focused()
    pg.keyboard.press("ArrowDown")
    expect(titles.nth(2)).to_be_focused()
    pg.keyboard.press("k")
    pg.keyboard.press("ArrowUp")
    expect(titles.nth(0)).to_be_focused()
    pg.keyboard.press("ArrowUp")  # above the first: the box
    expect(pg.locator("#q")).to_be_focused()
    pg.locator("#status").click()
    pg.keyboard.press("/")  # from anywhere on the page, "/" goes to the box
    expect(pg.locator("#q")).to_be_focused()
    # Typed and ↓ at once (before the debounce): the rows of what was typed, then the first of them.
    pg.keyboard.type("PROMPT_T2CLAUcb1bba")  # "/" selected what the box held: this replaces it
    pg.keyboard.press("ArrowDown")
    expect(pg.locator("#results")).to_have_attribute("data-q", "PROMPT_T2CLAUcb1bba")
    expect(titles.nth(0)).to_be_focused()
    pg.fill("#q", "迁移")
    expect(pg.locator("#results")).to_have_attribute("data-q", "迁移")
    pg.keyboard.press("ArrowDown")
    expected = titles.nth(0).get_attribute("href")
    pg.keyboard.press("Enter")  # 2: opened
    pg.wait_for_selector("body[data-loaded='1']")
    assert pg.url.endswith(expected)
    expect(pg.locator("#matchinfo")).to_have_text(re.compile(r"^1 / \d+$"))
    total = int(pg.inner_text("#matchinfo").split("/")[1])
    assert total >= 2
    pg.keyboard.press("n")
    expect(pg.locator("#matchinfo")).to_have_text(f"2 / {total}")
    assert in_view(pg, "mark.hit.current")
    pg.keyboard.press("N")
    pg.keyboard.press("N")
    expect(pg.locator("#matchinfo")).to_have_text(f"{total} / {total}")
    pg.keyboard.press("/")
    expect(pg.locator("#find")).to_be_focused()
    pg.keyboard.type("n")  # typing in the box types
    expect(pg.locator("#matchinfo")).to_have_text(f"{total} / {total}")
    ctx.close()


def test_tool_calls_read_as_a_diff_code_a_command_and_fields(browser, real) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.goto(real.url)
    search(pg, "EDITMARK", 1)
    row = pg.inner_text("#results li.hit .snippet")
    assert "EDITMARK return conn" in row and "\\n" not in row and '"}' not in row
    pg.goto(f"{real.base}/session/claude:3c3c3c3c-0000-4000-8000-0000000ed170")
    pg.wait_for_selector("body[data-loaded='1']")
    edit = pg.locator("article[id='1']")
    assert edit.locator(".file").inner_text() == "/home/dev/ledger/ledger/db.py"
    removed = [t.rstrip("\n") for t in edit.locator(".diff .del").all_inner_texts()]
    added = [t.rstrip("\n") for t in edit.locator(".diff .add").all_inner_texts()]
    assert removed == ["- def connect(url):", "-     conn = open_pool(url)"]
    assert added == ["+ def connect(url, retries=3):", "+     conn = open_pool(url, retries=retries)  # EDITMARK"]
    write = pg.locator("article[id='3']")
    assert write.locator("code.language-sql").count() == 1 and "CREATE TABLE ledger_entries (" in write.inner_text()
    assert pg.locator("article[id='5'] pre.cmd").inner_text().startswith("$ pytest -q tests/test_db.py -k BASHMARK")
    assert pg.locator("article[id='7'] dl.fields dt").all_inner_texts() == ["pattern", "path", "output"]
    assert '"note": |' in pg.locator("article[id='9'] pre.json").inner_text()
    events = pg.inner_text("#events")
    assert "\\n" not in events and "␛[2J" in events
    assert pg.locator("#events script, #events img").count() == 0 and pg.evaluate("window.__pwned") is None
    ctx.close()


def test_a_row_found_by_its_title_shows_the_prompt(browser, real) -> None:
    ctx = browser.new_context(viewport={"width": 1280, "height": 900})
    pg = ctx.new_page()
    pg.goto(real.url)
    search(pg, "TITLE_GPTM28aef3", 1)  # gptme names its sessions; the title says only this
    expect(pg.locator("#results li.hit .snippet")).to_contain_text("请运行这个命令并告诉我结果")
    assert "TITLE_GPTM28aef3" not in pg.inner_text("#results li.hit .snippet")
    ctx.close()


class Harvester:
    """Another server on loopback, as any local program (a dev server, a malicious package) may run one: it
    records every request the browser sends it, and serves a page that tries to read Voyager's API."""

    def __init__(self, target: str) -> None:
        import http.server

        seen = self.seen = []
        page = (
            "<!doctype html><title>other</title><script>"
            f"fetch({json.dumps(target + '/api/sessions')}, {{credentials: 'include'}})"
            ".then(r => r.text()).then(t => { document.title = 'read:' + t.length; })"
            ".catch(e => { document.title = 'blocked'; });"
            "</script>"
        ).encode()

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:  # noqa: N802 - the stdlib's name
                seen.append((self.path, dict(self.headers)))
                self.send_response(200)
                self.send_header("Content-Type", "text/html")
                self.send_header("Content-Length", str(len(page)))
                self.end_headers()
                self.wfile.write(page)

            def log_message(self, *args: object) -> None:
                pass

        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()


def test_another_server_on_loopback_learns_nothing_the_browser_holds(browser, served, page) -> None:
    """Issue 38's probe: cookies are not isolated by port (RFC 6265 §8.5), so a cookie the page set went to
    every other server on 127.0.0.1 the browser visited, and replayed it returned session text. Now the token
    lives only in this origin's storage and travels in a header: the other server, visited by the same
    browser profile after the page was opened and used, receives nothing that names it, cannot read the API
    from its own page, and a replay of anything it saw is refused."""
    search(page, "connection", 1)
    other = Harvester(served.base)
    try:
        visit = page.context.new_page()
        visit.goto(other.url + "/landing")
        expect(visit).to_have_title(re.compile("blocked|read:"))
        assert visit.title() == "blocked"  # no CORS: its script cannot read our API
        visit.goto(other.url.replace("127.0.0.1", "localhost") + "/again")
        visit.close()
    finally:
        other.stop()
    assert len(other.seen) >= 2
    for path, headers in other.seen:
        assert TOKEN not in json.dumps(headers), (path, headers)
    import urllib.error
    import urllib.request

    for _path, headers in other.seen:  # replayed: whatever a cookie or header carried, it opens nothing
        if "Cookie" not in headers:
            continue
        req = urllib.request.Request(served.base + "/api/search?q=connection", headers={"Cookie": headers["Cookie"]})
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(req, timeout=10)
        assert err.value.code == 401
    # And the cookie jar itself holds no token for any port.
    assert TOKEN not in json.dumps(page.context.cookies())
