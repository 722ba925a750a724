"""``voyager ui`` in a real terminal: tmux runs it, send-keys types, capture-pane reads what a person sees.

The HOME holds a session whose prompt carries ESC/OSC sequences (clear screen, retitle, write
the clipboard) and Rich markup: the screen must show them as stand-ins and text, and nothing
else on it may change. A Chinese query finds its session. Enter hands the terminal to a stub
agent on ``PATH``, which records its argv and directory. ``voyager`` with no arguments on a
terminal opens the same app.

Then the loop a person goes through, on what real agents wrote (the captures of Claude Code,
Codex, Gemini CLI and Open Interpreter, whose prompts put the words searched for after a long
preamble), at 80×24 and 160×45: what is typed shows *in a result row and in the preview* without
another key; the keys the footer names work where the cursor is and never type into the box;
``Esc`` goes back one level at a time; ``Ctrl-C`` quits from anywhere; a resize lays the rows out
again; the help scrolls.
"""

from __future__ import annotations

import re

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support import toolcalls
from tests.support.captures import CAPTURES
from tests.support.picker import HOSTILE_SID, hostile_lines
from tests.support.run import voyager_exe
from tests.support.sessions import codex_session_lines, write_claude, write_codex

pytest.importorskip("textual")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

COLUMNS, LINES = 110, 32
#: The captures the loop is tried on: each prompt says `请运行这个命令并告诉我结果: `echo TOOLOUT_… 输出完成` —
#: 迁移 任务 PROMPT_…`: the searched words come after a preamble a row cut from its start never reaches.
LOOP_CAPTURES = ("claude-2.1.328", "codex-0.169.0", "gemini-0.61.0", "interpreter-0.4.3")


class Tmux:
    """One tmux server of the test's own (its socket in tmp_path), one window running a command."""

    def __init__(self, tmp: Path, env: dict[str, str]) -> None:
        self.socket = str(tmp / "tmux.sock")
        self.env = env
        self.name = f"v{uuid.uuid4().hex[:8]}"

    def tmux(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-S", self.socket, *args], capture_output=True, text=True, env=self.env, timeout=30
        ).stdout

    def start(self, command: str, columns: int = COLUMNS, lines: int = LINES) -> None:
        self.tmux("kill-session", "-t", self.name)
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(columns), "-y", str(lines), command)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", self.name, *(("-l",) if literal else ()), *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def resize(self, columns: int, lines: int) -> None:
        self.tmux("resize-window", "-t", self.name, "-x", str(columns), "-y", str(lines))

    def wait_for(self, text: str, timeout: float = 60.0, *, gone: bool = False) -> str:
        """The screen once it shows ``text`` (with ``gone``: once it no longer does); polled, the test fails
        with the last screen if it never does."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if (text in screen) != gone:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never {'left' if gone else 'appeared on'} the screen:\n{screen}")

    def wait_until(self, check, timeout: float = 60.0) -> str:  # noqa: ANN001 - a predicate on the screen
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if check(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the screen never became what the test waits for:\n{screen}")

    def kill(self) -> None:
        self.tmux("kill-server")


def terminal_env(bin_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    env.update(
        PATH=f"{bin_dir}:{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
        TERM="xterm-256color",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
        VOYAGER_NO_SERVER="1",
    )
    return env


@pytest.fixture
def terminal(home: Path, tmp_path: Path, run):
    write_claude(home, hostile_lines(), sid=HOSTILE_SID, project="-home-dev-evil")
    write_codex(home, codex_session_lines(cwd=str(tmp_path / "api")))
    (tmp_path / "api").mkdir()
    assert run("scan", "-q").exit_code == 0
    t, record = stub_codex_terminal(tmp_path)
    yield t, record
    t.kill()


def stub_codex_terminal(tmp_path: Path) -> tuple[Tmux, Path]:
    """A tmux of the test's own whose PATH starts with a stub ``codex`` that writes its cwd and arguments, one a line,
    to the returned file."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "resumed.txt"
    stub = bin_dir / "codex"
    stub.write_text(f'#!/bin/sh\n{{ pwd; printf "%s\\n" "$@"; }} > {record}\n')
    stub.chmod(0o755)
    return Tmux(tmp_path, terminal_env(bin_dir)), record


@pytest.fixture
def captured(home: Path, tmp_path: Path, run):
    """A HOME holding what four agents' real CLIs wrote, and the session of readable tool calls, scanned."""
    for name in LOOP_CAPTURES:
        shutil.copytree(
            CAPTURES / name, home, symlinks=True, dirs_exist_ok=True, ignore=shutil.ignore_patterns("truth.json")
        )
    write_claude(home, toolcalls.lines(), sid=toolcalls.SID, project=toolcalls.PROJECT)
    assert run("scan", "-q").exit_code == 0
    (tmp_path / "bin").mkdir()
    t = Tmux(tmp_path, terminal_env(tmp_path / "bin"))
    yield t
    t.kill()


def command(*args: str) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in [*voyager_exe(), *args]) + "; echo VOYAGER-EXITED-$?; sleep 30"


def panes(screen: str) -> tuple[list[str], list[str]]:
    """The result list's lines and the preview's, from a screen: side by side (split at the preview's border,
    ``▏``) or, below 100 columns, one over the other (split at the border line, ``▔▔▔``)."""
    lines = screen.split("\n")[:-2]  # the footer and the line under it
    body = lines[2:] if not lines[0].startswith("▊") else lines[4:]  # the box (one line, or three with borders)
    if any("▏" in line for line in body):
        return [line.split("▏")[0] for line in body], [line.split("▏", 1)[1] for line in body if "▏" in line]
    cut = next(i for i, line in enumerate(body) if line.lstrip().startswith("▔▔▔"))
    return body[:cut], body[cut + 1 :]


def excerpt_lines(results: list[str]) -> list[str]:
    """The rows' second lines: the excerpt under the agent, the title, the age and the project."""
    return [line for line in results if line.startswith("   ") and line.strip()]


def test_hostile_session_and_a_chinese_query_in_a_real_terminal(terminal) -> None:
    t, _ = terminal
    t.start(command("ui"))
    t.wait_for("2 sessions")
    t.keys("ESCAPEMARK", literal=True)
    t.wait_for("1 session ·")
    screen = t.wait_for("▶ #1 you")  # the preview has caught up with the selection, opened at its match
    assert "␛[2J" in screen and "[bold red]not" in screen and "[link=https://x]y[/link]" in screen, screen
    assert "pwned" in screen  # the OSC title sequence is text on the screen, not a new window title
    title = t.tmux("display-message", "-p", "-t", t.name, "#{pane_title}")
    assert "pwned" not in title
    t.keys("C-u")
    t.wait_for("search your sessions")  # the box is empty (Textual applies C-u after keys read with it)
    t.keys("终端转义", literal=True)
    screen = t.wait_for("终端转义")
    assert "1 session ·" in t.wait_for("1 session ·")
    t.keys("Escape")  # clears the box
    t.wait_for("search your sessions")
    t.keys("Escape")  # an empty box: quits
    t.wait_for("VOYAGER-EXITED-0")


def test_enter_resumes_the_session_in_its_agent(terminal, tmp_path: Path) -> None:
    t, record = terminal
    t.start(command("ui", "connection refused"))
    t.wait_for("1 session ·")
    t.keys("Enter")
    t.wait_for("VOYAGER-EXITED-0")
    lines = record.read_text().splitlines()
    assert lines == [str(tmp_path / "api"), "resume", "0199a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b"]


def test_voyager_alone_on_a_terminal_opens_the_picker(terminal) -> None:
    t, _ = terminal
    t.start(command())
    t.wait_for("2 sessions")
    t.keys("Escape")
    t.wait_for("VOYAGER-EXITED-0")


@pytest.mark.parametrize("size", [(80, 24), (160, 45)], ids=["80x24", "160x45"])
@pytest.mark.parametrize("query", ["PROMPT_T2CLAUcb1bba", "迁移"], ids=["identifier", "cjk"])
def test_what_is_typed_shows_in_a_row_and_in_the_preview(captured, size: tuple[int, int], query: str) -> None:
    t = captured
    t.start(command("ui"), *size)
    t.wait_for("sessions, newest first")
    t.keys(query, literal=True)
    screen = t.wait_until(lambda s: "best match first" in s and query in "\n".join(panes(s)[1]) and "▶" in s)
    results, preview = panes(screen)
    excerpts = excerpt_lines(results)
    assert excerpts and query in excerpts[0], screen  # the best row's excerpt shows the match, at any width
    if query == "迁移":  # every session says it: every row on screen shows it in its excerpt
        assert all(query in line for line in excerpts), screen
    assert any(query in line for line in preview), screen
    # The row keeps what a session is chosen by: its agent, the age and the project (Open Interpreter's captures
    # record neither a folder nor a time for their events: its rows have neither to show).
    rows = [line for line in results if line.strip() and not line.startswith("   ")]
    assert all(row.split()[0] in ("claude", "codex", "gemini", "open-interpreter") for row in rows), screen
    first = next(row for row in rows if row.split()[0] != "open-interpreter")
    assert "proj" in first and re.search(r"\b\d+(m|h|d|w|mo|y)\b|\bnow\b", first), screen
    assert all(len(line.rstrip()) <= size[0] for line in screen.split("\n"))


def test_keys_follow_the_cursor_and_esc_goes_back_one_level(captured) -> None:
    t = captured
    t.start(command("ui"), 80, 24)
    t.wait_for("sessions, newest first")
    t.keys("TOOLPROMPT", literal=True)
    # The footer is redrawn right after the rows (a moment later on a busy machine): wait for the box's keys.
    screen = t.wait_until(
        lambda s: "1 session · best match first" in s and "esc clear" in s.rstrip("\n").split("\n")[-1]
    )
    footer = screen.rstrip("\n").split("\n")[-1]
    assert "↓ results" in footer and "esc clear" in footer and "f1 keys" in footer, footer
    t.keys("Down")  # into the results: the footer names the keys that act there
    screen = t.wait_for("f full")
    footer = screen.rstrip("\n").split("\n")[-1]
    for named in ("⏎ resume", "f full", "n N match", "s sort", "a p t filter", "c copy", "esc back", "? keys"):
        assert named in footer, (named, footer)
    t.keys("f")  # the whole session
    screen = t.wait_for("j k scroll")
    assert "✎ /home/dev/ledger/ledger/db.py" in screen or "TOOLPROMPT" in screen
    t.keys("Escape")  # back to the results, the query kept
    screen = t.wait_for("f full")
    assert screen.split("\n")[0].strip() == "TOOLPROMPT" and "1 session · best match first" in screen
    # The list's letters act; none types into the box.
    t.keys("s")
    t.wait_for("1 session · newest first")
    t.keys("n")
    t.keys("?")
    screen = t.wait_for("In the results")
    t.keys("Escape")
    screen = t.wait_for("In the results", gone=True)
    assert screen.split("\n")[0].strip() == "TOOLPROMPT", screen
    t.keys("Escape")  # back to the box, the query kept
    screen = t.wait_for("esc clear")
    assert screen.split("\n")[0].strip() == "TOOLPROMPT"
    t.keys("Escape")  # the box cleared
    t.wait_for("sessions, newest first")
    t.keys("Escape")  # an empty box: quit
    t.wait_for("VOYAGER-EXITED-0")


@pytest.mark.parametrize("where", ["box", "list", "full view", "help"])
def test_ctrl_c_quits_from_anywhere(captured, where: str) -> None:
    t = captured
    t.start(command("ui", "迁移"), 80, 24)
    t.wait_for("best match first")
    if where != "box":
        t.keys("Down")
        t.wait_for("f full")
    if where == "full view":
        t.keys("f")
        t.wait_for("j k scroll")
    if where == "help":
        t.keys("F1")
        t.wait_for("In the results")
    t.keys("C-c")
    screen = t.wait_until(lambda s: "VOYAGER-EXITED-" in s)
    assert "VOYAGER-EXITED-0" in screen or "VOYAGER-EXITED-130" in screen


def test_a_resize_lays_the_rows_out_again_and_the_help_scrolls(captured) -> None:
    t = captured
    t.start(command("ui", "迁移"), 160, 45)
    screen = t.wait_for("best match first")
    assert any("▏" in line for line in screen.split("\n"))  # the preview beside the list
    t.resize(80, 24)

    def laid_out_again(screen: str) -> bool:
        if not any(line.lstrip().startswith("▔▔▔") for line in screen.split("\n")):
            return False  # not yet the list over the preview
        results, _ = panes(screen)
        heads = [line for line in results if line.strip() and not line.startswith("   ")]
        excerpts = excerpt_lines(results)
        # Every line is a row's head (its agent first) or its excerpt: no row laid out for 160 columns wraps; and
        # every head ends with its age and project. (Rows laid out wider than the list show neither: the picker
        # once stacked the panes on the app's resize, before the screen had its new width, and laid the rows out
        # for that moment's layout; a screen caught then failed the assertion below in 2 of 4 slow runs.)
        agents = ("claude", "codex", "gemini", "open-interpreter")
        return (
            bool(heads and excerpts)
            and all(line.split()[0] in agents for line in heads)
            and all("迁移" in line for line in excerpts)
            and all("proj" in line for line in heads if "open-interpreter" not in line)
        )

    screen = t.wait_until(laid_out_again)
    results, _ = panes(screen)  # each row fitted to 80 columns, its excerpt cut around the match again
    heads = [line for line in results if line.strip() and not line.startswith("   ")]
    assert all(len(line.rstrip()) <= 80 for line in screen.split("\n")), screen
    # Open Interpreter records no working directory; every other row names its project.
    assert all("proj" in line for line in heads if "open-interpreter" not in line), screen
    t.keys("F1")
    screen = t.wait_for("In the search box")
    assert "ctrl+c  ctrl+q" not in screen  # below the fold at 24 lines …
    t.keys("End")
    t.wait_for("ctrl+c  ctrl+q")  # … and reached by scrolling
    t.keys("Escape")
    t.wait_for("In the search box", gone=True)


def test_enter_hands_an_id_that_is_an_option_over_as_data(home: Path, tmp_path: Path, run) -> None:
    """Issue 38's probe through the picker: a Codex rollout whose id is ``--dangerously-bypass-approvals-and-
    sandbox``; Enter must give codex the id after ``--``, never as a flag."""
    bad = "--dangerously-bypass-approvals-and-sandbox"
    work = tmp_path / "work"
    work.mkdir()
    write_codex(home, codex_session_lines(sid=bad, cwd=str(work)), sid="0199a7b2-0000-7000-8000-0000000000ff")
    assert run("scan", "-q").exit_code == 0
    t, record = stub_codex_terminal(tmp_path)
    try:
        t.start(command("ui", "connection refused"))
        t.wait_for("1 session ·")
        t.keys("Enter")
        t.wait_for("VOYAGER-EXITED-0")
        assert record.read_text().splitlines() == [str(work), "resume", "--", bad]
    finally:
        t.kill()
