"""OpenCode's storage generations as values, and recognising which of them a database holds.

OpenCode changed where it keeps conversations four times (``docs/opencode.md``). The
SQLite ones differ only in table names, key columns and where a message's role is
written, so each is a :class:`Generation` value; a database's :class:`Layout` is the
list of generations it is read from, each with the rows it contributes (a
:class:`Slice`). The shapes, recognised by tables and columns, never by a version:

``v1``          ``session`` + ``message`` + ``part`` (1.2 … 1.18; 1.18.33 also creates an
                *empty* ``session_message``, which must not make it look like v2)
``v2``          ``session_v2`` + ``session_message`` + ``session_part`` (content in part rows)
``v2-inline``   ``session_v2`` + ``session_message`` and no ``session_part`` (content inline)
``migrating``   OpenCode 2 opened a 1.x database: v2, plus the 1.x sessions it has not copied
``json``        the early ``storage/`` tree of JSON files (read by ``tree.py``)

Anything else is ``unknown-schema``; a file SQLite cannot read is ``unreadable``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import msgspec

#: Every answer ``probe`` can give, in the order ``docs/opencode.md`` describes them.
SHAPES: tuple[str, ...] = ("json", "v1", "v2", "v2-inline", "migrating", "unknown-schema", "unreadable")

#: kv key under which OpenCode 2 records its copy of 1.x sessions.
MIGRATION_KEY = "migration.v1-v2"

# Columns a table must have for us to read it. Deliberately minimal: optional columns
# (tokens, model, workspace …) are used when present, so an older or newer release that
# adds or drops one still reads; a release that drops one of *these* is a new shape and
# must fail loudly as unknown-schema instead of being misread.
REQUIRED: dict[str, frozenset[str]] = {
    "session": frozenset({"id", "directory"}),
    "message": frozenset({"id", "session_id", "data"}),
    "part": frozenset({"id", "message_id", "data"}),
    "session_v2": frozenset({"id", "directory"}),
    "session_message": frozenset({"id", "session_id", "type", "data"}),
    "session_part": frozenset({"id", "message_id", "data"}),
}


class Generation(msgspec.Struct, frozen=True, kw_only=True):
    """One generation of OpenCode's tables: where sessions, messages and parts live and how they are ordered."""

    #: Recorded in each session's signature: a session read from another generation is read whole.
    name: str
    sessions: str
    messages: str
    #: The part table; None when message content is inline in the message row.
    parts: str | None
    #: The columns that order a session's messages (``seq`` follows them), in priority; those
    #: the table lacks are left out, ``id`` is always there.
    message_order: tuple[str, ...]
    #: The message row's ``type`` column names its role (v2); otherwise ``data.role`` does (v1).
    typed: bool
    #: How many of a session's newest messages are looked at for the model it used: v2 can ask
    #: for assistant rows in SQL, v1 keeps the role inside the JSON.
    model_lookback: int

    @property
    def assistant_filter(self) -> str:
        """SQL (on alias ``m``) keeping a session's assistant messages, when the row says so."""
        return " AND m.type = 'assistant'" if self.typed else ""


V1 = Generation(
    name="v1",
    sessions="session",
    messages="message",
    parts="part",
    message_order=("time_created", "id"),
    typed=False,
    model_lookback=20,
)
V2 = Generation(
    name="v2",
    sessions="session_v2",
    messages="session_message",
    parts="session_part",
    message_order=("seq", "time_created", "id"),
    typed=True,
    model_lookback=1,
)
V2_INLINE = msgspec.structs.replace(V2, parts=None)

#: The order sessions are read in, and parts within a message.
SESSION_ORDER = ("time_created", "id")
PART_ORDER = ("time_created", "id")


class Slice(msgspec.Struct, frozen=True):
    """One generation's share of a database: its sessions that pass ``where`` (SQL on alias ``s``)."""

    gen: Generation
    where: str = ""
    params: tuple[Any, ...] = ()


class Migration(msgspec.Struct, frozen=True):
    """OpenCode 2's progress copying 1.x sessions (``kv['migration.v1-v2']``); both None: nothing copied yet."""

    phase: str | None = None
    cursor: str | None = None


def _has(schema: Mapping[str, frozenset[str]], table: str) -> bool:
    return table in schema and REQUIRED[table] <= schema[table]


def detect_shape(schema: Mapping[str, frozenset[str]]) -> str:
    """The shape a database's tables describe: v1, v2, v2-inline, migrating or unknown-schema.

    Only structure counts. v2 needs ``session_v2`` (the 1.18.33 empty ``session_message``
    alone is not v2); inline is v2 *without* ``session_part``, so a database that has a
    parts table can never be misread as inline.
    """
    v1 = all(_has(schema, t) for t in (V1.sessions, V1.messages, "part"))
    v2 = _has(schema, V2.sessions) and _has(schema, V2.messages)
    if "session_part" in schema and not _has(schema, "session_part"):
        return "unknown-schema"  # a parts table we do not understand: do not guess it away
    if v2 and v1:
        return "migrating"
    if v2:
        return "v2" if "session_part" in schema else "v2-inline"
    if v1:
        return "v1"
    return "unknown-schema"


def layout(shape: str, schema: Mapping[str, frozenset[str]], migration: Migration = Migration()) -> list[Slice]:  # noqa: B008 - frozen
    """The slices a database of ``shape`` is read from, in reading order.

    Migrating: every session in ``session_v2`` is read from there (it is the copy OpenCode
    now uses). A 1.x session is read from the 1.x tables only if it has not been copied: not
    in ``session_v2`` *and* below the cursor (ids at or above it were copied; if one is
    missing from ``session_v2`` now, OpenCode deleted it there and it must stay deleted).
    After phase ``completed`` no 1.x row is read at all.
    """
    v2 = V2 if "session_part" in schema else V2_INLINE
    if shape == "v1":
        return [Slice(V1)]
    if shape in ("v2", "v2-inline"):
        return [Slice(v2)]
    if shape != "migrating":
        return []
    slices = [Slice(v2)]
    if migration.phase != "completed":
        where = f"WHERE NOT EXISTS (SELECT 1 FROM {V2.sessions} v WHERE v.id = s.id)"
        params: tuple[Any, ...] = ()
        if migration.cursor is not None:
            where += " AND s.id < ?"
            params = (migration.cursor,)
        slices.append(Slice(V1, where, params))
    return slices
