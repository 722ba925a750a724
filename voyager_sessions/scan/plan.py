"""Deciding what a scan reads: every discovered source against what the state store remembers of it.

For every source an adapter discovers, its stat ``Fingerprint`` is compared with the
state row of the last read and the source is classified (:data:`Why`):

* unchanged: same fingerprint, nothing is read (a source that failed for a reason that
  may pass, ``retry``, is read again anyway);
* ``new``: read whole;
* ``grown``: an append-only file that only got longer and whose last consumed line is
  byte-identical: read from the remembered offset;
* ``changed``: anything else (rewritten, truncated, a database): its sessions are
  replaced by what a new read yields.

Sources no longer discovered are the caller's to remove.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

import msgspec

from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Source
from voyager_sessions.ingest.jsonl import tail_matches

if TYPE_CHECKING:
    from voyager_sessions.store.state import SourceState

#: Why a source is read: it is new, an append-only file grew, or it changed some other way.
Why = Literal["new", "grown", "changed"]

decode_cursor = msgspec.msgpack.Decoder(Cursor).decode
encode_cursor = msgspec.msgpack.Encoder().encode


def same_fingerprint(fp: Fingerprint, old: SourceState) -> bool:
    """True when the stat pass sees exactly what the last read saw (``old`` is its state row)."""
    return (
        fp.size == old.size
        and fp.mtime_ns == old.mtime_ns
        and fp.inode == old.inode
        and fp.wal_size == old.wal_size
        and fp.wal_mtime_ns == old.wal_mtime_ns
    )


def can_append(source: Source, old: SourceState) -> bool:
    """True when ``source`` only grew since ``old`` was read: same file, longer, last consumed line intact."""
    if not source.append_only or old.cursor is None:
        return False
    if source.fingerprint.inode != old.inode or source.fingerprint.size < old.size:
        return False
    cur = decode_cursor(old.cursor)
    if cur.offset == 0:
        return True
    return tail_matches(source.path, cur.tail_start, cur.offset, cur.tail_hash)


def classify(source: Source, old: SourceState | None) -> Why | None:
    """Why ``source`` must be read, or None when it is unchanged since ``old`` (its state row, or None)."""
    if old is None:
        return "new"
    if same_fingerprint(source.fingerprint, old) and old.status != "retry":
        # Unchanged, including a source whose content failed before: it would fail the same way.
        return None
    if old.status == "ok" and can_append(source, old):
        return "grown"
    return "changed"


def resume_cursor(source: Source, why: Why, old: SourceState | None) -> Cursor | None:
    """The cursor a read of ``source`` starts from, if any.

    A grown file resumes at its byte offset. A changed source read whole (a database,
    a file rewritten in place) gets its last cursor too: it tells the adapter which
    sessions it can report as Unchanged. That holds after a failed read as well (a file
    caught half-written): a failure replaces nothing and keeps the cursor of the last
    good read, which still describes what the index holds.
    """
    if old is None or old.cursor is None:
        return None
    if why == "grown" or (why == "changed" and not source.append_only):
        return decode_cursor(old.cursor)
    return None
