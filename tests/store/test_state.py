"""The state store under a long-lived process: its connection survives others opening, writing and closing."""

from __future__ import annotations

import os

import pytest

from tests.support.run import run_subprocess
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.core.paths import DataDir, data_dir
from voyager_sessions.store.state import StateStore


@pytest.mark.slow  # ~2 s: in the slow run, so the default run keeps to its budget
def test_a_long_lived_connection_survives_other_processes(home):
    # Opening the database again in the same process used to open() and close() the file,
    # which drops every POSIX lock the process holds on it; another process closing its
    # connection then deleted the WAL under the open one ("disk I/O error").
    claude = write_claude(home, claude_session_lines())
    write_codex(home, codex_session_lines())
    assert run_subprocess("scan", "-q").returncode == 0
    path = DataDir(data_dir()).state_db
    kept = StateStore(path)
    assert len(kept.sources()) == 2
    for round_ in range(6):
        again = StateStore(path)  # what a server does for a checkpoint or a second reader
        again.close()
        with claude.open("a") as fh:
            fh.write(claude_session_lines()[1].replace("我们的数据库迁移失败了", f"round {round_} zebra{round_}"))
        scan = run_subprocess("scan", "-q")
        assert scan.returncode == 0, scan.stderr
        search = run_subprocess("search", f"zebra{round_}", "--json", "--no-refresh")
        assert search.returncode == 0, search.stderr
        # The long-lived connection still reads, and sees what the others committed.
        rows = kept.conn.execute("SELECT count(*), sum(events) FROM sessions").fetchone()
        assert rows[0] == 2 and rows[1] >= 12 + round_
    kept.close()
    assert os.path.exists(path)


def test_a_data_dir_whose_path_holds_uri_characters_is_read_where_it_is(home, corpus, run, monkeypatch):
    """`?`, `#` and `%` in the data dir's path end an unquoted ``file:`` URI early: the read-only opens (search
    without refresh, doctor's integrity check) would read, and create, another file beside the data dir."""
    parent = home / "odd"
    parent.mkdir()
    ddir = parent / "da#ta?x%20"
    monkeypatch.setenv("VOYAGER_HOME", str(ddir))
    assert run("scan", "-q").exit_code == 0
    found = run("search", "--no-refresh", "--json", "ERR_CONN_REFUSED_42")
    assert found.exit_code == 0, found.stderr
    doctor = run("doctor")
    assert "state_db        ok" in doctor.stdout, doctor.stdout
    assert sorted(p.name for p in parent.iterdir()) == [ddir.name]


def test_a_state_db_from_before_agent_versions_is_upgraded_in_place(tmp_path):
    """The agent_version column is additive: an older state.db gains it, its sessions kept (NULL until read again)."""
    import sqlite3

    from voyager_sessions.store import state
    from voyager_sessions.store.db import connect

    path = tmp_path / "state.db"
    old = connect(path, state.MIGRATIONS[:3])  # the schema before m004
    old.execute("INSERT INTO sessions (id, provider, native_id, events) VALUES ('claude:a', 'claude', 'a', 3)")
    old.close()
    store = StateStore(path)
    try:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(state.MIGRATIONS)
        (rec,) = store.sessions_by_id(["claude:a"]).values()
        assert rec.events == 3 and rec.session.agent_version is None
        assert store.versions_seen() == {}
    finally:
        store.close()
    assert isinstance(sqlite3.connect(path).execute("SELECT agent_version FROM sessions").fetchone(), tuple)


def test_a_long_lived_reader_finds_titled_sessions_as_a_one_shot_one_does(tmp_path):
    """The server's readers keep the titles in memory (read again after a commit): the same answers, in id order."""
    from voyager_sessions.core.model import Session, SessionRecord

    titles = ["Fix the Tokenizer", "tokenizer 数据 pass", "100% done_ok", "a\\b path", "THE END", "", None, "x_y"]
    titles += [f"bulk title {i} the" for i in range(30)]
    titles.append("Ab" * 30_000 + " tail")  # a word of it is longer than the longest LIKE pattern SQLite takes

    def records(names):
        return [
            SessionRecord(session=Session(id=f"p:{i:03d}", provider="p", native_id=str(i), title=t), events=1)
            for i, t in enumerate(names)
        ]

    path = tmp_path / "state.db"
    writer = StateStore(path)
    writer.commit_scan(sessions=records(titles))
    oneshot, kept = StateStore(path), StateStore(path, lendable=True)
    queries = [["tokenizer"], ["TOKENIZER", "fix"], ["%"], ["_"], ["\\"], ["数据"], ["the"], ["the", "1"], [""], ["zz"]]
    queries += [["aB" * 26_000], ["ab" * 26_000, "TAIL"], ["ab" * 26_000 + "x"], ["支付" * 9_000]]
    queries += [["the", "zz", "fix"], ["tokenizer", "fix", "pass"], ["bulk", "title", "nowhere"], ["title", "the"]]
    kept.session_ids_titled(["warm"])  # the first ask after a commit is the query's; the second reads the titles
    for words in queries:
        assert kept.session_ids_titled(words) == oneshot.session_ids_titled(words), words
        assert kept.session_ids_titled(words, limit=3) == oneshot.session_ids_titled(words, limit=3), words
    assert kept.session_ids_titled(["tokenizer"]) == ["p:000", "p:001"]
    assert oneshot.session_ids_titled(["aB" * 26_000, "TAIL"]) == [f"p:{len(titles) - 1:03d}"]
    assert kept._titles_cache is not None  # answered from the titles kept in memory
    writer.commit_scan(sessions=records(["renamed"] + titles[1:]))  # another connection commits: read again
    assert kept.session_ids_titled(["fix"]) == [] and kept.session_ids_titled(["renamed"]) == ["p:000"]
    assert kept.session_ids_titled(["renamed", "RE"]) == ["p:000"] and kept._titles_cache.version == kept.data_version()
    for store in (writer, oneshot, kept):
        store.close()
    empty = StateStore(tmp_path / "empty.db", lendable=True)
    assert empty.session_ids_titled([""]) == empty.session_ids_titled([""]) == []  # nothing titled, asked twice
    empty.close()


def test_latest_of_is_when_each_session_was_last_active(tmp_path):
    """``latest_of`` (what breaks ties between search results) is ``updated``, else ``started``, else 0, whether
    a few sessions are asked about (looked up) or most of them (every row read once)."""
    from voyager_sessions.core.model import Session, SessionRecord

    def session(i: int) -> Session:
        updated = None if i % 3 == 0 else 1_700_000_000.0 + i
        started = None if i % 5 == 0 else 1_600_000_000.0 + i
        return Session(id=f"p:{i:04d}", provider="p", native_id=str(i), started=started, updated=updated)

    path = tmp_path / "state.db"
    store = StateStore(path)
    store.commit_scan(sessions=[SessionRecord(session=session(i), events=1) for i in range(1500)])
    want = {f"p:{i:04d}": session(i).updated or session(i).started or 0.0 for i in range(1500)}
    few = [f"p:{i:04d}" for i in range(0, 1500, 7)] + ["p:missing"]
    many = [f"p:{i:04d}" for i in range(1200)]
    assert store.latest_of(few) == {sid: want[sid] for sid in few if sid in want}
    assert store.latest_of(many) == {sid: want[sid] for sid in many}


def test_a_long_lived_reader_knows_when_sessions_were_active_as_a_one_shot_one_does(tmp_path):
    """The server's readers keep every session's recency in memory (read at the second ask after a commit, and
    again after the next): ``latest_of`` and ``newest`` answer as a one-shot reader's lookups do, never stale."""
    from voyager_sessions.core.model import Session, SessionRecord

    def records(shift: float) -> list[SessionRecord]:
        return [
            SessionRecord(
                session=Session(
                    id=f"p:{i:04d}",
                    provider="p",
                    native_id=str(i),
                    started=None if i % 5 == 0 else 1_600_000_000.0 + i,
                    updated=None if i % 3 == 0 else 1_700_000_000.0 + shift * i,
                ),
                events=1,
            )
            for i in range(400)
        ]

    path = tmp_path / "state.db"
    writer = StateStore(path)
    writer.commit_scan(sessions=records(1.0))
    oneshot, kept = StateStore(path), StateStore(path, lendable=True)
    asks = [[f"p:{i:04d}" for i in range(0, 400, k)] + ["p:gone"] for k in (1, 3, 7, 40)]
    for shift in (1.0, -1.0):  # then another connection commits: every session's recency changes
        if shift < 0:
            writer.commit_scan(sessions=records(shift))
        for ids in asks * 2:  # the first ask of many ids after a commit is looked up; the next reads them all
            assert kept.latest_of(ids) == oneshot.latest_of(ids)
            assert kept.newest(ids, 10) == oneshot.newest(ids, 10)
        assert kept._recency is not None and kept._recency[0] == kept.data_version()  # answered from the copy
    assert oneshot._recency is None  # a one-shot reader keeps none
    for store in (writer, oneshot, kept):
        store.close()


def test_newest_is_the_head_of_the_sessions_ordered_by_recency(tmp_path, monkeypatch):
    """``newest(ids, n)`` is the first ``n`` of ``ids`` ordered by ``latest_of`` (newest first, equal ones by id,
    ids not stored as never active), whether it looks the ids up (few, or sparse among all sessions) or walks
    the sessions newest first (many): sessions without ``updated`` or with 0 there, equal stamps at the cut."""
    import random

    from voyager_sessions.core.model import Session, SessionRecord

    rng = random.Random(3)

    def session(i: int) -> Session:
        updated = None if i % 11 == 0 else 0.0 if i % 13 == 0 else 1_700_000_000.0 + rng.randint(0, 900)
        started = None if i % 7 == 0 else 1_700_000_000.0 + rng.randint(0, 1200)
        return Session(id=f"p:{i:05d}", provider="p", native_id=str(i), started=started, updated=updated)

    store = StateStore(tmp_path / "state.db")
    made = [session(i) for i in range(6000)]
    store.commit_scan(sessions=[SessionRecord(session=s, events=1) for s in made])
    latest = {s.id: s.updated or s.started or 0.0 for s in made}
    walked = []
    execute = store.conn.execute

    class Spy:  # sqlite3.Connection's attributes are read-only: the store's connection is wrapped instead
        def execute(self, sql, *args):
            if "ORDER BY active DESC" in sql:
                walked.append(sql)
            return execute(sql, *args)

    monkeypatch.setattr(store, "conn", Spy())
    cases = [
        ([f"p:{i:05d}" for i in range(0, 6000, 3)] + ["p:gone"], 25),  # 2,001 of 6,000: walked
        ([f"p:{i:05d}" for i in range(5000)], 1),
        ([f"p:{i:05d}" for i in range(6000)] + ["p:gone", "p:also-gone"], 6002),  # every one, the unstored last
        ([f"p:{i:05d}" for i in range(0, 6000, 4)], 40),  # 1,500: looked up
        ([f"p:{i:05d}" for i in range(2500)], 2400),  # walking would read more than looking up
    ]
    for ids, n in cases:
        want = sorted(ids, key=lambda sid: (-latest.get(sid, 0.0), sid))[:n]
        assert store.newest(ids, n) == want, (len(ids), n)
        assert store.newest(set(ids), n) == want
    assert len(walked) == 6  # the first three cases, twice each
    assert store.newest([], 5) == [] and store.newest(["p:00001"], 0) == []


def test_a_state_db_left_by_the_build_before_active_stamps_migrates_forward(tmp_path):
    """A state.db at m009 (what main's build leaves) gains ``active`` in m010: a session's stamp, no later than
    its source file's modification time; the order of ``list`` follows it. A development build's state.db that
    numbered the column m009 (so has it, without main's m009) migrates too, its rows kept."""
    import sqlite3

    from voyager_sessions.store import state
    from voyager_sessions.store.db import connect

    assert [m.__name__ for m in state.MIGRATIONS[8:10]] == ["m009_resume_without_foreign_options", "m010_active"]
    path = tmp_path / "state.db"
    old = connect(path, state.MIGRATIONS[:9])
    mtime = 1_700_000_000.0
    old.execute(
        "INSERT INTO sources (path, provider, size, mtime_ns, inode, indexed_at) VALUES ('/s/a.jsonl', 'codex', 1, ?, 1, ?)",
        (int(mtime * 1e9), mtime + 60),
    )
    old.executemany(
        "INSERT INTO sessions (id, provider, native_id, source, updated, events, resume) VALUES (?, 'codex', ?, ?, ?, 1, ?)",
        [
            ("codex:future", "future", "/s/a.jsonl", 253_402_214_400.0, "codex resume future"),  # 9999-12-31
            ("codex:past", "past", "/s/a.jsonl", mtime - 3600, "codex resume past"),
            ("codex:orphan", "orphan", None, mtime - 7200, None),
        ],
    )
    old.commit()
    old.close()
    store = StateStore(path)
    try:
        assert store.conn.execute("PRAGMA user_version").fetchone()[0] == len(state.MIGRATIONS)
        got = dict(store.conn.execute("SELECT id, active FROM sessions"))
        assert got["codex:future"] == pytest.approx(mtime + state.MTIME_SLACK_S)
        assert got["codex:past"] == pytest.approx(mtime - 3600)
        assert got["codex:orphan"] == pytest.approx(mtime - 7200)
        assert store.sessions_by_id(["codex:past"])["codex:past"].session.resume == "codex resume past"
    finally:
        store.close()

    dev = tmp_path / "dev.db"
    conn = connect(dev, state.MIGRATIONS[:8])
    conn.execute("ALTER TABLE sessions ADD COLUMN active REAL")
    conn.execute(
        "INSERT INTO sessions (id, provider, native_id, events, updated, active) VALUES ('codex:d', 'codex', 'd', 1, 5.0, 9.0)"
    )
    conn.execute("PRAGMA user_version = 9")
    conn.commit()
    conn.close()
    StateStore(dev).close()
    db = sqlite3.connect(dev)
    assert db.execute("PRAGMA user_version").fetchone()[0] == len(state.MIGRATIONS)
    assert db.execute("SELECT events, active FROM sessions WHERE id = 'codex:d'").fetchone() == (1, 5.0)  # recomputed
    db.close()


def test_a_session_attribute_filter_keeps_the_sessions_one_of_its_columns_contains_the_text_in(tmp_path):
    """``session_ids_where`` (what ``repo:``, ``cwd:`` … resolve to): any of the columns contains the text,
    case-insensitively, a missing attribute never does; it turns only the columns it knows into SQL, and every
    column of ``core.filters`` is one of them."""
    from voyager_sessions.core.filters import SESSION_FILTERS
    from voyager_sessions.core.model import Session, SessionRecord
    from voyager_sessions.store.state import MATCHABLE

    rows = [
        Session(id="p:1", provider="p", native_id="1", cwd="/home/me/Voyager", git_repo=None),
        Session(id="p:2", provider="p", native_id="2", cwd="/tmp/x", git_repo="github.com/me/voyager"),
        Session(id="p:3", provider="p", native_id="3", cwd=None, git_repo=None, git_branch="Feature/VOY-1"),
        Session(id="p:4", provider="p", native_id="4", cwd="/srv/100%_done", git_branch="main"),
    ]
    store = StateStore(tmp_path / "state.db")
    store.commit_scan(sessions=[SessionRecord(session=s, events=1) for s in rows])
    assert sorted(store.session_ids_where(("git_repo", "cwd"), "VOYAGER")) == ["p:1", "p:2"]
    assert store.session_ids_where(("cwd",), "voyager") == ["p:1"]
    assert store.session_ids_where(("git_branch",), "voy-1") == ["p:3"]
    assert store.session_ids_where(("cwd",), "%_") == ["p:4"]  # the text as typed, not a LIKE pattern
    assert store.session_ids_where(("git_branch",), "nowhere") == []
    for bad in (("cwd; DROP TABLE sessions",), ("native_id",), ()):
        with pytest.raises(ValueError):
            store.session_ids_where(bad, "x")
    assert all(set(f.columns) <= MATCHABLE and f.columns for f in SESSION_FILTERS)
    store.close()


def test_a_refresh_reads_the_stat_columns_from_the_covering_index(tmp_path):
    """The rows every refresh compares with come from ``sources_fresh`` alone, never row by row from the table."""
    from voyager_sessions.store import state

    store = StateStore(tmp_path / "state.db")
    try:
        sql = state._FRESH_SQL + " WHERE provider = ? AND status != 'retry'"
        plan = " ".join(row[-1] for row in store.conn.execute("EXPLAIN QUERY PLAN " + sql, ("claude",)))
        assert "COVERING INDEX sources_fresh" in plan, plan
    finally:
        store.close()
