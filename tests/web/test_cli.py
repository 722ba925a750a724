"""`voyager web` as a user runs it: a real server on loopback that prints its URL and stops with the command."""

from __future__ import annotations

import http.client
import json
import os
import re
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request

import pytest

from tests.support.run import voyager_exe


def start(*args: str, said: list[str] | None = None) -> tuple[subprocess.Popen, str]:
    """`voyager web --no-open …` running; the URL it printed (``said``: gets the lines printed up to it)."""
    proc = subprocess.Popen(
        [*voyager_exe(), "web", "--no-open", *args], stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    lines = [] if said is None else said
    assert proc.stderr is not None  # stderr=PIPE
    for line in proc.stderr:
        lines.append(line)
        m = re.search(r"(http://127\.0\.0\.1:\d+/#token=\S+)", line)
        if m:
            return proc, m.group(1)
    proc.wait(timeout=30)
    raise AssertionError("".join(lines))


def _get(url: str, token: str) -> dict:
    with urllib.request.urlopen(
        urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"}), timeout=10
    ) as res:
        return json.loads(res.read())


def _refused(port: int) -> bool:
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        return True
    return False


def test_web_serves_loopback_with_a_token_and_stops_with_the_command(scanned):
    proc, url = start()
    try:
        port = int(re.search(r":(\d+)/", url).group(1))
        token = url.rsplit("=", 1)[1]
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/api/sessions", timeout=10)
        assert refused.value.code == 401
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
        assert "Traceback" not in proc.stderr.read()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


@pytest.mark.slow
def test_a_restart_on_the_same_port_right_after_ctrl_c(scanned):
    """Issue 38: a connection the server closed sits in TIME_WAIT for a minute; without SO_REUSEADDR a new
    `voyager web --port N` right after Ctrl-C could not listen on N until it passed."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    for _ in range(2):
        proc, url = start("--port", str(port))
        assert f":{port}/" in url
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)  # a kept-alive connection
        conn.request("GET", "/")
        res = conn.getresponse()
        assert res.status == 200 and res.read()  # read whole: a close with unread data is a reset, not TIME_WAIT
        proc.send_signal(signal.SIGINT)  # the server closes it first: TIME_WAIT is on the server's side
        assert proc.wait(timeout=30) in (0, 130)
        conn.close()
        assert "cannot listen" not in proc.stderr.read()


@pytest.mark.slow
def test_the_browser_is_opened_without_the_token_on_its_command_line(scanned, tmp_path):
    """Issue 38: `/proc/*/cmdline` is readable by every user, and a browser keeps its argv for its whole life.
    The browser (here a stub named by $BROWSER, as Python's webbrowser reads it) is handed a private file in
    the data dir that sends it to the page; the token is in that file only, and the file goes with the page."""
    record = tmp_path / "browser.json"
    stub = tmp_path / "browser"
    stub.write_text(
        f"#!{sys.executable}\nimport json, os, sys\nfrom urllib.parse import urlsplit, unquote\n"
        "path = unquote(urlsplit(sys.argv[1]).path)\n"
        "st = os.stat(path)\n"
        f"json.dump({{'argv': sys.argv, 'cmdline': open('/proc/self/cmdline', 'rb').read().decode(), "
        "'mode': st.st_mode & 0o777, 'uid': st.st_uid, 'page': open(path).read()}, "
        f"open({str(record)!r}, 'w'))\n"
    )
    stub.chmod(0o755)
    env = dict(os.environ, BROWSER=str(stub))
    proc = subprocess.Popen([*voyager_exe(), "web"], stderr=subprocess.PIPE, text=True, env=env)
    token = None
    for line in proc.stderr:
        m = re.search(r"/#token=(\S+)", line)
        if m:
            token = m.group(1)
            break
    try:
        assert token
        deadline = time.monotonic() + 60
        while not record.exists():
            assert time.monotonic() < deadline, "the browser was never started"
            time.sleep(0.1)
        time.sleep(0.2)
        seen = json.loads(record.read_text())
        assert token not in " ".join(seen["argv"]) and token not in seen["cmdline"]
        assert seen["argv"][1].startswith("file://") and str(scanned) in seen["argv"][1]
        assert seen["mode"] == 0o600 and seen["uid"] == os.geteuid()
        assert f"#token={token}" in seen["page"] and 'http-equiv="refresh"' in seen["page"]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=30)
    assert not list(scanned.glob("web-open-*.html"))  # gone with the page


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


@pytest.mark.slow
def test_serve_web_serves_the_page_beside_the_service_and_stops_with_it(scanned):
    proc = subprocess.Popen(
        [*voyager_exe(), "serve", "--web", "-q"], stderr=subprocess.PIPE, text=True, env=dict(os.environ)
    )
    url = None
    for line in proc.stderr:
        m = re.search(r"(http://127\.0\.0\.1:\d+/#token=\S+)", line)
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
        # One of the server's pages, reading through its readers.
        from voyager_sessions.core.paths import DataDir
        from voyager_sessions.serve import control

        assert control.status(DataDir(scanned), timeout=5)["web_pages"] == [port]
    finally:
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()


def test_serve_web_is_foreground_only(scanned, run):
    res = run("serve", "--web", "--detach")
    assert res.exit_code == 2 and "--web runs in the foreground" in res.stderr


# -- beside a running `voyager serve` ---------------------------------------------------------


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_web_asks_a_running_server_for_the_page_and_gives_it_back(scanned, run):
    from tests.support.serving import ServerProcess

    server = ServerProcess(dict(os.environ))
    try:
        said: list[str] = []
        proc, url = start("--port", "0", said=said)
        try:
            assert f"through voyager serve (pid {server.pid})" in "".join(said)
            port = int(re.search(r":(\d+)/", url).group(1))
            token = url.rsplit("=", 1)[1]
            # The page is the server's: its process listens on the port, and answers from its index.
            assert server.status()["web_pages"] == [port]
            assert f"web pages  127.0.0.1:{port} " in run("serve", "status").stdout
            found = _get(f"http://127.0.0.1:{port}/api/search?q=parse_config_v2", token)["result"]
            # (where the meaning model is installed, the sessions meaning brings in follow the word rows)
            assert [h["match"] for h in found["hits"]][:2] == ["all", "all"]
            assert sum(h["match"] != "meaning" for h in found["hits"]) == 2
            with pytest.raises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/api/sessions", timeout=10)
            assert refused.value.code == 401
        finally:
            proc.send_signal(signal.SIGINT)
            assert proc.wait(timeout=40) == 0
        assert "Traceback" not in proc.stderr.read()
        # Given back before the command returned: nothing listens now, and the server runs on without it.
        assert _refused(port)
        assert server.status()["web_pages"] == []
        assert server.proc.poll() is None
        # A second command gets a page of its own, with a new token; SIGTERM gives it back too.
        proc, url2 = start()
        assert url2.rsplit("=", 1)[1] != token
        port2 = int(re.search(r":(\d+)/", url2).group(1))
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=40) == 0 and _refused(port2)
    finally:
        server.stop()


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_page_lent_by_a_server_that_stops_stops_with_it_and_the_command_says_so(scanned):
    from tests.support.serving import ServerProcess

    server = ServerProcess(dict(os.environ))
    try:
        proc, url = start()
        port = int(re.search(r":(\d+)/", url).group(1))
        server.stop()
        assert proc.wait(timeout=40) == 2
        err = proc.stderr.read()
        assert f"voyager: the server (pid {server.pid}) stopped, and the page with it" in err and "Traceback" not in err
        assert _refused(port)
    finally:
        server.stop()


@pytest.mark.slow
def test_a_killed_command_s_page_is_closed_by_the_server(scanned):
    from tests.support.serving import ServerProcess

    server = ServerProcess(dict(os.environ))
    try:
        proc, url = start()
        port = int(re.search(r":(\d+)/", url).group(1))
        proc.kill()
        proc.wait(timeout=10)
        deadline = time.monotonic() + 30
        while server.status()["web_pages"] and time.monotonic() < deadline:
            time.sleep(0.05)
        assert server.status()["web_pages"] == [] and _refused(port)
    finally:
        server.stop()


def test_a_port_the_server_cannot_take_is_the_command_s_one_line(scanned, run):
    from tests.support.serving import ServerProcess

    server = ServerProcess(dict(os.environ))
    try:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            s.listen(1)
            res = run("web", "--no-open", "--port", str(s.getsockname()[1]))
        assert res.exit_code == 2 and "cannot listen on 127.0.0.1" in res.stderr and "Traceback" not in res.stderr
        assert server.status()["web_pages"] == []
    finally:
        server.stop()
