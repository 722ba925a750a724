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
import re
import shutil
import stat
import subprocess
import tempfile
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest

from tests.conftest import CLAUDE_SID, _line, claude_session_lines, write_claude
from voyager_sessions.demo import CORPUS
from voyager_sessions.export.markdown import fence, prose

GOLDEN = Path(__file__).parent / "golden" / "export"
REGEN = bool(os.environ.get("VOYAGER_REGEN_GOLDEN"))
#: 2026-12-01T12:00:00Z: when the golden exports say they were made.
EPOCH = 1796126400
#: The demo sessions exported: Claude Code (tools, an error, a checkpoint) and Codex (CJK, reasoning, a patch).
DEMO = {"claude-config": "claude:3f6c9a52-8d41-4e7b-a0c3-5b2e91d7f104",
        "codex-timeout": "codex:019a4b7c-2d31-7e05-8f6a-9c3b1e0d2a48"}


@pytest.fixture
def demo(home, run, monkeypatch) -> None:
    """The demo corpus indexed as ``voyager demo`` indexes it, and a checkpoint saved at a fixed time."""
    monkeypatch.setenv("VOYAGER_CLAUDE_HOME", str(CORPUS / "claude"))
    monkeypatch.setenv("VOYAGER_CODEX_HOME", str(CORPUS / "codex"))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(EPOCH))
    assert run("scan", "-q", "--provider", "claude", "--provider", "codex").exit_code == 0
    with monkeypatch.context() as m:
        m.setattr(time, "time", lambda: EPOCH - 3600.0)
        res = run("checkpoint", "save", DEMO["claude-config"], "--title", "Config loader fix",
                  "--status", "tests green", "--objective", "Stop parse_config_v2 failing without a database section",
                  "--done", "Default the section to {}", "--next", "Release 2.4.1", "--file", "src/inventory/config.py")
        assert res.exit_code == 0, res.stderr


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
    """Every event's text is in the Markdown (tool output below its cap), and the session's facts head it."""
    md = run("export", DEMO["codex-timeout"]).stdout
    doc = json.loads(run("show", DEMO["codex-timeout"], "--json").stdout)
    for ev in doc["events"]:
        if ev["seq"] >= 0:
            assert ev["text"].strip().splitlines()[0] in md, ev
    for fact in ("| Agent | Codex CLI (codex) |", "| Branch | fix/timeout-param |", "| Model | gpt-5-codex |",
                 "git@example.com:dev/config-service.git", "| Started | 2026-11-06 10:00:00 UTC |"):
        assert fact in md
    assert md.count("<details>") == md.count("</details>") > 0


# -- hostile text ---------------------------------------------------------------------------------------


HOSTILE_REPLY = ("Done. </details> <!-- hides the rest <script>alert(1)</script> <img src=https://tracker.example/x.png>\n"
                 "```python\nprint('a fence the reply never closes')\n")
HOSTILE_OUTPUT = "before\n````\n```\nafter ``` and \x1b[2J\x1b]52;c;cHduZWQ=\x07 and </pre></details><script>x()</script>"


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
        out.append(_line(rec))
    write_claude(home, out)
    assert run("scan", "-q").exit_code == 0
    return f"claude:{CLAUDE_SID}"


def test_fence_is_longer_than_any_backtick_run() -> None:
    assert fence("a ``` b ```` c").startswith("`````\n") and fence("plain").startswith("```\n")
    assert fence("x").endswith("\n```")


def test_prose_neutralises_html_and_closes_fences() -> None:
    md = prose(HOSTILE_REPLY)
    assert "</details>" not in md and "<!--" not in md and "<script>" not in md and "<img" not in md
    assert md.endswith("```")  # the reply's open fence closed by the export
    assert "`<b>`" in prose("keep `<b>` in code"), "code spans keep their text"
    assert prose("a > b") == "a > b"


def test_markdown_export_of_hostile_text_keeps_its_structure(hostile, run) -> None:
    md = run("export", hostile).stdout
    assert "\x1b" not in md and "\x07" not in md  # control characters made visible
    # Outside fences nothing opens HTML but the export's own folds; inside a fence the text may
    # hold anything, fenced longer than any backtick run in it.
    lines, fenced, folds = md.split("\n"), None, 0
    for line in lines:
        m = re.match(r"^(`{3,})", line)
        if fenced is None and m:
            fenced = m.group(1)
        elif fenced is not None and line == fenced:
            fenced = None
        elif fenced is None:
            if line.startswith("<details><summary>") and line.endswith("</summary>"):
                folds += 1
                line = line.removeprefix("<details><summary>").removesuffix("</summary>")
            elif line == "</details>":
                folds -= 1
                continue
            assert "<" not in line, line
    assert fenced is None and folds == 0
    assert "`````" in md  # the output with a four-backtick run sits in a five-backtick fence


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
    assert set(dom.tags) <= {"html", "head", "meta", "title", "style", "body", "main", "h1", "h2", "dl", "dt", "dd",
                             "section", "div", "details", "summary", "pre", "time", "span", "p", "code", "ul", "li",
                             "footer"}, set(dom.tags)
    text = "".join(dom.text)
    assert "<script>alert(1)</script>" in text and "</pre></details><script>x()</script>" in text
    assert "\x1b" not in page and "\x07" not in page
    assert re.search(r'<meta http-equiv="Content-Security-Policy" content="default-src &#x27;none&#x27;; '
                     r"style-src &#x27;sha256-[A-Za-z0-9+/=]+&#x27;", page)
    assert dom.attrs <= {"lang", "charset", "http-equiv", "content", "name", "class", "open"}, dom.attrs  # nothing to fetch


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
        out.append(_line(rec))
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
        proc = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                               "--disable-component-update", "--disable-sync", "--no-first-run",
                               f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
                              capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return proc.stdout


needs_chromium = pytest.mark.skipif(chromium() is None,
                                    reason="no Chromium: `apt-get install -y chromium` (.ci/run installs it)")


@needs_chromium
def test_html_in_a_real_browser(demo, run, tmp_path: Path) -> None:
    page = tmp_path / "claude-config.html"
    assert run("export", DEMO["claude-config"], "-o", str(page)).exit_code == 0
    dom = dump_dom(page)
    parsed = _DOM()
    parsed.feed(dom)
    text = " ".join("".join(parsed.text).split())
    for expected in ("Fix NoneType error in parse_config_v2", "pytest started failing in tests/test_config.py",
                     "TypeError: 'NoneType' object is not subscriptable", "Checkpoint", "Config loader fix",
                     "[x] Default the section to {}", "Bash: pytest -q tests/test_config.py", "error",
                     "Exported from Claude Code by Voyager on 2026-12-01 12:00:00 UTC."):
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
