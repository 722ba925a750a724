"""`voyager stats` and `voyager doctor`: counts, sources that failed, and index health."""

from __future__ import annotations





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
