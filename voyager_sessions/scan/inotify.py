"""Linux's inotify, a watch at a time: only the folders that can hold sessions, within a budget, honest when short.

Owns watching agents' stores on Linux for :class:`~voyager_sessions.scan.changes.ChangeWatcher`. A
recursive watcher (watchfiles' ``notify``) adds a watch to every folder under a root and, when the
kernel's per-user limit (``fs.inotify.max_user_watches``) runs out, stops adding without a word: an
OpenCode data folder cost 4,755 watches (4,572 of them in its ``snapshot/`` git objects, which never
hold a session), a small limit was spent whole, and the fence folder, added last, went unwatched, so
every refresh waited a second for a fence that could never show. Here:

* each agent's places come as :class:`Place` s: a folder and a pattern of the subfolders below it that
  can hold sessions (``**`` every one, ``""`` the folder alone, ``workspaceStorage/*/chatSessions`` those
  along the path), so a database's folder is watched alone and an editor's ``User`` folder only where
  chats live;
* watches are added group by group (an agent is a group), the fence first, within a budget
  (:func:`watch_budget`: half the kernel's limit, leaving the rest to the programs that share it); a
  group that does not fit is given back whole and reported unwatched, so no agent is half-watched;
* a folder created later under a watched one gets its watches at once, and what it already holds is
  reported changed (it may have filled before its watch was added); a group that outgrows the budget then
  is given back and reported (:attr:`Inotify.lost`);
* a queue overflow (``IN_Q_OVERFLOW``, events lost) is reported (:attr:`Inotify.overflowed`).

One instance has one event queue, filled in the order the changes happened across all its watches: the
fence's ordering argument (see :mod:`.changes`) holds as it did.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import fnmatch
import os
import select
import struct
from collections.abc import Iterable
from typing import Any, NamedTuple

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x01000000
IN_ISDIR = 0x40000000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC if hasattr(os, "O_CLOEXEC") else 0o2000000

MASK = (
    IN_MODIFY
    | IN_ATTRIB
    | IN_CLOSE_WRITE
    | IN_MOVED_FROM
    | IN_MOVED_TO
    | IN_CREATE
    | IN_DELETE
    | IN_DELETE_SELF
    | IN_MOVE_SELF
    | IN_ONLYDIR
)
_EVENT = struct.Struct("iIII")
#: The watches Voyager takes when the kernel says nothing of its limit (not Linux's /proc).
DEFAULT_BUDGET = 8192


class Place(NamedTuple):
    """A folder to watch and which of the folders below it can hold sessions: a ``/``-separated pattern of globs,
    ``**`` for every folder below, ``""`` for none (the folder alone)."""

    path: str
    below: str = "**"


def _libc() -> Any:
    name = ctypes.util.find_library("c")
    lib = ctypes.CDLL(name or None, use_errno=True)
    lib.inotify_init1.argtypes = [ctypes.c_int]
    lib.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    lib.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    return lib


try:
    _LIBC: Any = _libc()
except (OSError, AttributeError):  # not Linux, or a libc without inotify
    _LIBC = None


def available() -> bool:
    return _LIBC is not None


def kernel_limit() -> int | None:
    """The smaller of the kernel's per-user watch limits this process is under (None when it says nothing)."""
    found = []
    for path in ("/proc/sys/fs/inotify/max_user_watches", "/proc/sys/user/max_inotify_watches"):
        try:
            with open(path, encoding="ascii") as fh:
                found.append(int(fh.read().strip()))
        except (OSError, ValueError):
            continue
    return min(found) if found else None


def watch_budget(env: dict[str, str] | None = None) -> int:
    """How many watches Voyager takes at most: ``VOYAGER_MAX_WATCHES``, else half the kernel's limit (the other
    half left to the editors, build tools and other watchers sharing it), else :data:`DEFAULT_BUDGET`."""
    value = (env if env is not None else os.environ).get("VOYAGER_MAX_WATCHES")
    if value:
        try:
            return max(1, int(value))
        except ValueError:
            pass
    limit = kernel_limit()
    return max(1, limit // 2) if limit else DEFAULT_BUDGET


class _Dir:
    """One watched folder: its path (as the places name it), and per group the pattern its subfolders follow."""

    __slots__ = ("groups", "path")

    def __init__(self, path: str) -> None:
        self.path = path
        self.groups: dict[str, tuple[str, ...]] = {}


class Inotify:
    """One inotify instance: groups of places, a budget of watches, events read as ``(1, path)`` pairs.

    ``watch()`` answers as watchfiles' ``RustNotify.watch`` does (a set of changes, or ``"stop"``), so
    :class:`~voyager_sessions.scan.changes.ChangeWatcher` drives either.
    """

    def __init__(self, budget: int) -> None:
        if _LIBC is None:
            raise OSError(errno.ENOSYS, "inotify is not available")
        fd = _LIBC.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            err = ctypes.get_errno()
            raise OSError(err, os.strerror(err))
        self.fd = fd
        self.budget = budget
        self.dirs: dict[int, _Dir] = {}
        self.by_path: dict[str, int] = {}
        self.members: dict[str, set[int]] = {}  # group -> its watch descriptors
        #: Groups given back since they were added (a folder created under them did not fit): no longer watched.
        self.lost: set[str] = set()
        #: The kernel dropped events (its queue overflowed): what changed since is unknown.
        self.overflowed = False
        #: Why the last group that did not fit did not ("the budget of N watches", the kernel's own limit).
        self.short: str | None = None
        self._poll = select.poll()
        self._poll.register(fd, select.POLLIN)

    @property
    def count(self) -> int:
        return len(self.dirs)

    # -- watches -------------------------------------------------------------------------

    def add_group(self, group: str, places: Iterable[Place]) -> bool:
        """Watch ``places`` as ``group``: every folder of each, as its pattern says; all or nothing (False, and the
        group's watches given back, when the budget or the kernel's limit runs out). Missing places are skipped."""
        self.members.setdefault(group, set())
        try:
            for place in places:
                parts = tuple(p for p in place.below.split("/") if p) if place.below else ()
                self._add_tree(group, os.path.normpath(place.path), parts, set(), report=None)
        except _NoRoom:
            self.drop_group(group)
            return False
        return True

    def drop_group(self, group: str) -> None:
        """Give back every watch only ``group`` needed."""
        for wd in self.members.pop(group, set()):
            d = self.dirs.get(wd)
            if d is None:
                continue
            d.groups.pop(group, None)
            if not d.groups:
                del self.dirs[wd]
                self.by_path.pop(d.path, None)
                _LIBC.inotify_rm_watch(self.fd, wd)

    def _add_tree(
        self, group: str, path: str, parts: tuple[str, ...], seen: set[tuple[int, int]], report: set[str] | None
    ) -> None:
        """Watch ``path`` for ``group`` and, as ``parts`` says, the folders below it; ``report`` collects what is
        found inside (a folder created after its parent was watched: its content may predate its watch)."""
        try:
            st = os.stat(path)
        except OSError:
            return
        key = (st.st_dev, st.st_ino)
        if key in seen:
            return  # a symlink loop
        seen.add(key)
        wd = self._watch(path)
        if wd is None:
            return
        d = self.dirs[wd]
        d.groups[group] = parts
        self.members[group].add(wd)
        try:
            entries = list(os.scandir(path))
        except OSError:
            return
        for entry in entries:
            if report is not None:
                report.add(entry.path)
            rest = _follow(parts, entry.name)
            if rest is not None:
                try:
                    is_dir = entry.is_dir()
                except OSError:
                    is_dir = False
                if is_dir:
                    self._add_tree(group, entry.path, rest, seen, report)

    def _watch(self, path: str) -> int | None:
        wd = self.by_path.get(path)
        if wd is not None and wd in self.dirs:
            return wd
        if len(self.dirs) >= self.budget:
            self.short = f"the budget of {self.budget:,} watches"
            raise _NoRoom
        added: int = _LIBC.inotify_add_watch(self.fd, os.fsencode(path), MASK)
        if added < 0:
            err = ctypes.get_errno()
            if err == errno.ENOSPC:
                limit = kernel_limit()
                self.short = (
                    f"the kernel's limit{f' of {limit:,} watches' if limit else ''} (fs.inotify.max_user_watches)"
                )
                raise _NoRoom
            return None  # gone, not a folder, not readable: nothing to watch there
        if added not in self.dirs:  # (one folder reached by two paths is one watch, named by the first)
            self.dirs[added] = _Dir(path)
            self.by_path[path] = added
        return added

    # -- events --------------------------------------------------------------------------

    def read(self) -> set[str]:
        """The paths changed since the last read (what the queue holds now; nothing waits)."""
        out: set[str] = set()
        while True:
            try:
                data = os.read(self.fd, 1 << 16)
            except BlockingIOError:
                return out
            except OSError as exc:
                if exc.errno == errno.EINTR:
                    continue
                raise
            if not data:
                return out
            self._parse(data, out)

    def _parse(self, data: bytes, out: set[str]) -> None:
        at = 0
        while at + _EVENT.size <= len(data):
            wd, mask, _cookie, length = _EVENT.unpack_from(data, at)
            name = data[at + _EVENT.size : at + _EVENT.size + length].split(b"\0", 1)[0]
            at += _EVENT.size + length
            if mask & IN_Q_OVERFLOW:
                self.overflowed = True
                continue
            d = self.dirs.get(wd)
            if d is None:
                continue
            if mask & IN_IGNORED:  # the folder went (or was unwatched): its watch is gone
                for group in d.groups:
                    self.members.get(group, set()).discard(wd)
                del self.dirs[wd]
                self.by_path.pop(d.path, None)
                out.add(d.path)
                continue
            path = os.path.join(d.path, os.fsdecode(name)) if name else d.path
            out.add(path)
            if name and mask & IN_ISDIR and mask & (IN_CREATE | IN_MOVED_TO):
                self._grew(d, path, os.fsdecode(name), out)

    def _grew(self, parent: _Dir, path: str, name: str, out: set[str]) -> None:
        """A folder appeared in ``parent``: watch it for each group whose pattern goes on there."""
        for group, parts in list(parent.groups.items()):
            rest = _follow(parts, name)
            if rest is None or group in self.lost:
                continue
            try:
                self._add_tree(group, path, rest, set(), report=out)
            except _NoRoom:
                self.lost.add(group)
                self.drop_group(group)

    def watch(
        self, debounce_ms: int, step_ms: int, timeout_ms: int, stop_event: Any = None
    ) -> set[tuple[int, str]] | str:
        """What changed, once anything has (``RustNotify.watch``'s answer: a set of (change, path)); ``"stop"``
        when ``stop_event`` says so first. ``debounce_ms``, ``step_ms``, ``timeout_ms``: as watchfiles has them;
        only the stop event paces this one."""
        while True:
            paths = self.read()
            if paths:
                return {(1, p) for p in paths}
            if stop_event is not None and stop_event.is_set():
                return "stop"
            self._poll.poll(1)

    def close(self) -> None:
        if self.fd >= 0:
            try:
                os.close(self.fd)
            finally:
                self.fd = -1
                self.dirs.clear()


class _NoRoom(Exception):
    """The budget or the kernel's limit of watches ran out."""


def _follow(parts: tuple[str, ...], name: str) -> tuple[str, ...] | None:
    """The pattern a subfolder ``name`` of a folder following ``parts`` follows, or None when it is not watched."""
    if not parts:
        return None
    if parts[0] == "**":
        return parts
    if fnmatch.fnmatchcase(name, parts[0]):
        return parts[1:]
    return None
