"""The checkpoint's shape and rules: the Structs, id and document validation, and the merge.

Pure functions and msgspec Structs, no SQL and no I/O: the same schema serves the rows
(:mod:`.db`), the renderings (:mod:`.render`), the CLI's JSON and ``--from-json``, so
what the store writes, what a person reads and what a script parses cannot drift apart.
"""

from __future__ import annotations

import re
from typing import Any, Literal

import msgspec
from msgspec import UNSET, UnsetType

from voyager_sessions.core.errors import UserError, one_line
from voyager_sessions.core.model import SCHEMA_VERSION

#: Version of the payload shape stored in rows and snapshots (and accepted by ``--from-json``).
PAYLOAD_VERSION = 1

#: A checkpoint is a note about a task, not a log: a cap keeps loads cheap and catches
#: a mistaken ``--from-json`` of some unrelated large file. It bounds the stored payload
#: and the document ``--from-json`` reads (which stops reading one byte past it).
MAX_PAYLOAD_BYTES = 1 << 20

MAX_ID_CHARS = 512
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")

SnapshotKind = Literal["auto", "pre-restore", "manual"]


class CheckpointError(UserError):
    """A request the checkpoint store refuses (a bad id, nothing to restore, a bad document): exit 2."""


class CheckpointPayload(msgspec.Struct, frozen=True, kw_only=True, omit_defaults=True, forbid_unknown_fields=True):
    """The user-authored part of a checkpoint: what a snapshot freezes and ``--from-json`` replaces.

    Text fields are ``None`` when unset; list fields are tuples so a payload compares
    by value (that comparison is how an unchanged save is detected).
    """

    title: str | None = None
    objective: str | None = None
    status: str | None = None
    summary: str | None = None
    current_plan: str | None = None
    completed_steps: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    files_touched: tuple[str, ...] = ()
    notes: str | None = None


PAYLOAD_FIELDS: tuple[str, ...] = CheckpointPayload.__struct_fields__
TEXT_FIELDS: tuple[str, ...] = ("title", "objective", "status", "summary", "current_plan", "notes")
LIST_FIELDS: tuple[str, ...] = ("completed_steps", "next_steps", "blockers", "files_touched")
EMPTY = CheckpointPayload()


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A session's current checkpoint: its payload plus where it belongs and when it changed.

    Times are float seconds since the Unix epoch, like everywhere in Voyager.
    """

    session_id: str
    project_id: str
    title: str | None = None
    objective: str | None = None
    status: str | None = None
    summary: str | None = None
    current_plan: str | None = None
    completed_steps: tuple[str, ...] = ()
    next_steps: tuple[str, ...] = ()
    blockers: tuple[str, ...] = ()
    files_touched: tuple[str, ...] = ()
    notes: str | None = None
    schema_version: int = PAYLOAD_VERSION
    created_at: float
    updated_at: float

    def payload(self) -> CheckpointPayload:
        """The user-authored fields alone."""
        return CheckpointPayload(**payload_fields(self))


class CheckpointPatch(msgspec.Struct, frozen=True, kw_only=True):
    """Changes for :meth:`CheckpointStore.save <voyager_sessions.store.checkpoints.CheckpointStore.save>`.

    ``replace`` (if given) becomes the base instead of the current payload; then every
    text field that is not ``UNSET`` replaces (an empty or blank string clears it);
    then the ``add_*`` items are appended to their lists, skipping items already there
    so that re-running a save is idempotent. An item added with ``add_done`` also
    leaves ``next_steps``: finishing a step moves it.
    """

    replace: CheckpointPayload | None = None
    title: str | None | UnsetType = UNSET
    objective: str | None | UnsetType = UNSET
    status: str | None | UnsetType = UNSET
    summary: str | None | UnsetType = UNSET
    current_plan: str | None | UnsetType = UNSET
    notes: str | None | UnsetType = UNSET
    add_done: tuple[str, ...] = ()
    add_next: tuple[str, ...] = ()
    add_blockers: tuple[str, ...] = ()
    add_files: tuple[str, ...] = ()


class Snapshot(msgspec.Struct, frozen=True, kw_only=True):
    """One frozen version of a session's payload.

    ``auto``: written by a save (the version that save produced). ``pre-restore``: the
    state a restore replaced, which ``undo`` puts back. ``manual``: reserved for named
    snapshots; this version never writes one, and pruning never removes one.
    ``current`` marks the snapshot the current state was saved as or restored from.
    """

    name: str
    kind: SnapshotKind
    captured_at: float
    restored_at: float | None
    current: bool
    payload: CheckpointPayload


# -- the documents the API answers with (the JSON contract of `voyager checkpoint --json`) --


class SaveResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a save did. ``changed=False`` means nothing was written; ``checkpoint`` is then the
    stored one (``None`` if the session has none)."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    changed: bool
    snapshot: str | None
    checkpoint: Checkpoint | None


class RestoreResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a restore or an undo did: which snapshot it applied and where the replaced state went."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    changed: bool
    restored: str
    pre_restore: str | None
    checkpoint: Checkpoint


class ClearResult(msgspec.Struct, frozen=True, kw_only=True):
    """What a clear removed."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    cleared: bool
    snapshots: int


class StatusResult(msgspec.Struct, frozen=True, kw_only=True):
    """A session's checkpoint (``None`` if it has none) and how many snapshots it keeps."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    checkpoint: Checkpoint | None
    snapshots: int


class HandoffResult(msgspec.Struct, frozen=True, kw_only=True):
    """Where a hand-off file was written."""

    schema_version: int = SCHEMA_VERSION
    session_id: str
    path: str


class CheckpointSummary(msgspec.Struct, frozen=True, kw_only=True):
    """One line of ``list``: a session that has a checkpoint."""

    session_id: str
    project_id: str
    title: str | None
    status: str | None
    updated_at: float
    snapshots: int


class CheckpointList(msgspec.Struct, frozen=True, kw_only=True):
    schema_version: int = SCHEMA_VERSION
    sessions: list[CheckpointSummary]


class SnapshotList(msgspec.Struct, frozen=True, kw_only=True):
    schema_version: int = SCHEMA_VERSION
    session_id: str
    snapshots: list[Snapshot]


# -- validation ------------------------------------------------------------------------


class _PayloadDocument(CheckpointPayload, frozen=True, kw_only=True, forbid_unknown_fields=True):
    # What ``--from-json`` accepts: a payload, optionally with the metadata that
    # ``status --json`` prints, so its ``checkpoint`` object can be edited and fed back.
    # Metadata is ignored (the target session is the one named on the command line).
    schema_version: int = PAYLOAD_VERSION
    session_id: str | None = None
    project_id: str | None = None
    created_at: float | None = None
    updated_at: float | None = None


_document_decoder = msgspec.json.Decoder(_PayloadDocument)


def decode_payload(data: bytes | str) -> CheckpointPayload:
    """Validate a JSON checkpoint document into a payload; one-line :class:`CheckpointError` if it is not one."""
    if len(data) > MAX_PAYLOAD_BYTES:
        raise document_too_large()
    try:
        doc = _document_decoder.decode(data)
    except msgspec.DecodeError as exc:  # ValidationError is a subclass
        raise CheckpointError(f"invalid checkpoint document: {one_line(exc)}") from None
    if doc.schema_version != PAYLOAD_VERSION:
        raise CheckpointError(
            f"invalid checkpoint document: schema_version {doc.schema_version}, this Voyager reads {PAYLOAD_VERSION}"
        )
    return normalize(CheckpointPayload(**payload_fields(doc)))


def document_too_large() -> CheckpointError:
    """The one error for a document past ``MAX_PAYLOAD_BYTES`` (whoever reads it may notice first)."""
    return CheckpointError(f"invalid checkpoint document: larger than the limit of {MAX_PAYLOAD_BYTES} bytes")


def require_id(value: object, what: str = "session id") -> str:
    """``value`` if it is a usable id, else :class:`CheckpointError`.

    This is the gate of session isolation: nothing reaches SQL as a key without
    passing here, so ``None`` can never be bound and match nothing (or everything).
    """
    if not isinstance(value, str):
        raise CheckpointError(f"{what} must be a string, not {type(value).__name__}")
    if not value or value.isspace():
        raise CheckpointError(f"{what} is empty")
    if len(value) > MAX_ID_CHARS:
        raise CheckpointError(f"{what} is longer than {MAX_ID_CHARS} characters")
    if value != value.strip() or _CONTROL.search(value):
        raise CheckpointError(f"{what} {value!r} has surrounding blanks or control characters")
    return value


def require_session_id(value: object, what: str = "session id") -> str:
    """:func:`require_id`, and a ``provider:native`` id must have both halves.

    ``claude:`` would otherwise be a prefix naming every Claude session (or, before a
    scan has seen any, a session of its own), and ``:x`` a session of no provider.
    """
    sid = require_id(value, what)
    provider, colon, native = sid.partition(":")
    if colon and (not provider or not native):
        raise CheckpointError(f"{what} {sid!r} is malformed: expected <provider>:<id>, like claude:4f2a")
    return sid


def _clean_text(value: str | None, field: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise CheckpointError(f"{field} must be text, not {type(value).__name__}")
    # A blank value clears the field: `--status ""` is the natural way to unset it.
    return None if not value or value.isspace() else value


def _clean_items(items: tuple[str, ...] | list[str], field: str) -> tuple[str, ...]:
    out = []
    for i, item in enumerate(items):
        if not isinstance(item, str):
            raise CheckpointError(f"{field}[{i}] must be text, not {type(item).__name__}")
        item = item.strip()
        if not item:
            raise CheckpointError(f"{field}[{i}] is empty")
        out.append(item)
    return tuple(out)


def normalize(payload: CheckpointPayload) -> CheckpointPayload:
    """``payload`` with blank text fields cleared and list items stripped; an empty item is an error."""
    changes: dict[str, object] = {}
    for f in TEXT_FIELDS:
        v = getattr(payload, f)
        c = _clean_text(v, f)
        if c is not v:
            changes[f] = c
    for f in LIST_FIELDS:
        items = getattr(payload, f)
        cleaned = _clean_items(items, f)
        if cleaned != items:
            changes[f] = cleaned
    return msgspec.structs.replace(payload, **changes) if changes else payload


def merge(current: CheckpointPayload, patch: CheckpointPatch) -> CheckpointPayload:
    """The payload ``patch`` turns ``current`` into (see :class:`CheckpointPatch` for the rules)."""
    base = normalize(patch.replace) if patch.replace is not None else current
    changes: dict[str, object] = {}
    for f in TEXT_FIELDS:
        v = getattr(patch, f)
        if v is not UNSET:
            changes[f] = _clean_text(v, f)
    if patch.add_done or patch.add_next or patch.add_blockers or patch.add_files:
        done = list(base.completed_steps)
        nxt = list(base.next_steps)
        for step in _clean_items(patch.add_done, "done"):
            if step in nxt:
                nxt.remove(step)
            if step not in done:
                done.append(step)
        for step in _clean_items(patch.add_next, "next"):
            if step not in nxt:
                nxt.append(step)
        changes["completed_steps"] = tuple(done)
        changes["next_steps"] = tuple(nxt)
        for field, items in (("blockers", patch.add_blockers), ("files_touched", patch.add_files)):
            values = list(getattr(base, field))
            for item in _clean_items(items, field):
                if item not in values:
                    values.append(item)
            changes[field] = tuple(values)
    return msgspec.structs.replace(base, **changes) if changes else base


def payload_fields(p: object) -> dict[str, Any]:
    """The payload fields of ``p`` (a payload, a checkpoint or a checkpoint document)."""
    return {f: getattr(p, f) for f in PAYLOAD_FIELDS}
