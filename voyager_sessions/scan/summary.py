"""What one scan did, as ``voyager scan --json`` prints it (part of the JSON contract)."""

from __future__ import annotations

import msgspec

from voyager_sessions.core.model import SCHEMA_VERSION


class Skipped(msgspec.Struct, frozen=True):
    """A piece of input the scan could not use: which source, why, and where in it."""

    source: str
    reason: str
    where: str | None = None


class ScanSummary(msgspec.Struct, kw_only=True):
    """What one scan did; ``voyager scan --json`` prints it."""

    schema_version: int = SCHEMA_VERSION
    sources: int = 0
    new: int = 0
    grown: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: int = 0
    #: Of ``failed``, the sources that may read next time (a database locked by its agent): retried then.
    retrying: int = 0
    removed: int = 0
    sessions: int = 0
    events_added: int = 0
    events_removed: int = 0
    skipped: list[Skipped] = []
    seconds: float = 0.0
    providers: dict[str, int] = {}
    #: Sources not read because the scan's budget was spent (the refresh before a search): a next scan reads them.
    remaining: int = 0

    @property
    def touched(self) -> int:
        return self.new + self.grown + self.changed + self.removed
