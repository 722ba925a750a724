"""The bench's result schema: msgspec Structs, encoded as the JSON ``--out`` writes.

One ``BenchResult`` per run holds a ``ScenarioResult`` per scenario. A scenario is a
flat list of ``Metric``s (a number with a unit, an optional ``Target`` and optional
``Reference`` numbers such as the seed design's or the FTS5 baseline's) and a list of
``Check``s. Checks are correctness, never timing: the run exits non-zero only when a
check fails or a scenario raises. Targets are reported (``met``), never enforced.
"""

from __future__ import annotations

from typing import Literal

import msgspec

#: Bump on an incompatible change of the JSON below.
SCHEMA_VERSION = 1


class Target(msgspec.Struct, frozen=True, kw_only=True):
    """A goal from the issue: ``value op target`` should hold (``<=`` for latencies, ``>=`` for rates)."""

    op: Literal["<=", ">="]
    value: float

    def met(self, value: float) -> bool:
        return value <= self.value if self.op == "<=" else value >= self.value

    def __str__(self) -> str:
        return f"{self.op} {_num(self.value)}"


class Reference(msgspec.Struct, frozen=True, kw_only=True):
    """Another design's number for the same measurement, printed beside ours."""

    label: str  # "seed" (the old checkpoint store) or "baseline" (SQLite FTS5 trigram)
    value: float | None
    note: str | None = None


class Metric(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One measured number. ``group`` clusters rows in the table (a format, a corpus size)."""

    name: str
    value: float | None
    unit: str
    group: str | None = None
    target: Target | None = None
    met: bool | None = None
    reference: Reference | None = None
    #: Voyager divided by the reference (lower is better for time and size).
    ratio: float | None = None


class Check(msgspec.Struct, kw_only=True, omit_defaults=True):
    """A correctness check: a planted needle found, no wrong hit, an apart pair not matched…"""

    name: str
    ok: bool
    detail: str | None = None


class QueryStat(msgspec.Struct, kw_only=True, omit_defaults=True):
    """One query of the search mix at one corpus size, on one engine.

    Latencies are in-process and warm (after ``first_ms``, the query's first run on a
    freshly opened index). For planted needles, ``expected`` events must be returned:
    ``found`` of them were, plus ``wrong`` other events (or sessions, in sessions mode).
    """

    engine: Literal["voyager", "baseline"]
    events: int
    name: str
    query: str
    category: str
    sessions: bool = False
    reps: int
    first_ms: float
    p50_ms: float
    p95_ms: float
    p99_ms: float
    total: int | None = None
    expected: int | None = None
    found: int | None = None
    wrong: int | None = None
    cli_p50_ms: float | None = None


class ScenarioResult(msgspec.Struct, kw_only=True, omit_defaults=True):
    name: str
    description: str
    seconds: float = 0.0
    #: CPU seconds (user + system) of the bench and the children it reaped while the scenario ran: what it
    #: cost, where the wall time also says how busy the machine was.
    cpu_seconds: float = 0.0
    metrics: list[Metric] = []
    checks: list[Check] = []
    queries: list[QueryStat] = []
    notes: list[str] = []
    #: Set when the scenario raised: the run fails.
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None and all(c.ok for c in self.checks)


class Machine(msgspec.Struct, kw_only=True):
    python: str
    platform: str
    cpus: int
    tantivy: str
    msgspec: str
    sqlite: str
    voyager_commit: str | None


class BenchResult(msgspec.Struct, kw_only=True):
    """The document ``python -m bench --out FILE`` writes."""

    schema_version: int = SCHEMA_VERSION
    mode: Literal["quick", "full"]
    started: str
    seconds: float
    ok: bool
    machine: Machine
    scenarios: list[ScenarioResult]


def _num(v: float) -> str:
    if v == int(v) and abs(v) >= 1:
        return f"{int(v):,}"
    return f"{v:g}"
