"""The resident server: a Unix socket in the data dir, a thread per connection, the index kept open and fresh.

Each connection carries one request (see :mod:`.protocol`). Its thread checks the peer
(the same user only), reads the request line within :data:`~.protocol.REQUEST_DEADLINE`
and :data:`~.protocol.MAX_REQUEST_BYTES`, acknowledges it with a newline, decodes it as
the application API's request, calls the API function with a pooled reader and the
shared scans of :mod:`.fresh`, and sends the header and the result document's JSON
(:func:`answer`). Nothing here renders output: the client does, as the CLI does in-process. A malformed,
oversized or slow request gets one line saying so and the connection is closed; nothing
a client sends can stop the server or reach another client. A heartbeat thread sends a
newline each second to every connection still waiting, so a client can tell a long
refresh from a hung server. Another thread keeps the index fresh with ``keep_fresh``.
"""

from __future__ import annotations

import json
import os
import selectors
import socket
import struct
import sys
import threading
import time
from typing import Any

from voyager_sessions import api
from voyager_sessions.core import remote as client
from voyager_sessions.core import wire as protocol
from voyager_sessions.core.paths import DataDir
from voyager_sessions.api.readers import ReaderPool
from voyager_sessions.serve.fresh import ScanOutcome, Scans, ServerBackend, scan_for_keep_fresh
from voyager_sessions.serve.webpage import WebPages

#: Connections served at once; one more is told the server is busy (its client runs the command itself).
MAX_CONNECTIONS = 64


#: Seconds a stopping server waits for requests in flight and for a scan in progress.
STOP_GRACE = 10.0


class RequestError(Exception):
    """What was wrong with a request, as the one line its client is sent."""


class _Connection:
    """One client connection while its request is worked on (the heartbeat writes to it too)."""

    __slots__ = ("done", "lock", "sock")

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.lock = threading.Lock()
        self.done = False


def _log_to_stderr(message: str) -> None:
    sys.stderr.write(f"{time.strftime('%Y-%m-%d %H:%M:%S')} voyager serve: {message}\n")
    sys.stderr.flush()


class Server:
    """``voyager serve`` on one data dir; :meth:`serve` runs until :meth:`stop` (a signal, or a ``stop`` request)."""

    def __init__(self, ddir: DataDir, *, interval: float = 5.0, verbose: bool = True) -> None:
        self.ddir = ddir
        self.interval = interval
        self.log = _log_to_stderr
        self.verbose = verbose
        self._agent_variables = api.agent_variables()
        self.env = protocol.answer_env(os.environ, self._agent_variables)
        st = os.stat(ddir.root)
        self._dir_id = (st.st_dev, st.st_ino)
        from voyager_sessions.api.freshness import ChangeWatcher

        # Which sources changed, for every refresh (VOYAGER_NO_WATCH=1: stat every source each time).
        self.watcher = ChangeWatcher(
            os.environ, enabled=not os.environ.get("VOYAGER_NO_WATCH"), fence_dir=ddir.watch_fence
        )
        self.scans = Scans(ddir, on_done=self._scanned, watcher=self.watcher)
        from voyager_sessions.api.meaning import background

        # Meaning vectors for what the refreshes bring, in the background (nothing without the model).
        self.meaning = background(ddir, log=self.log)
        self.pool = ReaderPool(ddir, min(4, max(2, os.cpu_count() or 2)))
        self.backend = ServerBackend(self.pool, self.scans)
        self.stopping = threading.Event()
        self.pages = WebPages(ddir, self.pool, self.stopping)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_w, False)
        self._lock = threading.Lock()
        self._inflight: set[_Connection] = set()
        self._active = 0
        self.started = time.time()
        self._build = client.build_id()
        self._code_checked = 0.0
        self._code_changed: str | None = None
        self.counts = {"requests": 0, "answered": 0, "fallbacks": 0, "errors": 0}
        self.answer_seconds = 0.0  # time spent running commands for clients (their refresh included)

    # -- running -----------------------------------------------------------------

    def serve(self, listener: socket.socket) -> None:
        """Accept connections on ``listener`` until stopped; then wait briefly for what is in flight."""
        self.watcher.start()
        threads = [
            threading.Thread(target=self._keep_fresh, name="voyager-keep-fresh", daemon=True),
            threading.Thread(target=self._heartbeat, name="voyager-heartbeat", daemon=True),
        ]
        for t in threads:
            t.start()
        self.meaning.start()
        listener.setblocking(False)
        with selectors.DefaultSelector() as sel:
            sel.register(listener, selectors.EVENT_READ)
            sel.register(self._wake_r, selectors.EVENT_READ)
            while not self.stopping.is_set():
                for key, _ in sel.select(timeout=1.0):
                    if key.fileobj is listener:
                        self._accept(listener)
        deadline = time.monotonic() + STOP_GRACE
        while self._active and time.monotonic() < deadline:
            time.sleep(0.01)
        threads[0].join(max(0.0, deadline - time.monotonic()))
        self.meaning.stop()
        self.watcher.stop()
        self.pool.close()
        os.close(self._wake_r)
        os.close(self._wake_w)

    def stop(self) -> None:
        """Stop accepting and return from :meth:`serve` (safe from a signal handler and any thread)."""
        self.stopping.set()
        try:
            os.write(self._wake_w, b"x")
        except OSError:
            pass

    def _accept(self, listener: socket.socket) -> None:
        try:
            conn, _ = listener.accept()
        except (BlockingIOError, InterruptedError, ConnectionAbortedError):
            return
        conn.setblocking(True)
        with self._lock:
            full = self._active >= MAX_CONNECTIONS
            if not full:
                self._active += 1
        if full:
            self._refuse(conn, "the server is busy (too many connections)")
            return
        threading.Thread(target=self._handle, args=(conn,), name="voyager-request", daemon=True).start()

    def _keep_fresh(self) -> None:
        from voyager_sessions.api.freshness import keep_fresh
        from voyager_sessions.core.textsafe import printable

        def on_error(exc: Exception, delay: float) -> None:
            from voyager_sessions.core.errors import Busy

            if not isinstance(exc, Busy):  # another process scanning is not news
                self.log(f"scan failed: {printable(str(exc))}; retrying in {delay:g}s")

        keep_fresh(scan_for_keep_fresh(self.scans), interval=self.interval, on_error=on_error, stop=self.stopping)

    def _scanned(self, outcome: ScanOutcome) -> None:
        summary = outcome.summary
        if summary is not None and summary.touched:
            self.meaning.wake()
        if self.verbose and summary is not None and summary.touched:
            self.log(
                f"+{summary.events_added} events ({summary.new} new, {summary.grown} grown, "
                f"{summary.changed} changed, {summary.removed} removed sources) in {outcome.seconds:.2f}s"
            )

    def _heartbeat(self) -> None:
        while not self.stopping.wait(protocol.HEARTBEAT_INTERVAL):
            with self._lock:
                waiting = list(self._inflight)
            for conn in waiting:
                with conn.lock:
                    if conn.done:
                        continue
                    try:
                        conn.sock.send(b"\n", socket.MSG_DONTWAIT)
                    except OSError:
                        pass  # the client left; its thread finds out when it answers

    # -- one connection ------------------------------------------------------------

    def _handle(self, sock: socket.socket) -> None:
        conn = _Connection(sock)
        try:
            with self._lock:
                self.counts["requests"] += 1
            try:
                if not self._same_user(sock):
                    raise RequestError("refused: this server answers only the user it runs as")
                request = self._read(sock)
            except RequestError as exc:
                self._count("errors")
                self._reply_error(sock, str(exc))
                return
            sock.sendall(b"\n")  # acknowledged: the client now waits for as long as heartbeats come
            with self._lock:
                self._inflight.add(conn)
            if request.get("op") == "web":
                self._lend_page(conn, request)
                return
            header, body = self._answer(request)
            self._send(conn, header, body)
        except OSError:
            pass  # the client went away: nothing to tell it
        except Exception as exc:  # noqa: BLE001 - a bug answering one request must not take the server down
            self._count("errors")
            self.log(f"internal error answering a request: {type(exc).__name__}: {exc}")
        finally:
            with self._lock:
                self._inflight.discard(conn)
                self._active -= 1
            sock.close()

    @staticmethod
    def _send(conn: _Connection, header: dict[str, Any], body: bytes = b"") -> None:
        """The answer: its header line, then its body (no more heartbeats on this connection)."""
        data = json.dumps({"v": protocol.VERSION, **header}, separators=(",", ":")).encode("ascii") + b"\n" + body
        with conn.lock:
            conn.done = True
            conn.sock.settimeout(protocol.IDLE_TIMEOUT)
            conn.sock.sendall(data)

    def _lend_page(self, conn: _Connection, request: dict[str, Any]) -> None:
        """``voyager web``: serve its page from this process until it closes the connection (see ``.webpage``)."""
        fields = request.get("request")
        try:
            data_dir = self._client(request)
            if not isinstance(fields, dict):
                raise ValueError("request must be an object")
        except ValueError as exc:
            self._count("errors")
            self._send(conn, {"error": f"malformed request: {exc}"})
            return
        why = self._why_not(request, data_dir)
        if why:
            self._count("fallbacks")
            self._send(conn, {"fallback": why})  # the command serves its own page
            return
        self.pages.lend(conn.sock, fields.get("port", 0), lambda header: self._send(conn, header))

    def _why_not(self, request: dict[str, Any], data_dir: str) -> str | None:
        """Why this server would not answer as the client's own process would (``data_dir``: as the client names it)."""
        where = data_dir
        if not os.path.isabs(where):  # relative to the client's working directory
            cwd = request.get("cwd")
            where = os.path.join(cwd, where) if isinstance(cwd, str) and os.path.isabs(cwd) else ""
        return self._cannot_answer(request, where) if where else "the client's data dir is relative to no directory"

    def _count(self, name: str) -> None:
        with self._lock:
            self.counts[name] += 1

    def _same_user(self, sock: socket.socket) -> bool:
        uid = peer_uid(sock)
        return uid is None or uid == os.geteuid()

    def _read(self, sock: socket.socket) -> dict[str, Any]:
        deadline = time.monotonic() + protocol.REQUEST_DEADLINE
        buf = bytearray()
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise RequestError(f"request not received within {protocol.REQUEST_DEADLINE:g} s")
            sock.settimeout(remaining)
            try:
                chunk = sock.recv(65536)
            except TimeoutError:
                raise RequestError(f"request not received within {protocol.REQUEST_DEADLINE:g} s") from None
            end = chunk.find(b"\n")
            buf += chunk if end < 0 else chunk[:end]
            if len(buf) > protocol.MAX_REQUEST_BYTES:
                raise RequestError(f"request larger than {protocol.MAX_REQUEST_BYTES} bytes")
            if end >= 0:
                break
            if not chunk:
                raise RequestError("connection closed before the end of the request line")
        try:
            request = json.loads(bytes(buf))
        except ValueError as exc:
            raise RequestError(f"malformed request: not one line of JSON ({exc})") from None
        except RecursionError:  # a line of 100,000 brackets: still a malformed request, answered as one
            raise RequestError("malformed request: JSON nested too deeply") from None
        if not isinstance(request, dict):
            raise RequestError("malformed request: not a JSON object")
        if request.get("v") != protocol.VERSION:
            raise RequestError(
                f"unsupported protocol version {request.get('v')!r}: this server speaks {protocol.VERSION}"
            )
        return request

    def _reply_error(self, sock: socket.socket, message: str) -> None:
        """Tell the client what was wrong, then let it finish sending (so it can read the line) and close."""
        try:
            sock.settimeout(1.0)
            sock.sendall(json.dumps({"v": protocol.VERSION, "error": message}).encode("ascii") + b"\n")
            sock.shutdown(socket.SHUT_WR)
            deadline = time.monotonic() + 0.5
            drained = 0
            while time.monotonic() < deadline and drained < 4 * protocol.MAX_REQUEST_BYTES:
                sock.settimeout(max(0.01, deadline - time.monotonic()))
                chunk = sock.recv(65536)
                if not chunk:
                    break
                drained += len(chunk)
        except OSError:
            pass

    def _refuse(self, sock: socket.socket, message: str) -> None:
        self._count("errors")
        try:
            sock.settimeout(0.1)
            sock.sendall(json.dumps({"v": protocol.VERSION, "error": message}).encode("ascii") + b"\n")
        except OSError:
            pass
        finally:
            sock.close()

    # -- answers -----------------------------------------------------------------

    def _answer(self, request: dict[str, Any]) -> tuple[dict[str, Any], bytes]:
        """The header and body answering ``request``: the API's result as data, or why there is none."""
        op = request.get("op")
        if op == "status":
            return {"status": self.status(request.get("env"))}, b""
        if op == "stop":
            status = self.status(None)
            status["stopping"] = True
            self.stop()
            return {"status": status}, b""
        try:
            if not isinstance(op, str):
                raise ValueError(f"unknown operation {op!r}")
            req = api.decode_request(op, request.get("request"))
            data_dir = self._client(request)
        except ValueError as exc:
            self._count("errors")
            return {"error": f"malformed request: {exc}"}, b""
        why = self._why_not(request, data_dir)
        if why:
            self._count("fallbacks")
            return {"fallback": why}, b""
        t0 = time.perf_counter()
        header, body = answer(op, req, self.ddir, self.backend, data_dir_label=data_dir)
        with self._lock:
            self.counts["answered"] += 1
            self.answer_seconds += time.perf_counter() - t0
        return header, body

    @staticmethod
    def _client(request: dict[str, Any]) -> str:
        """The client's data dir as it names it; ValueError when the request does not describe its client."""
        data_dir = request.get("data_dir")
        if not isinstance(data_dir, str) or not data_dir:
            raise ValueError("data_dir must be a path")
        env = request.get("env")
        if not (isinstance(env, dict) and all(isinstance(k, str) and isinstance(v, str) for k, v in env.items())):
            raise ValueError("env must map names to strings")
        return data_dir

    def _cannot_answer(self, request: dict[str, Any], data_dir: str) -> str | None:
        """Why this server would not answer as the client's own process would, or None (``data_dir``: absolute)."""
        if request.get("voyager") != self._build:
            return "the client is another build of Voyager than the server"
        changed = self._code_on_disk_changed()
        if changed:
            return changed
        try:
            st = os.stat(data_dir)
        except OSError:
            return "the client's data dir cannot be read here"
        if (st.st_dev, st.st_ino) != self._dir_id:
            return "the client uses another data dir"
        differ = protocol.env_difference(self.env, protocol.answer_env(request["env"], self._agent_variables))
        if differ:
            return f"the client's environment differs from the server's: {', '.join(differ)}"
        return None

    def _code_on_disk_changed(self) -> str | None:
        """Whether Voyager's modules changed on disk since this server loaded them (an upgrade): checked once a second."""
        now = time.monotonic()
        with self._lock:
            if self._code_changed or now - self._code_checked < 1.0:
                return self._code_changed
            self._code_checked = now
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None) if name.startswith("voyager_sessions") else None
            try:
                if path and os.stat(path).st_mtime > self.started:
                    self._code_changed = (
                        f"Voyager changed on disk since the server started ({path}): restart it "
                        "(voyager serve stop; voyager serve --detach)"
                    )
                    self.log(self._code_changed)
                    break
            except OSError:
                continue
        return self._code_changed

    def status(self, client_env: Any) -> dict[str, Any]:
        from voyager_sessions import __version__
        from voyager_sessions.api import query_parses
        from voyager_sessions.core.isotime import iso

        last = self.scans.last
        with self._lock:
            counts = dict(self.counts)
            active = self._active
            answer_ms = round(self.answer_seconds * 1000 / counts["answered"], 3) if counts["answered"] else None
        doc: dict[str, Any] = {
            "pid": os.getpid(),
            "version": __version__,
            "protocol": protocol.VERSION,
            "data_dir": str(self.ddir.root),
            "socket": str(self.ddir.socket),
            "started": iso(self.started),
            "uptime_s": round(time.time() - self.started, 1),
            "interval_s": self.interval,
            "readers": self.pool.size,
            "connections": active - 1,
            **counts,
            "mean_answer_ms": answer_ms,
            "web_pages": self.pages.ports(),
            "scans": self.scans.count,
            "watched_scans": self.scans.watched,
            "watcher": self.watcher.status,
            "refreshes": dict(self.watcher.counts),
            "last_full_pass": self.watcher.last_full,
            "query_parses": query_parses(),
            "meaning": self.meaning.status(),
            "last_scan": None
            if last is None
            else {
                "started": iso(last.started),
                "seconds": round(last.seconds, 3),
                "events_added": getattr(last.summary, "events_added", None),
                "error": None if last.error is None else str(last.error),
            },
        }
        if self._code_changed:
            doc["stale"] = self._code_changed
        if isinstance(client_env, dict):
            theirs = {k: v for k, v in client_env.items() if isinstance(k, str) and isinstance(v, str)}
            doc["env_differs"] = protocol.env_difference(self.env, protocol.answer_env(theirs, self._agent_variables))
        return doc


def answer(op: str, req: Any, ddir: DataDir, backend: Any, *, data_dir_label: str) -> tuple[dict[str, Any], bytes]:
    """Call the API for ``req`` and encode what it returned: ``({"notices", "body"}, JSON)`` or ``({"failure", "exit"}, b"")``.

    ``data_dir_label``: the data dir as the client names it (what ``stats`` reports).
    """
    import msgspec

    from voyager_sessions.core.errors import failure

    notices: list[list[Any]] = []

    def notice(text: str, quiet_ok: bool) -> None:
        notices.append([text, quiet_ok])

    result: msgspec.Struct
    try:
        if op == "search" and isinstance(req, api.SearchRequest):
            result = api.search(req, data_dir=ddir, backend=backend, notice=notice)
        else:
            result = api.OPERATIONS[op].run()(req, data_dir=ddir, backend=backend)
        if op == "stats":
            result = msgspec.structs.replace(result, data_dir=data_dir_label)
        body = msgspec.json.encode(result)
    except Exception as exc:  # noqa: BLE001 - reported to the client as the CLI reports it
        line, code = failure(exc)
        return {"notices": notices, "failure": line, "exit": code}, b""
    return {"notices": notices, "body": len(body)}, body


def peer_uid(sock: socket.socket) -> int | None:
    """The user id of the process at the other end of a Unix socket, or None where the system cannot say."""
    if hasattr(socket, "SO_PEERCRED"):  # Linux
        try:
            _pid, uid, _gid = struct.unpack(
                "3i", sock.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
            )
            return uid
        except OSError:
            return None
    if sys.platform == "darwin":  # LOCAL_PEERCRED: struct xucred {u_int cr_version; uid_t cr_uid; …}
        try:
            raw = sock.getsockopt(0, 0x001, 76)
            return struct.unpack_from("=II", raw)[1]
        except OSError:
            return None
    return None
