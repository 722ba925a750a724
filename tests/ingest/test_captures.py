"""Every adapter against what its agent's real CLI wrote: ``tests/fixtures/agents/<agent>-<version>/``.

Each capture is copied into a fresh HOME and scanned through the real CLI; then every
marker ``truth.json`` places in a session file must be found, with the right kind,
origin, provider and session: a prompt is exactly one ``user``/``human`` event, the
markers of a turn share one session, a subagent's markers sit in a session whose parent
is the main session, a compaction summary is ``meta``, reasoning is ``reasoning``; no tool call
reads as ``None`` or ``{}`` and a subagent's report in its parent is ``tool_result``/``agent`` for
every agent (``check_tool_calls_and_reports``, the rules of docs/json.md). The
scan must leave every provider file byte-identical and create nothing beside them.

The captures are in the repository (``tests/fixtures/agents``; ``PROVENANCE.md`` there says which
CLI and version wrote each).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.captures import CAPTURES, Capture, _tree, captures, provider_of
from voyager_sessions.ingest.adapters import PROVIDERS
from voyager_sessions.ingest.toolcall import SUBAGENT_REPORT, is_subagent_tool

ROOT = Path(__file__).resolve().parents[2]


#: Markers that stand in a provider file but must not be found, and why.
NOT_INDEXED = {
    # Kilo deleted this chunk summary (message.removed.1); it survives only in its event log.
    "SUMMARY_T2KILO33d91d": "deleted by Kilo; only its event-sourcing log keeps it",
}


#: Providers whose captures ran no tool: their ``TOOLOUT_`` markers stand only in the prompt (which
#: quotes the command), so they must be found, but not as tool output. Why, per provider:
NO_TOOL_RUN = {
    # Aider 0.86 edits files and has no shell tool the model calls; the scripted model answered in text.
    "aider": "the reply is text only: nothing was run, the command is only quoted in the prompt",
    # Omnigent 0.19.1's headless openai-agents harness offers the model no shell tool; it answered in text.
    "omnigent": "no tool was offered headless: the command is only quoted in the prompt",
}


def _params() -> Iterator[Any]:
    for name in captures():
        provider = provider_of(name)
        if provider in PROVIDERS:
            yield pytest.param(name, id=name)


@pytest.fixture
def capture(request, tmp_path, monkeypatch) -> Capture:
    return Capture(request.param, tmp_path, monkeypatch)


@pytest.mark.parametrize("capture", list(_params()), indirect=True)
def test_capture(capture: Capture) -> None:
    c = capture
    turns = c.truth["turns"]
    main_session: str | None = None
    for turn in turns:
        if turn.get("subagent"):
            continue
        markers = {k: v for k, v in turn.items() if k.endswith("_marker") and c.in_files(v) and v not in NOT_INDEXED}
        sessions_of_turn: list[set[str]] = []
        for key, marker in markers.items():
            hits = c.hits(marker)
            assert hits, f"{marker} ({key}) not found"
            assert {h["provider"] for h in hits} == {c.provider}, (marker, hits)
            kinds = {h["kind"] for h in hits}
            if key == "prompt_marker":
                human = [h for h in hits if h["kind"] == "user" and h["origin"] == "human"]
                assert len(human) == 1, f"{marker}: {len(human)} human prompts, want 1: {hits}"
                main_session = main_session or human[0]["session_id"]
            elif key == "think_marker":
                assert "reasoning" in kinds, (marker, kinds)
            elif key == "reply_marker":
                assert "assistant" in kinds, (marker, kinds)
            elif key == "tool_marker":
                assert "tool_result" in kinds or "SUB" in marker or c.provider in NO_TOOL_RUN, (marker, kinds)
            elif key == "summary_marker":
                assert kinds == {"meta"}, (marker, kinds)
                assert not any(h["origin"] == "human" for h in hits)
            elif key == "title_marker":
                assert "title" in kinds, (marker, kinds)
            if "SUB" not in marker:  # a subagent's marker may stand in the subagent's session only
                sessions_of_turn.append({h["session_id"] for h in hits})
        if sessions_of_turn:
            common = set.intersection(*sessions_of_turn)
            assert common, f"the markers of turn {turn} are in no common session: {sessions_of_turn}"
    assert main_session is not None, "no human prompt found at all"

    sessions = c.sessions()
    for turn in turns:
        if not turn.get("subagent"):
            continue
        for key, marker in turn.items():
            if not key.endswith("_marker") or not c.in_files(marker) or marker in NOT_INDEXED:
                continue
            hits = c.hits(marker)
            assert hits, f"subagent marker {marker} ({key}) not found"
            children = {
                h["session_id"] for h in hits if sessions.get(h["session_id"], {}).get("parent") == main_session
            }
            assert children, f"{marker}: no hit in a session whose parent is {main_session}: {hits}"
            if key == "prompt_marker":
                assert not any(h["origin"] == "human" for h in hits), f"{marker}: a subagent's prompt is not a person's"

    check_tool_calls_and_reports(c, main_session)

    # Read-only: every file byte-identical, nothing created or removed beside them.
    assert _tree(c.home) == c.before
    # Never silently empty: the scan read something and named nothing it did not know.
    assert c.scan["sessions"] >= 1 and c.scan["failed"] == 0, c.scan
    doc = c.run.json("doctor", "--json")
    report = next(p for p in doc["providers"] if p["provider"] == c.provider)
    assert report["indexed_sessions"] >= 1 and not report["failed_sources"], report


#: What a tool call's text must never be: a spelling of "no arguments" (docs/json.md, the one rule).
EMPTY_SPELLINGS = {"", "None", "null", "{}", "[]", '""'}


def check_tool_calls_and_reports(c: Capture, main_session: str) -> None:
    """The one rule on every capture (docs/json.md, "Tool calls and subagent reports"): no tool call reads as
    ``None``/``{}``, a shell call reads as its command line; and where the agent ran a subagent, its report in
    the parent is ``tool_result``/``agent`` (the same pair for every agent), paired with the call that started it,
    and no other event of the parent holds the subagent's reply marker."""
    shown = {sid: c.run.json("show", sid, "--json")["events"] for sid in c.sessions()}
    calls = [e for events in shown.values() for e in events if e["kind"] == "tool_call"]
    if c.provider not in NO_TOOL_RUN:
        assert calls, "a capture that ran a tool shows its call"
    for e in calls:
        assert e["text"].strip() not in EMPTY_SPELLINGS, e
        assert not e["text"].lstrip().startswith('{"command"'), f"a shell call reads as its command line: {e}"
    sub = next((t for t in c.truth["turns"] if t.get("subagent")), None)
    if sub is None:
        return
    parent = shown[main_session]
    reports = [e for e in parent if (e["kind"], e["origin"]) == SUBAGENT_REPORT]
    assert reports, f"{c.name}: no subagent report (tool_result/agent) in the parent: {parent}"
    starts = {e.get("call_id") for e in parent if e["kind"] == "tool_call" and is_subagent_tool(e.get("tool"))}
    for e in reports:
        assert e.get("call_id") in starts, f"a report answers the call that started its subagent: {e}"
    reply = sub["reply_marker"]
    for e in parent:
        if reply in e["text"]:
            assert (e["kind"], e["origin"]) == SUBAGENT_REPORT, f"{reply} in the parent is the report: {e}"


def test_every_capture_has_its_adapter() -> None:
    # A capture whose agent Voyager does not read would return nothing for it, silently.
    missing = {name: provider_of(name) for name in captures() if provider_of(name) not in PROVIDERS}
    assert not missing, missing
    assert len(captures()) >= 26


def test_every_capture_has_its_provenance() -> None:
    """PROVENANCE.md names every capture with the agent and version its truth.json records."""
    text = (CAPTURES / "PROVENANCE.md").read_text("utf-8")
    for name in captures():
        truth = json.loads((CAPTURES / name / "truth.json").read_text())
        assert f"| `{name}` | {truth['agent']} | {truth['version']} |" in text, name
