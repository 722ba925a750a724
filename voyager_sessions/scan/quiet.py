"""Knowing that a refresh has nothing to do, without running a scan: the served no-change refresh.

A fenced change set from the file-system watcher (:mod:`.changes`) that holds no path says
that nothing changed under any watched agent's store since the last refresh. A scan would
still open the index and the state, count every source and session (milliseconds per
10,000 sources), and discover in full the agents that cannot be watched: those found
through hints (Aider, Crush, DeepSeek Harness in project folders, the imported exports
wherever ``voyager import`` named them), whose files lie outside any store a watcher
could watch. :class:`QuietCheck` answers "would a scan read or remove anything?" from
what it keeps between refreshes, and the refresh skips the scan when it would not:

- every other provider asked for is watched (an agent on a network file system is not);
- the state names no source to retry (a read that may pass is retried even when unchanged);
- the index is the one the state describes (an index deleted or rebuilt is read again), and its
  files are as the last refresh left them (a segment deleted or rewritten behind the server's
  back, by another process or by damage, is for a scan to find: opening the index checks every
  segment, and a damaged one is rebuilt);
- the hinted agents' own discovery, run with the same hints a scan would give it, finds
  exactly the sources their rows name, each with the stat its row holds, and nothing to
  report (a notice is news a scan must pass on).

The state rows and hints are read once and kept until another connection commits
(``PRAGMA data_version``: any scan, this process's or another's), so a no-change refresh
costs the hinted agents' few stats, not a read of every row.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING

from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan.changes import Changes

if TYPE_CHECKING:
    from voyager_sessions.store.state import RefreshView, StateStore


class QuietCheck:
    """The no-change test for one data dir (see the module docstring); one caller at a time."""

    def __init__(self, data_dir: Path) -> None:
        self.ddir = DataDir(data_dir)
        self._lock = threading.Lock()
        self._store: StateStore | None = None
        self._view: RefreshView | None = None
        self._hinted: tuple[str, ...] = ()
        self._files: tuple[tuple[str, int, int, int], ...] | None = (
            None  # the index's files as the last refresh left them
        )

    def close(self) -> None:
        with self._lock:
            if self._store is not None:
                self._store.close()
                self._store = None
            self._view = None

    def nothing_to_do(self, changes: Changes, providers: Iterable[str], env: Mapping[str, str]) -> bool:
        """True when a scan of ``providers`` told ``changes`` would read nothing and remove nothing."""
        if changes.paths:
            return False
        from voyager_sessions.ingest import adapters as registry
        from voyager_sessions.ingest.adapters.base import uses_hints

        hinted: list[str] = []
        for name in providers:
            if name in changes.watched:
                continue
            try:
                adapter = registry.get(name)
            except Exception:  # noqa: BLE001 - a scan reports it; here it only means "ask a scan"
                return False
            if not uses_hints(adapter):
                return False  # not watched (a network file system): only a stat pass can tell
            hinted.append(name)
        with self._lock:
            try:
                return self._quiet(tuple(hinted), env)
            except Exception:  # noqa: BLE001 - any doubt is answered by a scan
                self._view = None
                return False

    def saw_index(self) -> None:
        """Remember the index's files as they are now (a refresh's own scan just changed them)."""
        with self._lock:
            self._files = index_files(self.ddir)

    def _quiet(self, hinted: tuple[str, ...], env: Mapping[str, str]) -> bool:
        files = index_files(self.ddir)
        if files != self._files:
            self._files = files
            return False
        view = self._load(hinted)
        if view is None or view.retry or not view.index_id or view.index_id != _index_id(self.ddir):
            return False
        if not hinted:
            return True
        from voyager_sessions.ingest import adapters as registry
        from voyager_sessions.ingest.adapters.base import Hints, Notice, discover

        hints = Hints(cwds=view.cwds, imports=view.imports)
        found = 0
        rows = view.rows
        for name in hinted:
            for item in discover(registry.get(name), env, hints):
                if isinstance(item, Notice):
                    return False
                row = rows.get(item.path)
                fp = item.fingerprint
                if (
                    row is None
                    or row[0] != name
                    or row[1:] != (fp.size, fp.mtime_ns, fp.inode, fp.wal_size, fp.wal_mtime_ns)
                ):
                    return False
                found += 1
        return found == len(rows)  # a source not found again would be removed by a scan

    def _load(self, hinted: tuple[str, ...]) -> RefreshView | None:
        """The state's view, read again only when another connection committed since (or other agents are asked)."""
        from voyager_sessions.store.state import StateStore

        if self._store is None:
            if not self.ddir.state_db.exists():
                return None  # never scanned: a scan has everything to do
            self._store = StateStore(self.ddir.state_db, lendable=True)
        view = self._view
        if view is not None and hinted == self._hinted and self._store.data_version() == view.version:
            return view
        self._view = self._store.refresh_view(hinted)
        self._hinted = hinted
        return self._view


def _index_id(ddir: DataDir) -> str | None:
    """The id the index on disk carries (what a scan compares with the state's), or None."""
    try:
        with open(os.path.join(ddir.index, "voyager-index-id"), encoding="utf-8") as fh:
            return fh.read().strip()
    except OSError:
        return None


def index_files(ddir: DataDir) -> tuple[tuple[str, int, int, int], ...]:
    """Every file of the index with its inode, size and modification time, in name order (~1 µs a file: an index
    holds a few dozen); empty when the index is gone."""
    try:
        entries = sorted(os.scandir(ddir.index), key=lambda e: e.name)
    except OSError:
        return ()
    out = []
    for entry in entries:
        try:
            st = entry.stat(follow_symlinks=False)
        except OSError:
            continue
        out.append((entry.name, st.st_ino, st.st_size, st.st_mtime_ns))
    return tuple(out)
