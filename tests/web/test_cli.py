"""`voyager web` as a user runs it: a real server on loopback that prints its URL and stops with the command."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import sys
import urllib.error
import urllib.request

import pytest

from tests.conftest import voyager_exe


def start(*args: str) -> tuple[subprocess.Popen, str]:
    """`voyager web --no-open …` running; the URL it printed."""
    proc = subprocess.Popen(
        [*voyager_exe(), "web", "--no-open", *args], stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    lines = []
    for line in proc.stderr:  # type: ignore[union-attr]
        lines.append(line)
        m = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if m:
            return proc, m.group(1)
    proc.wait(timeout=30)
    raise AssertionError("".join(lines))


def test_web_serves_loopback_with_a_token_and_stops_with_the_command(scanned):
    proc, url = start()
    try:
        port = int(re.search(r":(\d+)/", url).group(1))
        token = url.rsplit("=", 1)[1]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/sessions", timeout=10)
        assert refused.value.code == 403
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/sessions", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as res:
            assert b'"schema_version":1' in res.read()
        # ::1 too, when this machine has an IPv6 loopback.
        try:
            v6 = socket.create_connection(("::1", port), timeout=2)
        except OSError:
            v6 = None
        if v6 is not None:
            v6.close()
            req6 = urllib.request.Request(
                f"http://[::1]:{port}/api/sessions", headers={"Authorization": f"Bearer {token}"}
            )
            with urllib.request.urlopen(req6, timeout=10) as res:
                assert res.status == 200
        # Only loopback: the port is not open on any other address of this machine.
        others = {a[4][0] for a in socket.getaddrinfo(socket.gethostname(), None, socket.AF_INET)} - {"127.0.0.1"}
        for addr in [a for a in others if not a.startswith("127.")][:2]:
            with pytest.raises(OSError):
                socket.create_connection((addr, port), timeout=2).close()
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=30) in (0, 130)  # Ctrl-C's conventional status
        assert "Traceback" not in proc.stderr.read()  # type: ignore[union-attr]
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_a_new_start_has_a_new_token(scanned):
    tokens = []
    for _ in range(2):
        proc, url = start()
        tokens.append(url.rsplit("=", 1)[1])
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert tokens[0] != tokens[1] and len(tokens[0]) >= 32


def test_without_an_index_it_says_so(home, run):
    res = run("web", "--no-open")
    assert res.exit_code == 2 and "no index yet" in res.stderr


def test_without_the_web_extra_it_says_how_to_install_it(home, run, monkeypatch):
    monkeypatch.setitem(sys.modules, "uvicorn", None)  # an import of it now fails, as if not installed
    res = run("web", "--no-open")
    assert res.exit_code == 2
    assert res.stderr.strip() == "voyager: the web UI needs Starlette and uvicorn: pip install 'voyager-sessions[web]'"


def test_a_taken_port_is_one_line(scanned, run):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        res = run("web", "--no-open", "--port", str(s.getsockname()[1]))
    assert res.exit_code == 2 and "cannot listen on 127.0.0.1" in res.stderr and "Traceback" not in res.stderr


def test_serve_web_serves_the_page_beside_the_service_and_stops_with_it(scanned):
    proc = subprocess.Popen(
        [*voyager_exe(), "serve", "--web", "-q"], stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    url = None
    for line in proc.stderr:  # type: ignore[union-attr]
        m = re.search(r"(http://127\.0\.0\.1:\d+/\?token=\S+)", line)
        if m:
            url = m.group(1)
            break
    try:
        assert url, "no URL printed"
        port = int(re.search(r":(\d+)/", url).group(1))
        token = url.rsplit("=", 1)[1]
        req = urllib.request.Request(
            f"http://127.0.0.1:{port}/api/search?q=parse_config_v2", headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(req, timeout=10) as res:
            assert json.loads(res.read())["result"]["total"] == 2
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_serve_web_is_foreground_only(scanned, run):
    res = run("serve", "--web", "--detach")
    assert res.exit_code == 2 and "--web runs in the foreground" in res.stderr
