"""The one small interface every agent adapter implements, and the items it streams.

An adapter has two jobs and no others:

* ``discover(env)`` yields the ``Source`` files (or databases) it would read, each
  with a cheap stat ``Fingerprint``, plus a ``Notice`` for any place it could not
  look into (an unreadable directory, say).
* ``read(source, cursor)`` streams ``Session`` and ``Event`` items from one source,
  then, for append-only sources, a final ``Cursor`` saying where it stopped (a
  multi-session database may yield one too, and ``Unchanged`` for each session it
  skipped because the cursor shows it did not change); any
  piece it had to skip comes as a ``Notice`` naming where and why.

Adapters open provider files read-only and never write anywhere. They hold at most
one session's worth of state in memory and yield as they go.

An agent with no fixed place for its sessions (Aider keeps a history file in each
project) may ask for ``Hints``: what Voyager already knows that can lead to them (the
working directories other sessions name). Its manifest row says so (``uses_hints=True``) and its
``discover(env, hints)`` takes them; :func:`discover` passes them only to such
adapters, so every other adapter keeps the one-argument ``discover(env)``.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar, Protocol

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.manifest import Evidence as Evidence  # re-exported: adapters' products name it
from voyager_sessions.core.model import Event, Session


class Fingerprint(msgspec.Struct, frozen=True, kw_only=True):
    """What a stat pass sees of a source; any difference means "look again".

    For SQLite sources the ``-wal`` file's size and mtime are part of it, because a
    running agent's new turns live there until a checkpoint.
    """

    size: int
    mtime_ns: int
    inode: int
    wal_size: int = 0
    wal_mtime_ns: int = 0


class Source(msgspec.Struct, frozen=True, kw_only=True):
    """One file or database an adapter reads. ``append_only`` sources may be read from a byte offset.

    ``empty_ok``: holding no session is normal for this source, not a sign of a format the
    adapter does not know (an editor's ``state.vscdb`` shared with everything else the
    editor keeps; a chat store created before its first message). A read that yields
    nothing from it is then simply empty, not reported as "no session in it".
    """

    provider: str
    path: str
    fingerprint: Fingerprint
    append_only: bool = False
    empty_ok: bool = False


class Cursor(msgspec.Struct, frozen=True, kw_only=True):
    """Where reading an append-only source stopped, so the next scan reads only new bytes.

    ``offset`` is just past the last complete line consumed; ``tail_hash`` hashes that
    line so a rewrite of the file is detected; ``next_seq`` continues the session's
    event counter; ``state`` is whatever small context the adapter needs to go on
    (for example a call id to tool name map is *not* kept: results carry their id).
    """

    offset: int
    next_seq: int
    tail_hash: str
    tail_start: int = 0
    session: str | None = None
    state: dict[str, Any] = {}


class Notice(msgspec.Struct, frozen=True, kw_only=True):
    """A piece of input that was skipped, where it was, and why. ``fatal``: the whole source."""

    source: str
    reason: str
    where: str | None = None
    fatal: bool = False
    #: The failure may pass (a permission, an I/O error, a locked database): retry the
    #: source on the next scan even if it looks unchanged.
    transient: bool = False

    def describe(self) -> str:
        where = f" ({self.where})" if self.where else ""
        return f"{self.source}{where}: {self.reason}"


class Unchanged(msgspec.Struct, frozen=True, kw_only=True):
    """A multi-session source's way to say "this session's rows did not change since the cursor":
    the pipeline keeps its indexed events instead of expecting them again."""

    session: str


class Partial(msgspec.Struct, frozen=True, kw_only=True):
    """A multi-session source re-reads only the end of a session: its events before ``from_seq``
    stay indexed, and the events that follow replace everything from ``from_seq`` on."""

    session: str
    from_seq: int


Item = Session | Event | Cursor | Notice | Unchanged | Partial


class Hints(msgspec.Struct, frozen=True, kw_only=True):
    """What the caller of ``discover`` already knows that may point to sources no fixed location names.

    ``cwds``: the working directories of indexed sessions (every agent's), absolute paths
    as the sessions recorded them; ``imports``: the exports ``voyager import`` recorded.
    The scan takes both from its state store; adapters never read Voyager's own databases.
    """

    cwds: frozenset[str] = frozenset()
    #: The conversation exports ``voyager import`` recorded (absolute paths of files or folders).
    imports: frozenset[str] = frozenset()
    #: The folders that discovery led by a recorded path stays inside (``$VOYAGER_LOOK_WITHIN``, real paths);
    #: empty: anywhere. :func:`discover` fills it and drops the hints outside it; an adapter that walks on
    #: from a hint (up to its parents, into a path a file names) asks :meth:`allows` at each step.
    within: tuple[str, ...] = ()

    def allows(self, path: str | os.PathLike[str]) -> bool:
        """True when ``path`` lies inside one of the ``within`` folders (always, when there are none)."""
        if not self.within:
            return True
        try:
            real = os.path.realpath(path)
        except (OSError, ValueError):
            return False
        return any(real == root or real.startswith(root.rstrip(os.sep) + os.sep) for root in self.within)


#: Where discovery may follow the paths sessions and agents' files record (working folders, imports, the
#: stores a registry names): ``os.pathsep``-separated folders. Unset: anywhere. The tests pin it to each
#: test's sandbox, so a path a capture recorded (``/home/dev/proj``) is never looked at on the machine.
LOOK_WITHIN = "VOYAGER_LOOK_WITHIN"


def look_within(env: Mapping[str, str]) -> tuple[str, ...]:
    """The real paths of ``$VOYAGER_LOOK_WITHIN``'s folders (empty when it is unset)."""
    out: list[str] = []
    for part in env.get(LOOK_WITHIN, "").split(os.pathsep):
        if part.strip():
            try:
                out.append(os.path.realpath(os.path.expanduser(part.strip())))
            except (OSError, ValueError):
                continue
    return tuple(dict.fromkeys(out))


def pinned(hints: Hints | None, env: Mapping[str, str]) -> Hints:
    """``hints`` kept to ``$VOYAGER_LOOK_WITHIN``: the cwds and imports outside it dropped, the folders named."""
    hints = hints or Hints()
    within = look_within(env)
    if not within:
        return hints
    bounded = Hints(within=within)
    return Hints(
        cwds=frozenset(c for c in hints.cwds if bounded.allows(c)),
        imports=frozenset(i for i in hints.imports if bounded.allows(i)),
        within=within,
    )


class Adapter(Protocol):
    """What every adapter module's ``ADAPTER`` object provides (named by its row in ``voyager_sessions.ingest.manifest``).

    What people call the agent, how Voyager knows its format and its optional capabilities are the row's
    (``label``, ``evidence``, ``versions``, ``probe``, ``uses_hints``), not the adapter's.
    """

    name: ClassVar[str]

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        """The places this adapter looks, for ``voyager doctor``."""
        ...

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        """Yield every source under ``roots(env)`` with its fingerprint, and a Notice per place it could not look."""
        ...

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        """Stream one source's sessions and events (from ``cursor`` when given), read-only."""
        ...


def discover(adapter: Adapter, env: Mapping[str, str], hints: Hints | None = None) -> Iterator[Source | Notice]:
    """``adapter.discover(env)``, or ``adapter.discover(env, hints)`` for an adapter whose row declares ``uses_hints``
    (the hints kept to ``$VOYAGER_LOOK_WITHIN``: :func:`pinned`)."""
    if uses_hints(adapter):
        return adapter.discover(env, pinned(hints, env))  # type: ignore[call-arg]
    return adapter.discover(env)


def uses_hints(adapter: Adapter) -> bool:
    """True when ``adapter``'s manifest row declares that its ``discover`` takes ``Hints`` (a test double with no row: False)."""
    agent = manifest.ROWS.get(adapter.name)
    return agent is not None and agent.uses_hints


def fingerprint(path: str | os.PathLike[str], *, wal: bool = False) -> Fingerprint:
    """Stat ``path`` (and its ``-wal`` sibling when ``wal``) into a Fingerprint. Raises OSError if it is gone."""
    st = os.stat(path)
    wal_size = wal_mtime = 0
    if wal:
        try:
            wst = os.stat(f"{os.fspath(path)}-wal")
            # An empty WAL holds nothing; SQLite itself creates one when a reader opens the
            # database, so its mtime must not count as a change.
            if wst.st_size:
                wal_size, wal_mtime = wst.st_size, wst.st_mtime_ns
        except OSError:
            pass
    return Fingerprint(
        size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino, wal_size=wal_size, wal_mtime_ns=wal_mtime
    )
