"""The server: one per data dir, stale sockets replaced, clean stops, hostile requests answered and survived."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import time
from pathlib import Path

import pytest

from tests.support.serving import ServerProcess, cli, make_env, scanned_env, write_corpus
from voyager_sessions.core import remote as client
from voyager_sessions.core import wire as protocol
from voyager_sessions.core.paths import DataDir


def _raw(path: str, payload: bytes, *, read_timeout: float = 5.0, pause: float = 0.0) -> bytes:
    """Send ``payload`` over a fresh connection (after ``pause`` s) and return everything the server sent back."""
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(read_timeout)
    try:
        protocol.at_socket(s.connect, path)
        if pause:
            time.sleep(pause)
        try:
            s.sendall(payload)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server already answered and closed: read what it said
        out = b""
        while True:
            try:
                chunk = s.recv(65536)
            except ConnectionResetError:
                break
            if not chunk:
                break
            out += chunk
        return out
    finally:
        s.close()


def _error_of(reply: bytes) -> str:
    header = json.loads(reply.lstrip(b"\n").split(b"\n", 1)[0])
    assert header["v"] == protocol.VERSION
    return header["error"]


def _works(env, server) -> None:
    """The server still answers a plain request, correctly."""
    before = server.status()["answered"]
    assert cli(env, "search", "postgres", "--json") == cli(env, "search", "postgres", "--json", server=False)
    assert server.status()["answered"] == before + 1


def _request(env: dict, cmd: str, args: dict) -> bytes:
    return json.dumps(client.base_request(cmd, env["VOYAGER_HOME"], args, environ=env)).encode() + b"\n"


SEARCH_ARGS = {
    "query": "postgres",
    "limit": 20,
    "offset": 0,
    "providers": [],
    "kinds": [],
    "repo": None,
    "cwd": None,
    "session": None,
    "since": None,
    "until": None,
    "sort": "relevance",
    "sessions": False,
    "context": 0,
    "refresh": False,
}


@pytest.mark.slow
def test_malformed_oversized_and_slow_requests_get_an_error_and_the_server_goes_on(served):
    env, server = served
    path = str(server.ddir.socket)
    cases = [
        (b"this is not json\n", "malformed request: not one line of JSON"),
        (b"[1, 2, 3]\n", "malformed request: not a JSON object"),
        (b'{"v": 1, "cmd": "search"}\n', "unsupported protocol version 1"),
        (b"\xff\xfe\n", "malformed request"),
        (_request(env, "drop_tables", {}), "unknown operation"),
        (_request(env, "search", {**SEARCH_ARGS, "limit": 10**30}), "limit must be an integer from 1 to 10000"),
        (_request(env, "search", {**SEARCH_ARGS, "offset": -1}), "offset must be an integer"),
        (_request(env, "search", {**SEARCH_ARGS, "query": ["postgres"]}), "query must be a string"),
        (_request(env, "search", {**SEARCH_ARGS, "rm": "-rf"}), "unknown field for search: rm"),
        (_request(env, "search", {**SEARCH_ARGS, "as_json": True}), "unknown field for search: as_json"),
        (_request(env, "show", {"around": None}), "missing field for show: session"),
        (_request(env, "show", {"session": 5, "around": None, "window": 10}), "session must be a string"),
        (_request(env, "list", {"provider": None, "limit": 50, "offset": "yes"}), "offset must be an integer"),
    ]
    for payload, expected in cases:
        assert expected in _error_of(_raw(path, payload)), payload
    # Oversized: more than the limit without a newline.
    big = b'{"v": 2, "op": "search", "pad": "' + b"x" * (protocol.MAX_REQUEST_BYTES + 10) + b'"}\n'
    assert "request larger than" in _error_of(_raw(path, big))
    # Slow: half a request, then nothing for longer than the deadline.
    t0 = time.monotonic()
    reply = _raw(path, b'{"v": 2, "op"', read_timeout=protocol.REQUEST_DEADLINE + 5)
    assert "request not received within" in _error_of(reply)
    assert protocol.REQUEST_DEADLINE - 0.1 <= time.monotonic() - t0 < protocol.REQUEST_DEADLINE + 3
    # A client that connects and closes at once, and one that closes mid-line.
    _raw(path, b"")
    _raw(path, b'{"v": 2')
    assert server.proc.poll() is None
    _works(env, server)
    assert server.status()["errors"] >= len(cases) + 2


def test_a_slow_client_does_not_hold_up_the_others(served):
    env, server = served
    path = str(server.ddir.socket)
    slow = [socket.socket(socket.AF_UNIX) for _ in range(8)]
    try:
        for s in slow:
            s.connect(path)
            s.sendall(b'{"v": 2, "op": "sea')  # and then nothing
        _works(env, server)
        # Answered while every slow client is still waiting for the server to give up on it (its deadline has
        # not passed: nothing came back on its socket) — an order of events, not a wall time.
        for s in slow:
            s.setblocking(False)
            with pytest.raises(BlockingIOError):
                s.recv(1)
    finally:
        for s in slow:
            s.close()


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_second_server_on_the_same_data_dir_refuses_to_start(served):
    env, server = served
    got = cli(env, "serve")
    assert got.code == 3
    assert got.err == f"voyager: a server is already running on {env['VOYAGER_HOME']} (pid {server.pid})\n"
    detached = cli(env, "serve", "--detach")
    assert detached.code == 3 and "already running" in detached.err
    _works(env, server)


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT], ids=["SIGTERM", "SIGINT"])
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_signal_stops_it_cleanly(served, sig):
    env, server = served
    ddir = server.ddir
    assert stat.S_ISSOCK(os.lstat(ddir.socket).st_mode)
    server.signal(sig)
    assert server.proc.wait(20) == 0
    assert not os.path.lexists(ddir.socket)
    from voyager_sessions.serve import control

    assert control.holder(ddir) is None
    assert "stopped" in server.log()
    assert cli(env, "serve", "status").code == 1


@pytest.mark.slow
def test_sigkill_mid_request_loses_nothing_and_a_new_server_starts_cleanly(served):
    env, server = served
    expected = {
        argv: cli(env, *argv, server=False)
        for argv in (
            ("search", "postgres", "--json"),
            ("list", "--json"),
            ("stats", "--json"),
            ("search", "parse_config_v2", "-C", "2"),
        )
    }
    path = str(server.ddir.socket)
    # Clients keep asking while the server is killed under them: every one still prints its answer.
    import threading

    outcomes: list[bool] = []
    done = threading.Event()

    def ask() -> None:
        while not done.is_set() or len(outcomes) < 8:
            for argv, want in expected.items():
                outcomes.append(cli(env, *argv) == want)

    asker = threading.Thread(target=ask)
    asker.start()
    # And one request in flight at the moment of the kill: acknowledged, then the server dies under it.
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(10)
    s.connect(path)
    s.sendall(_request(env, "search", {**SEARCH_ARGS, "refresh": True}))
    assert s.recv(1) == b"\n"
    time.sleep(0.3)
    server.signal(signal.SIGKILL)
    server.proc.wait(20)
    try:
        while s.recv(65536):
            pass  # whatever was sent, the connection ends: nobody waits forever
    except ConnectionResetError:
        pass
    s.close()
    time.sleep(0.3)
    done.set()
    asker.join(120)
    assert outcomes and all(outcomes), outcomes
    # The socket file is left behind: stale. Clients fall back at once, with the same output.
    assert stat.S_ISSOCK(os.lstat(path).st_mode)
    for argv, want in expected.items():
        assert cli(env, *argv) == want, argv
    assert client.exchange(path, client.base_request("stats", env["VOYAGER_HOME"], {}, environ=env)) is None
    # A new server replaces the stale socket, and answers the same as before.
    again = ServerProcess(env)
    try:
        before = again.status()["answered"]
        for argv, want in expected.items():
            assert cli(env, *argv) == want, argv
        assert again.status()["answered"] == before + len(expected)
    finally:
        assert again.stop() == 0
    doctor = json.loads(cli(env, "doctor", "--json").out)
    assert doctor["health"]["index"] == "ok" and doctor["health"]["state_db"] == "ok"


def test_something_else_at_the_socket_path_is_not_removed(tmp_path):
    env = scanned_env(tmp_path)
    path = DataDir(env["VOYAGER_HOME"]).socket
    path.write_text("mine")
    got = cli(env, "serve")
    assert got.code == 2 and "exists and is not a socket" in got.err
    assert path.read_text() == "mine"


def test_a_directory_in_place_of_its_lock_or_log_is_one_line(tmp_path):
    env = make_env(tmp_path)
    ddir = DataDir(env["VOYAGER_HOME"])
    ddir.root.mkdir(mode=0o700)
    for path, argv in (
        (ddir.serve_lock, ("serve",)),
        (ddir.serve_lock, ("serve", "--detach")),
        (ddir.serve_log, ("serve", "--detach")),
    ):
        if path.is_file():
            path.unlink()  # the log a failed --detach started
        path.mkdir()
        try:
            got = cli(env, *argv)
        finally:
            path.rmdir()
        assert got.code == 2 and got.err.count("\n") == 1, (argv, got)
        assert f"cannot open {path}: " in got.err and "internal error" not in got.err, (argv, got)
    assert cli(env, "serve", "status").code == 1  # nothing was left running


def test_files_are_private(served):
    env, server = served
    ddir = server.ddir
    assert stat.S_IMODE(os.stat(ddir.root).st_mode) == 0o700
    for p in (ddir.socket, ddir.serve_lock, ddir.state_db):
        assert stat.S_IMODE(os.lstat(p).st_mode) == 0o600, p
    for p in ddir.root.rglob("*"):
        try:
            mode = stat.S_IMODE(os.lstat(p).st_mode)
        except FileNotFoundError:  # the server's scan may still run: a segment merged away, a spool drained
            continue
        assert mode & 0o077 == 0, (p, oct(mode))


def _connect_as(uid: int, path: str, request: bytes) -> tuple[str, bytes]:
    """In a forked child running as ``uid``: try the socket; ('denied', b'') or ('connected', reply)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # child
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            s = socket.socket(socket.AF_UNIX)
            s.settimeout(5)
            try:
                s.connect(path)
            except PermissionError:
                os.write(w, b"denied\n")
                os._exit(0)
            s.sendall(request)
            reply = b""
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                reply += chunk
            os.write(w, b"connected\n" + reply)
        except BaseException as exc:  # noqa: BLE001 - reported to the parent
            os.write(w, f"failed {type(exc).__name__}: {exc}\n".encode())
        os._exit(0)
    os.close(w)
    out = b""
    while True:
        chunk = os.read(r, 65536)
        if not chunk:
            break
        out += chunk
    os.close(r)
    os.waitpid(pid, 0)
    head, _, rest = out.partition(b"\n")
    return head.decode(), rest


@pytest.mark.skipif(
    os.geteuid() != 0 or not hasattr(os, "O_PATH"), reason="needs root (and Linux) to act as another user"
)
def test_another_user_cannot_connect(served):
    env, server = served
    ddir = server.ddir
    path = str(ddir.socket)
    request = _request(env, "search", SEARCH_ARGS)
    nobody = 65534
    # The modes alone keep them out (the 0700 directory, the 0600 socket).
    assert _connect_as(nobody, path, request)[0] == "denied"
    # And with the data dir and the socket opened up (reached through a handle on the data dir,
    # past the private directories above it), the server itself refuses another uid.
    os.chmod(ddir.root, 0o711)
    os.chmod(path, 0o666)
    dir_fd = os.open(ddir.root, os.O_PATH)
    try:
        outcome, reply = _connect_as(nobody, f"/proc/self/fd/{dir_fd}/{ddir.socket.name}", request)
    finally:
        os.close(dir_fd)
        os.chmod(ddir.root, 0o700)
        os.chmod(path, 0o600)
    assert outcome == "connected", (outcome, reply)
    assert "refused: this server answers only the user it runs as" in _error_of(reply)
    assert b"postgres" not in reply
    _works(env, server)


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_status_stop_and_detach(tmp_path):
    env = scanned_env(tmp_path)
    none = cli(env, "serve", "status")
    assert none.code == 1 and none.err == f"voyager: no server is running on {env['VOYAGER_HOME']}\n"
    assert json.loads(cli(env, "serve", "status", "--json").out) == {
        "schema_version": 1,
        "running": False,
        "data_dir": env["VOYAGER_HOME"],
        "pid": None,
    }
    assert cli(env, "serve", "stop").code == 1
    started = cli(env, "serve", "--detach", "--interval", "0.5")
    assert started.code == 0, started
    assert started.err.startswith(f"voyager: serving {env['VOYAGER_HOME']} (pid ")
    try:
        doc = json.loads(cli(env, "serve", "status", "--json").out)
        assert doc["running"] is True and doc["data_dir"] == env["VOYAGER_HOME"] and doc["env_differs"] == []
        assert doc["schema_version"] == 1  # every --json document carries it (docs/json.md)
        text = cli(env, "serve", "status")
        assert text.code == 0 and text.out.startswith(f"serving {env['VOYAGER_HOME']} (pid {doc['pid']}".encode())
        other = cli({**env, "CODEX_HOME": "/elsewhere"}, "serve", "status")
        assert b"CODEX_HOME differ(s) from the server's" in other.out
        log = DataDir(env["VOYAGER_HOME"]).serve_log
        assert stat.S_IMODE(os.stat(log).st_mode) == 0o600
        assert cli(env, "search", "postgres", "--json") == cli(env, "search", "postgres", "--json", server=False)
    finally:
        stopped = cli(env, "serve", "stop")
    assert stopped.code == 0 and stopped.err.startswith(f"voyager: stopped the server (pid {doc['pid']})")
    assert not os.path.lexists(DataDir(env["VOYAGER_HOME"]).socket)
    assert cli(env, "serve", "status").code == 1


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_other_processes_scanning_and_rebuilding_meanwhile(served):
    env, server = served
    home = Path(env["HOME"])
    from tests.support.sessions import claude_session_lines, write_claude

    lines = claude_session_lines()
    for n in range(3):
        lines.append(lines[1].replace("我们的数据库迁移失败了", f"elsewhere quokka{n}"))
        write_claude(home, lines)
        assert cli(env, "scan", "-q", "--wait", "30", server=False).code == 0  # another process commits
        got = cli(env, "search", f"quokka{n}", "--json", "--no-refresh")  # no refresh: the reader must reload
        assert got.code == 0 and b'"total":1' in got.out, got
    rebuilt = cli(env, "scan", "--rebuild", "-q", "--wait", "30", server=False)
    assert rebuilt.code == 0, rebuilt
    for argv in (
        ["search", "quokka2", "--json", "--no-refresh"],
        ["list", "--json"],
        ["stats", "--json"],
        ["show", "5f1c", "--json"],
    ):
        assert cli(env, *argv) == cli(env, *argv, server=False), argv
    assert server.proc.poll() is None


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_relative_data_dir_is_served_and_named_as_the_client_names_it(tmp_path):
    env = make_env(tmp_path)
    write_corpus(env)
    env["VOYAGER_HOME"] = "rel-data"
    run_in = tmp_path / "work"
    run_in.mkdir()
    import subprocess

    from tests.support.run import voyager_exe

    def run(*args: str, server: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run(
            voyager_exe() + list(args),
            cwd=run_in,
            capture_output=True,
            timeout=120,
            env={**env, **({} if server else {"VOYAGER_NO_SERVER": "1"})},
        )

    assert run("scan", "-q", server=False).returncode == 0
    assert run("serve", "--detach").returncode == 0
    try:
        status = json.loads(run("serve", "status", "--json").stdout)
        before = status["answered"]
        for argv in (("stats",), ("stats", "--json"), ("search", "postgres", "--json")):
            a, b = run(*argv), run(*argv, server=False)
            assert (a.returncode, a.stdout, a.stderr) == (b.returncode, b.stdout, b.stderr), argv
        assert b"data dir: rel-data\n" in run("stats").stdout
        assert json.loads(run("serve", "status", "--json").stdout)["answered"] == before + 4
    finally:
        assert run("serve", "stop").returncode == 0


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_another_build_or_changed_code_is_left_to_the_client(served):
    env, server = served
    request = json.loads(_request(env, "search", SEARCH_ARGS))
    for build in (["0.0.1", request["voyager"][1]], [request["voyager"][0], "/elsewhere/voyager_sessions"], None):
        answer = client.exchange(str(server.ddir.socket), {**request, "voyager": build}, ack_timeout=3.0)
        assert answer is not None and "another build" in answer[0]["fallback"], build
    # Voyager upgraded under a running server: its modules are newer than it is.
    path = protocol.__file__  # loaded by every server
    st = os.stat(path)
    os.utime(path, (st.st_atime, time.time() + 5))
    try:
        time.sleep(1.1)  # it looks at most once a second
        answer = client.exchange(str(server.ddir.socket), request, ack_timeout=3.0)
        assert answer is not None and "changed on disk since the server started" in answer[0]["fallback"]
        assert cli(env, "search", "postgres", "--json") == cli(env, "search", "postgres", "--json", server=False)
        assert b"changed on disk" in cli(env, "serve", "status").out
    finally:
        os.utime(path, (st.st_atime, st.st_mtime))


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_request_nested_too_deeply_gets_its_error_line(served):
    """100,000 levels of nesting used to raise RecursionError in the server: the connection closed unanswered."""
    env, server = served
    path = str(server.ddir.socket)
    deep = 100_000
    for payload in (
        b"[" * deep + b"]" * deep + b"\n",
        b"[" * deep + b"\n",
        b'{"v": 1, "cmd": "search", "args": ' + b'{"a": ' * 50_000 + b"1" + b"}" * 50_001 + b"\n",
    ):
        assert "malformed request" in _error_of(_raw(path, payload)), payload[:40]
    assert server.proc.poll() is None
    _works(env, server)


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_web_page_request_is_checked_like_any_other(served):
    """The ``web`` op (``voyager web`` beside a server): a bad port is refused, another build is left to the
    client (it serves its own page), and a page is served while the connection is held, closed when it is not."""
    pytest.importorskip("uvicorn", reason="the web extra is not installed")
    env, server = served
    path = str(server.ddir.socket)
    for port in ("8080", -1, 70_000, True, None):
        assert "port must be a whole number" in _error_of(_raw(path, _request(env, "web", {"port": port}))), port
    assert "request must be an object" in _error_of(_raw(path, _web_line(env, [1])))
    request = json.loads(_request(env, "web", {"port": 0}))
    answer = client.exchange(path, {**request, "voyager": ["0.0.1", request["voyager"][1]]}, ack_timeout=3.0)
    assert answer is not None and "another build" in answer[0]["fallback"]
    assert server.status()["web_pages"] == []
    held = client.hold(path, request, ack_timeout=3.0)
    assert held is not None
    header, sock = held
    try:
        url = header["web"]["url"]
        assert header["web"]["pid"] == server.pid and url.startswith("http://127.0.0.1:") and "/#token=" in url
        port = int(url.split(":")[2].split("/")[0])
        assert server.status()["web_pages"] == [port]
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        sock.shutdown(socket.SHUT_WR)  # what `voyager web` does on Ctrl-C: then it waits for the close
        sock.settimeout(30)
        assert sock.recv(10) == b""
    finally:
        sock.close()
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    assert server.status()["web_pages"] == []
    _works(env, server)


def _web_line(env: dict, fields: object) -> bytes:
    """A ``web`` request whose ``request`` is ``fields`` as given (not necessarily an object)."""
    request = client.base_request("web", env["VOYAGER_HOME"], {}, environ=env)
    return json.dumps({**request, "request": fields}).encode() + b"\n"
