"""How `voyager search` pages, sorts and colours its output."""

from __future__ import annotations


def test_sort_recent_offset_total(corpus, run):
    run("scan")
    q = "the OR postgres OR migration OR 数据库 OR pytest"
    full = run.json("search", "--json", "--sort", "recent", q)
    ts = [h["timestamp"] for h in full["hits"]]
    assert ts == sorted(ts, reverse=True)
    page = run.json("search", "--json", "--sort", "recent", "--limit", "2", "--offset", "2", q)
    assert page["total"] == full["total"] and [h["seq"] for h in page["hits"]] == [h["seq"] for h in full["hits"][2:4]]


def test_color_only_when_asked(corpus, run, monkeypatch):
    run("scan")
    assert "\x1b[" in run("search", "--color", "always", "数据库").stdout
    assert "\x1b[" not in run("search", "数据库").stdout  # piped: plain
    monkeypatch.setenv("NO_COLOR", "1")
    assert "\x1b[" not in run("search", "--color", "auto", "数据库").stdout
