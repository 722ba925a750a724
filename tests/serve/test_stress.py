"""Eight clients, 500 requests each, at once, while sessions grow and scans run: no error, no wrong answer."""

from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from tests.support.serving import ServerProcess, cli, make_env, write_corpus
from tests.support.sessions import CODEX_SID
from voyager_sessions.cli import commands, present
from voyager_sessions.core import remote as client

CLIENTS = 8
REQUESTS = 500

#: Answers that growing another session cannot change, half of them refreshing first. Each
#: ranks by time or has one hit only: relevance scores (and so the order of near-equal hits)
#: move with the index's statistics as documents are added.
QUERIES: list[list[str]] = [
    ["search", "parse_config_v2", "--session", "5f1c", "--sort", "recent"],
    ["search", "parse_config_v2", "--session", "0d5e", "--sort", "recent", "-C", "1", "--no-refresh"],
    ["search", "systemctl", "--sessions", "--no-refresh"],
    ["search", "postgres", "--provider", "codex", "--sort", "recent", "--json"],
    ["search", "port 5432", "-C", "1", "--no-refresh"],
    ["search", "ERR_CONN_REFUSED_42", "--jsonl", "--sort", "recent"],
    ["search", "qwertyuiopasdf", "--no-refresh"],
    ["search", "(", "--no-refresh"],
    ["list", "--provider", "codex", "--json"],
    ["show", CODEX_SID, "--json"],
    ["show", CODEX_SID[:6]],
    ["show", "nope"],
]

GROWING_SID = "9a9a9a9a-1111-4222-8333-444444444444"


def _growing_line(n: int) -> str:
    return (
        json.dumps(
            {
                "sessionId": GROWING_SID,
                "cwd": "/home/dev/growing",
                "version": "2.0.14",
                "isSidechain": False,
                "userType": "external",
                "type": "user",
                "uuid": f"g{n}",
                "parentUuid": f"g{n - 1}" if n else None,
                "timestamp": f"2026-11-22T10:{n // 60 % 60:02d}:{n % 60:02d}.000Z",
                "message": {"role": "user", "content": f"growing line number {n} about nothing in particular"},
            }
        )
        + "\n"
    )


def _request(env: dict, argv: list[str]) -> tuple[dict, present.View, dict]:
    """The API request of ``voyager ARGV``, how it is shown (``auto`` colour: never, for a pipe), and the wire request."""
    params = commands.parse(argv[0], argv[1:])
    assert params is not None, argv
    fields, view = present.request(argv[0], params, lambda mode: mode == "always")
    return fields, view, client.base_request(argv[0], env["VOYAGER_HOME"], fields, environ=env)


class _Captured(present.Writer):
    def __init__(self) -> None:
        self.out = bytearray()
        self.err: list[str] = []

    def text(self, line: str, *, err: bool = False, color: bool | None = None) -> None:
        if err:
            self.err.append(line + "\n")
        else:
            self.out += (line + "\n").encode()

    def raw(self, data: bytes) -> None:
        self.out += data


def _rendered(cmd: str, fields: dict, view: present.View, header: dict, body: bytes) -> tuple[int, bytes, str]:
    """What the CLI prints for a server's answer (stderr a pipe): exit code, stdout, stderr."""
    out = _Captured()
    for text, quiet_ok in header["notices"]:
        if not quiet_ok:
            out.text(present.notice_line(text), err=True)
    if "failure" in header:
        out.text(header["failure"], err=True)
        code = header["exit"]
    else:
        code = present.render(cmd, fields, body, view, out)
    return code, bytes(out.out), "".join(out.err)


@pytest.mark.slow
def test_eight_clients_at_once_while_scans_run(tmp_path):
    env = make_env(tmp_path)
    write_corpus(env)
    growing = Path(env["HOME"]) / ".claude" / "projects" / "-home-dev-growing" / f"{GROWING_SID}.jsonl"
    growing.parent.mkdir(parents=True)
    growing.write_text(_growing_line(0))
    assert cli(env, "scan", "-q", server=False).code == 0
    expected = {}
    for argv in QUERIES:
        want = cli(env, *argv, server=False)
        expected[tuple(argv)] = (want.code, want.out, want.err)
    requests = [(tuple(argv), _request(env, argv)) for argv in QUERIES]
    server = ServerProcess(env, interval=0.2)  # its own scans, five a second
    stop = threading.Event()
    failures: list[str] = []
    answered = [0] * CLIENTS
    scans = [0]

    def grow() -> None:
        n = 1
        while not stop.is_set():
            with growing.open("a") as fh:
                fh.write(_growing_line(n))
            n += 1
            time.sleep(0.1)

    def scan_elsewhere() -> None:  # another process scanning, as `voyager scan` or `watch` would
        while not stop.is_set():
            got = cli(env, "scan", "-q", "--wait", "30", server=False)  # a loaded machine slows the server's scans too
            if got.code != 0:
                failures.append(f"scan: {got}")
            scans[0] += 1

    def ask(i: int) -> None:
        for k in range(REQUESTS):
            key, (fields, view, request) = requests[(i + k) % len(requests)]
            got = client.exchange(str(server.ddir.socket), request, ack_timeout=10.0, idle_timeout=30.0)
            if got is None:
                failures.append(f"client {i}: no answer to {key}")
                continue
            answer = _rendered(key[0], fields, view, *got)
            if answer != expected[key]:
                failures.append(f"client {i}: {key}: {answer!r} != {expected[key]!r}")
            answered[i] += 1

    background = [threading.Thread(target=grow), threading.Thread(target=scan_elsewhere)]
    clients = [threading.Thread(target=ask, args=(i,)) for i in range(CLIENTS)]
    t0 = time.monotonic()
    try:
        for t in background + clients:
            t.start()
        for t in clients:
            t.join(600)
    finally:
        stop.set()
        for t in background:
            t.join(120)
        status = server.status()
        code = server.stop()
    seconds = time.monotonic() - t0
    for f in failures[:3]:
        print(f)
    assert not failures, failures[:5]
    assert answered == [REQUESTS] * CLIENTS
    assert status["errors"] == 0 and status["fallbacks"] == 0
    assert status["scans"] > 3 and scans[0] > 0
    assert code == 0
    # The growth was indexed all along: the last scan saw it.
    grown = json.loads(cli(env, "search", "growing", "--json", "-n", "1").out)["total"]
    assert grown > 1
    print(f"\n{CLIENTS * REQUESTS} requests in {seconds:.1f} s; server scans {status['scans']}, other scans {scans[0]}")
