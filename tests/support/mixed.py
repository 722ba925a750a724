"""A mixed corpus of every kind of source, and what a scan left behind it, compared across ways of scanning.

:class:`Corpus` writes Claude Code and Codex files, an OpenCode database and an OpenCode JSON tree
(hostile lines and an empty file among them) and changes them the way agents do between two
scans; :func:`scan_each` scans it into one data dir per setting and returns, for each, the
summary, every stored event and what a few searches find, and every state row: two ways of
scanning (worker counts, one pass or two phases) must leave them equal.
"""

from __future__ import annotations

import os
import sqlite3
import time
from pathlib import Path

import msgspec

import synth
from synth import opencode as synth_opencode
from tests.support.sessions import claude_session_lines, codex_session_lines, write_claude, write_codex
from voyager_sessions.core.paths import DataDir
from voyager_sessions.scan import scan
from voyager_sessions.search.index import SearchIndex


class Corpus:
    """Claude Code and Codex files, an OpenCode SQLite database and an OpenCode JSON tree under one HOME."""

    def __init__(self, home: Path, monkeypatch) -> None:
        self.home = home
        self.projects = home / ".claude" / "projects"
        self.codex = home / ".codex"
        self.db = home / "oc-home" / "opencode.db"
        self.db.parent.mkdir()
        self.storage = home / "oc-home" / "storage"
        monkeypatch.setenv("VOYAGER_OPENCODE_HOME", str(self.db.parent))
        self.claude = [synth.generate(seed=300 + i, messages=20 + 15 * i, output_bytes=600) for i in range(4)]
        self.codex_convs = [synth.generate(seed=400 + i, messages=25 + 10 * i) for i in range(3)]
        for conv in self.claude:
            synth.write_claude(conv, self.projects)
        for conv in self.codex_convs:
            synth.write_codex(conv, self.codex)
        write_claude(home, claude_session_lines())  # CJK prompt, tool error, thinking
        write_codex(home, codex_session_lines())
        bad = synth.write_claude(synth.generate(seed=500, messages=12), self.projects)
        with open(bad, "ab") as fh:  # a torn line and garbage: named, the rest kept
            fh.write(b'{"type": "user", "message": \n\x00\x00garbage\n')
        (self.projects / "-home-dev-empty").mkdir()
        (self.projects / "-home-dev-empty" / "empty.jsonl").write_bytes(b"")
        self.oc = [
            synth.generate(seed=600 + i, messages=14 + 4 * i, session_id=f"ses_{i:04d}mixedcorpus") for i in range(4)
        ]
        synth_opencode.write_v1(self.db, self.oc)
        tree = [synth.generate(seed=700 + i, messages=10, session_id=f"ses_{i:04d}jsontree") for i in range(2)]
        synth_opencode.write_json_tree(self.storage, tree)

    def change(self) -> None:
        """What happens between two scans: a session grows, one is rewritten, one is deleted, rows change, one is new."""
        grown = self.claude[1]
        more = synth.generate(seed=901, messages=9, session_id=grown.id)
        self.claude[1] = msgspec.structs.replace(grown, turns=grown.turns + more.turns)
        with open(synth.write_claude(self.claude[1], self.projects), "ab") as fh:
            fh.write(b"{not json at all}\n")  # named in a notice, in its place in the stream
        old = self.codex_convs[0]
        self.codex_convs[0] = synth.generate(seed=902, messages=18, session_id=old.id)
        path = synth.write_codex(self.codex_convs[0], self.codex)
        os.utime(path, ns=(time.time_ns(), time.time_ns() + 10**9))  # rewritten, not only grown
        gone = next(self.projects.rglob(f"{self.claude[3].id}.jsonl"))
        gone.unlink()
        synth.write_claude(synth.generate(seed=903, messages=16), self.projects)
        conn = sqlite3.connect(self.db)
        conn.execute(
            "UPDATE session SET title = 'retitled zanzibar', time_updated = time_updated + 1 "
            "WHERE id = 'ses_0001mixedcorpus'"
        )
        conn.execute("DELETE FROM session WHERE id = 'ses_0003mixedcorpus'")
        conn.commit()
        conn.close()
        w = synth_opencode.V1Writer(synth_opencode.connect(self.db))
        synth_opencode.add_v1(w, synth.generate(seed=904, messages=12, session_id="ses_0009mixedcorpus"))
        # A new turn at the end of a session: only its tail is read again (the adapter's Partial).
        last = w.conn.execute(
            "SELECT max(time_created) FROM message WHERE session_id = 'ses_0002mixedcorpus'"
        ).fetchone()[0]
        w.message("ses_0002mixedcorpus", "msg_zzzz0001", {"role": "user", "time": {"created": last + 1}}, last + 1)
        w.part(
            "ses_0002mixedcorpus",
            "msg_zzzz0001",
            "prt_zzzz0001",
            {"type": "text", "text": "late quasar question"},
            last + 1,
        )
        w.conn.execute("UPDATE session SET time_updated = ? WHERE id = 'ses_0002mixedcorpus'", (last + 1,))
        w.conn.commit()
        w.conn.close()


def state_rows(data: Path) -> dict:
    """Every state row but the times it was written."""
    conn = sqlite3.connect(DataDir(data).state_db)
    conn.row_factory = sqlite3.Row
    out = {}
    for table, key in (("sources", "path"), ("sessions", "id")):
        rows = conn.execute(f"SELECT * FROM {table} ORDER BY {key}").fetchall()
        out[table] = [{k: r[k] for k in r.keys() if k != "indexed_at"} for r in rows]
    conn.close()
    return out


def index_contents(data: Path) -> list[tuple]:
    """Every stored event of the index, and what a few searches find (the analyzed body is not stored)."""
    from voyager_sessions.api import SearchRequest, search

    ix = SearchIndex(DataDir(data).index, create=False)
    events = sorted(msgspec.json.encode(e) for sid in ix.iter_session_ids() for e in ix.session_events(sid))
    found = []
    for q in (
        "数据库",
        "ERR_VOYAGER_00012",
        '"self.conn"',
        "インデックス",
        "retitled zanzibar",
        "kind:tool pytest",
        "quasar",
    ):
        res = search(SearchRequest(query=q, limit=1000, refresh=False), data_dir=data)
        # Which hits make the first 1,000 depends on scores, and deleted documents weigh in them until a
        # merge: an index repaired by a rescan ranks alike but not identically. Compare all hits or none.
        hits = sorted((h.session_id, h.seq) for h in res.hits) if res.total <= 1000 else None
        found.append((q, res.total, hits))
    return events + [msgspec.json.encode(found)]


def summary_of(s) -> dict:
    d = msgspec.structs.asdict(s)
    d.pop("seconds")
    d["skipped"] = [msgspec.structs.asdict(k) for k in s.skipped]
    return d


def scan_each(home: Path, counts: tuple[int, ...], tag: str) -> dict[int, tuple]:
    out = {}
    for n in counts:
        data = home / f"data-{n}"
        summary = scan(data, workers=n)
        out[n] = (summary_of(summary), index_contents(data), state_rows(data))
    return out
