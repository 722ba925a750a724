"""The progress bar of ``voyager scan``: on a terminal only, sessions and bytes, a rate, the time left; and a scan
started while another process builds the index follows it instead of failing."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

import synth
from voyager_sessions.cli import progress as bar_mod
from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan import progress, scan
from voyager_sessions.scan import run as run_mod
from voyager_sessions.scan.progress import ScanProgress
from voyager_sessions.store.state import StateStore


def _p(**kw) -> ScanProgress:
    base = dict(
        phase="all",
        sources_done=3_210,
        sources_total=15_000,
        bytes_done=41_000_000,
        bytes_total=194_000_000,
        sessions_done=3_210,
        sessions_total=15_000,
        events=48_000,
        seconds=2.0,
        phase_seconds=2.0,
    )
    base.update(kw)
    return ScanProgress(**base)


def test_the_line_says_sessions_bytes_rate_and_time_left():
    text = bar_mod.line(_p(), 120)
    assert text.startswith("indexing [")
    assert "3,210/15,000 sessions" in text and "41.0 MB/194.0 MB" in text
    assert "1,605 sessions/s" in text and "s left" in text
    assert len(bar_mod.line(_p(), 60)) < 60  # never wider than the terminal
    words = bar_mod.line(_p(phase="words"), 120)
    assert words.startswith("indexing what was said [")
    tools = bar_mod.line(_p(phase="tools", tools_done=500, tools_total=15_000, phase_seconds=1.0), 120)
    assert tools.startswith("indexing tool output [") and "500/15,000 sessions" in tools and "29s left" in tools


def test_the_bar_waits_before_drawing_and_wipes_its_line(monkeypatch):
    out = io.StringIO()
    b = bar_mod.Bar(out)
    b(_p())
    assert out.getvalue() == ""  # a quick scan says nothing
    monkeypatch.setattr(bar_mod, "QUIET_S", 0.0)
    monkeypatch.setattr(bar_mod, "REDRAW_S", 0.0)
    b = bar_mod.Bar(out)
    b(_p())
    assert out.getvalue().startswith("\rindexing [")
    b.close()
    assert out.getvalue().endswith("\r") and out.getvalue().count("\r") == 3


def _corpus(home: Path, n: int) -> None:
    for i in range(n):
        path = synth.write_claude(
            synth.generate(seed=3000 + i, messages=40, output_bytes=400), home / ".claude/projects"
        )
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def test_no_bar_off_a_terminal_or_with_q(home, run):
    _corpus(home, 5)
    res = run("scan")
    assert res.exit_code == 0 and "\r" not in res.stderr and "[" not in res.stderr


@pytest.mark.slow
def test_the_bar_on_a_terminal(home):
    """Through a pseudo-terminal, as a person runs it: the bar is drawn while it scans, then wiped."""
    _corpus(home, 400)
    master, slave = os.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "voyager_sessions", "scan"],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=slave,
        env=dict(os.environ, COLUMNS="120"),
    )
    os.close(slave)
    seen = bytearray()
    while True:
        try:
            chunk = os.read(master, 65536)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
    out, _ = proc.communicate(timeout=300)
    os.close(master)
    assert proc.returncode == 0
    text = seen.decode()
    assert "indexing" in text and "/400 sessions" in text and "MB" in text and "left" in text, text[-500:]
    assert b"Scanned 400 sources" in out


@pytest.mark.slow
def test_a_scan_while_another_builds_the_index_follows_it(home, monkeypatch):
    """A search left a scan building the index in the background: ``voyager scan`` waits for it, then scans."""
    _corpus(home, 6)
    monkeypatch.setattr(run_mod, "FIRST_COMMIT_S", 0.0)
    monkeypatch.setattr(run_mod, "COMMIT_MAX_S", 0.0)
    reached, release = threading.Event(), threading.Event()

    def pause(p) -> None:
        if p.sources_done == 2:
            reached.set()
            assert release.wait(60)

    data = Path(os.environ["VOYAGER_HOME"])
    t = threading.Thread(target=lambda: scan(data, workers=1, progress=pause))
    t.start()
    try:
        assert reached.wait(60)
        record = progress.decode(StateStore(DataDir(data).state_db, readonly=True).get_meta(progress.META_KEY))
        assert record is not None and record.sources_done == 2
        proc = subprocess.Popen(
            [sys.executable, "-m", "voyager_sessions", "scan", "--json"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        time.sleep(1.0)
        assert proc.poll() is None, proc.communicate()  # waiting, not "another scan is running"
    finally:
        release.set()
        t.join(60)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 0, err
    assert json.loads(out)["new"] == 0  # the other scan read it all
