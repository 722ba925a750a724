"""Pins the JSON contract (docs/json.md): field names and types of every --json document."""

from __future__ import annotations

import json

from voyager_sessions.model import SCHEMA_VERSION

HIT_FIELDS = {"session_id", "provider", "seq", "kind", "origin", "timestamp", "cwd", "title", "snippet", "highlights",
              "score", "resume", "tool", "exit_code", "hit_count", "context"}
SESSION_FIELDS = {"session_id", "provider", "native_id", "title", "cwd", "git_branch", "git_repo", "model", "started",
                  "updated", "events", "parent", "resume", "source", "title_source"}
SCAN_FIELDS = {"schema_version", "sources", "new", "grown", "changed", "unchanged", "failed", "retrying", "removed",
               "sessions",
               "events_added", "events_removed", "skipped", "seconds", "providers"}


def test_schema_version_is_1():
    assert SCHEMA_VERSION == 1


def test_search_document(corpus, run):
    run("scan")
    doc = run.json("search", "--json", "-C", "1", "数据库")
    assert set(doc) == {"schema_version", "query", "total", "offset", "hits"}
    hit = doc["hits"][0]
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


def test_list_show_scan_documents(corpus, run):
    scan_doc = json.loads(run("scan", "--json").stdout)
    assert set(scan_doc) == SCAN_FIELDS
    doc = run.json("list", "--json")
    assert set(doc) == {"schema_version", "total", "sessions"}
    assert set(doc["sessions"][0]) == SESSION_FIELDS
    tl = run.json("show", "--json", doc["sessions"][0]["session_id"])
    assert set(tl) == {"schema_version", "session", "events"}
    assert set(tl["session"]) == SESSION_FIELDS
    assert {"session", "seq", "kind", "origin", "text"} <= set(tl["events"][0])
