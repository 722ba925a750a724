"""The client: standard library only, and a server that is missing, stale, hung or broken costs little.

Whatever goes wrong before the whole answer has arrived, the client prints nothing and
the command runs in its own process, so the output is still the command's.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests.support.serving import cli, scanned_env
from voyager_sessions.core import remote as client
from voyager_sessions.core import wire as protocol
from voyager_sessions.core.paths import DataDir

HEAVY = ("tantivy", "msgspec", "click", "sqlite3", "voyager_sessions.api", "voyager_sessions.search")

# The forward path ends with os._exit (no atexit): record the modules there, and on a normal exit.
_RECORD = (
    "import atexit, os, sys\n"
    "def record():\n"
    "    sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    "    sys.stderr.flush()\n"
    "_exit = os._exit\n"
    "os._exit = lambda code: (record(), _exit(code))\n"
    "atexit.register(record)\n"
    "from voyager_sessions.cli.main import main\n"
    "main()\n"
)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "parse_config_v2", "--json"],
        ["search", "parse_config_v2"],
        ["search", "数据库", "--jsonl", "-C", "1"],
        ["list"],
        ["show", "5f1c", "--json"],
        ["stats"],
        ["search", "("],
    ],
    ids=" ".join,
)
def test_forwarding_imports_only_the_standard_library(served_module, argv):
    env, server = served_module
    before = server.status()["answered"]
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", _RECORD, *argv],
        capture_output=True,
        env=env,
        timeout=60,
        check=False,
    )
    err = proc.stderr.decode()
    modules = err.rpartition("MODULES ")[2].split()
    assert modules, err
    for heavy in HEAVY:
        assert not any(m == heavy or m.startswith(heavy + ".") for m in modules), (heavy, argv)
    # -X importtime lists every import the process made, the interpreter's own start included.
    imported = {line.split("|")[-1].strip() for line in err.splitlines() if line.startswith("import time:")}
    assert "voyager_sessions.core.remote" in imported
    # typing costs a couple of milliseconds of every search a server answers: nothing on the way needs it.
    assert "typing" not in imported, argv
    assert not {m for m in imported if m.split(".")[0] in ("tantivy", "msgspec", "click")}, argv
    assert server.status()["answered"] == before + 1
    assert proc.stdout == cli(env, *argv, server=False).out


def test_no_server_or_a_stale_socket_falls_back_at_once(tmp_path):
    env = scanned_env(tmp_path)
    path = str(DataDir(env["VOYAGER_HOME"]).socket)
    request = client.base_request("stats", env["VOYAGER_HOME"], {}, environ=env)
    # "At once": with an acknowledgement timeout of a minute, both give up in a small fraction of it (a client
    # that waited for an answer would take the minute), however loaded the machine.
    wait = 60.0
    t0 = time.perf_counter()
    assert client.exchange(path, request, ack_timeout=wait) is None  # no socket
    # A socket file whose server is gone: connect is refused.
    stale = socket.socket(socket.AF_UNIX)
    stale.bind(path)
    stale.close()
    assert os.path.exists(path)
    assert client.exchange(path, request, ack_timeout=wait) is None
    assert time.perf_counter() - t0 < wait / 100
    assert cli(env, "search", "postgres", "--json") == cli(env, "search", "postgres", "--json", server=False)


class FakeServer:
    """A socket at the data dir's path that misbehaves as ``behave(conn)`` says."""

    def __init__(self, path: str, behave) -> None:
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.bind(path)
        self.sock.listen(16)
        self.behave = behave
        self.conns: list[socket.socket] = []
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            self.conns.append(conn)
            threading.Thread(target=self.behave, args=(conn,), daemon=True).start()

    def close(self) -> None:
        self.sock.close()
        for c in self.conns:
            c.close()


def _read_line(conn: socket.socket) -> None:
    data = b""
    while not data.endswith(b"\n"):
        chunk = conn.recv(65536)
        if not chunk:
            return
        data += chunk


def _silent(conn):  # accepts, never acknowledges
    _read_line(conn)
    time.sleep(30)


def _ack_then_hang(conn):
    _read_line(conn)
    conn.sendall(b"\n")
    time.sleep(30)


def _ack_then_die(conn):
    _read_line(conn)
    conn.sendall(b"\n")
    conn.close()


def _garbage(conn):
    _read_line(conn)
    conn.sendall(b"\n{not json\n")
    conn.close()


def _short_body(conn):
    _read_line(conn)
    conn.sendall(b'\n{"v":2,"notices":[],"body":100}\nonly this')
    conn.close()


def _bad_notices(conn):
    _read_line(conn)
    conn.sendall(b'\n{"v":2,"notices":[[5,"x"]],"body":2}\nab')
    conn.close()


def _wrong_version(conn):
    _read_line(conn)
    conn.sendall(b'\n{"v":1,"exit":0,"stdout":0,"stderr":[]}\n')
    conn.close()


@pytest.mark.parametrize(
    "behave, bound",
    [
        (_silent, 0.05),
        (_ack_then_die, 0.05),
        (_garbage, 0.05),
        (_short_body, 0.05),
        (_bad_notices, 0.05),
        (_wrong_version, 0.05),
        (_ack_then_hang, 1.0),
    ],
    ids=lambda x: getattr(x, "__name__", str(x)),
)
@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_broken_server_costs_little_and_changes_nothing(scanned_module, behave, bound):
    env = {**scanned_module, "VOYAGER_SERVER_WAIT_MS": "50"}
    path = str(DataDir(env["VOYAGER_HOME"]).socket)
    fake = FakeServer(path, behave)
    try:
        request = client.base_request("stats", env["VOYAGER_HOME"], {}, environ=env)
        t0 = time.perf_counter()
        assert client.exchange(path, request, idle_timeout=bound) is None
        elapsed = time.perf_counter() - t0
        # The bound (the ack timeout, ~50 ms; for a server that acknowledged then fell silent, the
        # idle timeout) plus room for a loaded CI machine.
        assert elapsed < bound + 0.25, elapsed
        if behave is _silent:
            assert elapsed >= protocol.ACK_TIMEOUT * 0.9  # it did wait for the acknowledgement, no longer
        # The CLI, whatever the server did, prints the command's own output, once.
        for argv in (["search", "postgres", "--json"], ["search", "parse_config_v2", "-C", "1"]):
            if behave is _ack_then_hang:
                continue  # the CLI would wait for the idle timeout (5 s) before falling back: covered above
            assert cli(env, *argv) == cli(env, *argv, server=False), argv
    finally:
        fake.close()
        os.unlink(path)


def test_a_stopped_server_costs_the_ack_timeout_then_answers_again(served):
    env, server = served
    path = str(server.ddir.socket)
    request = client.base_request("stats", env["VOYAGER_HOME"], {}, environ=env)
    server.pause()
    try:
        t0 = time.perf_counter()
        assert client.exchange(path, request) is None
        assert time.perf_counter() - t0 < 0.3
        quick = {**env, "VOYAGER_SERVER_WAIT_MS": "50"}
        assert cli(quick, "stats", "--json") == cli(quick, "stats", "--json", server=False)
    finally:
        server.signal(signal.SIGCONT)
    time.sleep(0.2)
    got = client.exchange(path, request, ack_timeout=2.0)
    assert got is not None and json.loads(got[1])["index_events"] > 0


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_socket_path_of_any_length_works(tmp_path):
    # sun_path holds ~107 bytes; a deep data dir is reached through /proc/self/fd on Linux.
    if not hasattr(os, "O_PATH"):
        pytest.skip("no O_PATH here")
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    env = scanned_env(deep)
    assert len(str(DataDir(env["VOYAGER_HOME"]).socket)) > 110
    from tests.support.serving import ServerProcess

    server = ServerProcess(env)
    try:
        before = server.status()["answered"]
        assert cli(env, "search", "postgres", "--json") == cli(env, "search", "postgres", "--json", server=False)
        assert server.status()["answered"] == before + 1
    finally:
        assert server.stop() == 0
    assert not Path(DataDir(env["VOYAGER_HOME"]).socket).exists()


# -- what the client knows without importing it, held to the real thing -----------------------


@pytest.mark.parametrize(
    "environ",
    [
        {"VOYAGER_HOME": "/data/v"},
        {"VOYAGER_HOME": "/data/v/"},
        {"VOYAGER_HOME": "~/v"},
        {"VOYAGER_HOME": "rel/./v"},
        {"VOYAGER_HOME": "//net/v"},
        {"VOYAGER_HOME": "///x//y/../z"},
        {"VOYAGER_HOME": "."},
        {"VOYAGER_HOME": "/"},
        {"XDG_DATA_HOME": "/xdg"},
        {"XDG_DATA_HOME": "~/xdg/"},
        {"XDG_DATA_HOME": "", "HOME": "/h"},
        {"HOME": "/home/me"},
        {"HOME": "/home/me/"},
        {"HOME": ""},
        {},
        {"VOYAGER_HOME": "", "HOME": "/h//x"},
        {"VOYAGER_HOME": "~"},
        {"VOYAGER_HOME": "a b/ü/$(x)"},
    ],
    ids=repr,
)
def test_the_clients_data_dir_is_spelled_as_paths_spells_it(environ):
    from voyager_sessions.core.paths import data_dir

    assert protocol.data_dir(environ) == str(data_dir(environ))
    assert os.path.normpath(client.socket_path(protocol.data_dir(environ))) == os.path.normpath(
        DataDir(data_dir(environ)).socket
    )


def test_every_agent_variable_reaches_the_server():
    from voyager_sessions.ingest.manifest import agent_variables

    names = {v: "x" for v in agent_variables()} | {
        "HOME": "h",
        "TZ": "UTC",
        "XDG_DATA_HOME": "d",
        "VOYAGER_MAX_EVENT_CHARS": "9",
    }
    sent = protocol.client_env({**names, "AWS_SECRET_ACCESS_KEY": "s", "GITHUB_TOKEN": "t", "PATH": "/bin"})
    missing = sorted(set(names) - set(sent))
    assert not missing, f"the client does not send {missing}: add their shape to protocol._LOCATION_SUFFIXES"
    assert protocol.answer_env(sent, agent_variables()) == protocol.answer_env(names, agent_variables()) == names
    assert "AWS_SECRET_ACCESS_KEY" not in sent and "GITHUB_TOKEN" not in sent and "PATH" not in sent


@pytest.mark.parametrize("tty", [False, True])
@pytest.mark.parametrize("no_color", [None, "1"])
@pytest.mark.parametrize("mode", ["auto", "always", "never"])
def test_the_clients_colour_is_use_color(monkeypatch, mode, no_color, tty):
    from voyager_sessions.cli import main
    from voyager_sessions.cli.common import use_color

    if no_color:
        monkeypatch.setenv("NO_COLOR", no_color)
    else:
        monkeypatch.delenv("NO_COLOR", raising=False)

    class Out:
        def isatty(self) -> bool:
            return tty

    monkeypatch.setattr(sys, "stdout", Out())
    assert main._color(mode) == use_color(mode)
