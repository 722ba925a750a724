"""Pins the JSON contract (docs/json.md): field names and types of every --json document."""

from __future__ import annotations

import json

from voyager_sessions.core.model import SCHEMA_VERSION

HIT_FIELDS = {
    "session_id",
    "provider",
    "seq",
    "kind",
    "origin",
    "timestamp",
    "cwd",
    "title",
    "snippet",
    "highlights",
    "score",
    "resume",
    "tool",
    "exit_code",
    "hit_count",
    "context",
    "matched_terms",
    "project",
    "match",
}
TERM_HIT_FIELDS = {"term", "seq", "kind", "snippet", "highlights"}
SESSION_FIELDS = {
    "session_id",
    "provider",
    "native_id",
    "title",
    "cwd",
    "git_branch",
    "git_repo",
    "model",
    "started",
    "updated",
    "events",
    "parent",
    "resume",
    "source",
    "title_source",
}
SCAN_FIELDS = {
    "schema_version",
    "sources",
    "new",
    "grown",
    "changed",
    "unchanged",
    "failed",
    "retrying",
    "removed",
    "sessions",
    "events_added",
    "events_removed",
    "skipped",
    "seconds",
    "providers",
    "remaining",
}


def test_schema_version_is_1():
    assert SCHEMA_VERSION == 1


def test_search_document(corpus, run):
    run("scan")
    doc = run.json("search", "--json", "-C", "1", "数据库")
    assert set(doc) == {
        "schema_version",
        "query",
        "total",
        "offset",
        "hits",
        "match",
        "terms",
        "total_exact",
        "indexing",
    }
    assert doc["indexing"] is None  # a whole index: nothing is still being built
    assert doc["match"] == "all" and doc["terms"] == ["数据库"]
    hit = doc["hits"][0]
    assert hit["matched_terms"] is None  # only session rows say which terms they hold
    assert set(hit) == HIT_FIELDS
    assert isinstance(hit["highlights"], list) and all(len(h) == 2 for h in hit["highlights"])
    assert isinstance(hit["context"], list) and {"session", "seq", "kind", "origin", "text"} <= set(hit["context"][0])
    lines = run("search", "--jsonl", "数据库").stdout.splitlines()
    assert set(json.loads(lines[0])) == HIT_FIELDS


def test_sessions_mode_counts(corpus, run):
    run("scan")
    doc = run.json("search", "--json", "--sessions", "the OR postgres OR 数据库 OR pytest")
    assert doc["total"] == 2
    assert all(isinstance(h["hit_count"], int) and h["hit_count"] >= 1 for h in doc["hits"])
    assert doc["terms"] == ["the OR postgres OR 数据库 OR pytest"]
    for h in doc["hits"]:
        assert [set(t) for t in h["matched_terms"]] == [TERM_HIT_FIELDS]


def test_session_rows_name_the_terms_they_hold(corpus, run):
    run("scan")
    # "postgres" and "pytest" are said in different sessions; "migration" and "pytest" in one.
    doc = run.json("search", "--json", "--sessions", "migration pytest")
    assert doc["match"] == "all" and doc["terms"] == ["migration", "pytest"] and doc["total"] == 1
    row = doc["hits"][0]
    assert [t["term"] for t in row["matched_terms"]] == ["migration", "pytest"]
    for t in row["matched_terms"]:
        assert set(t) == TERM_HIT_FIELDS and isinstance(t["seq"], int)
        s, e = t["highlights"][0]
        assert t["snippet"][s:e].lower() == t["term"]


def test_list_show_scan_documents(corpus, run):
    scan_doc = json.loads(run("scan", "--json").stdout)
    assert set(scan_doc) == SCAN_FIELDS
    doc = run.json("list", "--json")
    assert set(doc) == {"schema_version", "total", "sessions", "indexing"}
    assert set(doc["sessions"][0]) == SESSION_FIELDS
    tl = run.json("show", "--json", doc["sessions"][0]["session_id"])
    assert set(tl) == {"schema_version", "session", "events"}
    assert set(tl["session"]) == SESSION_FIELDS
    assert {"session", "seq", "kind", "origin", "text"} <= set(tl["events"][0])
