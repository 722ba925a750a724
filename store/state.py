"""Scan state and the sessions table: what was indexed, from where, and what it produced.

Lives in ``<data dir>/state.db``. Rows here always describe a Tantivy commit that
already happened (the pipeline commits the index first), so a crash in between costs
a re-read of some sources, never a duplicate or a loss. Session metadata (title, cwd,
repo…) is kept here rather than in every indexed event, so hits are joined with it at
render time and a renamed session needs no reindex.
"""

from __future__ import annotations

import heapq
import operator
import re
import shlex
import sqlite3
import time
from collections.abc import Callable, Collection, Iterable, Sequence
from pathlib import Path
from typing import Any, Literal

import msgspec

from voyager_sessions.core.model import Session, SessionRecord
from voyager_sessions.store.db import Migration, connect, guarded, like_contains, like_prefix, transaction

MIGRATIONS: list[Migration] = []
migration = MIGRATIONS.append

#: How far past the last read of its source a session's time may lie before it is clamped (for order and ties).
FUTURE_SLACK_S = 86_400
#: How far past its source file's modification time a stamp may lie (a file system's coarse clock) before it is.
MTIME_SLACK_S = 2


@migration
def m001_initial(db: sqlite3.Connection) -> None:
    db.execute(
        """
        CREATE TABLE sources (
            path TEXT PRIMARY KEY,
            provider TEXT NOT NULL,
            size INTEGER NOT NULL,
            mtime_ns INTEGER NOT NULL,
            inode INTEGER NOT NULL,
            wal_size INTEGER NOT NULL DEFAULT 0,
            wal_mtime_ns INTEGER NOT NULL DEFAULT 0,
            cursor BLOB,
            sessions TEXT NOT NULL DEFAULT '[]',
            events INTEGER NOT NULL DEFAULT 0,
            status TEXT NOT NULL DEFAULT 'ok',
            detail TEXT,
            indexed_at REAL NOT NULL
        )
        """
    )
    db.execute(
        """
        CREATE TABLE sessions (
            id TEXT PRIMARY KEY,
            provider TEXT NOT NULL,
            native_id TEXT NOT NULL,
            source TEXT,
            title TEXT,
            cwd TEXT,
            git_branch TEXT,
            git_repo TEXT,
            model TEXT,
            started REAL,
            updated REAL,
            parent TEXT,
            resume TEXT,
            tokens_in INTEGER,
            tokens_out INTEGER,
            events INTEGER NOT NULL DEFAULT 0
        )
        """
    )
    db.execute("CREATE INDEX sessions_updated ON sessions(updated DESC)")
    db.execute("CREATE INDEX sessions_source ON sessions(source)")
    db.execute("CREATE INDEX sessions_native ON sessions(native_id)")
    db.execute(
        "CREATE TABLE scans (id INTEGER PRIMARY KEY, started REAL NOT NULL, finished REAL NOT NULL, summary TEXT NOT NULL)"
    )


@migration
def m002_meta(db: sqlite3.Connection) -> None:
    # Which index these rows describe (see SearchIndex.index_id), and other single facts.
    db.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)")


@migration
def m003_title_source(db: sqlite3.Connection) -> None:
    # Who named the session (user, agent, prompt): a user's title outranks a generated one.
    db.execute("ALTER TABLE sessions ADD COLUMN title_source TEXT")


@migration
def m004_agent_version(db: sqlite3.Connection) -> None:
    # The version of the agent that wrote each session (where its files say): doctor shows the versions
    # seen beside the ones Voyager was tested on. Rows from before stay NULL until their source is read again.
    db.execute("ALTER TABLE sessions ADD COLUMN agent_version TEXT")


@migration
def m005_refresh_indexes(db: sqlite3.Connection) -> None:
    # Every refresh asks for the distinct cwds (for the agents that take hints) and the
    # per-agent counts: answered from these indexes rather than by reading every session row.
    db.execute("CREATE INDEX IF NOT EXISTS sessions_cwd ON sessions(cwd)")
    db.execute("CREATE INDEX IF NOT EXISTS sessions_provider_events ON sessions(provider, events)")


@migration
def m006_quiet_refresh_indexes(db: sqlite3.Connection) -> None:
    # A served refresh that the file-system watcher says has nothing to do still checks the
    # agents it cannot watch (those found through hints) and the sources to retry: their rows,
    # found through these indexes rather than by reading every source row (100,000 at scale).
    db.execute("CREATE INDEX IF NOT EXISTS sources_provider ON sources(provider)")
    db.execute("CREATE INDEX IF NOT EXISTS sources_status ON sources(status)")


@migration
def m007_title_index(db: sqlite3.Connection) -> None:
    # Every search looks for the sessions whose title holds its words (the title boost): a scan of
    # this covering index reads the titles alone, not every session row.
    db.execute("CREATE INDEX IF NOT EXISTS sessions_title ON sessions(title, id)")


@migration
def m008_folders(db: sqlite3.Connection) -> None:
    # What the stat pass remembers of the session folders it listed (see ingest.files.FolderMemory): a
    # folder whose change time and inode are as recorded is not listed again, its entries come from here.
    db.execute(
        "CREATE TABLE IF NOT EXISTS folders (path TEXT PRIMARY KEY, ctime_ns INTEGER NOT NULL, "
        "inode INTEGER NOT NULL, names TEXT NOT NULL)"
    )


#: The options Voyager's adapters wrote in resume commands up to m009 (frozen: that migration's history).
_M009_OPTIONS = frozenset(
    "--resume -r --session --id --fork --name --resume-id --session-id --cwd --data-dir --profile "
    "--chat-history-file --restore-chat-history".split()
)
#: A word of a quoted command that begins with ``-`` (``shlex.quote`` leaves option words bare, quotes the rest).
_M009_DASH_WORD = re.compile(r"(?:^|\s)'?(-[^\s'=]*)")


def _m009_foreign(command: str) -> bool:
    """True when ``command`` holds a word that is neither an option the adapters wrote nor after ``--``."""
    if "\0" in command:
        return True
    if all(w in _M009_OPTIONS for w in _M009_DASH_WORD.findall(command)):
        return False  # the common case, without tokenizing
    try:
        words = shlex.split(command)
    except ValueError:
        return True
    if len(words) > 3 and words[0] == "cd" and words[2] == "&&":
        if words[1].startswith("-"):
            return True
        words = words[3:]
    for word in words[1:]:
        if word == "--":
            return False
        if word.startswith("-") and word.partition("=")[0] not in _M009_OPTIONS:
            return True
    return False


@migration
def m009_resume_without_foreign_options(db: sqlite3.Connection) -> None:
    # Adapters used to write an id or a path from a session file as a plain word of the resume command, so a
    # Claude Code file named --dangerously-skip-permissions.jsonl gave `claude --resume
    # --dangerously-skip-permissions`. They now write such data as data (`--resume=--x`, `-- --x`, `./-x`);
    # a row kept from before loses its command (the session then says why it has none) until its source is
    # read again. Only rows with a word outside the options the adapters wrote are touched.
    for sid, command in db.execute("SELECT id, resume FROM sessions WHERE resume IS NOT NULL").fetchall():
        if _m009_foreign(command):
            db.execute("UPDATE sessions SET resume = NULL WHERE id = ?", (sid,))


@migration
def m010_active(db: sqlite3.Connection) -> None:
    # When each session was last active as far as its source can prove (SessionRecord.active): what orders
    # sessions and breaks ties. Rows from before: their stamp, no later than their source's modification
    # time (plus the slack a coarse clock needs) nor a day past its last read. (A development build numbered
    # this m009: a state.db it left already has the column, and only main's m009 is then skipped.)
    if "active" not in {row[1] for row in db.execute("PRAGMA table_info(sessions)")}:
        db.execute("ALTER TABLE sessions ADD COLUMN active REAL")
    db.execute(
        "UPDATE sessions SET active = min(coalesce(updated, started, 0), "
        f"coalesce((SELECT mtime_ns / 1e9 + {MTIME_SLACK_S} FROM sources WHERE path = sessions.source), 1e18), "
        f"coalesce((SELECT indexed_at + {FUTURE_SLACK_S} FROM sources WHERE path = sessions.source), 1e18))"
    )
    db.execute("CREATE INDEX IF NOT EXISTS sessions_active ON sessions(active DESC)")


@migration
def m011_fresh_index(db: sqlite3.Connection) -> None:
    # Every refresh compares each agent's sources with the stat columns of their rows (KnownSources): read from
    # this covering index, not row by row from the table, whose rows hold the sessions and cursors too. At
    # 15,000 sources, 14 ms instead of 22-30 ms a refresh (a fresh connection, as a search process has).
    db.execute(
        "CREATE INDEX IF NOT EXISTS sources_fresh ON sources"
        "(provider, path, size, mtime_ns, inode, wal_size, wal_mtime_ns, status)"
    )


#: How the last read of a source went: ``ok``; ``retry`` (a failure that may pass: a lock, a
#: permission, an I/O error; read again even if unchanged); ``error`` (the content itself
#: could not be used: not read again until it changes).
SourceStatus = Literal["ok", "retry", "error"]


class SourceState(msgspec.Struct):
    """What Voyager last indexed from one source file or database (fields in column order)."""

    path: str
    provider: str
    size: int
    mtime_ns: int
    inode: int
    wal_size: int = 0
    wal_mtime_ns: int = 0
    cursor: bytes | None = None
    sessions: list[str] = []
    events: int = 0
    status: SourceStatus = "ok"
    detail: str | None = None
    indexed_at: float = 0.0


#: The longest LIKE pattern SQLite accepts (SQLITE_MAX_LIKE_PATTERN_LENGTH).
LIKE_PATTERN_BYTES = 50_000

_SESSION_COLS = (
    "id",
    "provider",
    "native_id",
    "source",
    "title",
    "cwd",
    "git_branch",
    "git_repo",
    "model",
    "started",
    "updated",
    "parent",
    "resume",
    "tokens_in",
    "tokens_out",
    "title_source",
    "agent_version",
)
_SOURCE_COLS = tuple(SourceState.__struct_fields__)

#: The sessions' text attributes a session-attribute filter (``core.filters``) may look in: the columns
#: ``session_ids_where`` turns into SQL, and no other.
MATCHABLE = frozenset({"title", "cwd", "git_branch", "git_repo", "model"})
_SESSIONS_AT = _SOURCE_COLS.index("sessions")  # stored as JSON text
_decode_sessions = msgspec.json.Decoder(list[str]).decode
_encode_names = msgspec.json.encode
_session_columns = operator.attrgetter(*_SESSION_COLS)


def _row_to_session(row: sqlite3.Row | tuple[Any, ...]) -> SessionRecord:
    # One dict, built straight from the row (``active`` and ``events`` last, past the session's columns): a
    # grouped search decodes thousands of these per request (its recency tie-break, the web page's rows); 1.7x
    # the speed of building a dict of every column first (2,413 rows: 5.0 -> 2.95 ms).
    return SessionRecord(
        session=Session(**{k: v for k, v in zip(_SESSION_COLS, row) if v is not None}), events=row[-1], active=row[-2]
    )


#: What every read of whole session rows selects (``_row_to_session``'s order).
_RECORD_COLS = f"{', '.join(_SESSION_COLS)}, active, events"


def active(rec: SessionRecord) -> float:
    """``rec.active``, or (for a record made without a source to clamp by) its last stamp; 0 when it has none."""
    if rec.active is not None:
        return rec.active
    return rec.session.updated or rec.session.started or 0.0


#: The ``meta`` key holding the exports ``voyager import`` recorded (a JSON list of absolute paths).
IMPORTS_KEY = "imports"


def _row_to_source(row: sqlite3.Row | tuple[Any, ...]) -> SourceState:
    # Positional, as the columns are the fields in order; only the sessions column is JSON.
    at = _SESSIONS_AT
    make: Callable[..., SourceState] = SourceState
    return make(*row[:at], _decode_sessions(row[at]), *row[at + 1 :])


#: The columns a scan compares with the stat pass, in :class:`KnownSources`' row order.
_FINGERPRINT_COLS = ("path", "size", "mtime_ns", "inode", "wal_size", "wal_mtime_ns")
_FRESH_SQL = f"SELECT {', '.join(_FINGERPRINT_COLS)} FROM sources"
#: The same with the two columns a row read on its own is judged by (retry rows, rows asked for by key).
_ROW_SQL = f"SELECT {', '.join(_FINGERPRINT_COLS)}, status, provider FROM sources"
_first = operator.itemgetter(0)
#: The agents that have sources, one index seek each (``SELECT DISTINCT provider`` read every entry of the index:
#: ~0.7 ms a refresh at 15,000 sources; a dozen agents take microseconds this way).
_PROVIDERS_SQL = (
    "WITH RECURSIVE p(name) AS (SELECT min(provider) FROM sources UNION ALL "
    "SELECT (SELECT min(provider) FROM sources WHERE provider > p.name) FROM p WHERE p.name IS NOT NULL) "
    "SELECT name FROM p WHERE name IS NOT NULL"
)


#: What to do about a damaged ``state.db``: it is derived data (see ``voyager_sessions.scan.run.scan``).
DAMAGED_FIX = (
    "`voyager scan --rebuild` sets it aside and rebuilds it from your agents' sessions (it holds nothing else)"
)


@guarded(DAMAGED_FIX, lambda known: known._store.path)
class KnownSources:
    """Every source's fingerprint as the last read saw it, compared without decoding.

    A refresh compares every discovered source with its row, and nearly all are
    unchanged: so only the stat columns come out of SQLite, one query an agent, as plain
    tuples keyed by path (:attr:`fresh`, built by ``dict(zip(...))`` with no Python code a
    row), and a source is unchanged when ``fresh.get(path)`` equals the tuple of what its
    stat saw (:meth:`unchanged`; the scan inlines it). Rows to retry are left out of
    :attr:`fresh` (the SQL says ``status != 'retry'``), so one comparison also says "need
    not be read again". The whole row (sessions, cursor) is read only for a source that
    must be read again or has gone, and the sources that have gone are a set difference.
    Measured on a no-op scan of 10,000 sources: loading them as decoded
    :class:`SourceState` rows was ~30 % of its CPU; a dict of 8-column rows compared field
    by field in two method calls a source, ~20 % (profiled).

    ``lazy`` (a scan told what changed): only the agents the scan discovers whole
    (:meth:`load_provider`) and the rows under a changed path (:meth:`load_under`) are
    loaded, any other row is read by its key when asked for, and only loaded rows can be
    found gone. Otherwise every agent's rows are loaded at once.
    """

    def __init__(self, store: StateStore, *, lazy: bool = False) -> None:
        self._store = store
        self._lazy = lazy
        #: path -> (path, size, mtime_ns, inode, wal_size, wal_mtime_ns) of the loaded rows not to retry.
        self.fresh: dict[str, tuple[object, ...]] = {}
        self._rows: dict[
            str, tuple[object, ...] | None
        ] = {}  # rows read one by one (and retry rows), None when there is none
        self._full: dict[str, SourceState | None] = {}
        self._paths: dict[str, set[str]] = {}  # provider -> the paths of its loaded rows
        self._whole: set[str] = set()  # the providers loaded whole
        if not lazy:
            # Every row, an agent at a time: then a path with none is known new without a query (a first scan).
            for (provider,) in store.conn.execute(_PROVIDERS_SQL).fetchall():
                self.load_provider(provider)

    def load_provider(self, provider: str) -> None:
        """Load every row of ``provider`` (a scan about to discover it whole), once."""
        if provider in self._whole:
            return
        self._whole.add(provider)
        conn = self._store.conn
        rows = conn.execute(_FRESH_SQL + " WHERE provider = ? AND status != 'retry'", (provider,)).fetchall()
        self.fresh.update(zip(map(_first, rows), rows))
        paths = self._paths.setdefault(provider, set())
        paths.update(map(_first, rows))
        # Through the index on status (rows to retry are few): by the agent's, every row of it was looked at
        # (``+`` keeps the planner off it), ~2 ms a refresh at 10,000 Claude Code sources.
        for row in conn.execute(_ROW_SQL + " WHERE +provider = ? AND status = 'retry'", (provider,)):
            self._rows[row[0]] = row
            paths.add(row[0])

    def load_under(self, path: str) -> None:
        """Load the rows of ``path`` and of everything under it (a scan told that it changed)."""
        below = path.rstrip("/") + "/"
        sql = _ROW_SQL + " WHERE path = ? OR (path >= ? AND path < ?)"
        for row in self._store.conn.execute(sql, (path, below, below[:-1] + "0")):
            self._rows[row[0]] = row
            self._paths.setdefault(row[7], set()).add(row[0])

    def _row(self, path: str) -> tuple[object, ...] | None:
        """``path``'s row read on its own (its status and provider included), or None when it has none."""
        if path in self._rows or not self._lazy:
            return self._rows.get(path)
        row: tuple[object, ...] | None = self._store.conn.execute(_ROW_SQL + " WHERE path = ?", (path,)).fetchone()
        self._rows[path] = row
        return row

    def unchanged(
        self, path: str, size: int, mtime_ns: int, inode: int, wal_size: int, wal_mtime_ns: int
    ) -> bool | None:
        """True when ``path``'s stat matches its row and its last read need not be retried; None when it has no row."""
        seen = (path, size, mtime_ns, inode, wal_size, wal_mtime_ns)
        got = self.fresh.get(path)
        if got is not None:
            return got == seen
        row = self._row(path)
        if row is None:
            return None
        return row[:6] == seen and row[6] != "retry"

    def get(self, path: str) -> SourceState | None:
        """``path``'s whole row (read once, on first ask), or None when the source is new."""
        if path not in self.fresh and self._row(path) is None:
            return None
        if path not in self._full:
            self._full[path] = self._store.source(path)
        return self._full[path]

    def retry_paths(self) -> list[str]:
        """The paths of the loaded rows whose last read is to be retried."""
        return [path for path, row in self._rows.items() if row is not None and row[6] == "retry"]

    def gone(
        self, providers: set[str], seen: set[str], kept: Callable[[str, str], bool] = lambda provider, path: False
    ) -> list[SourceState]:
        """The rows of ``providers``' sources not in ``seen`` (no longer discovered) nor ``kept(provider, path)``,
        in path order."""
        out = []
        for provider in sorted(providers):
            for path in sorted(self._paths.get(provider, set()) - seen):  # usually none: a set difference in C
                if not kept(provider, path):
                    full = self.get(path)
                    if full is not None:
                        out.append(full)
        return out


#: SQLite's ``lower``: ASCII letters only (what ``LIKE`` folds, too).
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


class _Titles:
    """Every titled session's lower-cased title, in id order, joined into one string searched at C speed
    (~10-25 MB at 100,000 sessions: the string, the ids and where each title starts)."""

    __slots__ = ("version", "ids", "starts", "blob")

    def __init__(self, version: int, rows: list[tuple[str, str]]) -> None:
        self.version = version
        self.ids = [r[0] for r in rows]
        starts, at = [], 0
        for _, title in rows:
            starts.append(at)
            at += len(title) + 1
        starts.append(at)  # where a title after the last would start: every title ends one before the next
        self.starts = starts
        self.blob = "\n".join(r[1] for r in rows)

    def ids_with(self, words: list[str], limit: int) -> list[str]:
        """What ``session_ids_titled`` answers: the first ``limit`` ids (in id order) whose title holds every word."""
        import bisect

        words = [w.translate(_ASCII_LOWER) for w in words]
        blob, starts, ids = self.blob, self.starts, self.ids
        if not ids:
            return []
        # A word no title holds answers at once: a description's words are seldom all in some title, and a scan
        # that stops at the first occurrence costs nothing for a word titles do hold (counting every word's
        # occurrences over 10,000 titles was ~4 ms of a served search: docs/bench.md).
        if any(w not in blob for w in words):
            return []
        first = words[0] if len(words) == 1 else min(words, key=blob.count)  # the rarest leads
        rest = [w for w in words if w != first]
        out: list[str] = []
        at, n = 0, len(first)
        while len(out) < limit:
            at = blob.find(first, at)
            if at < 0:
                break
            i = bisect.bisect_right(starts, at) - 1
            end = starts[i + 1] - 1
            # A find that runs past its title's end (into the separator) is no match of that title.
            if at + n <= end and (not rest or all(w in blob[starts[i] : end] for w in rest)):
                out.append(ids[i])
            at = end + 1  # one answer a title: on to the next
        return out


class RefreshView(msgspec.Struct, frozen=True):
    """One consistent read of what decides whether a refresh has anything to do.

    ``version``: ``PRAGMA data_version`` when it was read (it changes when any other
    connection commits); ``rows``: path -> (provider, size, mtime_ns, inode, wal_size,
    wal_mtime_ns) of the asked providers' sources; ``retry``: some source's last read is to
    be retried; ``cwds`` and ``imports``: the hints a scan would give those providers.
    """

    version: int
    index_id: str | None
    retry: bool
    rows: dict[str, tuple[object, ...]]
    cwds: frozenset[str]
    imports: frozenset[str]


@guarded(DAMAGED_FIX, lambda store: store.path)
class StateStore:
    """Scan state and sessions in ``state.db``; used by one thread at a time.

    A damaged file, or one locked by another process past the busy timeout, is reported by every method
    as the one-line error it is (``StoreDamaged``, ``BusyError``), never as a raw ``sqlite3`` exception.

    ``lendable`` lets the connection pass from one thread to the next (the server's
    reader pool lends it to one request at a time); it is never used by two at once.
    """

    def __init__(self, path: Path, *, readonly: bool = False, lendable: bool = False) -> None:
        self.path = path
        self.conn = connect(
            self.path, MIGRATIONS, readonly=readonly, check_same_thread=not lendable, damaged_fix=DAMAGED_FIX
        )
        self._lendable = lendable
        self._titles_cache: _Titles | None = None
        self._titles_asked: int | None = None  # the data_version of the last ask the cache did not answer
        self._recency: tuple[int, dict[str, float]] | None = None  # (data_version, every session's ``active``)
        self._recency_asked: int | None = None

    def close(self) -> None:
        self.conn.close()

    # -- identity --------------------------------------------------------------

    def index_id(self) -> str | None:
        """The id of the index the scan state describes (None before the first scan)."""
        return self.get_meta("index_id")

    def get_meta(self, key: str) -> str | None:
        """A single fact the scan keeps between runs (``meta`` table), or None."""
        row = self.conn.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else None

    def set_meta(self, key: str, value: str) -> None:
        with transaction(self.conn) as db:
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def reset_scan_state(self, index_id: str | None) -> None:
        """Forget every source, session and remembered folder listing: they described another index. Scan history stays."""
        with transaction(self.conn) as db:
            db.execute("DELETE FROM sources")
            db.execute("DELETE FROM sessions")
            db.execute("DELETE FROM folders")  # a rebuild lists every folder again too
            db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('index_id', ?)", (index_id or "",))

    # -- sources ---------------------------------------------------------------

    def sources(self, provider: str | None = None) -> dict[str, SourceState]:
        """Every source's state row, decoded (for tools and tests; a scan uses :meth:`known_sources`)."""
        sql = f"SELECT {', '.join(_SOURCE_COLS)} FROM sources"
        args: tuple[object, ...] = ()
        if provider:
            sql += " WHERE provider = ?"
            args = (provider,)
        return {row[0]: _row_to_source(row) for row in self.conn.execute(sql, args)}

    def known_sources(self, *, lazy: bool = False) -> KnownSources:
        """What a scan compares its stat pass with: every source's fingerprint, in one query (or on demand)."""
        return KnownSources(self, lazy=lazy)

    def data_version(self) -> int:
        """A number that changes whenever another connection (another scan, another process) commits."""
        version: int = self.conn.execute("PRAGMA data_version").fetchone()[0]
        return version

    def refresh_view(self, providers: Iterable[str]) -> RefreshView:
        """What a no-change refresh compares with (see :class:`RefreshView`), read in one transaction."""
        names = list(providers)
        conn = self.conn
        conn.execute("BEGIN")
        try:
            version = conn.execute("PRAGMA data_version").fetchone()[0]
            rows: dict[str, tuple[object, ...]] = {}
            if names:
                sql = (
                    "SELECT path, provider, size, mtime_ns, inode, wal_size, wal_mtime_ns FROM sources "
                    f"WHERE provider IN ({', '.join('?' * len(names))})"
                )
                rows = {row[0]: tuple(row[1:]) for row in conn.execute(sql, names)}
            retry = conn.execute("SELECT 1 FROM sources WHERE status = 'retry' LIMIT 1").fetchone() is not None
            return RefreshView(
                version=version,
                index_id=self.index_id(),
                retry=retry,
                rows=rows,
                cwds=frozenset(self.known_cwds()) if names else frozenset(),
                imports=frozenset(self.imports()) if names else frozenset(),
            )
        finally:
            conn.execute("COMMIT")

    def folders(self) -> dict[str, tuple[str, int, int, str]]:
        """Every remembered folder listing: path -> (path, ctime_ns, inode, names as JSON), as stored."""
        rows = self.conn.execute("SELECT path, ctime_ns, inode, names FROM folders").fetchall()
        return dict(zip(map(_first, rows), rows))

    def folder(self, path: str) -> tuple[str, int, int, str] | None:
        """One remembered folder listing, as :meth:`folders` gives it, or None."""
        row: tuple[str, int, int, str] | None = self.conn.execute(
            "SELECT path, ctime_ns, inode, names FROM folders WHERE path = ?", (path,)
        ).fetchone()
        return row

    def save_folders(self, learned: Iterable[tuple[str, int, int, str]], forgotten: Iterable[str]) -> None:
        """Remember the ``learned`` listings (rows as :meth:`folders` gives them) and forget every listing
        of a ``forgotten`` folder or of a folder under one (it is gone)."""
        with transaction(self.conn) as db:
            for path in forgotten:
                below = path.rstrip("/") + "/"
                db.execute(
                    "DELETE FROM folders WHERE path = ? OR (path >= ? AND path < ?)", (path, below, below[:-1] + "0")
                )
            db.executemany("INSERT OR REPLACE INTO folders (path, ctime_ns, inode, names) VALUES (?, ?, ?, ?)", learned)

    def count_sources(self) -> int:
        count: int = self.conn.execute("SELECT count(*) FROM sources").fetchone()[0]
        return count

    def source(self, path: str) -> SourceState | None:
        """One source's whole state row (its sessions and cursor decoded), or None."""
        row = self.conn.execute(f"SELECT {', '.join(_SOURCE_COLS)} FROM sources WHERE path = ?", (path,)).fetchone()
        return _row_to_source(row) if row is not None else None

    def sources_holding(self, sids: Collection[str]) -> dict[str, str]:
        """path -> provider of every source whose row names one of the sessions ``sids`` (a few: found by a scan of
        the rows' text for each, then checked)."""
        out: dict[str, str] = {}
        wanted = set(sids)
        for sid in wanted:
            needle = msgspec.json.encode(sid).decode()
            for path, provider, sessions in self.conn.execute(
                "SELECT path, provider, sessions FROM sources WHERE instr(sessions, ?) > 0", (needle,)
            ):
                if path not in out and wanted.intersection(_decode_sessions(sessions)):
                    out[path] = provider
        return out

    def sessions_of_sources_except(self, paths: set[str]) -> set[str]:
        """The session ids every state row but those of ``paths`` names (what the other sources still hold)."""
        out: set[str] = set()
        decode = _decode_sessions
        for path, sessions in self.conn.execute("SELECT path, sessions FROM sources"):
            if path not in paths:
                out.update(decode(sessions))
        return out

    def commit_scan(
        self,
        *,
        sources: Iterable[SourceState] = (),
        removed_sources: Iterable[str] = (),
        sessions: Iterable[SessionRecord] = (),
        removed_sessions: Iterable[str] = (),
        meta: Callable[[int], dict[str, str | None]] | None = None,
    ) -> None:
        """Record, in one transaction, what an index commit that already happened contains.

        ``meta``, given how many sessions the table then holds, returns ``meta`` rows to write in the same
        transaction (None deletes one): what a scan says of the commit, true of exactly this state.
        """
        with transaction(self.conn) as db:
            db.executemany("DELETE FROM sources WHERE path = ?", [(p,) for p in removed_sources])
            db.executemany("DELETE FROM sessions WHERE id = ?", [(s,) for s in removed_sessions])
            at, astuple, names = _SESSIONS_AT, msgspec.structs.astuple, _encode_names
            rows = []
            for s in sources:
                row = astuple(s)  # the fields are the columns, in order; the sessions go as JSON text
                rows.append((*row[:at], names(row[at]).decode(), *row[at + 1 :]))
            db.executemany(
                f"INSERT OR REPLACE INTO sources ({', '.join(_SOURCE_COLS)}) VALUES ({', '.join('?' * len(_SOURCE_COLS))})",
                rows,
            )
            columns = _session_columns
            db.executemany(
                f"INSERT OR REPLACE INTO sessions ({_RECORD_COLS}) VALUES ({', '.join('?' * (len(_SESSION_COLS) + 2))})",
                [(*columns(r.session), active(r), r.events) for r in sessions],
            )
            if meta is not None:
                count = db.execute("SELECT count(*) FROM sessions").fetchone()[0]
                for key, value in meta(count).items():
                    if value is None:
                        db.execute("DELETE FROM meta WHERE key = ?", (key,))
                    else:
                        db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def record_scan(self, started: float, summary: bytes) -> None:
        with transaction(self.conn) as db:
            db.execute(
                "INSERT INTO scans (started, finished, summary) VALUES (?, ?, ?)",
                (started, time.time(), summary.decode()),
            )
            db.execute("DELETE FROM scans WHERE id NOT IN (SELECT id FROM scans ORDER BY id DESC LIMIT 50)")

    def last_scan(self) -> tuple[float, float, str] | None:
        row = self.conn.execute("SELECT started, finished, summary FROM scans ORDER BY id DESC LIMIT 1").fetchone()
        return tuple(row) if row else None

    # -- sessions --------------------------------------------------------------

    def sessions_by_id(self, ids: Iterable[str]) -> dict[str, SessionRecord]:
        ids = list(dict.fromkeys(ids))
        out: dict[str, SessionRecord] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            sql = f"SELECT {_RECORD_COLS} FROM sessions WHERE id IN ({', '.join('?' * len(chunk))})"
            for row in self.conn.execute(sql, chunk):
                rec = _row_to_session(row)
                out[rec.session.id] = rec
        return out

    def count_sessions_with_events(self) -> int:
        """Sessions that have events (what meaning search counts as its total)."""
        count: int = self.conn.execute("SELECT count(*) FROM sessions WHERE events > 0").fetchone()[0]
        return count

    def latest_of(self, ids: Iterable[str]) -> dict[str, float]:
        """When each of the sessions ``ids`` was last active, as far as its source can prove (``active``, see
        ``SessionRecord``; 0 when unknown): the recency that breaks ties between search results, without building
        whole records (2,300 of them took 18 ms)."""
        ids = list(dict.fromkeys(ids))
        out: dict[str, float] = {}
        every = self._every_recency(len(ids)) if self._lendable else None
        if every is not None:
            return {sid: every[sid] for sid in ids if sid in every}
        if len(ids) > 1000 and 2 * len(ids) > self.conn.execute("SELECT count(*) FROM sessions").fetchone()[0]:
            # Most of the table: every row read once beats a lookup an id (2,300 of 2,400: 1.2 ms, not 3).
            wanted = set(ids)
            for sid, active in self.conn.execute("SELECT id, active FROM sessions"):
                if sid in wanted:
                    out[sid] = active or 0.0
            return out
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            sql = f"SELECT id, active FROM sessions WHERE id IN ({', '.join('?' * len(chunk))})"
            for sid, active in self.conn.execute(sql, chunk):
                out[sid] = active or 0.0
        return out

    def _every_recency(self, asked: int) -> dict[str, float] | None:
        """A long-lived reader's (``lendable``: the server's) copy of every session's ``active``, or None where it
        has none to answer from: a search at 10,000 sessions breaking a tie between thousands of sessions read
        their recency a chunk of ids at a time (11 ms of a 90 ms search), from this copy it takes a dictionary
        lookup each. Read (5 ms at 10,000 sessions) at the second ask of more than a few ids after another
        connection commits, not the first: an agent appending all the while makes every search the first after a
        commit (as the titles' copy, ``session_ids_titled``)."""
        version = self.data_version()
        if self._recency is not None and self._recency[0] == version:
            return self._recency[1]
        if asked <= 50:
            return None
        if self._recency_asked != version:
            self._recency_asked = version
            return None
        every = {sid: active or 0.0 for sid, active in self.conn.execute("SELECT id, active FROM sessions")}
        self._recency = (version, every)
        return every

    def newest(self, ids: Collection[str], n: int) -> list[str]:
        """The ``n`` most recently active of the sessions ``ids`` (by :meth:`latest_of`), newest first, equal ones
        by id: what breaks ties between search results, where only a page of them is shown.

        Few ids are looked up. Many (a common word's sessions at 100,000 sessions: 77,000 of them, 167 ms to read
        every one's recency) are found by walking the sessions newest first on the index of ``active`` until
        ``n`` of them are among ``ids``."""
        wanted = ids if isinstance(ids, (set, frozenset, dict)) else set(ids)
        if n <= 0 or not wanted:
            return []
        # The walk reads about n * (all sessions / wanted) rows; a lookup reads every wanted one.
        if len(wanted) <= 2000 or n * self.conn.execute("SELECT count(*) FROM sessions").fetchone()[0] > len(
            wanted
        ) * len(wanted):
            latest = self.latest_of(wanted)
            return heapq.nsmallest(n, wanted, key=lambda sid: (-latest.get(sid, 0.0), sid))
        found: list[tuple[float, str]] = []
        cutoff = None
        walk = self.conn.execute("SELECT id, coalesce(active, 0) FROM sessions ORDER BY active DESC")
        for sid, active in walk:
            if cutoff is not None and active < cutoff:
                break  # every later row is older than the n-th found (equal ones were read on: ties go by id)
            if sid in wanted:
                found.append((active, sid))
                if len(found) == n:
                    cutoff = active
        walk.close()
        if cutoff is None or cutoff <= 0.0:  # ids not stored at all count as never active (0)
            seen = {sid for _, sid in found}
            found += [(0.0, sid) for sid in wanted if sid not in seen]
        found.sort(key=lambda p: (-p[0], p[1]))
        return [sid for _, sid in found[:n]]

    def list_sessions(
        self,
        *,
        provider: str | None = None,
        limit: int | None = None,
        offset: int = 0,
        providers: Sequence[str] = (),
        project: str | None = None,
        cwd: str | None = None,
        since: float | None = None,
        until: float | None = None,
    ) -> tuple[int, list[SessionRecord]]:
        """A page of sessions, newest first, and how many there are, optionally narrowed: ``provider`` (or any of
        ``providers``), ``project`` (its git repository or working directory contains the text, case-insensitively),
        ``cwd`` (its working directory does), last active in ``[since, until)`` (epoch seconds)."""
        clauses: list[str] = []
        args: list[object] = []
        wanted = [*providers, *([provider] if provider else [])]
        if wanted:
            clauses.append(f"provider IN ({', '.join('?' * len(wanted))})")
            args.extend(wanted)
        if project:
            clauses.append(
                "(instr(lower(coalesce(git_repo, '')), lower(?)) > 0 OR instr(lower(coalesce(cwd, '')), lower(?)) > 0)"
            )
            args.extend([project, project])
        if cwd:
            clauses.append("instr(lower(coalesce(cwd, '')), lower(?)) > 0")
            args.append(cwd)
        at = "coalesce(active, 0)"  # last active as far as its source can prove (SessionRecord.active)
        if since is not None:
            clauses.append(f"{at} >= ?")
            args.append(since)
        if until is not None:
            clauses.append(f"{at} < ?")
            args.append(until)
        where = ("WHERE " + " AND ".join(clauses)) if clauses else ""
        total = self.conn.execute(f"SELECT count(*) FROM sessions {where}", args).fetchone()[0]
        # Newest first by when the session was last active as far as its source can prove: a stamp past its
        # file's modification time (a clock gone wrong, a crafted 9999-12-31) counts as that time, or it would
        # sort first forever. Only the order is clamped; the session shows its times as given.
        sql = f"SELECT {_RECORD_COLS} FROM sessions {where} ORDER BY active DESC, id LIMIT ? OFFSET ?"
        rows = self.conn.execute(sql, [*args, -1 if limit is None else limit, offset]).fetchall()
        return total, [_row_to_session(r) for r in rows]

    def resolve_session(self, ref: str, limit: int = 50) -> list[str]:
        """Session ids matching ``ref``: a Voyager id, a native id, or an unambiguous prefix of either."""
        exact = self.conn.execute("SELECT id FROM sessions WHERE id = ? OR native_id = ?", (ref, ref)).fetchall()
        if exact:
            return [r[0] for r in exact]
        pat = like_prefix(ref)
        rows = self.conn.execute(
            "SELECT id FROM sessions WHERE id LIKE ? ESCAPE '\\' OR native_id LIKE ? ESCAPE '\\' ORDER BY id LIMIT ?",
            (pat, pat, limit),
        ).fetchall()
        return [r[0] for r in rows]

    def session_ids_where(self, columns: Sequence[str], text: str) -> list[str]:
        """Ids of sessions one of whose ``columns`` (of :data:`MATCHABLE`) contains ``text``, case-insensitively:
        what a session-attribute filter (``core.filters``: ``repo:`` looks in ``git_repo`` and ``cwd``) keeps."""
        unknown = [c for c in columns if c not in MATCHABLE]
        if unknown or not columns:
            raise ValueError(f"not a session attribute a filter can match: {unknown or columns!r}")
        contains = " OR ".join(f"instr(lower(coalesce({c}, '')), lower(?)) > 0" for c in columns)
        sql = f"SELECT id FROM sessions WHERE {contains if len(columns) == 1 else f'({contains})'}"
        return [r[0] for r in self.conn.execute(sql, [text] * len(columns))]

    def session_projects(self, ids: Iterable[str]) -> dict[str, str | None]:
        """Each of ``ids``' project: its git repository, else its working directory (what a UI groups by).

        Two columns and no record built: a facet counts thousands of sessions per keystroke.
        """
        ids = list(dict.fromkeys(ids))
        out: dict[str, str | None] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            sql = f"SELECT id, coalesce(nullif(git_repo, ''), nullif(cwd, '')) FROM sessions WHERE id IN ({', '.join('?' * len(chunk))})"
            out.update(self.conn.execute(sql, chunk).fetchall())
        return out

    def imports(self) -> list[str]:
        """The conversation exports ``voyager import`` recorded, in the order they were added."""
        raw = self.get_meta(IMPORTS_KEY)
        try:
            value = msgspec.json.decode(raw) if raw else []
        except msgspec.DecodeError:
            return []
        return [p for p in value if isinstance(p, str)] if isinstance(value, list) else []

    def set_imports(self, recorded: list[str]) -> None:
        """Record ``recorded`` as the exports later scans read (replacing the list)."""
        self.set_meta(IMPORTS_KEY, msgspec.json.encode(recorded).decode())

    def known_cwds(self) -> set[str]:
        """Every working directory an indexed session names (the scan hands them to adapters that ask)."""
        return {
            r[0] for r in self.conn.execute("SELECT DISTINCT cwd FROM sessions WHERE cwd IS NOT NULL AND cwd != ''")
        }

    def session_ids_titled(self, words: list[str], limit: int = 1000) -> list[str]:
        """Ids of sessions whose title contains every one of ``words`` (ASCII case-insensitive), the first
        ``limit`` by id.

        Every search asks (its title boost), and it reads every title: at 100,000 sessions a
        scan of the table took ~200 ms. One-shot readers scan the ``sessions_title`` covering
        index with ``LIKE`` (SQLite's case folding is ASCII, as its ``lower`` is): 12-32 ms at
        100,000. A long-lived reader (``lendable``: the server's) keeps every lower-cased title
        in one string and looks the words up in it (~3 ms at 100,000); reading them costs
        ~200 ms, so after another connection commits it is done at the second ask, not the
        first (an agent appending all the while makes every search the first after a commit).
        """
        if not words:
            return []
        if self._lendable:
            # PRAGMA data_version counts for this connection only, so each reader keeps its own copy (the
            # server lends its most recently returned reader first: one copy, unless requests overlap).
            version = self.data_version()
            cache = self._titles_cache
            if cache is not None and cache.version == version:
                return cache.ids_with(words, limit)
            if self._titles_asked == version:
                cache = self._titles_cache = self._read_titles(version)
                return cache.ids_with(words, limit)
            self._titles_asked = version
        # SQLite refuses a LIKE pattern past 50,000 bytes ("pattern too complex"): a longer word (a pasted run of
        # CJK text) is looked for with instr over the ASCII-lower-cased title, the same test as the LIKE.
        pats = [like_contains(w) for w in words]
        long = [len(p.encode()) > LIKE_PATTERN_BYTES for p in pats]
        where = " AND ".join("instr(lower(title), lower(?)) > 0" if x else "title LIKE ? ESCAPE '\\'" for x in long)
        # ``+id``: ordered by id without walking the table in id order (the planner's pick for ``ORDER BY id``,
        # 55-62 ms at 100,000 sessions for a word no title holds), so the covering title index is scanned
        # instead (12 ms; 32 ms when every title matches and the first ``limit`` by id must be sorted out).
        sql = f"SELECT id FROM sessions WHERE title IS NOT NULL AND {where} ORDER BY +id LIMIT ?"
        args = [w if x else p for w, p, x in zip(words, pats, long)]
        return [r[0] for r in self.conn.execute(sql, [*args, limit])]

    def _read_titles(self, version: int) -> _Titles:
        rows = self.conn.execute("SELECT id, lower(title) FROM sessions WHERE title IS NOT NULL ORDER BY id").fetchall()
        return _Titles(version, rows)

    def failed_sources(self) -> dict[str, list[str]]:
        """provider -> ["<path>: <reason>"] for sources whose last read failed."""
        return self._details("status != 'ok'")

    def noted_sources(self) -> dict[str, list[str]]:
        """provider -> ["<path>: skipped …"] for sources read with pieces skipped (what doctor reports)."""
        return self._details("status = 'ok' AND detail IS NOT NULL")

    def _details(self, where: str) -> dict[str, list[str]]:
        out: dict[str, list[str]] = {}
        for provider, path, detail in self.conn.execute(
            f"SELECT provider, path, detail FROM sources WHERE {where} ORDER BY path"
        ):
            out.setdefault(provider, []).append(f"{path}: {detail}")
        return out

    def versions_seen(self) -> dict[str, dict[str, int]]:
        """provider -> {agent version -> sessions} for the indexed sessions whose files name the version."""
        out: dict[str, dict[str, int]] = {}
        for provider, version, n in self.conn.execute(
            "SELECT provider, agent_version, count(*) FROM sessions WHERE agent_version IS NOT NULL "
            "AND agent_version != '' GROUP BY provider, agent_version ORDER BY provider"
        ):
            out.setdefault(provider, {})[version] = n
        return out

    def counts(self) -> list[tuple[str, int, int]]:
        """(provider, sessions, events) per provider."""
        return [
            (str(provider), int(sessions), int(events or 0))
            for provider, sessions, events in self.conn.execute(
                "SELECT provider, count(*), sum(events) FROM sessions GROUP BY provider ORDER BY provider"
            )
        ]
