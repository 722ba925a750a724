"""``voyager export``: golden files from the demo corpus, hostile text that cannot break out, the file it writes,
and the HTML as a real browser reads it.

Golden files live in ``tests/golden/export/`` and are compared byte for byte; after an intended
change, regenerate them with ``VOYAGER_REGEN_GOLDEN=1 pytest tests/test_export.py`` and read the
diff. They are deterministic: the export time comes from ``SOURCE_DATE_EPOCH``, the checkpoint is
saved at a fixed clock, and the one machine-dependent string, where the demo corpus lies, is
written as ``$CORPUS``.
"""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import stat
import subprocess
import tempfile
from html.parser import HTMLParser
from pathlib import Path

import cmarkgfm
import msgspec
import pytest
from cmarkgfm.cmark import Options
from markdown_it import MarkdownIt

from tests.support.captures import CAPTURES, Capture, captures
from tests.support.demo import DEMO
from tests.support.sessions import CLAUDE_SID, json_line, claude_session_lines, write_claude
from voyager_sessions.core.model import Event, SessionRow, Timeline
from voyager_sessions.core.textsafe import printable
from voyager_sessions.demo import CORPUS
from voyager_sessions.export.blocks import Checkpoint, ExportDoc, blocks, capped, facts, when, who
from voyager_sessions.export.markdown import fence, prose
from voyager_sessions.export.markdown import render as render_md
from voyager_sessions.ingest.adapters import PROVIDERS

GOLDEN = Path(__file__).parent / "golden" / "export"
REGEN = bool(os.environ.get("VOYAGER_REGEN_GOLDEN"))


def _golden(name: str, data: bytes) -> None:
    data = data.replace(str(CORPUS).encode(), b"$CORPUS")
    path = GOLDEN / name
    if REGEN:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    assert path.exists(), f"{path} missing: run with VOYAGER_REGEN_GOLDEN=1 to write it"
    assert data == path.read_bytes(), f"{name} differs from its golden file (VOYAGER_REGEN_GOLDEN=1 rewrites it)"


@pytest.mark.parametrize("fmt", ["md", "json", "html"])
@pytest.mark.parametrize("name", list(DEMO))
def test_golden_exports(demo, run, name: str, fmt: str) -> None:
    res = run("export", DEMO[name], "--format", fmt)
    assert res.exit_code == 0, res.stderr
    _golden(f"{name}.{fmt}", res.stdout_bytes)


def test_json_export_is_the_show_document(demo, run) -> None:
    for sid in DEMO.values():
        exported = json.loads(run("export", sid, "--format", "json").stdout)
        shown = json.loads(run("show", sid, "--json").stdout)
        assert exported == shown


def test_markdown_holds_everything_in_the_timeline(demo, run) -> None:
    """Every event's text is in the rendered Markdown (tool output below its cap), and the session's facts head it."""
    md = run("export", DEMO["codex-timeout"]).stdout
    doc = json.loads(run("show", DEMO["codex-timeout"], "--json").stdout)
    for page in renderings(md).values():
        seen = _Rendered()
        seen.feed(page)
        text = "".join(seen.text)
        for ev in doc["events"]:
            if ev["seq"] >= 0:
                assert ev["text"].strip().splitlines()[0].replace("`", "") in text.replace("`", ""), ev
    for fact in (
        "| Agent | Codex CLI (codex) |",
        "| Branch | fix/timeout-param |",
        "| Model | gpt-5-codex |",
        "git@example.com:dev/config-service.git",
        "| Started | 2026-11-06 10:00:00 UTC |",
    ):
        assert fact in md
    assert md.count("<details>") == md.count("</details>") > 0


# -- hostile text ---------------------------------------------------------------------------------------


HOSTILE_REPLY = (
    "Done. </details> <!-- hides the rest <script>alert(1)</script> <img src=https://tracker.example/x.png>\n"
    "```python\nprint('a fence the reply never closes')\n"
)
HOSTILE_OUTPUT = (
    "before\n````\n```\nafter ``` and \x1b[2J\x1b]52;c;cHduZWQ=\x07 and </pre></details><script>x()</script>"
)


@pytest.fixture
def hostile(home, run) -> str:
    lines = claude_session_lines()
    out = []
    for line in lines:
        rec = json.loads(line)
        content = rec.get("message", {}).get("content")
        if rec.get("uuid") == "a3":
            rec["message"]["content"] = [{"type": "text", "text": HOSTILE_REPLY}]
        elif rec.get("uuid") == "u2":
            content[0]["content"] = HOSTILE_OUTPUT
        elif rec.get("uuid") == "u1":
            rec["message"]["content"] = "Title \x1b]0;pwned\x07 <b>bold</b> | pipe"
        out.append(json_line(rec))
    write_claude(home, out)
    assert run("scan", "-q").exit_code == 0
    return f"claude:{CLAUDE_SID}"


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fence("a ``` b ```` c").startswith("`````\n") and fence("plain").startswith("```\n")
    assert fence("x").endswith("\n```")


def test_prose_keeps_code_and_makes_the_rest_literal() -> None:
    md = prose(HOSTILE_REPLY)
    assert "\\</details\\>" in md and "\\<!--" in md and "\\<script\\>" in md  # escaped, so literal text
    assert md.endswith("```")  # the reply's open fence closed by the export
    assert prose("keep `<b>` in code") == "keep `<b>` in code", "code spans keep their text"
    assert prose("a > b") == "a \\> b" and prose("> quote") == "\\> quote"
    assert prose("```py`x\n<!--\n```").startswith("\\`\\`\\`py\\`x\\\n\\<!--"), "a backtick in an info string: no fence"
    assert prose("~~~sh {.x}\nls\n~~~") == "```sh\nls\n```", "a fence is written anew, its info string one word"


# -- rendered by real CommonMark/GFM renderers -----------------------------------------------------------

#: GitHub's renderer (cmark-gfm with GitHub's extensions) and markdown-it (CommonMark with GFM tables and
#: strikethrough). Both let raw HTML through, so any that the export let in shows up as an element.
_CMARK_EXTENSIONS = ["table", "strikethrough", "autolink", "tagfilter", "tasklist"]
_MARKDOWN_IT = MarkdownIt("commonmark", {"html": True}).enable(["table", "strikethrough"])


def renderings(md: str) -> dict[str, str]:
    return {
        "cmark-gfm": cmarkgfm.markdown_to_html_with_extensions(
            md, options=Options.CMARK_OPT_UNSAFE, extensions=_CMARK_EXTENSIONS
        ),
        "markdown-it": _MARKDOWN_IT.render(md),
    }


#: The elements the export's own Markdown makes; anything else came from session text.
OWN_ELEMENTS = {
    "h1",
    "h2",
    "h3",
    "p",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    "ul",
    "li",
    "strong",
    "em",
    "code",
    "pre",
    "hr",
    "br",
    "details",
    "summary",
}


class _Rendered(HTMLParser):
    """What a renderer made of an export: elements, comments, headings, and the text a reader sees."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.raw: list[str] = []  # comments, declarations, processing instructions
        self.h3: list[str] = []
        self.text: list[str] = []
        self._in: list[str] = []
        self._link: tuple[str | None, list[str]] | None = None

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append((tag, dict(attrs)))
        if tag not in ("br", "hr", "input", "img"):
            self._in.append(tag)
        if tag == "h3":
            self.h3.append("")
        if tag == "a":
            self._link = (dict(attrs).get("href"), [])

    def handle_endtag(self, tag) -> None:
        if self._in and self._in[-1] == tag:
            self._in.pop()
        if tag == "a" and self._link is not None:
            href, text = self._link
            # cmark-gfm links an e-mail address whatever escapes it carries (no escape reaches its
            # autolinker): a link to exactly the address it shows is all it may make.
            shown = "".join(text)
            assert href and "@" in href and href.removeprefix("mailto:") == shown.removeprefix("mailto:"), (
                "a link from session text",
                href,
                shown,
            )
            self._link = None

    def handle_data(self, data) -> None:
        self.text.append(data)
        if self._in and self._in[-1] == "h3":
            self.h3[-1] += data
        if self._link is not None:
            self._link[1].append(data)

    def handle_comment(self, data) -> None:
        self.raw.append(f"<!--{data}-->")

    def handle_decl(self, decl) -> None:
        self.raw.append(decl)

    def handle_pi(self, data) -> None:
        self.raw.append(data)

    def unknown_decl(self, data) -> None:
        self.raw.append(data)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _unticked(text: str) -> str:
    """``text`` without backticks, whitespace collapsed: code spans' delimiters are markup, not text."""
    return _flat(text.replace("`", ""))


#: CommonMark's fence lines: an opener (a backtick fence's info string holds no backtick) and a closer.
_OPENER = re.compile(r"^ {0,3}(?:(`{3,})[^`]*|(~{3,}).*)$")


def _expected_prose(text: str) -> str:
    """What a reader must see of a prompt or a reply: every line but its fence lines (those are markup)."""
    kept: list[str] = []
    closer: re.Pattern[str] | None = None
    for line in printable(text, multiline=True).split("\n"):
        if closer is None and (m := _OPENER.match(line)):
            marker = m.group(1) or m.group(2)
            closer = re.compile(f"^ {{0,3}}{re.escape(marker[0])}{{{len(marker)},}}[ \t]*$")
        elif closer is not None and closer.match(line):
            closer = None
        else:
            kept.append(line)
    return _unticked("\n".join(kept))


def assert_renders_faithfully(md: str, timeline: Timeline, agent: str) -> None:
    """Rendered by both renderers: no element the export did not make, no turn lost, every text shown."""
    agent = printable(agent)
    bl = blocks(timeline.events)
    turns = [
        f"{who(b.first, agent)} · {when(b.first.ts) or 'time unknown'}" for b in bl if b.kind in ("user", "assistant")
    ]
    folds = sum(b.kind not in ("user", "assistant") for b in bl)
    for name, page in renderings(md).items():
        seen = _Rendered()
        seen.feed(page)
        seen.close()
        assert not seen.raw, (name, seen.raw[:3])
        stray = {tag for tag, _ in seen.tags} - OWN_ELEMENTS - {"a"}
        assert not stray, (name, stray)
        assert all(not attrs or tag in ("a", "code") for tag, attrs in seen.tags), name  # code: class="language-x"
        counts = [tag for tag, _ in seen.tags]
        assert counts.count("details") == counts.count("summary") == folds, name
        assert [_flat(h) for h in seen.h3] == [_flat(t) for t in turns], name
        text = _flat("".join(seen.text))
        assert _flat(f"Exported from {agent} by Voyager") in text[-300:], name  # the footer, last
        for b in bl:
            ev = b.first
            if b.kind in ("user", "assistant", "reasoning"):
                want = _expected_prose(ev.text)
                assert want in _unticked(text), (name, b.kind, want[:200])
            else:
                for e in b.events:
                    want = _flat(capped(printable(e.text, multiline=True))[0])
                    assert want in text, (name, b.kind, want[:200])
        for label, value in facts(timeline.session, agent):  # the table of facts, pipes and all
            assert _unticked(f"{label} {value}") in _unticked(text), (name, label, value)


def _check_export(run, sid: str) -> None:
    """Export ``sid`` as Markdown through the CLI and check what the renderers make of it."""
    res = run("export", sid, "--format", "md")
    assert res.exit_code == 0, res.stderr
    timeline = msgspec.json.decode(run("show", sid, "--json").stdout.encode(), type=Timeline)
    agent = next(
        (
            line.split("| Agent | ", 1)[1].rsplit(" (", 1)[0]
            for line in res.stdout.splitlines()
            if line.startswith("| Agent | ")
        ),
        "",
    )
    assert_renders_faithfully(res.stdout, timeline, agent)


@pytest.mark.parametrize("name", list(DEMO))
def test_demo_exports_render_faithfully(demo, run, name: str) -> None:
    _check_export(run, DEMO[name])


def test_hostile_export_renders_faithfully(hostile, run) -> None:
    md = run("export", hostile).stdout
    assert "\x1b" not in md and "\x07" not in md  # control characters made visible
    assert "`````" in md  # the output with a four-backtick run sits in a five-backtick fence
    _check_export(run, hostile)


#: The two cases that broke the export before: an escaped backtick before an ``<img>`` (is it code?),
#: and a fence whose info string holds a backtick (not a fence to GFM) followed by a comment opener.
REPORTED = ["see \\`<img src=x onerror=alert(1)>` here", "```js`\nx\n<!--\n", "a `` ` `` <!-- b `c` -->"]


@pytest.mark.parametrize("text", REPORTED)
def test_reported_cases_carry_no_html(text: str) -> None:
    """Issue #28's two cases: before, GFM read an ``<img>`` in the first and a comment swallowing what follows in the second."""
    for name, page in renderings(prose(text) + "\n\n### The next turn\n").items():
        seen = _Rendered()
        seen.feed(page)
        assert not seen.raw and {tag for tag, _ in seen.tags} <= {"p", "code", "br", "h3", "pre"}, (name, page)
        assert seen.h3 == ["The next turn"], (name, page)


#: Pieces hostile strings are made of: everything that opens markup in some renderer, and the breaks
#: between lines that decide where blocks start.
PIECES = [
    "`",
    "``",
    "```",
    "````",
    "~~~",
    "<",
    "<!--",
    "-->",
    ">",
    "]",
    "[",
    "(",
    ")",
    "*",
    "**",
    "_",
    "&",
    "&amp;",
    "&#60;",
    "\\",
    "<img src=x onerror=alert(1)>",
    "<script>alert(1)</script>",
    "</details>",
    "<details open>",
    "<a href='javascript:x'>",
    "\t",
    "\r",
    "\n",
    "\n\n",
    "    ",
    "#",
    "## ",
    "> ",
    "- ",
    "* ",
    "+ ",
    "1. ",
    "2) ",
    "|",
    "| a | b |\n|---|---|",
    "---",
    "===",
    "www.example.com",
    "http://example.com/x",
    "a@b.co",
    "mailto:a@b.co",
    "<http://a.b>",
    "$x$",
    "[x](javascript:alert(1))",
    "![i](http://t.example/p.png)",
    "[x]: http://ref.example",
    "```py`x",
    "```python",
    "~~x~~",
    "- [ ] ",
    "[^1]",
    "x",
    "word",
    " ",
    "é",
    "日本",
    "\u00a0",
    "\x00",
    "\x1b[2J",
    ":",
    "=",
    "!",
    "{",
    "}",
    "\u2028",
    "\f",
    "<![CDATA[x]]>",
    "<?php x ?>",
    "<!DOCTYPE html>",
    "javascript:alert(1)",
    "&#x3C;script&#x3E;",
    "   ```",
    "    ```",
    "\t```",
    "1. ```",
    "> ```",
    "- ~~~",
    "```~~~",
    "<div>",
    "</div>",
    "<pre>",
    "\\`",
    "\\\n",
]


def _hostile_strings(n: int, seed: int) -> list[str]:
    rnd = random.Random(seed)
    return [*REPORTED, *("".join(rnd.choice(PIECES) for _ in range(rnd.randint(1, 40))) for _ in range(n))]


def _doc(texts: list[str]) -> ExportDoc:
    """An export holding ``texts`` everywhere session text can stand: every kind of turn, title, facts, checkpoint."""
    row = SessionRow(
        session_id="claude:fuzz",
        provider="claude",
        native_id="fuzz",
        title=texts[0],
        cwd=texts[1 % len(texts)],
        git_branch=texts[2 % len(texts)],
        git_repo=texts[3 % len(texts)],
        model=None,
        started="2026-01-01T00:00:00Z",
        updated="2026-01-01T00:01:00Z",
        events=len(texts),
        parent=None,
        resume=texts[4 % len(texts)],
        source=None,
        title_source="user",
    )
    kinds = ["user", "assistant", "reasoning", "meta", "tool_call", "tool_result"]
    events = []
    for i, text in enumerate(texts):
        kind = kinds[i % len(kinds)]
        events.append(
            Event(
                session=row.session_id,
                seq=i,
                kind=kind,
                origin="human" if kind == "user" else "agent",
                text=text,
                ts=1767225600.0 + i,
                tool="Bash" if kind.startswith("tool") else None,
                call_id=f"c{i - 1 if kind == 'tool_result' else i}" if kind.startswith("tool") else None,
            )
        )
    checkpoint = Checkpoint(
        fields=[
            ("Title", "line", texts[0]),
            ("Objective", "text", texts[-1]),
            ("Done", "list", ["[x] " + t for t in texts[:3]]),
        ],
        updated="2026-01-01T00:02:00Z",
    )
    return ExportDoc(
        timeline=Timeline(schema_version=1, session=row, events=events),
        agent="Claude Code",
        checkpoint=checkpoint,
        exported="2026-01-01T00:03:00Z",
    )


def test_hostile_strings_render_faithfully() -> None:
    """Generated combinations of every piece of markup, in every place an export puts session text."""
    strings = _hostile_strings(600, seed=28)
    for i in range(0, len(strings), 12):
        doc = _doc(strings[i : i + 12])
        md = render_md(doc)
        try:
            assert_renders_faithfully(md, doc.timeline, doc.agent)
        except AssertionError:
            print(md)
            raise


@pytest.mark.skipif(CAPTURES is None, reason="shared/fixtures/agents not found beside the checkout")
@pytest.mark.parametrize("name", captures())
def test_captured_sessions_render_faithfully(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Every session of every agent's real capture, exported and rendered."""
    c = Capture(name, tmp_path, monkeypatch)
    sessions = c.sessions()
    if c.provider in PROVIDERS:
        assert sessions, f"{name}: nothing to export"
    for sid in sessions:
        _check_export(c.run, sid)


class _DOM(HTMLParser):
    """Tags and text of an HTML document, as a browser-free check of what the HTML export holds."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: set[str] = set()
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)
        self.attrs.update(name for name, _ in attrs)

    def handle_data(self, data) -> None:
        self.text.append(data)


def test_html_export_of_hostile_text_is_only_text(hostile, run) -> None:
    page = run("export", hostile, "--format", "html").stdout
    dom = _DOM()
    dom.feed(page)
    assert set(dom.tags) <= {
        "html",
        "head",
        "meta",
        "title",
        "style",
        "body",
        "main",
        "h1",
        "h2",
        "dl",
        "dt",
        "dd",
        "section",
        "div",
        "details",
        "summary",
        "pre",
        "time",
        "span",
        "p",
        "code",
        "ul",
        "li",
        "footer",
    }, set(dom.tags)
    text = "".join(dom.text)
    assert "<script>alert(1)</script>" in text and "</pre></details><script>x()</script>" in text
    assert "\x1b" not in page and "\x07" not in page
    assert re.search(
        r'<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;; '
        r"style-src &#x27;sha256-[A-Za-z0-9+/=]+&#x27;",
        page,
    )
    assert dom.attrs <= {"lang", "charset", "http-equiv", "content", "name", "class", "open"}, (
        dom.attrs
    )  # nothing to fetch


# -- the file -------------------------------------------------------------------------------------------


def test_output_file_is_private_atomic_and_never_clobbered(demo, run, tmp_path: Path) -> None:
    out = tmp_path / "out" / "session.html"
    missing_dir = run("export", DEMO["claude-config"], "-o", str(out))
    assert missing_dir.exit_code == 2 and "does not exist" in missing_dir.stderr
    out.parent.mkdir()
    res = run("export", DEMO["claude-config"], "-o", str(out))
    assert res.exit_code == 0 and res.stdout == "" and "wrote" in res.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert out.read_text().startswith("<!DOCTYPE html>")  # the format follows the extension
    first = out.read_bytes()
    again = run("export", DEMO["codex-timeout"], "-o", str(out))
    assert again.exit_code == 2 and "--force" in again.stderr and out.read_bytes() == first
    forced = run("export", DEMO["codex-timeout"], "-o", str(out), "--force", "--format", "md")
    assert forced.exit_code == 0 and out.read_text().startswith("# 根据日志")
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    assert sorted(p.name for p in out.parent.iterdir()) == ["session.html"]  # no temporary file left
    link = tmp_path / "out" / "link.md"
    link.symlink_to(tmp_path / "elsewhere.md")
    assert run("export", DEMO["codex-timeout"], "-o", str(link)).exit_code == 2
    assert not (tmp_path / "elsewhere.md").exists()
    assert run("export", DEMO["codex-timeout"], "-o", str(tmp_path)).exit_code == 2  # a directory


def test_export_dash_and_errors(demo, run) -> None:
    assert run("search", "ERR_CONN_REFUSED_42", "--no-refresh", "--sessions", "--json").exit_code == 0
    res = run("export", "-", "--format", "json")
    assert res.exit_code == 0 and json.loads(res.stdout)["session"]["session_id"].startswith("codex:019a3f2e")
    assert "first hit" in res.stderr
    assert run("export", "nope-nothing").exit_code == 2
    assert run("export", DEMO["codex-timeout"], "--format", "pdf").exit_code == 2


def test_long_tool_output_is_capped_with_a_pointer(home, run) -> None:
    lines = claude_session_lines()
    out = []
    for line in lines:
        rec = json.loads(line)
        if rec.get("uuid") == "u2":
            rec["message"]["content"][0]["content"] = "\n".join(f"line {i}" for i in range(1000))
        out.append(json_line(rec))
    write_claude(home, out)
    assert run("scan", "-q").exit_code == 0
    for fmt in ("md", "html"):
        text = run("export", CLAUDE_SID, "--format", fmt).stdout
        assert "line 199" in text and "line 200\n" not in text and "line 999" not in text
        assert "800 more lines" in text.replace(",", "") and "--around" in text
    assert "line 999" in run("export", CLAUDE_SID, "--format", "json").stdout  # JSON is the whole document


# -- in a real browser ---------------------------------------------------------------------------------


def chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        found = shutil.which(name)
        if found:
            return found
    return None


def dump_dom(page: Path) -> str:
    with tempfile.TemporaryDirectory() as profile:
        proc = subprocess.run(
            [
                chromium(),
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                f"--user-data-dir={profile}",
                "--dump-dom",
                page.as_uri(),
            ],
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


needs_chromium = pytest.mark.skipif(
    chromium() is None, reason="no Chromium: `apt-get install -y chromium` (.ci/run installs it)"
)


@needs_chromium
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_html_in_a_real_browser(demo, run, tmp_path: Path) -> None:
    page = tmp_path / "claude-config.html"
    assert run("export", DEMO["claude-config"], "-o", str(page)).exit_code == 0
    dom = dump_dom(page)
    parsed = _DOM()
    parsed.feed(dom)
    text = " ".join("".join(parsed.text).split())
    for expected in (
        "Fix NoneType error in parse_config_v2",
        "pytest started failing in tests/test_config.py",
        "TypeError: 'NoneType' object is not subscriptable",
        "Checkpoint",
        "Config loader fix",
        "[x] Default the section to {}",
        "Bash: pytest -q tests/test_config.py",
        "error",
        "Exported from Claude Code by Voyager on 2026-12-01 12:00:00 UTC.",
    ):
        assert expected in text, expected
    assert parsed.tags.count("details") == page.read_text().count("<details") > 0


@needs_chromium
def test_hostile_html_in_a_real_browser(hostile, run, tmp_path: Path) -> None:
    page = tmp_path / "hostile.html"
    assert run("export", hostile, "-o", str(page)).exit_code == 0
    parsed = _DOM()
    parsed.feed(dump_dom(page))
    assert "script" not in parsed.tags and "img" not in parsed.tags
    text = "".join(parsed.text)
    assert "<script>alert(1)</script>" in text and "</pre></details><script>x()</script>" in text
