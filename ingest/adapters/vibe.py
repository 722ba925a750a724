"""The Mistral Vibe adapter: ``<VIBE_HOME>/logs/session/`` (default ``~/.vibe``) to Sessions and Events.

Vibe's sessions live in two layouts side by side, both read here:

* the unified store, ``unified/<session id>/`` (Vibe 3.x, and 2.x by default): one
  source per session folder, re-read whole when its ``CURRENT`` pointer or ``meta.json``
  changes (``_vibe_unified``);
* the legacy logs, ``<prefix>_<YYYYMMDD>_<HHMMSS>_<id8>/{messages.jsonl,meta.json}``
  (2.x, or run with ``--legacy-harness``): one source per ``messages.jsonl``, read from
  its byte offset as it grows; and the 1.x single files ``<prefix>_<…>.json``
  (``_vibe_legacy``).

Discovery only lists and stats; which files of a unified session hold its history is
decided by its pointers when it is read, never by globbing ``chunks/`` or
``generations/`` (old generations repeat earlier turns). A session present in both
layouts (the same id) is read from the unified store only.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._vibe_common import META, PROVIDER
from voyager_sessions.ingest.adapters._vibe_legacy import (
    MESSAGES,
    LegacyRead,
    folder_id8,
    index_entry,
    read_single_file,
)
from voyager_sessions.ingest.adapters._vibe_unified import CURRENT, read_unified
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Item, Notice, Source
from voyager_sessions.ingest.files import folder_fingerprint, kind_of
from voyager_sessions.ingest.jsondoc import read_json_object

#: A legacy session folder or 1.x file name: ``<prefix>_<YYYYMMDD>_<HHMMSS>_<id8>`` (the prefix is configurable).
_LEGACY_NAME = re.compile(r".+_\d{8}_\d{6}_[^_/]+")


def session_root(env: Mapping[str, str]) -> Path:
    """Where Vibe logs sessions: ``<VOYAGER_VIBE_HOME | VIBE_HOME | ~/.vibe>/logs/session``."""
    return manifest.agent_dir("vibe", env) / "logs" / "session"


def _entries(folder: Path) -> tuple[list[os.DirEntry[str]], Notice | None]:
    try:
        with os.scandir(folder) as it:
            return sorted(it, key=lambda e: e.name), None
    except OSError as exc:
        return [], Notice(source=str(folder), reason=f"cannot read directory: {exc.strerror or exc}", fatal=True)


class _Walk:
    """One discovery pass: each directory followed once, however many links lead to it."""

    def __init__(self) -> None:
        self.seen: set[tuple[int, int]] = set()

    def dir(self, entry: os.DirEntry[str]) -> bool:
        """True for a directory (a symlink to one included) not yet walked."""
        try:
            st = os.stat(entry.path)
        except OSError:
            return False
        if not stat.S_ISDIR(st.st_mode) or (st.st_dev, st.st_ino) in self.seen:
            return False
        self.seen.add((st.st_dev, st.st_ino))
        return True


def _unified_sources(root: Path, walk: _Walk) -> Iterator[Source | Notice]:
    unified = root / "unified"
    if not os.path.isdir(unified):
        return
    entries, problem = _entries(unified)
    if problem is not None:
        yield problem
    for entry in entries:
        if not walk.dir(entry):
            continue
        folder = Path(entry.path)
        current = folder / CURRENT
        try:
            st = os.stat(current)
        except OSError:
            yield Notice(
                source=str(folder),
                reason="no CURRENT pointer: not a session Voyager can read yet "
                "(Vibe may still be creating it); skipped",
            )
            continue
        if not stat.S_ISREG(st.st_mode):
            yield Notice(source=str(current), reason=f"{kind_of(st.st_mode)}, not a regular file; skipped")
            continue
        # CURRENT names the live generation (and its manifest's digest), meta.json the title and times:
        # together they change whenever what Voyager indexes of the session does.
        fp = folder_fingerprint(folder, [current, folder / META])
        yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)


def _legacy_id(folder: Path) -> str | None:
    """A legacy folder's full session id, from the side index or its meta.json (only asked on an id8 clash)."""
    entry = index_entry(folder)
    if isinstance(entry.get("session_id"), str):
        return entry["session_id"]
    meta = read_json_object(folder / META, fatal=False)
    return meta.get("session_id") if isinstance(meta, dict) and isinstance(meta.get("session_id"), str) else None


def _legacy_sources(root: Path, walk: _Walk, unified_ids: set[str]) -> Iterator[Source | Notice]:
    unified_id8 = {u[:8] for u in unified_ids}
    entries, problem = _entries(root)
    if problem is not None:
        yield problem
        return
    for entry in entries:
        if entry.name == "unified":
            continue
        if not walk.dir(entry):
            if entry.name.endswith(".json") and _LEGACY_NAME.fullmatch(entry.name[:-5]):
                yield from _single_file(entry)
            continue
        folder = Path(entry.path)
        msgs = folder / MESSAGES
        try:
            mst = os.stat(msgs)
        except OSError:
            if _LEGACY_NAME.fullmatch(entry.name):
                yield Notice(source=str(folder), reason=f"no {MESSAGES}: not a session Voyager can read yet; skipped")
            continue
        if not stat.S_ISREG(mst.st_mode):
            yield Notice(source=str(msgs), reason=f"{kind_of(mst.st_mode)}, not a regular file; skipped")
            continue
        id8 = folder_id8(entry.name)
        if id8 in unified_id8 and _legacy_id(folder) in unified_ids:
            continue  # the same session is in the unified store: read once, from there
        try:
            meta = os.stat(folder / META)
            meta_size, meta_mtime = meta.st_size, meta.st_mtime_ns
        except OSError:
            meta_size = meta_mtime = 0
        # messages.jsonl only grows (read from its offset); meta.json is rewritten on every save and on a
        # rename, so its size and mtime ride in the fingerprint's spare pair: a rename alone is seen.
        fp = Fingerprint(
            size=mst.st_size, mtime_ns=mst.st_mtime_ns, inode=mst.st_ino, wal_size=meta_size, wal_mtime_ns=meta_mtime
        )
        yield Source(provider=PROVIDER, path=str(msgs), fingerprint=fp, append_only=True)


def _single_file(entry: os.DirEntry[str]) -> Iterator[Source | Notice]:
    try:
        st = os.stat(entry.path)
    except OSError:
        return
    if not stat.S_ISREG(st.st_mode):
        yield Notice(source=entry.path, reason=f"{kind_of(st.st_mode)}, not a regular file; skipped")
        return
    yield Source(
        provider=PROVIDER,
        path=entry.path,
        fingerprint=Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino),
        append_only=False,
    )


def probe(path: str | os.PathLike[str]) -> str:
    """The layout of a Vibe source, for ``voyager doctor``."""
    p = Path(path)
    if os.path.isdir(p):
        current = read_json_object(p / CURRENT, fatal=False)
        if not isinstance(current, dict):
            return "unreadable"
        minor = current.get("store_format_minor")
        return f"unified-v1.{minor}" if isinstance(minor, int) else "unified-v1"
    if p.name == MESSAGES:
        return "legacy-2.x"
    return "single-file-1.x" if p.suffix == ".json" else "unknown-schema"


class VibeAdapter:
    """Mistral Vibe's session logs under ``$VIBE_HOME/logs/session`` (default ``~/.vibe``), both layouts."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [session_root(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        root = session_root(env)
        if not os.path.isdir(root):
            return
        walk = _Walk()
        unified_ids: set[str] = set()
        for item in _unified_sources(root, walk):
            if isinstance(item, Source):
                unified_ids.add(Path(item.path).name)
            yield item
        yield from _legacy_sources(root, walk, unified_ids)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        path = Path(source.path)
        if path.name == MESSAGES:
            return LegacyRead(source, cursor).run()
        if os.path.isdir(path):
            return read_unified(source, cursor)
        return read_single_file(source)


ADAPTER = VibeAdapter()
