"""Knowing which sources changed: a file-system watcher over every agent's store, and the change set it keeps.

A refresh without a watcher stats every source of every agent (a no-op scan of 10,000
files is all stat pass). :class:`ChangeWatcher` watches each agent's store roots
(``adapter.roots(env)``; a root that is a file, a database, is watched through its
folder, which also sees its ``-wal``) with ``watchfiles``' Rust binding (the ``notify``
crate: inotify on Linux, FSEvents on macOS), whose thread collects the paths created,
modified or deleted. :meth:`ChangeWatcher.take` hands a scan a :class:`Changes`, and the
scan (``scan(..., changes=…)``) then discovers only the agents that had a change, and
within Claude Code's and Codex's stores re-stats only the changed files and lists only
the changed folders.

**The fence.** A request's refresh must see every write made before the request was sent,
and a watcher reports a write some time after it happened. So each take touches a fence
file in a private folder the same watcher watches (the data dir's ``watch-fence/``, or a
temporary folder) and drains the watcher's events until the fence shows. inotify keeps one
event queue per instance, filled in the order the changes happened, across all its watches
(the kernel queues the event inside the write's own system call), and the ``notify``
thread reads that queue in order: once the fence is seen, every change made before it was
touched is in the set. FSEvents delivers one stream in order too (not tested here: this
suite runs on Linux). A fence costs ~20 µs on an idle machine (measured, 200 takes); if it
does not show within :data:`FENCE_TIMEOUT` the refresh is a full stat pass.

The full stat pass stays the safety net: ``take`` returns None, and the scan stats
everything, when the watcher could not start (no ``watchfiles``, no inotify watches
left), when it failed since, when its fence came late, when more changes came than it
keeps (:data:`MAX_CHANGES`), when a root that did not exist appeared, and every
``full_every`` seconds (an inotify queue overflow is not reported through ``watchfiles``,
and a network file system hears no other machine's writes: both only the periodic pass
catches). Agents whose sources are found through hints (Aider, Crush, DeepSeek Harness,
imported exports) have no store to watch: every refresh runs their discovery.
``status`` says which of these holds, for ``voyager watch`` and ``voyager serve status``.

The hook for a refresh is :func:`voyager_sessions.scan.refresh.refresh`: one call per refresh,
with the caller's own watcher, that falls back by itself and runs no scan when nothing changed.
(It lives beside this module, not in it: a refresh runs the scan, and the scan takes this
module's change set, so one module holding both would make the two import each other.)
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import msgspec

if TYPE_CHECKING:
    from voyager_sessions.scan.inotify import Place

#: Paths kept between two scans before the watcher gives up and asks for a full pass.
MAX_CHANGES = 20_000
#: The safety net: a full stat pass at least this often (seconds), whatever the watcher says.
FULL_EVERY = 300.0
#: The longest a take waits for its fence to show (seconds); past it, the refresh is a full pass.
FENCE_TIMEOUT = 1.0
#: How long a take spins for its fence before it naps between looks (seconds), and the nap.
FENCE_SPIN = 0.001
FENCE_NAP = 0.0005
#: The file a take touches in its private fence folder.
FENCE_NAME = "fence"
#: How long the Rust loop may keep gathering a burst of changes before handing them over (ms).
FENCE_DEBOUNCE_MS = 50
#: The polling interval of watchfiles' fallback poller (a kernel without inotify), ms.
POLL_DELAY_MS = 300
#: The watch group of the fence folder (an agent's name is its group's).
FENCE_GROUP = " fence"


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


def watch_places(env: Mapping[str, str], providers: Iterable[str]) -> tuple[dict[str, list[Place]], set[str], set[str]]:
    """(agent -> the places to watch for it, agents that cannot be watched, roots that do not exist yet).

    An adapter says where its sessions can be: ``watch_places(env)`` (folders and the patterns of their
    subfolders that can hold sessions), else its ``watch_roots`` or ``roots``: a folder is watched with every
    folder below it; a file (a database, an index) through its folder, alone (which sees its ``-wal`` too).
    A root not there yet is watched for through its folder, alone, when that exists, and is looked for at each
    take (:meth:`ChangeWatcher._appeared`). An agent whose store is on a network file system is not watched
    (another machine's writes raise no event here): every refresh discovers it whole."""
    from voyager_sessions.scan.inotify import Place

    mounts = _mounts()
    from voyager_sessions.ingest import adapters as registry
    from voyager_sessions.ingest.adapters.base import uses_hints

    folders: dict[str, list[Place]] = {}
    unwatched: set[str] = set()
    missing: set[str] = set()
    for name in providers:
        try:
            adapter = registry.get(name)
            declared = getattr(adapter, "watch_places", None)
            specs: list[tuple[str, str | None]] = (
                [(os.fspath(p), below) for p, below in declared(env)]
                if declared is not None
                # ``watch_roots``: the roots plus the places of side files its fingerprints include.
                else [(os.fspath(r), None) for r in getattr(adapter, "watch_roots", adapter.roots)(env)]
            )
        except Exception:  # an adapter that cannot say where it looks is simply not watched
            unwatched.add(name)
            continue
        if uses_hints(adapter):
            # Its sources are found through other agents' sessions (project folders, imports): no store
            # to watch. Each refresh runs its discovery (QuietCheck compares it with its rows).
            unwatched.add(name)
            folders[name] = []
            continue
        mine: list[Place] = []
        for root, below in specs:
            if os.path.isdir(root):
                mine.append(Place(os.path.normpath(root), "**" if below is None else below))
                continue
            parent = os.path.dirname(root)
            if not os.path.exists(root):
                missing.add(root)
            if os.path.isdir(parent):
                mine.append(Place(os.path.normpath(parent), ""))  # a database's folder alone: its -wal too
        if any(on_network_fs(os.path.realpath(p.path), mounts) for p in mine):
            unwatched.add(name)
        folders[name] = mine
    return folders, unwatched, missing


class _Closable(Protocol):
    def close(self) -> None: ...


class _Deadline:
    """The ``stop_event`` the watcher's Rust loop asks after each step: how a take waits for its fence.

    The loop runs with a step of 0 (the fence shows ~20 µs after the touch on an idle
    machine), so it spins; past :data:`FENCE_SPIN` it sleeps :data:`FENCE_NAP` in each ask
    instead (on a loaded machine the watcher's own thread needs the core), and at ``at``
    it says "stop": the loop then drops what it gathered, and the refresh is a full pass.
    """

    __slots__ = ("at", "spin_until")

    def __init__(self, at: float) -> None:
        self.at = at
        self.spin_until = time.monotonic() + FENCE_SPIN

    def is_set(self) -> bool:
        now = time.monotonic()
        if now >= self.at:
            return True
        if now >= self.spin_until:
            time.sleep(FENCE_NAP)
        return False


class ChangeWatcher:
    """The changes under every agent's roots, collected by ``watchfiles``' Rust thread (see the module docstring)."""

    def __init__(
        self,
        env: Mapping[str, str],
        providers: Iterable[str] | None = None,
        *,
        full_every: float = FULL_EVERY,
        enabled: bool = True,
        fence_dir: Path | None = None,
    ) -> None:
        from voyager_sessions.ingest import adapters as registry

        self.env = dict(env)
        self.providers = list(providers or registry.PROVIDERS)
        self.full_every = full_every
        self.enabled = enabled
        self.status = "not started"
        #: What the takes were: a change set (``watched``), the safety-net full pass (``full``), a fence
        #: not seen in time (``late``); ``quiet``: refreshes that found nothing to do and ran no scan.
        self.counts = {"watched": 0, "full": 0, "late": 0, "quiet": 0}
        #: Why the last full stat pass was one (for ``serve status``), None before any.
        self.last_full: str | None = None
        self._lock = threading.Lock()  # one take at a time: the fence is one file
        self._notify: Any = None
        self._own_fence = fence_dir is None
        self._fence_dir = fence_dir
        self._fence = ""
        self._pending: set[str] = set()  # given back by a scan that failed
        self._missing: set[str] = set()
        self._watched: dict[str, tuple[str, ...]] = {}
        self._lost: set[str] = set()  # agents whose watches a folder created since did not fit
        self._roots: set[str] = set()
        self._last_full: float | None = None  # no full pass yet: what changed before the start is unknown
        #: What a refresh keeps with this watcher for one data dir (its no-change test: ``scan.refresh``),
        #: closed when the watcher stops.
        self.kept: dict[str, _Closable] = {}

    # -- life ------------------------------------------------------------------------

    def start(self) -> ChangeWatcher:
        """Start watching (or say why not: every ``take`` is then a full pass)."""
        if not self.enabled:
            self.status = "disabled: every refresh stats every source"
            return self
        from voyager_sessions.scan import inotify

        places, unwatched, missing = watch_places(self.env, self.providers)
        self._missing = missing
        try:
            fence_dir = self._fence_place()
        except OSError as exc:
            self.status = f"cannot start (no fence folder: {exc.strerror or exc}): every refresh stats every source"
            return self
        self._fence = os.path.join(fence_dir, FENCE_NAME)
        wanted = {p: ps for p, ps in places.items() if p not in unwatched}
        remote = sorted(p for p in unwatched if p in places and places[p])
        hinted = sorted(p for p in unwatched if p in places and p not in remote)
        if inotify.available():
            short = self._start_inotify(inotify, fence_dir, wanted)
            if short is None:
                return self
        else:
            short = self._start_rust(fence_dir, wanted)
            if short is None:
                return self
        self.status = (
            f"watching {self._notify_count()} folders for {len(self._watched)} of {len(wanted)} agents"
            + (
                f"; not watched, {short[0]}, so each refresh discovers them whole: {', '.join(short[1])}"
                if short[1]
                else ""
            )
            + (f"; found through hints, discovered at each refresh: {', '.join(hinted)}" if hinted else "")
            + (f"; on a network file system, stat every time: {', '.join(remote)}" if remote else "")
        )
        return self

    def _start_inotify(
        self, inotify: Any, fence_dir: str, wanted: dict[str, list[Any]]
    ) -> tuple[str, list[str]] | None:
        """Watch through :class:`~voyager_sessions.scan.inotify.Inotify` (Linux): the fence first, then each agent
        whole or not at all, within the budget. (why some agents are not watched, which), or None when nothing
        could start (the status then says why)."""
        try:
            notify = inotify.Inotify(inotify.watch_budget(self.env))
        except OSError as exc:
            self.status = f"cannot start ({exc.strerror or exc}): every refresh stats every source"
            return None
        if not notify.add_group(FENCE_GROUP, [inotify.Place(fence_dir, "")]):
            notify.close()
            self.status = (
                f"cannot start (no watch left for its fence: {notify.short}): every refresh stats every source"
            )
            return None
        short: list[str] = []
        self._watched = {}
        for name, ps in wanted.items():
            if notify.add_group(name, ps):
                self._watched[name] = tuple(p.path for p in ps)
            else:
                short.append(name)
        self._notify = notify
        self._lost = set()
        self._roots = {p.path for ps in wanted.values() for p in ps}
        return (notify.short or "", short)

    def _start_rust(self, fence_dir: str, wanted: dict[str, list[Any]]) -> tuple[str, list[str]] | None:
        """Watch through watchfiles' ``RustNotify`` (FSEvents on macOS): every place recursively."""
        try:
            from watchfiles._rust_notify import RustNotify
        except ImportError:
            self.status = "unavailable (watchfiles is not installed): every refresh stats every source"
            return None
        roots = sorted({p.path for ps in wanted.values() for p in ps} | {fence_dir})
        # Nested roots are watched once, through the outermost.
        roots = [r for r in roots if not any(r != o and r.startswith(o.rstrip(os.sep) + os.sep) for o in roots)]
        self._roots = set(roots) - {fence_dir}
        try:
            self._notify = RustNotify(roots, False, False, POLL_DELAY_MS, True, True)
        except Exception as exc:  # no watches left, a root gone at start…: fall back, say so
            self._notify = None
            self.status = f"cannot start ({type(exc).__name__}: {exc}): every refresh stats every source"
            return None
        self._watched = {p: tuple(x.path for x in ps) for p, ps in wanted.items()}
        return ("", [])

    def _notify_count(self) -> int:
        """Folders watched (for the status): the inotify watches, less the fence's."""
        count = getattr(self._notify, "count", None)
        return count - 1 if isinstance(count, int) else len(self._roots)

    def _fence_place(self) -> str:
        """The private folder that holds the fence file (the data dir's, or a temporary one of this watcher's)."""
        if self._fence_dir is None:
            import tempfile

            self._fence_dir = Path(tempfile.mkdtemp(prefix="voyager-fence-"))
        from voyager_sessions.core.paths import ensure_private_dir

        ensure_private_dir(self._fence_dir)
        # The real path: the watcher reports paths under the folders as it was given them, resolved on macOS.
        return os.path.realpath(self._fence_dir)

    def stop(self) -> None:
        with self._lock:
            if self._notify is not None:
                try:
                    self._notify.close()
                except Exception:  # noqa: BLE001 - closing a watcher that failed must not hide why
                    pass
                self._notify = None
            for kept in self.kept.values():
                kept.close()
            self.kept.clear()
            if self._own_fence and self._fence_dir is not None:
                import shutil

                shutil.rmtree(self._fence_dir, ignore_errors=True)
                self._fence_dir = None

    def _fail(self, why: str) -> None:
        self.status = why
        try:
            self._notify.close()
        except Exception:  # noqa: BLE001
            pass
        self._notify = None

    # -- the change set ----------------------------------------------------------------

    def take(self, *, periodic: bool = True) -> Changes | None:
        """Everything that changed since the last take, or None when the scan must stat everything.

        ``periodic``: this take may be the periodic full pass (the safety net). A server's
        requests pass False, so that pass (seconds at 100,000 sources) falls to its
        background refresh, not to a search that someone is waiting for.

        Fenced: the fence file is touched, and the watcher's events are drained until it
        shows; one inotify instance delivers its events in the order they happened, so every
        write that returned before this call is in the set (see the module docstring).
        """
        with self._lock:
            if self._notify is None or not self._watched:
                # Nothing a change set could spare a scan: no fence to wait for either.
                self.counts["full"] += 1
                self.last_full = self.status
                return None
            paths = self._drain()
            self._note_lost()
            if paths is None:
                self.counts["late"] += 1
                self.last_full = "the fence came late" if self._notify is not None else self.status
                self._last_full = time.monotonic()
                return None
            paths |= self._pending
            self._pending = set()
            now = time.monotonic()
            overflowed = getattr(self._notify, "overflowed", False)
            if overflowed:
                self._notify.overflowed = False
            why = (
                "overflow (the kernel's event queue: changes were lost)"
                if overflowed
                else f"overflow ({len(paths):,} paths changed)"  # more than kept: stat everything, then watching goes on
                if len(paths) > MAX_CHANGES
                else "the first refresh"
                if self._last_full is None
                else "periodic"
                if periodic and now - self._last_full >= self.full_every
                else "a store appeared or a watched folder went"
                if self._appeared(paths)
                else None
            )
            if why is not None:
                self.last_full = why
                self._last_full = now
                self.counts["full"] += 1
                return None
            self.counts["watched"] += 1
            return Changes(paths=frozenset(paths), watched=self._watched)

    def _drain(self) -> set[str] | None:
        """The paths reported up to the fence, or None when it did not show in time (or the watcher failed)."""
        fence = self._fence
        try:
            os.utime(fence)
        except FileNotFoundError:
            try:
                os.close(os.open(fence, os.O_WRONLY | os.O_CREAT, 0o600))
            except OSError:
                return None
        except OSError:
            return None
        stop = _Deadline(time.monotonic() + FENCE_TIMEOUT)
        paths: set[str] = set()
        while True:
            try:
                # Step 0, paced by _Deadline: looked at as soon as the Rust thread has queued what
                # inotify delivered. No timeout: its return clears what arrived in between (a race
                # that could lose an event); the deadline ("stop") clears too, but a full pass follows.
                raw = self._notify.watch(FENCE_DEBOUNCE_MS, 0, 0, stop)
            except Exception as exc:  # the watcher failed (no inotify watches left for a new folder…)
                self._fail(f"watcher stopped ({type(exc).__name__}: {exc}): every refresh stats every source")
                return None
            if raw == "signal":
                raise KeyboardInterrupt
            if isinstance(raw, str):  # "stop": the fence did not show in time (a loaded machine)
                return None
            paths.update(path for _, path in raw)
            if fence in paths:
                paths.discard(fence)
                paths.discard(os.path.dirname(fence))
                return paths

    def _note_lost(self) -> None:
        """Agents whose watches were given back since (a folder created under them did not fit): from now on each
        refresh discovers them whole, and the status says so."""
        lost = getattr(self._notify, "lost", None)
        if not lost or lost <= self._lost:
            return
        new = sorted(lost - self._lost)
        self._lost |= lost
        for name in new:
            self._watched.pop(name, None)
        why = getattr(self._notify, "short", None) or "the watch limit"
        self.status += f"; no longer watched ({why} met by new folders): {', '.join(new)}"

    def give_back(self, changes: Changes | None) -> None:
        """Return a change set a failed scan did not use, so the next one sees it."""
        with self._lock:
            if changes is None:
                self._last_full = None  # the full pass did not happen: the next take asks for it again
                return
            self._pending.update(changes.paths)

    def _appeared(self, paths: set[str]) -> bool:
        """True when a root that did not exist now does, or a watched root itself changed (restarting the watcher)."""
        if any(os.path.exists(m) for m in self._missing) or not self._roots.isdisjoint(paths):
            self._restart()
            return True
        return False

    def _restart(self) -> None:
        if self._notify is not None:
            try:
                self._notify.close()
            except Exception:  # noqa: BLE001
                pass
            self._notify = None
        own, self._own_fence = self._own_fence, False  # the fence folder stays for the new start
        self.start()
        self._own_fence = own
