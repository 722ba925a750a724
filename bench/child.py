"""What the bench runs in a child process, so peak memory is the work's own: ``python -m bench.child ingest …``.

The parent passes an explicit environment (fake provider homes, see ``bench.util``);
the child prints one JSON document on stdout. Import time is excluded from the
measured seconds; peak RSS (VmHWM) is the whole child's, and ``rss_start_kb`` says
how much of it the interpreter and imports already held before the scan began.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import msgspec


class IngestRun(msgspec.Struct, kw_only=True):
    """One full scan of one provider into an empty data dir."""

    seconds: float
    events: int
    sessions: int
    sources: int
    failed: int
    skipped: int
    rss_start_kb: int
    peak_rss_kb: int
    index_bytes: int
    state_bytes: int


def ingest(data_dir: Path, provider: str) -> IngestRun:
    from voyager_sessions.ingest import adapters
    from voyager_sessions.scan import scan
    from voyager_sessions.search.index import SearchIndex  # noqa: F401 - import cost stays out of the timing
    from voyager_sessions.store.state import StateStore  # noqa: F401

    # Import (and, in a fresh checkout run with PYTHONDONTWRITEBYTECODE, compile) the
    # adapter before the clock starts: an installed copy has its bytecode already.
    adapters.get(provider)

    from bench.util import current_rss_kb, dir_bytes, peak_rss_kb

    rss_start = current_rss_kb()
    t0 = time.perf_counter()
    summary = scan(data_dir, dict(os.environ), providers=[provider])
    seconds = time.perf_counter() - t0
    return IngestRun(
        seconds=seconds, events=summary.events_added, sessions=summary.sessions, sources=summary.sources,
        failed=summary.failed, skipped=len(summary.skipped), rss_start_kb=rss_start, peak_rss_kb=peak_rss_kb(),
        index_bytes=dir_bytes(data_dir / "index"), state_bytes=dir_bytes(data_dir / "state.db"),
    )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.child")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ingest", help="full scan of one provider into an empty data dir")
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--provider", required=True)
    args = ap.parse_args(argv)
    if args.cmd == "ingest":
        result = ingest(args.data_dir, args.provider)
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
