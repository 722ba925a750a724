"""`voyager stats` and `voyager doctor`: counts, sources that failed, index health, and format drift."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest

from tests.support.captures import CAPTURES
from tests.support.sessions import claude_session_lines, write_claude
from voyager_sessions.ingest.adapters._common import release
from voyager_sessions.ingest.diagnose import drift_note, sorted_versions, version_key


def test_stats_and_doctor(corpus, home, run):
    run("scan")
    st = run.json("stats", "--json")
    assert st["providers"]["claude"]["sessions"] == 1 and st["index_events"] > 0
    bad = home / ".claude" / "projects" / "-home-dev-shop" / "junk.jsonl"
    bad.write_bytes(b"\x00\xff" * 50)
    run("scan")
    doc = run.json("doctor", "--json")
    claude = next(p for p in doc["providers"] if p["provider"] == "claude")
    assert claude["sources"] == 2 and claude["indexed_sessions"] == 1
    assert any(str(bad) in f and "binary" in f for f in claude["failed_sources"])
    assert doc["health"]["state_db"] == "ok" and doc["health"]["index"] == "ok"
    text = run("doctor").stdout
    assert "cannot use" in text and str(home / ".claude" / "projects") in text


def test_doctor_opens_with_a_short_summary(corpus, home, run):
    """Before every agent's block: which agents left sessions here and how many are indexed, what cannot be used,
    the index's health; before a first scan, what to run."""
    text = run("doctor").stdout
    head = text.split("\n\n", 1)[0].split("\n")
    assert re.fullmatch(
        r"Summary: 2 of the \d+ agents Voyager reads left sessions on this machine; none indexed yet\.", head[0]
    )
    assert head[1].split() == ["agents", "Claude", "Code,", "Codex", "CLI"]
    assert "  next       `voyager scan` (or `voyager ui`) indexes them" in head
    (home / ".claude" / "projects" / "-home-dev-shop" / "junk.jsonl").write_bytes(b"\x00\xff" * 50)
    run("scan")
    head = run("doctor").stdout.split("\n\n", 1)[0].split("\n")
    assert head[0].endswith("left sessions on this machine; 2 sessions, 12 events indexed."), head
    assert head[1] == "  agents     Claude Code 1, Codex CLI 1"
    assert head[2] == "  cannot use Claude Code (1)"
    assert head[3].startswith("  health     index ok, state ok; data in ")
    assert len(head) <= 6 and not any("next" in line for line in head)


# -- format drift: the versions that wrote the user's files, beside the versions Voyager was tested on ----------


def _bumped_capture(home: Path, capture: str, old: str, new: str) -> None:
    """A copy of a real capture in ``home`` with its version rewritten to ``new`` (what a newer release writes)."""
    shutil.copytree(
        CAPTURES / capture,
        home,
        dirs_exist_ok=True,  # type: ignore[operator]
        ignore=shutil.ignore_patterns("truth.json"),
    )
    for path in home.rglob("*.jsonl"):
        path.chmod(0o644)
        path.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")


def _report(run, provider: str) -> dict:
    return next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == provider)


@pytest.mark.skipif(CAPTURES is None, reason="shared/fixtures/agents not found")
def test_a_release_newer_than_any_observed_is_a_note(home, run):
    _bumped_capture(home, "claude-2.1.328", '"version":"2.1.328"', '"version":"2.1.340"')
    run("scan")
    claude = _report(run, "claude")
    assert claude["versions"] == ["2.1.328", "2.1.332"]
    assert claude["versions_seen"] == {"2.1.340": 1}
    assert claude["drift"] == "written by 2.1.340; observed up to 2.1.332"
    text = run("doctor").stdout
    assert "Claude Code (claude) - observed: 2.1.328, 2.1.332; your files: 2.1.340" in text
    assert "note       written by 2.1.340; observed up to 2.1.332" in text


@pytest.mark.skipif(CAPTURES is None, reason="shared/fixtures/agents not found")
def test_codex_names_its_cli_version_and_an_observed_one_is_no_note(home, run):
    _bumped_capture(home, "codex-0.169.0", '"cli_version":"0.169.0"', '"cli_version":"0.172.2"')
    run("scan")
    codex = _report(run, "codex")
    assert (codex["versions_seen"], codex["drift"]) == ({"0.172.2": 1}, "written by 0.172.2; observed up to 0.171.0")


def test_older_and_observed_versions_are_shown_without_a_note(home, run):
    write_claude(home, claude_session_lines())  # written by 2.0.14, older than every observed release
    run("scan")
    claude = _report(run, "claude")
    assert (claude["versions_seen"], claude["drift"]) == ({"2.0.14": 1}, None)
    assert "your files: 2.0.14" in run("doctor").stdout and "written by" not in run("doctor").stdout


def test_a_hostile_version_in_a_file_is_no_version(home, run):
    lines = [json.loads(line) for line in claude_session_lines()]
    for line in lines:
        line["version"] = "\x1b[31m99.0.0\x07"
    write_claude(home, [json.dumps(line) + "\n" for line in lines])
    run("scan")
    assert _report(run, "claude")["versions_seen"] == {}
    assert "\x1b" not in run("doctor").stdout


def test_version_order_and_the_drift_rule():
    assert (
        release("2.1.340") == "2.1.340" and release("v0.4.3") == "v0.4.3" and release("1.0.0-beta.2") == "1.0.0-beta.2"
    )
    assert release("(session format v3)") is None and release("3") is None and release(None) is None
    assert release("1." + "1" * 60) is None
    assert version_key("2.1.340") == (2, 1, 340) and version_key("v0.4.3") == (0, 4, 3) and version_key("x") is None
    assert sorted_versions(["2.1.40", "2.1.332", "weird", "2.1.4"]) == ["2.1.4", "2.1.40", "2.1.332", "weird"]
    assert drift_note(["2.1.329", "2.1.340"], ["2.1.328", "2.1.332"]) == "written by 2.1.340; observed up to 2.1.332"
    assert drift_note(["2.1.332"], ["2.1.328", "2.1.332"]) is None
    assert drift_note(["2.1.100"], ["2.1.328"]) is None
    assert drift_note(["2.1.340"], []) is None, "a documented agent has nothing to compare with"
