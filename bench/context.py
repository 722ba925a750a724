"""The run's shared state: mode, the temporary work dir, and what one scenario leaves for another.

``append_one`` continues from the data dirs ``ingest_5000`` built, and ``baseline``
reuses the corpora and Voyager timings of ``search``. Each scenario asks the context
for what it needs and builds it if an earlier scenario did not (so ``--only`` works).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Sizes:
    """Everything that ``--quick`` scales."""

    ingest_messages: int
    ingest_runs: int
    append_rounds: int
    rescan_sources: int
    rescan_runs: int
    checkpoint_saves: int
    checkpoint_loads: int
    checkpoint_opens: int
    search_events: tuple[int, ...]
    query_reps: int
    cli_reps: int
    baseline_query_budget_s: float
    cli_search_reps: int
    cli_append_rounds: int
    history_sessions: int
    history_runs: int
    big_session_mb: int
    big_runs: int

    @classmethod
    def for_mode(cls, quick: bool) -> Sizes:
        if quick:
            return cls(
                ingest_messages=5000,
                ingest_runs=1,
                append_rounds=3,
                rescan_sources=2000,
                rescan_runs=3,
                checkpoint_saves=1000,
                checkpoint_loads=10_000,
                checkpoint_opens=5,
                search_events=(10_000, 50_000),
                query_reps=12,
                cli_reps=3,
                baseline_query_budget_s=0.5,
                cli_search_reps=3,
                cli_append_rounds=5,
                history_sessions=100,
                history_runs=1,
                big_session_mb=20,
                big_runs=1,
            )
        return cls(
            ingest_messages=5000,
            ingest_runs=3,
            append_rounds=5,
            rescan_sources=10_000,
            rescan_runs=5,
            checkpoint_saves=2000,
            checkpoint_loads=20_000,
            checkpoint_opens=20,
            search_events=(10_000, 100_000, 1_000_000),
            query_reps=30,
            cli_reps=7,
            baseline_query_budget_s=4.0,
            cli_search_reps=25,
            cli_append_rounds=11,
            history_sessions=300,
            history_runs=3,
            big_session_mb=300,
            big_runs=1,
        )


@dataclass
class Context:
    quick: bool
    work: Path
    seed: int = 42
    sizes: Sizes = field(init=False)
    #: provider -> what ingest_5000 built (bench.scenarios.ingest.Ingested)
    ingested: dict[str, Any] = field(default_factory=dict)
    #: event count -> what search built (bench.scenarios.search.SearchRun)
    search_runs: dict[int, Any] = field(default_factory=dict)
    #: anything else a scenario computes once per run (the long ingest conversation, say)
    cache: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.sizes = Sizes.for_mode(self.quick)

    def dir(self, name: str) -> Path:
        """A fresh directory for ``name`` under the work dir."""
        p = self.work / name
        p.mkdir(parents=True, exist_ok=True)
        return p


def size_label(n: int) -> str:
    """10000 -> "10k", 1000000 -> "1M"."""
    if n >= 1_000_000 and n % 1_000_000 == 0:
        return f"{n // 1_000_000}M"
    if n >= 1000 and n % 1000 == 0:
        return f"{n // 1000}k"
    return str(n)
