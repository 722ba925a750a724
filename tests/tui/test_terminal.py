"""``voyager ui`` in a real terminal: tmux runs it, send-keys types, capture-pane reads what a person sees.

The HOME holds a session whose prompt carries ESC/OSC sequences (clear screen, retitle, write
the clipboard) and Rich markup: the screen must show them as stand-ins and text, and nothing
else on it may change. A Chinese query finds its session. Enter hands the terminal to a stub
agent on ``PATH``, which records its argv and directory. ``voyager`` with no arguments on a
terminal opens the same app.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.support.picker import HOSTILE_SID, hostile_lines
from tests.support.run import voyager_exe
from tests.support.sessions import codex_session_lines, write_claude, write_codex

pytest.importorskip("textual")

pytestmark = [pytest.mark.slow, pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

COLUMNS, LINES = 110, 32


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

    def start(self, command: str) -> None:
        self.tmux("new-session", "-d", "-s", self.name, "-x", str(COLUMNS), "-y", str(LINES), command)

    def keys(self, *keys: str, literal: bool = False) -> None:
        self.tmux("send-keys", "-t", self.name, *(("-l",) if literal else ()), *keys)

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-t", self.name)

    def wait_for(self, text: str, timeout: float = 60.0) -> str:
        """The screen once it shows ``text`` (polled; the test fails with the last screen if it never does)."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)
        raise AssertionError(f"{text!r} never appeared on the screen:\n{screen}")

    def kill(self) -> None:
        self.tmux("kill-server")


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
    env = {k: v for k, v in os.environ.items() if not k.startswith("TMUX")}
    env.update(
        PATH=f"{bin_dir}:{Path(sys.executable).parent}:{env.get('PATH', '/usr/bin:/bin')}",
        TERM="xterm-256color",
        LANG="C.UTF-8",
        LC_ALL="C.UTF-8",
    )
    return Tmux(tmp_path, env), record


def command(*args: str) -> str:
    import shlex

    return " ".join(shlex.quote(a) for a in [*voyager_exe(), *args]) + "; echo VOYAGER-EXITED-$?; sleep 30"


def test_hostile_session_and_a_chinese_query_in_a_real_terminal(terminal) -> None:
    t, _ = terminal
    t.start(command("ui"))
    t.wait_for("2 sessions")
    t.keys("ESCAPEMARK", literal=True)
    t.wait_for("1 session ·")
    screen = t.wait_for("/home/dev/evil")  # the preview has caught up with the selection
    assert "␛[2J" in screen and "[bold red]not markup[/]" in screen, screen
    assert "pwned" in screen  # the OSC title sequence is text on the screen, not a new window title
    title = t.tmux("display-message", "-p", "-t", t.name, "#{pane_title}")
    assert "pwned" not in title
    t.keys("C-u")
    t.wait_for("search your sessions")  # the box is empty (Textual applies C-u after keys read with it)
    t.keys("终端转义", literal=True)
    screen = t.wait_for("终端转义")
    assert "1 session ·" in t.wait_for("1 session ·")
    t.keys("Escape")
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
