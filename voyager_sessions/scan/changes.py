"""Knowing which sources changed: a file-system watcher over every agent's store, and the change set it keeps.

A refresh without a watcher stats every source of every agent (a no-op scan of 10,000
files is all stat pass). :class:`ChangeWatcher` watches each agent's store roots
(``adapter.roots(env)``; a root that is a file, a database, is watched through its
folder, which also sees its ``-wal``) with ``watchfiles`` (the Rust ``notify`` crate:
inotify on Linux, FSEvents on macOS) and collects the paths created, modified or
deleted. :meth:`ChangeWatcher.take` hands a scan a :class:`Changes`, and the scan
(``scan(..., changes=…)``) then discovers only the agents that had a change, and within
Claude Code's and Codex's stores re-stats only the changed files and lists only the
changed folders.

The full stat pass stays the safety net: ``take`` returns None, and the scan stats
everything, when the watcher could not start (no ``watchfiles``, no inotify watches
left, a network file system that reports nothing is not detected: hence the periodic
pass), when it stopped or reported more changes than it keeps (an overflow), when a root
that did not exist appeared, and every ``full_every`` seconds. Agents whose sources are
found through hints (Aider looks in project folders) are always discovered in full.
``status`` says which of these holds, for ``voyager watch`` and (later) ``serve status``.

The hook for a server's freshness loop is :func:`refresh`: one call per refresh, with
the server's own watcher, that falls back by itself.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import msgspec

#: Paths kept between two scans before the watcher gives up and asks for a full pass.
MAX_CHANGES = 20_000
#: The safety net: a full stat pass at least this often (seconds), whatever the watcher says.
FULL_EVERY = 300.0
#: How long one cycle of the watcher's loop lasts at most (ms): ``take`` waits for one to end.
CYCLE_MS = 100


class Changes(msgspec.Struct, frozen=True):
    """What changed under the watched roots since the last scan that took a change set.

    ``paths``: every path reported (created, modified or deleted, files and folders).
    ``watched``: the agents whose every root was watched, so no change reported for them
    means nothing changed; any other agent is discovered in full.
    """

    paths: frozenset[str]
    watched: dict[str, tuple[str, ...]]  # agent -> the folders watched for it

    def touching(self, provider: str) -> frozenset[str] | None:
        """The changed paths under ``provider``'s folders, or None when it is not watched (discover it whole)."""
        folders = self.watched.get(provider)
        if folders is None:
            return None
        prefixes = tuple(f.rstrip(os.sep) + os.sep for f in folders)
        exact = {f.rstrip(os.sep) for f in folders}
        return frozenset(p for p in self.paths if p in exact or p.startswith(prefixes))


#: File systems whose changes made elsewhere no local watcher hears of (Linux ``/proc/self/mounts`` types).
NETWORK_FS = frozenset(
    {
        "nfs",
        "nfs4",
        "cifs",
        "smb3",
        "smbfs",
        "9p",
        "afs",
        "ceph",
        "glusterfs",
        "lustre",
        "fuse.sshfs",
        "fuse.rclone",
        "fuse.s3fs",
        "davfs",
        "fuse.gcsfuse",
    }
)


def _mounts() -> list[tuple[str, str]]:
    """(mount point, file-system type), longest mount point first; empty where ``/proc`` has none (macOS)."""
    try:
        with open("/proc/self/mounts", encoding="utf-8", errors="replace") as fh:
            rows = [line.split()[1:3] for line in fh if len(line.split()) >= 3]
    except OSError:
        return []
    # Mount points escape spaces as \040.
    return sorted(((m.replace("\\040", " "), t) for m, t in rows), key=lambda r: len(r[0]), reverse=True)


def on_network_fs(path: str, mounts: list[tuple[str, str]]) -> bool:
    """True when ``path`` lies on a network file system (where a watcher hears only this machine's writes)."""
    for point, fstype in mounts:
        if path == point or path.startswith(point.rstrip("/") + "/"):
            return fstype in NETWORK_FS
    return False


def watch_places(env: Mapping[str, str], providers: Iterable[str]) -> tuple[dict[str, list[str]], set[str], set[str]]:
    """(agent -> folders to watch, agents that cannot be watched, roots that do not exist yet).

    An agent whose store is on a network file system is not watched (another machine's
    writes raise no event here): every refresh discovers it whole."""
    mounts = _mounts()
    from voyager_sessions.ingest import adapters as registry

    folders: dict[str, list[str]] = {}
    unwatched: set[str] = set()
    missing: set[str] = set()
    for name in providers:
        try:
            adapter = registry.get(name)
            # ``watch_roots``: the roots plus the places of side files its fingerprints include.
            roots = [os.fspath(r) for r in getattr(adapter, "watch_roots", adapter.roots)(env)]
        except Exception:  # an adapter that cannot say where it looks is simply not watched
            unwatched.add(name)
            continue
        if getattr(adapter, "uses_hints", False):
            unwatched.add(name)  # its sources are found through other agents' sessions
            continue
        mine: list[str] = []
        for root in roots:
            if os.path.isdir(root):
                mine.append(os.path.normpath(root))
            elif os.path.isdir(os.path.dirname(root)):
                mine.append(os.path.normpath(os.path.dirname(root)))  # a database file: its folder sees its -wal too
            else:
                missing.add(root)
        if any(on_network_fs(os.path.realpath(f), mounts) for f in mine):
            unwatched.add(name)
        folders[name] = mine
    return folders, unwatched, missing


class ChangeWatcher:
    """A background thread that collects the changes under every agent's roots (see the module docstring)."""

    def __init__(
        self,
        env: Mapping[str, str],
        providers: Iterable[str] | None = None,
        *,
        full_every: float = FULL_EVERY,
        enabled: bool = True,
    ) -> None:
        from voyager_sessions.ingest import adapters as registry

        self.env = dict(env)
        self.providers = list(providers or registry.PROVIDERS)
        self.full_every = full_every
        self.enabled = enabled
        self.status = "not started"
        self._lock = threading.Lock()
        self._cycle = threading.Condition(self._lock)
        self._cycles = 0
        self._paths: set[str] = set()
        self._broken: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._missing: set[str] = set()
        self._watched: dict[str, tuple[str, ...]] = {}
        self._roots: set[str] = set()
        self._last_full: float | None = None  # no full pass yet: what changed before the start is unknown

    # -- life ------------------------------------------------------------------------

    def start(self) -> ChangeWatcher:
        """Start watching (or say why not: every ``take`` is then a full pass)."""
        if not self.enabled:
            self.status = "disabled: every refresh stats every source"
            return self
        try:
            import watchfiles  # noqa: F401  (the dependency; its absence is reported, not raised)
        except ImportError:
            self.status = "unavailable (watchfiles is not installed): every refresh stats every source"
            return self
        folders, unwatched, missing = watch_places(self.env, self.providers)
        self._missing = missing
        self._watched = {p: tuple(fs) for p, fs in folders.items() if p not in unwatched}
        roots = sorted({f for p, fs in folders.items() if p not in unwatched for f in fs})
        # Nested roots are watched once, through the outermost.
        roots = [r for r in roots if not any(r != o and r.startswith(o.rstrip(os.sep) + os.sep) for o in roots)]
        self._roots = set(roots)
        self._stop.clear()
        self._broken = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(roots,), name="voyager-watch", daemon=True)
        self._thread.start()
        self._ready.wait(10)
        remote = sorted(p for p in unwatched if p in folders and folders[p])
        self.status = (
            f"watching {len(roots)} folders"
            + (f"; on a network file system, stat every time: {', '.join(remote)}" if remote else "")
            if self._broken is None
            else self.status
        )
        return self

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def _run(self, roots: list[str]) -> None:
        import watchfiles

        try:
            if not roots:
                self._ready.set()
                while not self._stop.wait(CYCLE_MS / 1000):
                    self._tick(())
                return
            it = watchfiles.watch(
                *roots,
                watch_filter=None,
                debounce=CYCLE_MS,
                step=10,
                stop_event=self._stop,
                rust_timeout=CYCLE_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
                ignore_permission_denied=True,
            )
            first = True
            for batch in it:
                if first:
                    self._ready.set()
                    first = False
                self._tick(path for _, path in batch)
        except Exception as exc:  # no inotify watches left, a root gone at start…: fall back, say so
            self._fail(f"watcher stopped ({type(exc).__name__}: {exc}): every refresh stats every source")
        finally:
            self._ready.set()
            if not self._stop.is_set() and self._broken is None:
                self._fail("watcher stopped: every refresh stats every source")

    def _tick(self, paths: Iterable[str]) -> None:
        with self._cycle:
            self._paths.update(paths)
            if len(self._paths) > MAX_CHANGES and self._broken is None:
                self._paths.clear()
                self._broken = "overflow"  # more than kept: the next take is a full pass, then watching resumes
            self._cycles += 1
            self._cycle.notify_all()

    def _fail(self, why: str) -> None:
        with self._cycle:
            self._broken = why
            self.status = why
            self._cycles += 1
            self._cycle.notify_all()

    # -- the change set ----------------------------------------------------------------

    def take(self) -> Changes | None:
        """Everything that changed since the last take, or None when the scan must stat everything.

        Waits for the watcher to finish one cycle that began after this call (≤ ~2
        cycles of :data:`CYCLE_MS`), so a write made before the call is in the set.
        """
        if self._thread is None:
            return None
        with self._cycle:
            target = self._cycles + 2
            deadline = time.monotonic() + 5 * CYCLE_MS / 1000 + 1
            while self._cycles < target and self._thread.is_alive():
                left = deadline - time.monotonic()
                if left <= 0:
                    break  # the watcher lags (a loaded machine): a full pass is the safe answer
                self._cycle.wait(left)
            late = self._cycles < target
            broken, self._broken = self._broken, None
            paths, self._paths = self._paths, set()
        if not self._thread.is_alive():
            self._thread = None
            return None
        now = time.monotonic()
        if (
            late
            or broken is not None
            or self._last_full is None
            or now - self._last_full >= self.full_every
            or self._appeared(paths)
        ):
            self._last_full = now
            return None
        return Changes(paths=frozenset(paths), watched=self._watched)

    def give_back(self, changes: Changes | None) -> None:
        """Return a change set a failed scan did not use, so the next one sees it."""
        if changes is None:
            self._last_full = None  # the full pass did not happen: the next take asks for it again
            return
        with self._cycle:
            self._paths.update(changes.paths)

    def _appeared(self, paths: set[str]) -> bool:
        """True when a root that did not exist now does, or a watched root itself changed (restarting the watcher)."""
        if any(os.path.exists(m) for m in self._missing) or not self._roots.isdisjoint(paths):
            self.stop()
            self.start()
            return True
        return False


def refresh(data_dir: Path, env: Mapping[str, str], watcher: ChangeWatcher | None, **scan_args: Any):
    """One refresh of ``data_dir``: only what ``watcher`` saw change, or everything when it cannot say.

    The hook for ``voyager watch`` and a server's freshness loop: pass the same started
    watcher to every call (None, or one that cannot watch, makes it a plain full scan).
    A scan that fails gives its change set back, so nothing is lost.
    """
    from voyager_sessions.scan.run import scan

    changes = watcher.take() if watcher is not None else None
    try:
        return scan(data_dir, env, changes=changes, **scan_args)
    except BaseException:
        if watcher is not None:
            watcher.give_back(changes)
        raise
