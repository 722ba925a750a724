"""What a rescan of an OpenCode database remembers about each session, to read only what changed.

A database is one source holding many sessions. The cursor stored with it keeps, per
session, a :class:`Mark`: a :class:`Signature` (the session row's digest and, for its
message and part rows, count, newest and sum of update times, highest id) and, when it
was read, a :class:`Tail` (where its last message starts and what came before it). Equal
signature: the session is ``Unchanged``. Same prefix before the tail: only the last
message and newer ones changed, so reading resumes there (``Partial``).

Records are msgspec Structs encoded as arrays, so the state stays small; a state written
by an older release (or damaged) simply does not convert, and the session is read whole.
"""

from __future__ import annotations

from typing import Any

import msgspec


class Rows(msgspec.Struct, frozen=True, array_like=True):
    """One session's rows in one table: how many, the newest and the sum of their update times, the highest id.

    ``updates`` is an exact integer sum of ``time_updated`` mod 2^32 (see ``Database.update_value``):
    it moves when any one row is updated, not only the newest. None: no rows, or no such column.
    """

    count: int = 0
    newest: Any = None
    updates: int | None = None
    top: Any = None


NO_ROWS = Rows()


class Signature(msgspec.Struct, frozen=True, array_like=True):
    """Everything about a session that a change to it would move."""

    generation: str
    row: str
    messages: Rows = NO_ROWS
    parts: Rows = NO_ROWS


class Prefix(msgspec.Struct, frozen=True, array_like=True):
    """Count and update sum of a session's messages, and of their parts, before a given message."""

    messages: int | None
    message_updates: int | None
    parts: int | None
    part_updates: int | None


class Tail(msgspec.Struct, frozen=True, array_like=True):
    """Where a later read may resume a session: its last message's ordering key and first ``seq``.

    ``prefix`` is what came before that message; ``parent`` is the session's parent then (of
    the session row, which changes with every turn, only the parent decides how events are
    mapped, so that is what must be the same).
    """

    key: list[Any]
    seq: int
    prefix: Prefix
    parent: str | None


class Mark(msgspec.Struct, frozen=True, array_like=True):
    """One session's entry in the cursor."""

    sig: Signature
    tail: Tail | None = None


class Suffix(msgspec.Struct):
    """Count and update sums of a run of rows (a session's last message and its parts), as they are walked.

    Sums stay None until a row with an update time is seen, as SQL's ``sum`` does.
    """

    messages: int = 0
    message_updates: int | None = None
    parts: int = 0
    part_updates: int | None = None

    def add_message(self, upd: Any) -> None:
        self.messages += 1
        if upd is not None:
            self.message_updates = (self.message_updates or 0) + upd

    def add_part(self, upd: Any) -> None:
        self.parts += 1
        if upd is not None:
            self.part_updates = (self.part_updates or 0) + upd


def minus(whole: int | None, tail: int | None) -> int | None:
    """``whole - tail`` of counts or integer sums, where SQL NULL (no rows, no such column) is 0."""
    if whole is None and tail is None:
        return None
    return (whole or 0) - (tail or 0)


def prefix(sig: Signature, suffix: Suffix, *, has_parts: bool) -> Prefix:
    """A session's rows before its suffix: the whole (from ``sig``) minus the suffix.

    Without a part table the part half is (0, None) on both sides, as an empty SQL sum is.
    """
    parts, part_updates = (suffix.parts, suffix.part_updates) if has_parts else (0, None)
    return Prefix(
        minus(sig.messages.count, suffix.messages),
        minus(sig.messages.updates, suffix.message_updates),
        minus(sig.parts.count, parts),
        minus(sig.parts.updates, part_updates),
    )


def load(state: Any) -> dict[str, Mark] | None:
    """The marks in a cursor's state, skipping entries that are not marks (another release's, or damaged)."""
    if not isinstance(state, dict):
        return None
    out: dict[str, Mark] = {}
    for native, entry in state.items():
        try:
            out[native] = msgspec.convert(entry, Mark)
        except (msgspec.ValidationError, TypeError):
            continue
    return out


def dump(marks: dict[str, Mark]) -> dict[str, Any]:
    """Plain data for ``Cursor.state`` (the same whether the cursor is kept in memory or stored)."""
    return msgspec.to_builtins(marks)
