"""`voyager watch`: a long-running rescan that picks up new turns and stops on Ctrl-C."""

from __future__ import annotations

import os
import signal
import subprocess
import time

import pytest

from tests.support.run import voyager_exe
from tests.support.sessions import claude_session_lines, write_claude


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_watch_picks_up_an_appended_message(home, tmp_path):
    lines = claude_session_lines()
    path = write_claude(home, lines[:3])
    env = dict(os.environ)
    subprocess.run(voyager_exe() + ["scan", "-q"], env=env, check=True, timeout=60)
    # faulthandler: if watch ever hangs, SIGABRT makes it print every thread's stack.
    err = tmp_path / "watch.stderr"
    # SIGINT back to its default in the child: a test run started in the background
    # (``cmd &`` in a script) inherits SIGINT ignored, and Python then keeps ignoring it,
    # as a background job should; Ctrl-C from a terminal is what this test stands for.
    with err.open("wb") as err_fh:
        proc = subprocess.Popen(
            voyager_exe() + ["watch", "--interval", "0.3", "-q"],
            env={**env, "PYTHONFAULTHANDLER": "1"},
            stdout=subprocess.DEVNULL,
            stderr=err_fh,
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
    try:
        time.sleep(0.5)
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(lines[5])
        deadline = time.monotonic() + 20
        found = False
        while time.monotonic() < deadline and not found:
            r = subprocess.run(
                voyager_exe() + ["search", "--no-refresh", "--json", "guard"],
                env=env,
                capture_output=True,
                text=True,
                timeout=60,
            )
            found = r.returncode == 0
            time.sleep(0.2)
        assert found, "watch did not index the appended message"
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGABRT)
            proc.wait(timeout=20)
            pytest.fail("watch ignored SIGINT for 20 s; its stacks:\n" + err.read_text(errors="replace")[-6000:])


@pytest.mark.parametrize("command", ["watch", "serve"])
@pytest.mark.parametrize("interval", ["nan", "inf", "1e10", "0.1"])
def test_an_interval_that_is_no_number_of_seconds_is_a_usage_error(home, run, command, interval):
    # nan passed click's range and made a busy loop; inf or past time_t killed the waiting thread (exit 4, or a
    # server whose background rescans had silently stopped).
    res = run(command, "--interval", interval)
    assert res.exit_code == 2 and res.stdout == ""
    assert res.stderr.startswith("voyager: Invalid value for '--interval'") and res.stderr.count("\n") == 1


@pytest.mark.parametrize("quiet", [True, False])
def test_collisions_with_another_scan_are_said_once_and_not_at_all_with_q(home, run, monkeypatch, quiet):
    """`watch -q` printed "another scan is running … retrying" at every collision with `serve` or `scan` (round two),
    then still once (round three): a collision is no failure, and -q says nothing but failures."""
    from voyager_sessions.api import freshness
    from voyager_sessions.core.lock import ScanBusy
    from voyager_sessions.scan import summary as summary_mod

    def fake_keep_fresh(scan, *, interval, on_scan, on_error, stop=None):
        for _ in range(3):
            on_error(ScanBusy(4242), interval)
        on_scan(summary_mod.ScanSummary())
        on_error(ScanBusy(4242), interval)

    monkeypatch.setattr(freshness, "keep_fresh", fake_keep_fresh)
    res = run("watch", "--interval", "1", *(["-q"] if quiet else []))
    assert res.stderr.count("another scan is running") == (0 if quiet else 2), res.stderr
    if quiet:
        assert res.stderr == "", res.stderr
