"""`voyager show` and context windows: the per-event cap read back from the source, -C and --around."""

from __future__ import annotations

import json

from tests.support.sessions import CLAUDE_SID, claude_session_lines, write_claude


def test_event_text_cap_and_show_reads_the_source(home, run, monkeypatch):
    monkeypatch.setenv("VOYAGER_MAX_EVENT_CHARS", "1024")
    lines = claude_session_lines()
    big = "early_token " + "filler " * 1000 + " late_token_beyond_cap"
    rec = json.loads(lines[4])
    rec["message"]["content"][0]["content"] = big
    lines[4] = json.dumps(rec) + "\n"
    write_claude(home, lines)
    run("scan")
    assert run("search", "early_token").exit_code == 0
    assert run("search", "late_token_beyond_cap").exit_code == 1  # beyond the documented cap
    snippet_text = run.json("search", "--json", "-C", "0", "early_token")["hits"][0]["snippet"]
    assert "late_token_beyond_cap" not in snippet_text
    tl = run.json("show", "--json", CLAUDE_SID)
    ev = next(e for e in tl["events"] if e["kind"] == "tool_result")
    assert ev["text"] == big  # the whole text, read back from the source


def test_context_and_around(corpus, run):
    run("scan")
    hit = run.json("search", "--json", "-C", "1", "marmalade")["hits"][0]
    seqs = [e["seq"] for e in hit["context"]]
    assert seqs == [hit["seq"] - 1, hit["seq"], hit["seq"] + 1]
    tl = run.json("show", "--json", "--around", "3", "-C", "1", CLAUDE_SID)
    assert [e["seq"] for e in tl["events"]] == [2, 3, 4]
    text = run("search", "-C", "1", "--color", "never", "marmalade").stdout
    assert "> #" in text
