"""``python -m bench.child ingest-each``: several scans in one child, each one's peak RSS its own.

hostile_scale scans the three sizes of a shape in one process (a process start and its imports cost
more than the smaller scans); that is only sound if each scan's peak RSS is measured from its own
start, not the process's, and if each scan indexes what a process of its own would.
"""

from __future__ import annotations

from pathlib import Path

import msgspec
import pytest

from bench.child import IngestRun, ScanJob, can_reset_peak_rss
from bench.scenarios.hostile_scale import _write
from bench.util import child_env, run_child

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(not can_reset_peak_rss(), reason="no /proc/self/clear_refs: each scan runs alone there"),
]


def test_each_scan_in_one_child_counts_its_own_peak_and_indexes_what_one_alone_does(tmp_path: Path) -> None:
    # A large one first (its one huge string is held while read), then a small one: a peak carried over
    # from the first would make the second's as large.
    big = _write("jsonl", "string", 24 << 20, tmp_path / "big")
    small = _write("jsonl", "string", 16 << 10, tmp_path / "small")
    jobs = [
        ScanJob(data_dir=str(tmp_path / name / "data"), provider=provider, env=child_env(env))
        for name, (provider, env, _, _) in (("big", big), ("small", small))
    ]
    out = run_child(["ingest-each"], big[1], stdin=msgspec.json.encode(jobs))
    first, second = msgspec.json.decode(out, type=list[IngestRun])
    assert (first.events, second.events) == (big[3], small[3])
    assert first.failed == second.failed == 0
    assert first.peak_rss_kb - second.peak_rss_kb > 10 * 1024, (first.peak_rss_kb, second.peak_rss_kb)

    alone = msgspec.json.decode(
        run_child(["ingest", "--data-dir", str(tmp_path / "alone"), "--provider", "claude"], small[1]), type=IngestRun
    )
    assert (alone.events, alone.sessions) == (second.events, second.sessions)
    # The second scan's peak is near what it is in a process of its own (what is left of the first is freed).
    assert second.peak_rss_kb < alone.peak_rss_kb + 16 * 1024, (second.peak_rss_kb, alone.peak_rss_kb)
