"""``voyager search`` on a terminal groups hits under their session (as ripgrep groups matches under their
file): one heading per session — agent, title, time, project, hit count — the resume command once, then each
matching event. A pipe, ``--flat``, ``--sessions`` and ``--json`` keep one self-contained hit after another."""

from __future__ import annotations

import os
import pty
import subprocess

from tests.support.run import voyager_exe


def on_a_terminal(*args: str) -> str:
    """What ``voyager ARGS`` prints with its stdout on a pseudo-terminal (stderr kept apart)."""
    main, side = pty.openpty()
    try:
        proc = subprocess.run(
            voyager_exe() + list(args),
            stdout=side,
            stderr=subprocess.PIPE,
            env=dict(os.environ),
            timeout=120,
            check=False,
        )
        os.close(side)
        side = -1
        chunks = []
        while True:
            try:
                data = os.read(main, 65536)
            except OSError:
                break
            if not data:
                break
            chunks.append(data)
        assert proc.returncode == 0, proc.stderr
        return b"".join(chunks).decode().replace("\r\n", "\n")
    finally:
        os.close(main)
        if side >= 0:
            os.close(side)


def test_a_terminal_gets_one_heading_per_session(corpus, run) -> None:
    assert run("scan", "-q").exit_code == 0
    shown = on_a_terminal("search", "parse_config_v2", "--color", "never")
    lines = shown.splitlines()
    assert lines[0].startswith("claude  ") and lines[0].endswith("2 hits"), shown
    assert lines[1].startswith("  $ cd /home/dev/shop && claude --resume "), shown
    assert shown.count("claude --resume") == 1  # the command once, not once a hit
    assert sum(1 for line in lines if line.startswith("  #")) == 2


def test_flat_sessions_and_pipes_keep_one_hit_after_another(corpus, run) -> None:
    assert run("scan", "-q").exit_code == 0
    flat = on_a_terminal("search", "parse_config_v2", "--color", "never", "--flat")
    piped = run("search", "parse_config_v2", "--no-refresh").stdout
    assert flat == piped and flat.count("resume: cd /home/dev/shop && claude --resume") == 2
    rows = on_a_terminal("search", "parse_config_v2", "--color", "never", "--sessions")
    assert rows.count("resume:") == 1 and "(2 hits)" in rows
