"""Opening Voyager's SQLite databases: private files, sane pragmas, forward-only migrations.

Each database has its own ordered list of migrations, plain functions applied once in
one ``BEGIN IMMEDIATE`` transaction and recorded in ``PRAGMA user_version``. The
version is re-read after the write lock is taken, because several processes may open
a brand-new database at the same instant. A database written by a newer Voyager
(``user_version`` beyond what this build knows) is refused, never used.
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

from voyager_sessions.core.errors import EXIT_BUSY, Busy, DiskFull, StoreError, no_space
from voyager_sessions.core.paths import LOW_SPACE_BYTES, free_bytes

Migration = Callable[[sqlite3.Connection], None]

BUSY_TIMEOUT_MS = 5000

__all__ = [
    "BusyError",
    "Migration",
    "NewerSchemaError",
    "StoreError",
    "connect",
    "disk_full",
    "like_prefix",
    "transaction",
]


class NewerSchemaError(StoreError):
    """The database was written by a newer Voyager."""


class BusyError(StoreError, Busy):
    """Another writer held the database lock for longer than the busy timeout and retries: exit 3 (a ``Busy``)."""

    exit_code = EXIT_BUSY


def connect(
    path: Path, migrations: list[Migration], *, readonly: bool = False, check_same_thread: bool = True
) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path``, apply pending ``migrations``, return the connection.

    Files are created 0600. WAL, ``synchronous=NORMAL`` and a busy timeout make
    concurrent readers and one writer cheap and durable enough for an index that can
    always be rebuilt from the sources.
    """
    if not readonly:
        _precreate_private(path)
    try:
        if readonly:
            conn = _connect_readonly(path, check_same_thread)
        else:
            conn = sqlite3.connect(
                path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000, check_same_thread=check_same_thread
            )
        conn.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
        if not readonly:
            _enable_wal(conn)
        conn.execute("PRAGMA synchronous=NORMAL")
        conn.execute("PRAGMA foreign_keys=ON")
    except sqlite3.Error as exc:
        if disk_full(exc, path):
            raise DiskFull.at(path) from exc
        raise StoreError(f"cannot open {path}: {exc}") from exc
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > len(migrations):
        conn.close()
        raise NewerSchemaError(
            f"{path} has schema version {version}, newer than this Voyager knows ({len(migrations)}); upgrade Voyager"
        )
    if version < len(migrations):
        if readonly:
            conn.close()
            raise StoreError(f"{path} needs a schema upgrade; run a command that writes (for example `voyager scan`)")
        try:
            _migrate(conn, path, migrations)
        except sqlite3.Error as exc:
            conn.close()
            if disk_full(exc, path):
                raise DiskFull.at(path) from exc
            raise StoreError(f"cannot upgrade the schema of {path}: {exc}") from exc
    _fix_modes(path)
    return conn


def readonly_uri(path: Path, *, immutable: bool = False) -> str:
    """The ``file:`` URI that opens ``path`` read-only, its path percent-quoted.

    Unquoted, a ``?`` or ``#`` in the data dir's path would end the path early: SQLite
    would open (and create, the mode lost with the query) another file beside it.
    """
    return f"file:{quote(str(path))}?mode=ro" + ("&immutable=1" if immutable else "")


def integrity(path: Path) -> str:
    """SQLite's own verdict on the database at ``path`` ("ok" when healthy), opened read-only."""
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            return "; ".join(r[0] for r in conn.execute("PRAGMA integrity_check"))
        finally:
            conn.close()
    except sqlite3.Error as exc:
        return f"unreadable: {exc}"


def disk_full(exc: BaseException, path: Path) -> bool:
    """True when ``exc``, raised while writing the database at ``path``, means its disk is full.

    SQLite says so plainly (SQLITE_FULL, "database or disk is full") when a page write
    fails, but a full disk met while creating or growing the WAL index (``-shm``)
    comes back as a bare "disk I/O error" (SQLITE_IOERR_SHMSIZE); then the free space
    of the file system holding ``path`` decides, so a failing disk is not called full.
    """
    if no_space(exc):
        return True
    if not isinstance(exc, sqlite3.Error):
        return False
    message = str(exc).lower()
    if "database or disk is full" in message:
        return True
    return "disk i/o error" in message and free_bytes(path) < LOW_SPACE_BYTES


def like_prefix(ref: str) -> str:
    """A LIKE pattern (for ``ESCAPE '\\'``) matching what starts with ``ref`` taken literally."""
    return ref.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_") + "%"


def like_contains(text: str) -> str:
    """A LIKE pattern (for ``ESCAPE '\\'``) matching what contains ``text`` taken literally."""
    return "%" + like_prefix(text)


def _enable_wal(conn: sqlite3.Connection) -> None:
    # Switching a new file to WAL needs an exclusive lock, and SQLite answers "locked"
    # at once (without the busy handler) when several processes open a brand-new
    # database together; retry for as long as the busy timeout would have waited.
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    delay = 0.001
    while True:
        try:
            if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
                conn.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if ("locked" not in str(exc) and "busy" not in str(exc)) or time.monotonic() > deadline:
                raise
            time.sleep(delay)
            delay = min(delay * 2, 0.05)


def _connect_readonly(path: Path, check_same_thread: bool = True) -> sqlite3.Connection:
    """A read-only connection that still works on a full disk.

    ``mode=ro`` must create the WAL index (``-shm``) when it is missing, which a full disk
    refuses ("disk I/O error"). A database without a ``-wal`` holds everything in its
    main file, so it is then read ``immutable=1`` (no lock, no ``-shm``): searching keeps
    working while nothing can be written.
    """
    timeout = BUSY_TIMEOUT_MS / 1000
    conn = sqlite3.connect(
        readonly_uri(path), uri=True, isolation_level=None, timeout=timeout, check_same_thread=check_same_thread
    )
    try:
        conn.execute("PRAGMA user_version").fetchone()
        return conn
    except sqlite3.OperationalError as exc:
        conn.close()
        try:
            wal_bytes = os.path.getsize(f"{path}-wal")  # the failed attempt may have left an empty one
        except OSError:
            wal_bytes = 0
        if wal_bytes or not disk_full(exc, path):
            raise
    return sqlite3.connect(
        readonly_uri(path, immutable=True),
        uri=True,
        isolation_level=None,
        timeout=timeout,
        check_same_thread=check_same_thread,
    )


def _precreate_private(path: Path) -> None:
    """Create the database file 0600 before SQLite does (with the umask), only if it does not exist.

    Never open and close an existing database file here: closing any descriptor of a
    file releases every POSIX lock this process holds on it, so a long-lived process (a
    server, ``watch``) that already has the database open would lose SQLite's locks, and
    another process could then delete the WAL under it.
    """
    if path.exists():
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except FileExistsError as exc:  # mkdir met a file where a directory should be
        raise StoreError(f"cannot create {path}: {exc.filename or path.parent} is not a directory") from exc
    except OSError as exc:
        if no_space(exc):
            raise DiskFull.at(path) from exc
        raise StoreError(f"cannot create {path}: {exc.strerror or exc}") from exc
    try:
        os.close(os.open(path, os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o600))
    except FileExistsError:
        return  # another process created it meanwhile: it is not open in this one
    except OSError as exc:
        if no_space(exc):
            raise DiskFull.at(path) from exc
        raise StoreError(f"cannot create {path}: {exc.strerror or exc}") from exc


def _fix_modes(path: Path) -> None:
    for suffix in ("", "-wal", "-shm"):
        p = f"{path}{suffix}"
        try:
            if os.stat(p).st_mode & 0o077:
                os.chmod(p, 0o600)
        except OSError:
            pass


def _migrate(conn: sqlite3.Connection, path: Path, migrations: list[Migration]) -> None:
    with transaction(conn):
        # Re-read under the write lock: another process may have migrated meanwhile.
        version = conn.execute("PRAGMA user_version").fetchone()[0]
        if version > len(migrations):
            raise NewerSchemaError(
                f"{path} has schema version {version}, newer than this Voyager knows; upgrade Voyager"
            )
        for number, migration in enumerate(migrations[version:], start=version + 1):
            migration(conn)
            conn.execute(f"PRAGMA user_version={number}")


@contextmanager
def transaction(conn: sqlite3.Connection, *, attempts: int = 50) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` with a bounded retry when another writer holds the lock.

    The busy timeout already waits; the retry covers the cases SQLite reports busy at
    once (a WAL checkpoint in progress, a deadlock-avoidance answer).
    """
    delay = 0.002
    for attempt in range(attempts):
        try:
            conn.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise StoreError(f"cannot write: {exc}") from exc
            if attempt == attempts - 1:
                raise BusyError(f"database stayed busy: {exc}") from exc
            time.sleep(delay)
            delay = min(delay * 2, 0.1)
    try:
        yield conn
        conn.execute("COMMIT")
    except BaseException:
        # SQLite may already have rolled back on its own (SQLITE_FULL, I/O errors); a
        # second ROLLBACK would then raise and hide the error that matters.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
