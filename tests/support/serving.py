"""A real ``voyager serve`` for a test: the process (``ServerProcess``), a sandboxed environment and corpus
(``make_env``, ``write_corpus``, ``scanned_env``: sessions holding terminal escapes among them), and ``cli`` to run
the command line against it.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.support.run import voyager_exe
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.core.paths import DataDir
from voyager_sessions.ingest.manifest import agent_variables

ESCAPES = "\x1b[2J\x1b]52;c;cHduZWQ=\x07\x1b]0;owned\x07\x9b31m\rOVERWRITE\x7f"


HOSTILE_SID = "0d5e1a2b-3c4d-4e5f-8a9b-aaaaaaaaaaaa"


def make_env(root: Path) -> dict[str, str]:
    """An environment whose HOME and data dir are under ``root`` and that names no real agent home."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in agent_variables()
        and k not in ("NO_COLOR", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "TZ")
        and not k.startswith("VOYAGER_")
    }
    env.update(
        HOME=str(home),
        VOYAGER_HOME=str(home / "voyager-data"),
        VOYAGER_OPENCODE_HOME=str(home / "no-opencode"),
        PYTHONDONTWRITEBYTECODE="1",
        # A loaded CI machine may take longer than 50 ms to acknowledge; tests that count the
        # server's answers must not see it fall back. Tests of that bound set their own.
        VOYAGER_SERVER_WAIT_MS="3000",
    )
    return env


def write_corpus(env: dict[str, str]) -> dict[str, Path]:
    """A Claude Code and a Codex session, and a Claude session whose text and cwd try to drive the terminal."""
    home = Path(env["HOME"])
    hostile = [
        line.replace("parse_config_v2", f"parse_config_v2 {json.dumps(ESCAPES)[1:-1]}")
        for line in claude_session_lines(sid=HOSTILE_SID, cwd="/home/dev/$(touch pwned)\x1b[2J")
    ]
    return {
        "claude": write_claude(home, claude_session_lines()),
        "codex": write_codex(home, codex_session_lines()),
        "hostile": write_claude(home, hostile, sid=HOSTILE_SID, project="-home-dev-evil"),
    }


class Result:
    """What one CLI run left: exit code, stdout bytes, stderr text."""

    __slots__ = ("code", "err", "out")

    def __init__(self, code: int, out: bytes, err: str) -> None:
        self.code, self.out, self.err = code, out, err

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Result) and (self.code, self.out, self.err) == (other.code, other.out, other.err)

    def __repr__(self) -> str:
        return f"Result(code={self.code}, out={self.out[:300]!r}, err={self.err[:300]!r})"


def cli(env: dict[str, str], *args: str, server: bool = True, timeout: float = 120) -> Result:
    """Run ``voyager ARGS``; ``server=False`` forbids asking a server (the in-process answer)."""
    run_env = dict(env)
    if not server:
        run_env["VOYAGER_NO_SERVER"] = "1"
    proc = subprocess.run(voyager_exe() + list(args), capture_output=True, env=run_env, timeout=timeout, check=False)
    return Result(proc.returncode, proc.stdout, proc.stderr.decode("utf-8", "backslashreplace"))


class ServerProcess:
    """``voyager serve`` as a child process; :meth:`status` asks it over its socket."""

    def __init__(self, env: dict[str, str], *, interval: float = 5.0, log: Path | None = None) -> None:
        self.env = env
        self.ddir = DataDir(env["VOYAGER_HOME"])
        self.log_path = log or Path(env["HOME"]).parent / f"serve-{time.monotonic_ns()}.log"
        self._log = open(self.log_path, "wb")
        self.proc = subprocess.Popen(
            voyager_exe() + ["serve", "--interval", str(interval)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        self.wait_ready()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"voyager serve exited {self.proc.returncode}: {self.log()}")
            doc = self.status()
            if doc is not None and doc.get("pid") == self.proc.pid:
                return
            time.sleep(0.02)
        raise RuntimeError(f"voyager serve did not answer within {timeout} s: {self.log()}")

    def status(self) -> dict | None:
        from voyager_sessions.serve import control

        return control.status(self.ddir, timeout=1.0)

    def log(self) -> str:
        self._log.flush()
        return self.log_path.read_text(errors="replace")

    def signal(self, sig: int) -> None:
        self.proc.send_signal(sig)

    def pause(self) -> None:
        """SIGSTOP the server outside the index's meta lock, as it is between two requests: a server stopped while
        it holds the lock makes every reader say who holds it (``tests/search/test_meta_lock.py``), which is
        another test. The lock is held here while the signal lands, so the server is stopped without it."""
        import fcntl

        from voyager_sessions.search.index import META_LOCK_FILE

        fd = os.open(self.ddir.index / META_LOCK_FILE, os.O_RDONLY | os.O_CREAT, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            self.proc.send_signal(signal.SIGSTOP)
            deadline = time.monotonic() + 10
            while not _stopped(self.proc.pid) and time.monotonic() < deadline:
                time.sleep(0.005)
        finally:
            os.close(fd)

    def stop(self, timeout: float = 20.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout)
        self._log.close()
        return self.proc.returncode


def scanned_env(root: Path) -> dict[str, str]:
    """``make_env(root)`` with the corpus written and scanned in-process (no server asked)."""
    env = make_env(root)
    write_corpus(env)
    assert cli(env, "scan", "-q", server=False).code == 0
    return env


def _stopped(pid: int) -> bool:
    """Whether every thread of process ``pid`` is stopped ("T" in ``/proc``); True after a moment where there is no
    ``/proc`` to ask."""
    try:
        tasks = list(Path(f"/proc/{pid}/task").iterdir())
    except OSError:
        time.sleep(0.2)
        return True
    for task in tasks:
        try:
            stat = (task / "stat").read_bytes()
        except OSError:
            continue  # a thread that ended meanwhile
        rest = stat[stat.rfind(b")") + 1 :].split()
        if not rest or rest[0] not in (b"T", b"t"):
            return False
    return True
