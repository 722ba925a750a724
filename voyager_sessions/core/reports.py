"""The documents ``voyager doctor`` and ``voyager import`` print: what the API returns, what ``--json`` encodes.

Typed here, at the bottom floor, so that the adapters' diagnosis (``ingest/diagnose.py``) fills the same
Struct the API returns and the command line renders, without either importing the other. Field order is the
JSON's key order, and ``--json`` prints exactly these Structs (pinned by ``tests/test_doctor.py`` and the
import tests): a field is added, never renamed or dropped.
"""

from __future__ import annotations

import msgspec


class ProviderReport(msgspec.Struct, kw_only=True):
    """One agent as ``voyager doctor`` reports it: where Voyager looked, what it found, what it could not use."""

    provider: str
    label: str
    #: ``observed`` (tested on files the real CLI wrote) or ``documented`` (from public descriptions).
    evidence: str = "documented"
    #: The agent versions whose real files the adapter was tested on.
    versions: list[str] = []
    roots: list[str]
    roots_found: list[str]
    sources: int
    bytes: int
    shapes: dict[str, int] = {}
    problems: list[str] = []
    indexed_sessions: int = 0
    indexed_events: int = 0
    failed_sources: list[str] = []
    #: Sources read with some pieces skipped (unknown records, malformed lines): what was skipped.
    notes: list[str] = []
    #: The agent's versions that wrote the indexed sessions (where the files say) -> how many sessions, oldest first.
    versions_seen: dict[str, int] = {}
    #: "written by <newest seen>; observed up to <newest tested>" when the user's files are newer than any
    #: version the adapter was tested on (the format may have moved on), else None.
    drift: str | None = None


class Health(msgspec.Struct, kw_only=True, omit_defaults=True):
    """Voyager's own state, the last block of ``voyager doctor``: each field a line of its text, in this order.

    The index's numbers are there only when an index could be opened, ``checkpoints_db`` only when that
    database exists (absent, not null, in the JSON)."""

    data_dir: str
    #: ``ok``, ``missing``, ``out of step: …`` (the next scan repairs it) or why it cannot be opened.
    index: str
    #: ``ok``, ``missing`` or what SQLite's integrity check says.
    state_db: str
    index_events: int | None = None
    index_segments: int | None = None
    index_bytes: int | None = None
    checkpoints_db: str | None = None
    #: The zstd implementation in use, or how to install one.
    zstd: str
    #: How many sessions meaning can search, or how to install its model.
    meaning: str

    def lines(self) -> list[tuple[str, object]]:
        """(name, value) of each field the JSON holds, in its order: what the text prints."""
        return list(msgspec.to_builtins(self).items())


class MeaningStatus(msgspec.Struct, kw_only=True):
    """Whether meaning search can run and how much of the history it covers (``doctor``, ``serve status``)."""

    #: The model's id, or None when it is not installed.
    model: str | None
    #: Sessions with a vector of their current text, of all sessions with events.
    sessions_ready: int
    sessions_total: int


class DoctorReport(msgspec.Struct, kw_only=True):
    """The document ``voyager doctor --json`` prints: every agent, then Voyager's health and meaning search."""

    schema_version: int
    providers: list[ProviderReport]
    health: Health
    meaning: MeaningStatus


class ImportRow(msgspec.Struct, kw_only=True):
    """One recorded export, or one file in the imports folder (``voyager import --list``)."""

    path: str
    #: The export's kind (``chatgpt``, ``claude-ai``, …: the adapter's name), or None when it is no export (or is
    #: not there).
    kind: str | None
    present: bool
    #: Recorded by ``voyager import`` (else: found in the imports folder).
    recorded: bool


class ImportList(msgspec.Struct, kw_only=True):
    """The document ``voyager import --list --json`` prints: recorded exports first, then the folder's files."""

    imports: list[ImportRow]


class ImportResult(msgspec.Struct, kw_only=True):
    """The document ``voyager import PATH --json`` (and ``--forget``) prints."""

    #: The export's absolute path, as recorded.
    path: str
    #: The export's kind (``chatgpt``, ``claude-ai``, …); None when it was forgotten.
    kind: str | None
    #: Whether the next scan reads it.
    recorded: bool
    #: It was recorded before this command.
    already: bool
