"""Checkpoints: the task state a person or an agent saves for a session, with history and undo.

The package is split by what changes together:

- :mod:`.model`: the Structs (payload, checkpoint, patch, snapshot, the result documents),
  id and document validation, and the merge. Pure.
- :mod:`.render`: the one label table and the three renderings made from it (the text
  indexed for search, the Markdown hand-off, the CLI's text). Pure.
- :mod:`.schema`: migrations, SQL statements, row decoding, snapshot names.
- :mod:`.db`: :class:`CheckpointStore`, which owns ``<data dir>/checkpoints.db``.

Guarantees (each pinned by a test in ``tests/store/checkpoints/``):

1. Session isolation: every statement is scoped by a validated session id; an empty,
   non-string or malformed id raises :class:`CheckpointError` before any SQL runs.
2. Atomic read-merge-write: :meth:`CheckpointStore.save` reads, merges and writes in one
   ``BEGIN IMMEDIATE`` transaction, so concurrent writers never lose each other's fields.
3. No phantom progress: a save that changes nothing writes nothing.
4. Undo survives pruning: pruning keeps the newest ``history_limit`` snapshots, the
   newest pre-restore snapshot and the snapshot the current state came from.
5. Snapshot names ``auto-<ms>-<pid><seq>`` are unique per session (and UNIQUE in SQL).
6. Hand-off files are derived from committed rows, never read back, and their names
   cannot leave the directory they are written to.
7. A row cannot claim a project its session does not belong to (composite foreign key).
8. The schema is versioned by ``PRAGMA user_version``; a newer database is refused.

Everything a caller needs is importable from this package.
"""

from __future__ import annotations

from voyager_sessions.store.checkpoints.db import DEFAULT_HISTORY_LIMIT, CheckpointStore
from voyager_sessions.store.checkpoints.model import (
    MAX_PAYLOAD_BYTES,
    PAYLOAD_FIELDS,
    PAYLOAD_VERSION,
    Checkpoint,
    CheckpointError,
    CheckpointList,
    CheckpointPatch,
    CheckpointPayload,
    CheckpointSummary,
    ClearResult,
    HandoffResult,
    RestoreResult,
    SaveResult,
    Snapshot,
    SnapshotList,
    StatusResult,
    decode_payload,
    merge,
    require_id,
    require_session_id,
)
from voyager_sessions.store.checkpoints.render import (
    LABELS,
    checkpoint_text,
    handoff_filename,
    render_handoff,
    render_status,
)

__all__ = [
    "DEFAULT_HISTORY_LIMIT",
    "LABELS",
    "MAX_PAYLOAD_BYTES",
    "PAYLOAD_FIELDS",
    "PAYLOAD_VERSION",
    "Checkpoint",
    "CheckpointError",
    "CheckpointList",
    "CheckpointPatch",
    "CheckpointPayload",
    "CheckpointStore",
    "CheckpointSummary",
    "ClearResult",
    "HandoffResult",
    "RestoreResult",
    "SaveResult",
    "Snapshot",
    "SnapshotList",
    "StatusResult",
    "checkpoint_text",
    "decode_payload",
    "handoff_filename",
    "merge",
    "render_handoff",
    "render_status",
    "require_id",
    "require_session_id",
]
