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


def test_a_stamp_past_its_files_modification_is_clamped_to_it_for_every_agent(home, run):
    """Issue #38: a session dated 9999-12-31 in a file last written three days ago, scanned now, still matched
    ``since:1d`` and sorted first (the clamp was "a day past the scan"). One rule for every adapter: no stamp
    counts later than its source's modification time (here a Claude Code log, a Codex rollout, a ChatGPT export)."""
    import json
    import os

    from tests.support.samples.chatgpt import conversation, write_export
    from tests.support.sessions import CODEX_SID, codex_session_lines, write_codex

    now = time.time()
    old = now - 3 * DAY
    claude = write_claude(
        home,
        [ln.replace("2026-11-20T10:00", "9999-12-31T10:00") for ln in claude_session_lines(FUTURE_SID)],
        sid=FUTURE_SID,
    )
    codex = write_codex(
        home,
        [
            ln.replace("2026-11-21T08:", "9999-12-31T08:").replace("2026-11-20T", "9999-12-31T")
            for ln in codex_session_lines()
        ],
    )
    conv = conversation()
    conv["update_time"] = conv["create_time"] = 253402214400.0  # 9999-12-31
    for node in conv["mapping"].values():
        if node["message"]:
            node["message"]["create_time"] = 253402214400.0
    export = write_export(home / "voyager-data" / "imports" / "export.zip", [conv], as_zip=True)
    for path in (claude, codex, export):
        os.utime(path, (old, old))
    write_claude(home, [ln.replace("2026-11-20T10:00", _iso(now - 3600)[:16]) for ln in claude_session_lines()])
    assert run("scan").exit_code == 0

    recent = f"claude:{CLAUDE_SID}"
    since = run.json("search", "since:1d", "--json", "--no-refresh", "--limit", "200")["hits"]
    assert since and {h["session_id"] for h in since} == {recent}, {h["session_id"] for h in since}
    listed = run.json("list", "--json")["sessions"]
    assert listed[0]["session_id"] == recent, [s["session_id"] for s in listed]
    shown = {s["session_id"]: s["updated"] for s in listed}
    assert shown[f"claude:{FUTURE_SID}"].startswith("9999-12-31")  # shown as given
    assert shown[f"codex:{CODEX_SID}"].startswith("9999-12-31")
    ranked = run.json(
        "search", "PROMPT_GPT OR parse_config_v2 OR ERR_CONN_REFUSED_42", "--sort", "recent", "--json", "--no-refresh"
    )["hits"]
    assert ranked[0]["session_id"] == recent, json.dumps([h["session_id"] for h in ranked])
