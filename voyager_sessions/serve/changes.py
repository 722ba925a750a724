"""Knowing that nothing changed: inotify on the agents' homes, so a search need not rescan to be fresh.

A refresh must see whatever was written before the request was sent. Rescanning
proves it, at the cost of a stat pass over every source (about 10 µs a source: 20 ms for
2,000 sessions, on every search). :class:`SourceWatch` proves it more cheaply on Linux:
every directory under every agent home (``paths.AGENT_HOMES``) is watched with inotify,
and the kernel queues an event in the very ``write``, ``rename`` or ``unlink`` that
changes a source, before that call returns. So if a scan started at generation *g*
(after the watches were brought up to date) and no event has arrived since, that scan
saw everything there is, and its index answers the request as a new scan would.

Whatever could make that untrue turns the shortcut off, and every refresh scans as
before: no inotify (another system), more directories than :data:`MAX_WATCHES`, a
queue overflow (until the next scan resyncs), a watch the kernel dropped. A home that
does not exist yet is watched through its nearest existing ancestor, for the one name
that leads to it.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import stat
import struct
import sys
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path

#: Directories watched at most; beyond that the shortcut is off (each watch costs the kernel ~1 KB,
#: and the limit, fs.inotify.max_user_watches, is shared with the user's editors).
MAX_WATCHES = 8192

_IN_MODIFY, _IN_ATTRIB, _IN_CLOSE_WRITE = 0x2, 0x4, 0x8
_IN_MOVED_FROM, _IN_MOVED_TO, _IN_CREATE, _IN_DELETE = 0x40, 0x80, 0x100, 0x200
_IN_DELETE_SELF, _IN_MOVE_SELF = 0x400, 0x800
_IN_Q_OVERFLOW, _IN_IGNORED, _IN_ISDIR = 0x4000, 0x8000, 0x40000000
_IN_ONLYDIR = 0x01000000
_MASK = (_IN_MODIFY | _IN_ATTRIB | _IN_CLOSE_WRITE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_CREATE | _IN_DELETE
         | _IN_DELETE_SELF | _IN_MOVE_SELF)
_EVENT = struct.Struct("iIII")


def homes(env: Mapping[str, str]) -> list[Path]:
    """Every agent home (directory or named file) that ``env`` points at, but those too broad to watch.

    A home that is the user's home directory itself, or above it (Aider searches the
    projects in ``~``), would mean watching everything the user has: its adapter is
    rescanned on every refresh instead (see :func:`unwatched_providers`).
    """
    from voyager_sessions.paths import AGENT_HOMES, agent_home, home

    top = home(env).expanduser()
    out: list[Path] = []
    for name in AGENT_HOMES:
        path = agent_home(name, env)
        if path is None or path in out or path == top or path in top.parents:
            continue
        out.append(path)
    return out


def unwatched_providers(env: Mapping[str, str], watched: list[Path]) -> list[str]:
    """Providers whose discovery a watch on ``watched`` does not cover: a refresh still scans them.

    Those that look in other sessions' working directories (``uses_hints``), and those
    with a root (``adapter.roots(env)``) outside every watched home.
    """
    from voyager_sessions.ingest.adapters import PROVIDERS, get

    out = []
    for name in PROVIDERS:
        adapter = get(name)
        if getattr(adapter, "uses_hints", False) or not all(
                any(root == w or w in root.parents for w in watched) for root in adapter.roots(env)):
            out.append(name)
    return out


class SourceWatch:
    """A generation number that moves whenever anything under the watched homes may have changed."""

    def __init__(self, roots: Iterable[Path]) -> None:
        self.roots = [Path(r) for r in roots]
        self._lock = threading.Lock()
        self._generation = 0
        self._stale = True  # the watches must be (re)built before the generation means anything
        self._wds: dict[int, set[str | None]] = {}
        self._fd = -1
        self.reason: str | None = None  # why the shortcut is off, when it is
        self._libc = None
        if not sys.platform.startswith("linux"):
            self.reason = "no inotify on this system"
            return
        try:
            libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6", use_errno=True)
            fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError) as exc:
            self.reason = f"inotify unavailable: {exc}"
            return
        if fd < 0:
            self.reason = f"inotify unavailable: {os.strerror(ctypes.get_errno())}"
            return
        self._libc, self._fd = libc, fd

    @property
    def available(self) -> bool:
        return self._fd >= 0

    def close(self) -> None:
        with self._lock:
            if self._fd >= 0:
                os.close(self._fd)
                self._fd = -1

    # -- what scans and requests ask ---------------------------------------------

    def start_scan(self) -> int | None:
        """Bring the watches up to date, then return the generation a scan starting now stands for (None: off)."""
        with self._lock:
            if self._fd < 0:
                return None
            self._drain()
            if self._stale:
                self._sync()
                self._drain()
                if self._fd < 0:
                    return None
                self._stale = False
            if self._fd < 0:
                return None
            return self._generation

    def unchanged_since(self, generation: int | None) -> bool:
        """True when nothing under the homes can have changed since a scan started at ``generation``."""
        if generation is None:
            return False
        with self._lock:
            if self._fd < 0:
                return False
            self._drain()
            return not self._stale and self._generation == generation

    # -- inotify -----------------------------------------------------------------

    def _drain(self) -> None:
        while self._fd >= 0:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return
            except OSError:
                self._off("cannot read inotify events")
                return
            if not data:
                return
            pos = 0
            while pos + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, pos)
                raw = data[pos + _EVENT.size: pos + _EVENT.size + length].split(b"\0", 1)[0]
                pos += _EVENT.size + length
                self._event(wd, mask, os.fsdecode(raw))

    def _event(self, wd: int, mask: int, name: str) -> None:
        if mask & _IN_Q_OVERFLOW or wd < 0:
            self._generation += 1
            self._stale = True  # events were lost: the next scan rebuilds the watches
            return
        if mask & _IN_IGNORED:
            self._wds.pop(wd, None)
            self._generation += 1
            self._stale = True
            return
        wanted = self._wds.get(wd)
        if wanted is None or (None not in wanted and name not in wanted):
            return  # an ancestor of a missing home, and not the name that leads to it
        self._generation += 1
        if mask & (_IN_CREATE | _IN_MOVED_TO) and (mask & _IN_ISDIR or None not in wanted):
            self._stale = True  # a new directory (or a missing home appeared): watch it before the next scan
        if mask & (_IN_DELETE_SELF | _IN_MOVE_SELF):
            self._stale = True

    def _off(self, reason: str) -> None:
        if self._fd >= 0:
            self.reason = reason
            os.close(self._fd)
        self._fd = -1

    def _add(self, path: str, name: str | None) -> bool:
        if len(self._wds) >= MAX_WATCHES:
            self._off(f"more than {MAX_WATCHES} directories under the agents' homes")
            return False
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK | _IN_ONLYDIR)
        if wd < 0:
            err = ctypes.get_errno()
            if err in (28, 24):  # ENOSPC (the user's watch limit), EMFILE
                self._off(f"inotify: {os.strerror(err)}")
                return False
            return True  # vanished or unreadable meanwhile: a scan will say so; nothing to watch
        self._wds.setdefault(wd, set()).add(name)
        return True

    def _sync(self) -> None:
        """Watch every directory under each home (each once), and the nearest ancestor of a missing one."""
        seen: set[tuple[int, int]] = set()
        for root in self.roots:
            path = str(root)
            try:
                st = os.stat(path)
            except OSError:
                self._watch_ancestor(root)
                continue
            if stat.S_ISDIR(st.st_mode):
                if not self._walk(path, seen):
                    return
            elif not self._add(os.path.dirname(path) or ".", None):  # a named file (a database): its directory
                return

    def _walk(self, top: str, seen: set[tuple[int, int]]) -> bool:
        stack = [top]
        while stack:
            path = stack.pop()
            try:
                st = os.stat(path)
            except OSError:
                continue
            key = (st.st_dev, st.st_ino)
            if key in seen:
                continue  # a symlink loop, or a directory reached twice
            seen.add(key)
            if not self._add(path, None):
                return False
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        try:
                            if entry.is_dir():  # follows a symlinked directory, as discovery does (once)
                                stack.append(entry.path)
                        except OSError:
                            pass
            except OSError:
                pass
        return True

    def _watch_ancestor(self, root: Path) -> None:
        child = root
        for parent in root.parents:
            if parent.is_dir():
                self._add(str(parent), child.name)
                return
            child = parent
