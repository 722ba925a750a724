"""A request does not wait for a long scan (a first index): it answers from what that scan has committed."""

from __future__ import annotations

import threading
from pathlib import Path

from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan.summary import ScanSummary
from voyager_sessions.serve import fresh


def test_a_request_answers_from_a_long_scan_without_waiting_for_it(tmp_path: Path) -> None:
    started, release = threading.Event(), threading.Event()
    budgets: list[object] = []

    def slow_scan(root, **kwargs):
        budgets.append(kwargs.get("budget"))
        if len(budgets) == 1:
            started.set()
            assert release.wait(30)
        return ScanSummary()

    scans = fresh.Scans(DataDir(tmp_path))
    scans._scan = slow_scan  # the keep-fresh loop's first scan: a first index that takes long
    t = threading.Thread(target=lambda: scans.fresh(watched=True))
    t.start()
    try:
        assert started.wait(30)
        # The long scan is held until after this answer: it was not waited for.
        assert scans.fresh(patience=0.2, budget=0.6) is None
    finally:
        release.set()
        t.join(30)
    # None runs: a request's scan runs, with the budget a search has.
    outcome = scans.fresh(patience=0.2, budget=0.6)
    assert outcome is not None and outcome.error is None and budgets[-1] == 0.6


def test_the_rest_a_budget_left_is_read_at_once(tmp_path: Path) -> None:
    calls: list[dict] = []
    done = threading.Event()

    def scan(root, **kwargs):
        calls.append(kwargs)
        if len(calls) == 2:
            done.set()
        return ScanSummary(remaining=5 if len(calls) == 1 else 0)

    scans = fresh.Scans(DataDir(tmp_path))
    scans._scan = scan
    first = scans.fresh(patience=0.2, budget=0.6)
    assert first is not None and first.summary.remaining == 5
    assert done.wait(30), "no scan went on with the rest"
    assert "budget" not in calls[1]  # the rest is read whole
