"""Starting, finding and stopping the server of a data dir: the one-server lock, the socket, ``--detach``.

One server per data dir is enforced by an ``fcntl`` lock on ``serve.lock`` (released by
the kernel when the holder dies, however it dies), never by the socket's existence: a
socket file left by a killed server is stale as soon as nobody holds the lock, and the
next server removes it and binds anew. The socket is created 0600 inside the 0700
data dir, so only its user can connect (the server also checks the peer's uid).
"""

from __future__ import annotations

import fcntl
import os
import signal
import socket
import stat
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from voyager_sessions.core.errors import Busy, UserError
from voyager_sessions.core.paths import DataDir, ensure_private_dir, open_private
from voyager_sessions.core import remote as client
from voyager_sessions.core import wire as protocol

#: Seconds ``--detach`` and ``stop`` wait for the server to come up or go away.
START_TIMEOUT = 15.0
STOP_TIMEOUT = 15.0


class AlreadyServing(Busy):
    """Another server holds the data dir: exit 3."""


@contextmanager
def serve_lock(ddir: DataDir) -> Iterator[int]:
    """Hold ``serve.lock`` for the ``with`` block (this process is the data dir's server); AlreadyServing if not."""
    ensure_private_dir(ddir.root)
    fd = open_private(ddir.serve_lock, os.O_RDWR | os.O_CREAT)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = _pid_in(fd)
            raise AlreadyServing(f"a server is already running on {ddir.root} (pid {pid or 'unknown'})") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, str(os.getpid()).encode(), 0)
        yield fd
    finally:
        os.close(fd)  # releases the lock


def _pid_in(fd: int) -> int | None:
    try:
        return int(os.pread(fd, 32, 0).decode().strip() or 0) or None
    except (ValueError, OSError):
        return None


def holder(ddir: DataDir) -> int | None:
    """The pid of the process holding the data dir's server lock (alive, not necessarily answering), or None."""
    try:
        fd = os.open(ddir.serve_lock, os.O_RDWR)
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            return _pid_in(fd) or -1
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def bind(ddir: DataDir) -> tuple[socket.socket, int]:
    """A listening socket at ``ddir.socket`` (0600) and its file's inode, replacing a stale one (the caller holds the lock)."""
    path = str(ddir.socket)
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        pass
    else:
        if not stat.S_ISSOCK(st.st_mode):
            raise UserError(f"{path} exists and is not a socket: remove it to let `voyager serve` start")
        os.unlink(path)  # left by a server that died: nobody else holds the lock
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        old = os.umask(0o177)  # born 0600: no moment at which others could connect
        try:
            protocol.at_socket(sock.bind, path)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        inode = os.lstat(path).st_ino
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise UserError(f"cannot listen on {path}: {exc.strerror or exc}") from None
    return sock, inode


def remove_socket(ddir: DataDir, sock: socket.socket, inode: int) -> None:
    """Close ``sock`` and remove its file, if the file is still the one this server bound."""
    sock.close()
    path = str(ddir.socket)
    try:
        if os.lstat(path).st_ino == inode:
            os.unlink(path)
    except OSError:
        pass


def run_foreground(
    ddir: DataDir,
    *,
    interval: float,
    verbose: bool = True,
    web_port: int | None = None,
    on_web: Callable[[str], None] = lambda url: None,
) -> None:
    """Serve ``ddir`` in this process until SIGTERM, SIGINT or a ``stop`` request; the socket is removed after.

    ``web_port``: also serve the web page on it (``--web``; 0: any free port) from the server's readers, its
    URL told to ``on_web`` once it listens; it stops with the server.
    """
    from contextlib import nullcontext

    from voyager_sessions.serve.server import Server

    with serve_lock(ddir):
        listener, inode = bind(ddir)
        try:
            server = Server(ddir, interval=interval, verbose=verbose)
            previous = {
                sig: signal.signal(sig, lambda signum, frame: server.stop()) for sig in (signal.SIGTERM, signal.SIGINT)
            }
            try:
                server.log(f"serving {ddir.root} on {ddir.socket} (pid {os.getpid()})")
                with server.pages.beside(web_port, on_web) if web_port is not None else nullcontext():
                    server.serve(listener)
            finally:
                for sig, handler in previous.items():
                    signal.signal(sig, handler)
        finally:
            remove_socket(ddir, listener, inode)
        server.log("stopped")


def status(ddir: DataDir, *, timeout: float = 1.0) -> dict[str, Any] | None:
    """The running server's status document, or None when none answers."""
    request = client.base_request("status", str(ddir.root))
    got = client.exchange(str(ddir.socket), request, ack_timeout=timeout, idle_timeout=timeout)
    if got is None:
        return None
    status_doc = got[0].get("status")
    return status_doc if isinstance(status_doc, dict) else None


def stop(ddir: DataDir) -> int | None:
    """Stop the data dir's server: ask it over the socket, else SIGTERM the lock's holder; its pid, None if none ran."""
    pid = holder(ddir)
    got = client.exchange(
        str(ddir.socket), client.base_request("stop", str(ddir.root)), ack_timeout=1.0, idle_timeout=STOP_TIMEOUT
    )
    status = got[0].get("status") if got is not None else None
    if isinstance(status, dict):
        pid = status.get("pid", pid)
    elif pid is None:
        return None
    elif pid > 0:
        try:
            os.kill(pid, signal.SIGTERM)  # it holds the lock but does not answer (hung, or still starting)
        except ProcessLookupError:
            pass
    deadline = time.monotonic() + STOP_TIMEOUT
    while holder(ddir) is not None:
        if time.monotonic() > deadline:
            raise Busy(f"the server (pid {pid}) did not stop within {STOP_TIMEOUT:g} s")
        time.sleep(0.02)
    return pid if pid and pid > 0 else None


def detach(ddir: DataDir, *, interval: float, verbose: bool) -> tuple[int, str]:
    """Start ``voyager serve`` on ``ddir`` in the background (its own session, stderr to ``serve.log``).

    Returns its pid and the log's path once it answers; raises with the log's last line
    when it exits first (a server already running, say).
    """
    running = holder(ddir)
    if running is not None:
        raise AlreadyServing(
            f"a server is already running on {ddir.root} (pid {running if running > 0 else 'unknown'})"
        )
    ensure_private_dir(ddir.root)
    log_path = ddir.serve_log
    log_fd = open_private(log_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    argv = [sys.executable, "-m", "voyager_sessions", "serve", "--interval", repr(interval)]
    if not verbose:
        argv.append("--quiet")
    env = dict(os.environ, VOYAGER_HOME=os.path.abspath(ddir.root))  # it runs in /
    try:
        proc = subprocess.Popen(
            argv,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log_fd,
            start_new_session=True,
            close_fds=True,
            env=env,
            cwd="/",
        )
    finally:
        os.close(log_fd)
    deadline = time.monotonic() + START_TIMEOUT
    while time.monotonic() < deadline:
        code = proc.poll()
        if code is not None:
            raise _failed_start(log_path, code)
        doc = status(ddir, timeout=0.2)
        if doc is not None and doc.get("pid") == proc.pid:
            return proc.pid, str(log_path)
        time.sleep(0.02)
    raise Busy(f"the server (pid {proc.pid}) did not answer within {START_TIMEOUT:g} s; see {log_path}")


def _failed_start(log_path: os.PathLike[str], code: int) -> Exception:
    from voyager_sessions.core.errors import VoyagerError

    try:
        lines = [ln for ln in open(log_path, encoding="utf-8", errors="replace").read().splitlines() if ln.strip()]
    except OSError:
        lines = []
    last = lines[-1] if lines else f"exited with status {code}"
    last = last.removeprefix("voyager: ")
    exc = VoyagerError(f"the server did not start: {last}")
    exc.exit_code = code if code in (2, 3) else 4
    return exc
