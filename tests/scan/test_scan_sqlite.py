"""Multi-session databases: a rescan re-reads only the sessions whose own rows changed."""

from __future__ import annotations

import json
import sqlite3

import pytest

import synth
from synth import opencode as synth_opencode
from voyager_sessions.core.paths import DataDir, data_dir
from voyager_sessions.scan import scan
from voyager_sessions.search.index import SearchIndex


def _index_events():
    ix = SearchIndex(DataDir(data_dir()).index, create=False)
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
    conn.execute(
        f"UPDATE {table} SET title = 'zanzibar retitled', time_updated = time_updated + 1 WHERE id = 'ses_0002abcdef'"
    )
    conn.execute(f"DELETE FROM {table} WHERE id = 'ses_0004abcdef'")
    conn.commit()
    conn.close()
    second = scan(data_dir(), providers=["opencode"])
    assert second.changed == 1
    assert second.events_added <= per_session + 2  # one session read again, not five
    assert second.sessions == 4
    from voyager_sessions.store.state import StateStore

    store = StateStore(DataDir(data_dir()).state_db)
    assert (
        store.sessions_by_id(["opencode:ses_0002abcdef"])["opencode:ses_0002abcdef"].session.title
        == "zanzibar retitled"
    )
    assert store.sessions_by_id(["opencode:ses_0004abcdef"]) == {}
    store.close()
    incremental = _index_events()
    assert not any(s == "opencode:ses_0004abcdef" for s, _, _ in incremental)

    # The same index as a scan from scratch.
    monkeypatch.setenv("VOYAGER_HOME", str(home / "fresh"))
    scan(data_dir(), providers=["opencode"])
    assert _index_events() == incremental


@pytest.mark.parametrize("part_session_id", [True, False], ids=["part-has-session_id", "parts-joined-to-messages"])
def test_a_new_turn_rereads_only_the_end_of_its_session(home, monkeypatch, part_session_id):
    db = home / "oc" / "opencode.db"
    db.parent.mkdir()
    monkeypatch.setenv("VOYAGER_OPENCODE_DB", str(db))
    conv = synth.generate(seed=5, messages=40, session_id="ses_0000longone")
    synth_opencode.write_v1(db, [conv])
    conn = sqlite3.connect(db)
    if not part_session_id:  # a schema whose parts name only their message
        conn.executescript("DROP INDEX part_session_idx; ALTER TABLE part DROP COLUMN session_id;")
    first = scan(data_dir(), providers=["opencode"])
    total = first.events_added

    last_ms = conn.execute("SELECT max(time_created) FROM message").fetchone()[0]

    def add_part(mid: str, pid: str, text: str, ms: int) -> None:
        cols = "id, message_id, time_created, time_updated, data" + (", session_id" if part_session_id else "")
        values = (pid, mid, ms, ms, json.dumps({"type": "text", "text": text})) + (
            ("ses_0000longone",) if part_session_id else ()
        )
        conn.execute(f"INSERT INTO part ({cols}) VALUES ({', '.join('?' * len(values))})", values)

    def add_turn(n: int, text: str) -> None:
        w = synth_opencode.V1Writer(conn)
        mid = f"msg_zzzz{n:04d}"
        w.message("ses_0000longone", mid, {"role": "user", "time": {"created": last_ms + n}}, last_ms + n)
        add_part(mid, f"prt_zzzz{n:04d}", text, last_ms + n)
        conn.execute("UPDATE session SET time_updated = ? WHERE id = 'ses_0000longone'", (last_ms + n,))
        conn.commit()

    add_turn(1, "a brand new question about quasars")
    second = scan(data_dir(), providers=["opencode"])
    # The tail (the last message, read again, and the new one), not the whole session.
    assert second.changed == 1 and second.events_added <= 8 < total and second.events_removed <= 7, second
    assert search_total("quasars") == 1

    # The streaming reply's part grows in place: still only the tail.
    conn.execute(
        "UPDATE part SET data = json_set(data, '$.text', 'a brand new question about quasars and pulsars'), "
        "time_updated = time_updated + 1 WHERE id = 'prt_zzzz0001'"
    )
    conn.commit()
    third = scan(data_dir(), providers=["opencode"])
    assert third.events_added <= 2 and search_total("pulsars") == 1 and search_total("quasars") == 1

    # Another turn: still only the tail (the resume point moved on with the last read).
    add_turn(2, "and one about nebulae")
    assert scan(data_dir(), providers=["opencode"]).events_added <= 8 and search_total("nebulae") == 1

    # An old part edited by a single millisecond: the whole session is read again.
    conn.execute(
        "UPDATE part SET data = json_set(data, '$.text', 'rewritten history'), time_updated = time_updated + 1 "
        "WHERE id = (SELECT min(id) FROM part)"
    )
    conn.commit()
    fourth = scan(data_dir(), providers=["opencode"])
    assert fourth.events_added >= total and search_total("rewritten history") == 1

    # A part added to an old message, nothing else touched: read again too.
    first_mid = conn.execute("SELECT id FROM message ORDER BY time_created, id LIMIT 1").fetchone()[0]
    add_part(first_mid, "prt_0000inserted", "a late footnote on magnetars", last_ms - 10**6)
    conn.commit()
    conn.close()
    fifth = scan(data_dir(), providers=["opencode"])
    assert fifth.events_added >= total and search_total("magnetars") == 1
    incremental = _index_events()
    assert len(incremental) == len(set((s, q) for s, q, _ in incremental))

    monkeypatch.setenv("VOYAGER_HOME", str(home / "fresh"))
    scan(data_dir(), providers=["opencode"])
    assert _index_events() == incremental


def search_total(q: str) -> int:
    from voyager_sessions.api import SearchRequest, search

    return search(SearchRequest(query=q, refresh=False), data_dir=data_dir()).total


@pytest.mark.parametrize("stored", ["real-seconds", "iso-text"])
def test_an_old_edit_within_the_same_second_is_noticed_whatever_the_time_type(home, monkeypatch, stored):
    """Update times stored as REAL seconds or ISO text (not OpenCode's integer ms) still sign every edit."""
    db = home / "oc" / "opencode.db"
    db.parent.mkdir()
    monkeypatch.setenv("VOYAGER_OPENCODE_DB", str(db))
    synth_opencode.write_v1(db, [synth.generate(seed=9, messages=30, session_id="ses_0000timetypes")])
    conn = sqlite3.connect(db)
    to_type = (
        "time_updated / 1000.0"
        if stored == "real-seconds"
        else "strftime('%Y-%m-%dT%H:%M:%f', time_updated / 1000.0, 'unixepoch')"
    )
    conn.executescript(f"UPDATE message SET time_updated = {to_type}; UPDATE part SET time_updated = {to_type};")
    conn.commit()
    total = scan(data_dir(), providers=["opencode"]).events_added

    # A new turn (resumable on its own) together with an old part edited 0.25 s later.
    last_ms = conn.execute("SELECT max(time_created) FROM message").fetchone()[0]
    w = synth_opencode.V1Writer(conn)
    w.message("ses_0000timetypes", "msg_zzzz0001", {"role": "user", "time": {"created": last_ms + 1}}, last_ms + 1)
    w.part("ses_0000timetypes", "msg_zzzz0001", "prt_zzzz0001", {"type": "text", "text": "about quasars"}, last_ms + 1)
    bump = (
        "time_updated + 0.25"
        if stored == "real-seconds"
        else ("strftime('%Y-%m-%dT%H:%M:%f', julianday(time_updated) + 0.25 / 86400)")
    )
    conn.execute(
        f"UPDATE part SET data = json_set(data, '$.text', 'rewritten history'), time_updated = {bump} "
        "WHERE id = (SELECT min(id) FROM part)"
    )
    conn.commit()
    conn.close()
    again = scan(data_dir(), providers=["opencode"])
    assert again.events_added >= total and search_total("rewritten history") == 1 and search_total("quasars") == 1
