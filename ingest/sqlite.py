"""Reading an agent's SQLite database without changing it, or creating anything beside it.

Every adapter that reads a provider's SQLite store opens it through
:func:`connect_readonly`: ``file:…?mode=ro`` (read-only at the OS level) and ``PRAGMA
query_only=1`` (any write statement is an error, even from a bug).

How it is opened depends on the database's journal, read from its header (byte 18: 2 is
WAL, anything else a rollback journal):

* A rollback-journal database (the editors' ``state.vscdb``, most small stores) is opened
  with ordinary locking. A reader in that mode creates no file (no ``-journal``: only a
  writer makes one), and every connection reads inside one transaction, i.e. under a
  ``SHARED`` lock held to the end of the read: the agent cannot commit in the middle of
  it, and pages of a transaction it has not committed are never read. An agent holding its
  write lock longer than ``BUSY_TIMEOUT_S`` makes the read fail as "locked", a transient
  Notice: the source is kept as it was and read again on the next scan. (It used to be
  opened ``immutable=1`` like a WAL database without its ``-wal``: no locks at all, so a
  scan during a write read pages mid-transaction.)
* A WAL database with a ``-wal`` that can hold pages is opened with locking too
  (``immutable`` would hide the rows still in the WAL, where most agents keep their newest
  turns).
* A WAL database without such a ``-wal`` (none, an empty one, or something that is not a
  regular file), and any database beside an empty or irregular ``-wal`` (SQLite would open
  it as a WAL whatever the header says), is opened ``immutable=1``: SQLite then creates
  no ``-wal`` or ``-shm`` (a WAL-mode database a clean exit left without them would
  otherwise get both) nor touches an empty ``-wal`` (it would give it the database's
  permissions). Its main file is
  written only by a checkpoint, and a checkpoint needs a ``-wal``; a writer that starts
  one during the read changes the fingerprint (which includes the ``-wal``), so the
  source is read again on the next scan.

:func:`sqlite_source` is the discovery side: a database is one Source whose fingerprint
includes its ``-wal``, so a new turn still in the WAL is seen by the stat pass.
:func:`open_store` opens one for reading and checks its tables (:func:`unreadable` is the
Notice when SQLite cannot read it), :func:`read_schema` and :func:`probe_store` are what
``voyager doctor``'s probes ask; :class:`SessionSignatures` is the per-session change
detection every multi-session store shares.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

from voyager_sessions.core.digest import blake2b
from voyager_sessions.ingest.adapters.base import Cursor, Notice, Source, fingerprint
from voyager_sessions.ingest.files import open_regular

#: How long a read waits for an agent's write lock before the source is retried next scan.
BUSY_TIMEOUT_S = 5.0


def _lenient_text(data: bytes) -> str:
    return data.decode("utf-8", "replace")


def _wal_holds_pages(db: Path) -> bool:
    """True when ``db`` has a ``-wal`` that may hold committed pages: a regular file, not empty.

    Only then is the WAL read (and the database opened without ``immutable``). SQLite opening
    an empty ``-wal`` gives it the database's permissions (and, as root, its owner) and creates
    the ``-shm`` beside it; a FIFO or a folder by that name is no WAL at all.
    """
    try:
        st = os.stat(f"{db}-wal")
    except (OSError, ValueError):
        return False
    return stat.S_ISREG(st.st_mode) and st.st_size > 0


def _wal_mode(db: Path) -> bool:
    """True when ``db``'s header says WAL mode (file format versions 2); False for a rollback
    journal, and for what is no database at all (SQLite names that when it opens it)."""
    try:
        with open_regular(db) as fh:
            head = fh.read(20)
    except (OSError, ValueError):
        return False
    return len(head) == 20 and head.startswith(b"SQLite format 3\x00") and head[18] == 2


def connect_readonly(
    path: str | os.PathLike[str], *, row_factory: bool = True, lenient_text: bool = True
) -> sqlite3.Connection:
    """Open the database at ``path`` so that neither SQLite nor this process can change it (see module doc).

    ``lenient_text`` (the default): TEXT cells that are not valid UTF-8 come back with U+FFFD
    in place of the bad bytes, instead of failing the whole query (``sqlite3``'s own
    behaviour, which made one corrupt cell cost every session of the store), so one
    corrupt value costs that value only.
    """
    p = Path(path).resolve()
    uri = "file:" + quote(str(p)) + "?mode=ro"
    if not _wal_holds_pages(p) and (os.path.lexists(f"{p}-wal") or _wal_mode(p)):
        uri += "&immutable=1"  # see the module doc: never for a rollback-journal database left alone
    conn = sqlite3.connect(uri, uri=True, timeout=BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
    try:
        conn.execute("PRAGMA query_only=1")
        if row_factory:
            conn.row_factory = sqlite3.Row
        if lenient_text:
            conn.text_factory = _lenient_text
        # One read transaction for the connection's life: the SHARED lock (or WAL snapshot) taken by
        # the first read holds until it closes, so the whole read sees one committed state.
        conn.execute("BEGIN")
    except BaseException:
        conn.close()
        raise
    return conn


def tables(conn: sqlite3.Connection) -> dict[str, frozenset[str]]:
    """Table name -> column names, for every table in the database."""
    names = [r[0] for r in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
    out: dict[str, frozenset[str]] = {}
    for name in names:
        cols = conn.execute(f"PRAGMA table_info({_quoted(name)})").fetchall()
        out[name] = frozenset(c[1] for c in cols)
    return out


def _quoted(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def has_index(conn: sqlite3.Connection, table: str, column: str) -> bool:
    """True when a complete (not partial) index of ``table`` starts with ``column``.

    Then ``WHERE column = ?`` is a lookup; without one it scans the whole table, so a
    reader that would ask once per key should read the table in one ordered pass instead.
    Agents create the indexes they need, but a store copied, repaired or written by an
    older release may lack them.
    """
    for entry in conn.execute(f"PRAGMA index_list({_quoted(table)})").fetchall():
        name, partial = entry[1], entry[4] if len(entry) > 4 else 0
        if partial:  # usable only for queries that repeat its WHERE
            continue
        cols = conn.execute(f"PRAGMA index_info({_quoted(name)})").fetchall()
        if cols and min(cols, key=lambda c: c[0])[2] == column:
            return True
    return False


def is_transient(exc: BaseException) -> bool:
    """A locked or momentarily unopenable database is worth retrying next scan; a corrupt one is not."""
    text = str(exc)
    return isinstance(exc, sqlite3.OperationalError) and "malformed" not in text and "not a database" not in text


def unreadable(path: str, exc: BaseException) -> Notice:
    """The fatal Notice for a database SQLite could not open or read; retried next scan when the failure may pass."""
    if isinstance(exc, sqlite3.OperationalError) and "locked" in str(exc):
        return Notice(
            source=path,
            fatal=True,
            transient=True,
            reason=f"locked: its agent held a write lock past {BUSY_TIMEOUT_S:g}s; read again on the next scan",
        )
    return Notice(source=path, reason=f"unreadable: {exc}", fatal=True, transient=is_transient(exc))


def missing_tables(schema: dict[str, frozenset[str]], required: dict[str, frozenset[str]]) -> list[str]:
    """What ``schema`` lacks of ``required`` (table -> columns): ``table``, or ``table(column, …)`` for one it has."""
    return [
        f"{t}({', '.join(sorted(cols - schema.get(t, frozenset())))})" if t in schema else t
        for t, cols in required.items()
        if t not in schema or not cols <= schema[t]
    ]


def read_schema(path: str | os.PathLike[str]) -> dict[str, frozenset[str]] | None:
    """The tables and columns of the database at ``path``, or None when SQLite cannot read it (what probes ask)."""
    try:
        conn = connect_readonly(path)
    except sqlite3.Error:
        return None
    try:
        return tables(conn)
    except sqlite3.DatabaseError:
        return None
    finally:
        conn.close()


def sqlite_source(
    provider: str, path: Path, *, named: bool = False, empty_ok: bool = False
) -> Iterator[Source | Notice]:
    """The Source for the database at ``path`` (its fingerprint includes the ``-wal``), if it is a regular file.

    ``named``: the user named this path (an override variable), so its absence is worth a
    notice; a default location that does not exist is simply not there. ``empty_ok``: see
    :class:`~voyager_sessions.ingest.adapters.base.Source`.
    """
    try:
        st = os.stat(path)
    except OSError as exc:
        if named:
            yield Notice(source=str(path), reason=f"unreadable: {exc.strerror or exc}", fatal=True)
        return
    if not stat.S_ISREG(st.st_mode):
        yield Notice(source=str(path), reason="not a regular file; skipped", fatal=True)
        return
    try:
        fp = fingerprint(path, wal=True)
    except OSError:
        return
    yield Source(provider=provider, path=str(path), fingerprint=fp, append_only=False, empty_ok=empty_ok)


def digest(*values: object) -> str:
    """A short, stable digest of row values (what a session's signature keeps of a row)."""
    return blake2b(repr(values).encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


class SessionSignatures:
    """Per-session change detection for a database that holds many sessions, kept in ``Cursor.state``.

    A read computes each session's signature from cheap columns (update times, row counts,
    lengths); :meth:`same` says whether it equals the one the last read recorded (then the
    adapter yields ``Unchanged`` instead of reading the session again), and :meth:`cursor`
    is the Cursor that carries this read's signatures to the next. A session whose read
    failed is simply not recorded: the next read tries it again. A signature is any
    JSON-able value (a list of column aggregates, or a dict when the adapter also keeps
    where a session's last read stopped, read from :attr:`known`).
    """

    def __init__(self, cursor: Cursor | None) -> None:
        known = cursor.state.get("sessions") if cursor is not None else None
        self.known: dict[str, object] = known if isinstance(known, dict) else {}
        self.out: dict[str, object] = {}

    def same(self, native: str, signature: object) -> bool:
        """True when ``native``'s signature is the one recorded last time (and it is kept for the next)."""
        if self.known.get(native) == signature:
            self.out[native] = signature
            return True
        return False

    def record(self, native: str, signature: object) -> None:
        self.out[native] = signature

    def cursor(self) -> Cursor:
        return Cursor(offset=0, next_seq=0, tail_hash="", state={"sessions": self.out})


def open_store(
    path: str, label: str, required: dict[str, frozenset[str]], *, lenient_text: bool = True
) -> tuple[sqlite3.Connection, dict[str, frozenset[str]]] | Notice:
    """Open ``path`` read-only (inside one read transaction) and check it has ``required`` tables and columns.

    A database that cannot be opened, or lacks what the adapter reads, is a fatal Notice
    naming the agent and what is missing (never "0 sessions"). ``lenient_text``: see
    :func:`connect_readonly`. The caller closes the connection.
    """
    try:
        conn = connect_readonly(path, lenient_text=lenient_text)
    except sqlite3.Error as exc:
        return unreadable(path, exc)
    try:
        schema = tables(conn)  # in the read transaction connect_readonly began: one snapshot for the whole read
    except sqlite3.DatabaseError as exc:
        conn.close()
        return unreadable(path, exc)
    lacking = missing_tables(schema, required)
    if lacking:
        conn.close()
        found = ", ".join(sorted(schema)) or "no tables"
        return Notice(
            source=path,
            fatal=True,
            reason=f"unknown-schema: not a {label} store Voyager knows (missing {'; '.join(lacking)}; has {found})",
        )
    return conn, schema


def probe_store(path: str | os.PathLike[str], required: dict[str, frozenset[str]], shape: str) -> str:
    """``shape`` when the database at ``path`` has what the adapter reads, else ``unknown-schema`` or
    ``unreadable`` (what ``voyager doctor`` shows for a store before any scan)."""
    schema = read_schema(path)
    if schema is None:
        return "unreadable"
    return "unknown-schema" if missing_tables(schema, required) else shape
