"""Multi-session databases: a rescan re-reads only the sessions whose own rows changed."""

from __future__ import annotations

import sqlite3

import pytest

from voyager.ingest import synth, synth_opencode
from voyager.ingest.pipeline import scan
from voyager.paths import data_dir
from voyager.search.index import SearchIndex


def _index_events():
    ix = SearchIndex(data_dir(), create=False)
    return sorted((e.session, e.seq, e.text) for sid in ix.iter_session_ids() for e in ix.session_events(sid))


@pytest.mark.parametrize("inline", [None, False, True], ids=["v1", "v2", "v2-inline"])
def test_only_changed_sessions_are_reread(home, monkeypatch, inline):
    db = home / "oc" / "opencode.db"
    db.parent.mkdir()
    monkeypatch.setenv("VOYAGER_OPENCODE_DB", str(db))
    convs = [synth.generate(seed=70 + i, messages=12, session_id=f"ses_{i:04d}abcdef") for i in range(5)]
    if inline is None:
        synth_opencode.write_v1(db, convs)
    else:
        synth_opencode.write_v2(db, convs, inline=inline)
    first = scan(data_dir(), providers=["opencode"])
    assert first.new == 1 and first.sessions == 5
    per_session = first.events_added // 5
    assert scan(data_dir(), providers=["opencode"]).unchanged == 1

    # Another process (OpenCode) renames one session and deletes another.
    table = "session" if inline is None else "session_v2"
    conn = sqlite3.connect(db)
    conn.execute(f"UPDATE {table} SET title = 'zanzibar retitled', time_updated = time_updated + 1 WHERE id = 'ses_0002abcdef'")
    conn.execute(f"DELETE FROM {table} WHERE id = 'ses_0004abcdef'")
    conn.commit()
    conn.close()
    second = scan(data_dir(), providers=["opencode"])
    assert second.changed == 1
    assert second.events_added <= per_session + 2  # one session read again, not five
    assert second.sessions == 4
    from voyager.store.state import StateStore

    store = StateStore(data_dir())
    assert store.sessions_by_id(["opencode:ses_0002abcdef"])["opencode:ses_0002abcdef"].session.title == "zanzibar retitled"
    assert store.sessions_by_id(["opencode:ses_0004abcdef"]) == {}
    store.close()
    incremental = _index_events()
    assert not any(s == "opencode:ses_0004abcdef" for s, _, _ in incremental)

    # The same index as a scan from scratch.
    monkeypatch.setenv("VOYAGER_HOME", str(home / "fresh"))
    scan(data_dir(), providers=["opencode"])
    assert _index_events() == incremental
