"""Opening Voyager's SQLite databases: private files, sane pragmas, forward-only migrations.

Each database has its own ordered list of migrations, plain functions applied once in
one ``BEGIN IMMEDIATE`` transaction and recorded in ``PRAGMA user_version``. The
version is re-read after the write lock is taken, because several processes may open
a brand-new database at the same instant. A database written by a newer Voyager
(``user_version`` beyond what this build knows) is refused, never used.
"""

from __future__ import annotations

import functools
import os
import sqlite3
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

from voyager_sessions.core.errors import EXIT_BUSY, Busy, DiskFull, StoreError, no_space, one_line
from voyager_sessions.core.paths import LOW_SPACE_BYTES, free_bytes

Migration = Callable[[sqlite3.Connection], None]

BUSY_TIMEOUT_MS = 5000

__all__ = [
    "BusyError",
    "StoreDamaged",
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


class StoreDamaged(StoreError):
    """The database at ``path`` is damaged (its header, a page, text that is not UTF-8): exit 2, naming the fix.

    For ``state.db`` (derived data) a scan sets the file aside and rebuilds it (``set_aside``); a reader
    can only say so. ``checkpoints.db`` is never set aside: it is the only copy of what it holds.
    """

    def __init__(self, path: Path, detail: str, fix: str) -> None:
        detail = detail if len(detail) <= 80 else detail[:79] + "…"  # what SQLite quotes of a damaged row can be long
        super().__init__(f"{path} is damaged ({detail}); {fix}")
        self.path = Path(path)
        self.detail = detail


#: What SQLite (and Python's sqlite3, for text it cannot decode) says of a damaged file.
_DAMAGE = ("not a database", "malformed", "could not decode", "no such table", "no such column", "unsupported file")


def translate(exc: sqlite3.Error, path: Path, fix: str) -> StoreError | DiskFull | None:
    """The one-line error ``exc`` (raised on the database at ``path``) is reported as: busy (exit 3), a full disk,
    damage (naming ``fix``), another failure to use the file; None for a programming error (a bug, reported as one)."""
    message = str(exc)
    lower = message.lower()
    if isinstance(exc, (sqlite3.ProgrammingError, sqlite3.IntegrityError, sqlite3.InterfaceError)):
        return None
    if "locked" in lower or "busy" in lower:
        return BusyError(f"{path} is locked by another process ({message}); try again when it is done")
    if disk_full(exc, path):
        return DiskFull.at(path)
    if any(d in lower for d in _DAMAGE):
        return StoreDamaged(path, one_line(message), fix)
    if isinstance(exc, sqlite3.DatabaseError):
        return StoreError(f"cannot use {path}: {message}")
    return None


def guarded(fix: str, path_of: Callable[[Any], Path]) -> Callable[[type], type]:
    """A class decorator: every public method of the class reports SQLite's failures on its database through
    :func:`translate` (``path_of(self)`` names the file, ``fix`` what to do when it is damaged), never as a
    raw ``sqlite3`` exception (which a front end could only call an internal error)."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def guarded_method(self: Any, *args: Any, **kwargs: Any) -> Any:
            try:
                return fn(self, *args, **kwargs)
            except sqlite3.Error as exc:
                better = translate(exc, path_of(self), fix)
                if better is None:
                    raise
                raise better from exc

        return guarded_method

    def decorate(cls: type) -> type:
        for name, member in list(vars(cls).items()):
            if callable(member) and not name.startswith("_") and not isinstance(member, (staticmethod, classmethod)):
                setattr(cls, name, wrap(member))
        return cls

    return decorate


def set_aside(path: Path) -> Path:
    """Move the damaged database at ``path`` (and its ``-wal``/``-shm``) to ``<name>.damaged`` beside it, replacing an
    older one there; the data dir is private, so is the copy. Returns where it went."""
    dest = path.with_name(path.name + ".damaged")
    for suffix in ("", "-wal", "-shm"):
        src, to = Path(f"{path}{suffix}"), Path(f"{dest}{suffix}")
        try:
            os.replace(src, to)
        except FileNotFoundError:
            try:
                to.unlink()  # a stale companion of an older damaged copy
            except FileNotFoundError:
                pass
    return dest


def connect(
    path: Path,
    migrations: list[Migration],
    *,
    readonly: bool = False,
    check_same_thread: bool = True,
    damaged_fix: str = "move it away to start it anew",
) -> sqlite3.Connection:
    """Open (creating if needed) the database at ``path``, apply pending ``migrations``, return the connection.

    Files are created 0600. WAL, ``synchronous=NORMAL`` and a busy timeout make
    concurrent readers and one writer cheap and durable enough for an index that can
    always be rebuilt from the sources. A damaged file is :class:`StoreDamaged` (saying
    ``damaged_fix``), one locked past the busy timeout :class:`BusyError`.
    """
    if not readonly:
        _precreate_private(path)
    conn: sqlite3.Connection | None = None
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
        version = conn.execute("PRAGMA user_version").fetchone()[0]
    except sqlite3.Error as exc:
        if conn is not None:
            conn.close()
        better = translate(exc, path, damaged_fix)
        if isinstance(better, (DiskFull, BusyError, StoreDamaged)):
            raise better from exc
        raise StoreError(f"cannot open {path}: {exc}") from exc
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


def quick_check(path: Path) -> str | None:
    """None when SQLite's ``quick_check`` finds the database at ``path`` sound (or it does not exist), else what is
    wrong, in a few words. Reads every page once (read-only): for a command that is about to do much more."""
    if not path.exists():
        return None
    try:
        conn = sqlite3.connect(readonly_uri(path), uri=True)
        try:
            rows = [r[0] for r in conn.execute("PRAGMA quick_check")]
        finally:
            conn.close()
    except sqlite3.DatabaseError as exc:
        if "locked" in str(exc) or "busy" in str(exc):
            return None  # not known to be damaged; the scan's own use of it says more
        return one_line(str(exc))
    return None if rows == ["ok"] else one_line("; ".join(rows))[:200]


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


def _name(conn: sqlite3.Connection) -> str:
    """The file ``conn`` has open (for a message), or "the database"."""
    try:
        return str(conn.execute("PRAGMA database_list").fetchone()[2]) or "the database"
    except sqlite3.Error:
        return "the database"


@contextmanager
def transaction(conn: sqlite3.Connection, *, attempts: int = 50) -> Iterator[sqlite3.Connection]:
    """``BEGIN IMMEDIATE`` … ``COMMIT`` with a bounded retry when another writer holds the lock.

    The busy timeout already waits; the retry covers the cases SQLite reports busy at
    once (a WAL checkpoint in progress, a deadlock-avoidance answer).
    """
    delay = 0.002
    deadline = time.monotonic() + BUSY_TIMEOUT_MS / 1000
    for attempt in range(attempts):
        try:
            conn.execute("BEGIN IMMEDIATE")
            break
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) and "busy" not in str(exc):
                raise StoreError(f"cannot write: {exc}") from exc
            # Each try already waited up to the busy timeout: the retries are for the "busy at once" answers,
            # within one timeout in all (50 full timeouts made a search wait 278 s on a lock held elsewhere).
            if attempt == attempts - 1 or time.monotonic() >= deadline:
                raise BusyError(
                    f"{_name(conn)} is locked by another process ({exc}); try again when it is done"
                ) from exc
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
