"""What ``voyager search --no-refresh`` imports: the modules a search needs, and nothing heavier.

Every ``voyager search`` pays for its imports before it answers (about half of a search's
time is start-up), so a heavy module appearing on that path is a regression a person feels
on every search: the picker's, the watcher's or the web page's libraries, click, the scan,
an agent's adapter. The lists below are what a search needs today; a module that joins them
must be worth its time.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

#: Voyager's own modules a search without a refresh imports (a server's client imports far fewer).
SEARCH_MODULES = {
    "voyager_sessions",
    "voyager_sessions.api",
    "voyager_sessions.api.requests",
    "voyager_sessions.cli",
    "voyager_sessions.cli.argv",
    "voyager_sessions.cli.commands",
    "voyager_sessions.cli.common",
    "voyager_sessions.cli.main",
    "voyager_sessions.cli.options",
    "voyager_sessions.cli.present",
    "voyager_sessions.cli.reading",
    "voyager_sessions.core",
    "voyager_sessions.core.errors",
    "voyager_sessions.core.filters",
    "voyager_sessions.core.isotime",
    "voyager_sessions.core.jsontext",
    "voyager_sessions.core.lastsearch",
    "voyager_sessions.core.model",
    "voyager_sessions.core.paths",
    "voyager_sessions.core.plural",
    "voyager_sessions.core.remote",
    "voyager_sessions.core.textsafe",
    "voyager_sessions.core.wire",
    "voyager_sessions.ingest",
    "voyager_sessions.ingest.adapters",
    "voyager_sessions.ingest.manifest",
    "voyager_sessions.scan",
    "voyager_sessions.scan.progress",
    "voyager_sessions.search",
    "voyager_sessions.search.analyzer",
    "voyager_sessions.search.engine",
    "voyager_sessions.search.index",
    "voyager_sessions.search.prepare",
    "voyager_sessions.search.syntax",
    "voyager_sessions.search.plan",
    "voyager_sessions.search.compiler",
    "voyager_sessions.search.snippets",
    "voyager_sessions.search.tiers",
    "voyager_sessions.store",
    "voyager_sessions.store.db",
    "voyager_sessions.store.state",
}

#: Libraries (top-level names) a search may import beside the standard library's.
THIRD_PARTY = {"msgspec", "tantivy"}

#: Standard modules too heavy for start-up, which used to come along (``typing_extensions`` by way of msgspec
#: brought ``inspect``, ``ast``, ``dis``), or which only other commands need.
HEAVY = {
    "asyncio",
    "ast",
    "dis",
    "inspect",
    "multiprocessing",
    "subprocess",
    "concurrent",
    "email",
    "http",
    "logging",
    "tokenize",
}

_PROBE = (
    "import atexit, json, sys\n"
    "atexit.register(lambda: sys.stderr.write('\\nMODULES ' + json.dumps(sorted(sys.modules)) + '\\n'))\n"
    "from voyager_sessions.cli.main import main\n"
    "main()\n"
)


def _imported(*argv: str) -> set[str]:
    env = dict(os.environ, VOYAGER_NO_SERVER="1")
    proc = subprocess.run(
        [sys.executable, "-c", _PROBE, *argv], capture_output=True, text=True, env=env, timeout=120, check=False
    )
    line = proc.stderr.rsplit("MODULES ", 1)[-1]
    return set(json.loads(line))


@pytest.fixture
def indexed(corpus, run):
    assert run("scan").exit_code == 0


def test_a_search_imports_only_what_it_needs(indexed):
    mods = _imported("search", "数据", "--json", "--no-refresh")
    own = {m for m in mods if m.split(".")[0] == "voyager_sessions"}
    assert own == SEARCH_MODULES, f"new: {sorted(own - SEARCH_MODULES)}; gone: {sorted(SEARCH_MODULES - own)}"
    stdlib = set(sys.stdlib_module_names)
    third = {m.split(".")[0] for m in mods} - stdlib - {"voyager_sessions", "__main__", "_virtualenv"}
    third = {m for m in third if not m.startswith("_") and not m.startswith("__editable__")}
    assert third <= THIRD_PARTY, sorted(third - THIRD_PARTY)
    assert not HEAVY & mods, sorted(HEAVY & mods)
    assert "typing_extensions" not in mods  # installed here (Textual, watchfiles need it): left out of sight


def test_a_search_reads_how_far_a_scan_got_without_importing_the_scan(indexed):
    mods = _imported("search", "数据", "--json", "--no-refresh")
    assert "voyager_sessions.scan.progress" in mods
    assert not {m for m in mods if m.startswith("voyager_sessions.scan.") and m != "voyager_sessions.scan.progress"}


def test_a_search_printing_text_imports_no_click(indexed):
    """Text goes out through click's echo only inside a click command: a search printing rows loads no click."""
    mods = _imported("search", "数据", "--no-refresh")
    assert "click" not in mods and not HEAVY & mods, sorted(({"click"} | HEAVY) & mods)
    assert "voyager_sessions.cli.present" in mods  # it did print rows as text


def test_text_without_click_is_written_as_click_writes_it(monkeypatch):
    import io

    from voyager_sessions.cli.common import echo

    monkeypatch.delitem(sys.modules, "click")  # as in a search, which never imported it
    styled = "\x1b[1m数据\x1b[0m row"
    out, err = io.StringIO(), io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    echo(styled)  # not a terminal: styles dropped, as click.echo drops them
    echo(styled, color=True)
    echo("said on stderr", err=True)
    assert out.getvalue() == "数据 row\n" + styled + "\n" and err.getvalue() == "said on stderr\n"
    raw = io.BytesIO()
    ascii_out = io.TextIOWrapper(raw, encoding="ascii")
    monkeypatch.setattr(sys, "stdout", ascii_out)
    echo("数据 ok")  # a stream set up as ASCII still gets the text, in UTF-8 (click's rule)
    assert raw.getvalue() == "数据 ok\n".encode()
    assert "click" not in sys.modules


#: Standard modules only a refresh that finds something to read, or to continue, needs: a refresh that finds
#: nothing changed must not pay for them (OpenSSL's hashes, zip and its compressors, starting a process).
REFRESH_UNNEEDED = {"_hashlib", "hashlib", "zipfile", "shutil", "bz2", "lzma", "subprocess"}


def test_a_refresh_that_finds_nothing_changed_imports_no_reading_machinery(indexed):
    assert _imported("search", "数据", "--json")  # the first refresh may have something to settle
    mods = _imported("search", "数据", "--json")
    assert "voyager_sessions.scan.run" in mods  # it did refresh
    assert not REFRESH_UNNEEDED & mods, sorted(REFRESH_UNNEEDED & mods)
    # Nor the scan's own reading: a source's read into rows, its events' chunks.
    assert not {"voyager_sessions.scan.source_read", "voyager_sessions.scan.chunks"} & mods
    # Claude Code's and Codex's adapters found their sessions (the stat pass), and read none: their formats' readers
    # (Structs, the reading kit) are loaded only for a file that changed.
    adapters = "voyager_sessions.ingest.adapters."
    assert {adapters + "claude", adapters + "codex"} <= mods
    assert not {adapters + "_claude_read", adapters + "_codex_read"} & mods
    # DeepSeek Harness's adapter looks in every session's folder (hints), and decompresses nothing there.
    assert adapters + "dsh" in mods and not {"voyager_sessions.ingest.zstd", "zstandard"} & mods


def test_a_refresh_that_finds_a_change_reads_it_with_the_format_s_reader(corpus):
    """The other side: the reader is imported when a file changed (here: none was indexed yet)."""
    mods = _imported("search", "数据", "--json")
    assert {"voyager_sessions.ingest.adapters._claude_read", "voyager_sessions.ingest.adapters._codex_read"} <= mods
