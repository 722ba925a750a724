"""What a connection may cost ``voyager web`` (web/connections.py): a deadline to send its request, a cap on how
many it holds, and the owner's page answering through a flood of half-sent requests (issue 38: 1,100 of them, no
token needed, locked the owner out with the process out of descriptors)."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.run import voyager_exe
from tests.support.webpage import Served

pytest.importorskip("uvicorn")

HALF = b"GET /api/sessions HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: "


@pytest.fixture
def page(scanned, monkeypatch) -> Iterator[Served]:
    from voyager_sessions.web import connections

    monkeypatch.setattr(connections, "READ_TIMEOUT", 0.5)
    monkeypatch.setattr(connections, "budget", lambda listeners=2: (12, 64))
    p = Served(scanned)
    yield p
    p.stop()


def closed(sock: socket.socket, within: float = 30.0) -> bool:
    """True once the server has closed ``sock`` (end of file or a reset; an answer before it is read past), waiting
    at most ``within`` seconds."""
    deadline = time.monotonic() + within
    try:
        while (left := deadline - time.monotonic()) > 0:
            sock.settimeout(left)
            if sock.recv(65536) == b"":
                return True
    except ConnectionResetError:
        return True
    except TimeoutError:
        pass
    return False


@pytest.mark.slow
def test_a_request_that_never_arrives_whole_is_closed(page: Served) -> None:
    """A head sent half (or nothing at all), a body promised and never sent: each is closed at the deadline, with no
    answer; a request that arrives whole is answered, and a kept-alive connection that then sends half of its next
    request is closed too."""
    half = socket.create_connection(("127.0.0.1", page.port))
    half.sendall(HALF)
    silent = socket.create_connection(("127.0.0.1", page.port))
    body = socket.create_connection(("127.0.0.1", page.port))
    body.sendall(
        f"POST /api/sessions HTTP/1.1\r\nHost: 127.0.0.1:{page.port}\r\nContent-Length: 100\r\n\r\nab".encode()
    )
    assert closed(half) and closed(silent) and closed(body)
    kept = socket.create_connection(("127.0.0.1", page.port))
    kept.sendall(f"GET / HTTP/1.1\r\nHost: 127.0.0.1:{page.port}\r\n\r\n".encode())
    kept.settimeout(30)
    assert kept.recv(65536).startswith(b"HTTP/1.1 200")
    kept.sendall(b"GET / HTTP/1.1\r\nHost: ")
    assert closed(kept)
    assert page.get() == 200


def test_past_the_cap_the_longest_waiting_connection_makes_room(page: Served) -> None:
    """Twelve connections at most (the fixture's cap): the thirteenth closes the one that has waited longest for a
    request of its own; a request being answered is never the one closed."""
    first = socket.create_connection(("127.0.0.1", page.port))
    first.sendall(HALF)
    time.sleep(0.05)
    others = []
    for _ in range(12):
        s = socket.create_connection(("127.0.0.1", page.port))
        s.sendall(HALF)
        others.append(s)
    assert closed(first, within=0.4)  # long before its deadline: it made room
    assert page.get() == 200
    assert len(page.server.server_state.connections) <= 12
    for s in others:
        s.close()


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def flood_then_owner(scanned: Path, connections: int, nofile: int) -> None:
    """`voyager web` under ``ulimit -n nofile``, flooded with ``connections`` half-sent requests held open; then the
    owner's request answers, the server's descriptors stay under the limit, it burns no CPU holding the flood
    (measured as CPU time, not wall time), says nothing about descriptors, and stops at once on Ctrl-C."""
    env = dict(os.environ, VOYAGER_NO_SERVER="1")
    proc = subprocess.Popen(
        ["prlimit", f"--nofile={nofile}", *voyager_exe(), "web", "--no-open"],
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert proc.stderr is not None  # stderr=PIPE
    try:
        for line in proc.stderr:
            m = re.search(r"http://127\.0\.0\.1:(\d+)/#token=(\S+)", line)
            if m:
                port, token = int(m.group(1)), m.group(2)
                break
        flood = []
        for _ in range(connections):
            s = socket.create_connection(("127.0.0.1", port), timeout=30)
            s.sendall(HALF)
            flood.append(s)
        before = _cpu_seconds(proc.pid)
        time.sleep(2)
        held = _cpu_seconds(proc.pid) - before
        fds = len(os.listdir(f"/proc/{proc.pid}/fd"))
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/sessions", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(req, timeout=30) as res:
            assert res.status == 200 and b'"schema_version":1' in res.read()
        assert fds < nofile - 16, fds
        assert held < 1.0, f"{held:.2f} s of CPU in 2 s holding {connections} half-open connections"
        for s in flood:
            s.close()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) in (0, 130)
    said = proc.stderr.read()
    assert "Too many open files" not in said and "out of system resource" not in said and "Traceback" not in said, said


@pytest.mark.slow
def test_a_flood_of_half_sent_requests_leaves_the_owner_in(scanned: Path) -> None:
    flood_then_owner(scanned, connections=300, nofile=128)


@pytest.mark.slow
def test_the_probes_flood_leaves_the_owner_in(scanned: Path) -> None:
    """Issue 38's numbers: 1,100 half-sent requests, 256 descriptors."""
    flood_then_owner(scanned, connections=1100, nofile=256)
