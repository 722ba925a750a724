"""Stamps from the future (issue #28, item 6): clamped for filters and sorting, shown as given.

A session stamped 9999-12-31 (a clock gone wrong, or a crafted file) used to match
``since:1d`` forever and sort first under ``--sort recent`` and in ``voyager list``. A stamp
more than a day past the scan that read it now counts as that day for filters and order,
and is still shown as written.
"""

from __future__ import annotations

import time
from datetime import datetime, timezone

from tests.support.sessions import CLAUDE_SID, claude_session_lines, write_claude

FUTURE_SID = "9f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e59"
DAY = 86_400


def _iso(t: float) -> str:
    return datetime.fromtimestamp(t, timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.000Z")


def test_a_session_from_the_future_stops_matching_since_and_sorts_by_its_clamped_time(home, run, monkeypatch):
    now = time.time()
    future = [ln.replace("2026-11-20T10:00", "9999-12-31T10:00") for ln in claude_session_lines(FUTURE_SID)]
    write_claude(home, future, sid=FUTURE_SID)
    # Read three days ago: its stamps count as two days ago.
    with monkeypatch.context() as m:
        m.setattr(time, "time", lambda: now - 3 * DAY)
        assert run("scan").exit_code == 0
    # And a session of an hour ago, read now.
    write_claude(home, [ln.replace("2026-11-20T10:00", _iso(now - 3600)[:16]) for ln in claude_session_lines()])
    assert run("scan").exit_code == 0

    since = run.json("search", "since:1d", "--json", "--no-refresh", "--limit", "100")["hits"]
    assert since and {h["session_id"] for h in since} == {f"claude:{CLAUDE_SID}"}
    ranked = run.json("search", "parse_config_v2", "--sort", "recent", "--json", "--no-refresh")["hits"]
    assert ranked[0]["session_id"] == f"claude:{CLAUDE_SID}"
    shown = [h for h in ranked if h["session_id"] == f"claude:{FUTURE_SID}"]
    assert shown and shown[0]["timestamp"].startswith("9999-12-31")  # shown as given
    listed = run.json("list", "--json")["sessions"]
    assert [s["session_id"] for s in listed] == [f"claude:{CLAUDE_SID}", f"claude:{FUTURE_SID}"]
    assert listed[1]["updated"].startswith("9999-12-31")
