"""The Kilo Code CLI adapter: OpenCode's reader on Kilo's own store, proven on what Kilo 7.7.9 wrote.

The OpenCode reader itself is tested in ``test_opencode.py``; here: Kilo's homes and
override variables, its resume command, its extra tables never indexed, and the real
captures (``kilo-7.7.9``, ``kilo-7.7.9-compact``) scanned through the CLI.
"""

from __future__ import annotations

import shlex
import sqlite3
from pathlib import Path

import pytest

import synth
from synth import opencode as so
from tests.support.opencode_family import check_prompts, check_title, hits, install, scan_capture, sessions
from voyager_sessions.core.model import Session
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import PROVIDERS, get
from voyager_sessions.ingest.adapters.base import Notice, Source
from voyager_sessions.ingest.adapters.kilo import ADAPTER, probe


def test_registered_as_its_own_provider() -> None:
    assert "kilo" in PROVIDERS and get("kilo") is ADAPTER
    assert ADAPTER.name == "kilo" and manifest.row("kilo").label == "Kilo Code CLI"
    assert get("opencode") is not ADAPTER and get("opencode").name == "opencode"


def test_homes_in_order_and_the_overrides_are_authoritative(tmp_path: Path) -> None:
    home = tmp_path / "h"
    # The old VS Code extension's task folders are a home of their own (tests/ingest/test_kilo_legacy.py).
    legacy = {"VOYAGER_KILO_VSCODE_HOME": str(tmp_path / "no-extension")}
    assert ADAPTER.roots({"HOME": str(home), **legacy}) == [
        home / ".local/share/kilo/kilo.db",
        home / ".local/share/kilo/storage",
        tmp_path / "no-extension" / "tasks",
    ]
    xdg = {"HOME": str(home), "XDG_DATA_HOME": str(tmp_path / "xdg"), **legacy}
    assert ADAPTER.roots(xdg)[0] == tmp_path / "xdg" / "kilo" / "kilo.db"
    mine = {**xdg, "VOYAGER_KILO_HOME": str(tmp_path / "mine")}
    assert ADAPTER.roots(mine)[0] == tmp_path / "mine" / "kilo.db"
    # A database named outright: nothing else of the store is probed, and its absence is said.
    named = {**mine, "VOYAGER_KILO_DB": str(tmp_path / "nope.db")}
    assert ADAPTER.roots(named) == [tmp_path / "nope.db", tmp_path / "no-extension" / "tasks"]
    (notice,) = ADAPTER.discover(named)
    assert isinstance(notice, Notice) and notice.fatal and notice.reason.startswith("unreadable:")
    # OpenCode's variables are OpenCode's: they never point Kilo at opencode.db.
    (tmp_path / "oc").mkdir()
    so.write_v1(tmp_path / "oc" / "opencode.db", [synth.generate(1, 2, session_id="ses_x")])
    assert (
        list(
            ADAPTER.discover(
                {
                    "HOME": str(home),
                    "OPENCODE_DB": str(tmp_path / "oc" / "opencode.db"),
                    "VOYAGER_OPENCODE_HOME": str(tmp_path / "oc"),
                }
            )
        )
        == []
    )


def _kilo_db(path: Path, sid: str, directory: str) -> Path:
    """A Kilo database: OpenCode's v1 tables plus kilo_board, whose objective repeats the first prompt."""
    path.parent.mkdir(parents=True, exist_ok=True)
    w = so.V1Writer.create(path)
    w.session(sid, directory=directory, title="Child session - 2026-12-01T08:05:34.033Z", created=1_000, updated=2_000)
    w.message(sid, "msg_1", {"role": "user", "time": {"created": 1_000}}, 1_000)
    w.part(sid, "msg_1", "prt_1", {"type": "text", "text": '"kilo objective zanzibar \\"quoted\\" word"'}, 1_000)
    w.conn.executescript("""
        CREATE TABLE kilo_board (root_session_id text PRIMARY KEY, objective text NOT NULL,
          objective_message_id text, next_seq integer DEFAULT 1 NOT NULL, time_created integer NOT NULL,
          time_updated integer NOT NULL);
        CREATE TABLE kilo_board_message (id text PRIMARY KEY, board_root_session_id text NOT NULL,
          seq integer NOT NULL, time_created integer NOT NULL, sender_session_id text NOT NULL,
          recipient text NOT NULL, type text NOT NULL, body text NOT NULL);
    """)
    w.conn.execute("INSERT INTO kilo_board VALUES (?, 'kilo objective zanzibar', 'msg_1', 1, 0, 0)", (sid,))
    w.conn.execute(
        "INSERT INTO kilo_board_message VALUES ('b1', ?, 1, 0, ?, 'all', 'note', 'board zanzibar')", (sid, sid)
    )
    w.conn.close()
    return path


def test_hostile_ids_and_directories_resume_quoted(tmp_path: Path) -> None:
    sid = "ses_x'; touch /tmp/pwned #"
    directory = "/home/dev/a b;$(rm -rf ~)`id`\"'\n"
    db = _kilo_db(tmp_path / "kilo.db", sid, directory)
    (s,) = [
        i for i in ADAPTER.read(Source(provider="kilo", path=str(db), fingerprint=_fp(db))) if isinstance(i, Session)
    ]
    assert s.id == f"kilo:{sid}" and s.provider == "kilo"
    assert shlex.split(s.resume) == ["cd", directory, "&&", "kilo", "--session", sid]
    assert s.resume == f"cd {shlex.quote(directory)} && kilo --session {shlex.quote(sid)}"
    assert s.title is None and s.title_source is None  # the placeholder is no title
    assert probe(db) == "v1"


def test_kilo_board_is_never_indexed(home: Path, run) -> None:
    _kilo_db(home / ".local" / "share" / "kilo" / "kilo.db", "ses_kiloboard", "/home/dev/proj")
    scan_capture(run, "kilo")
    got = hits(run, "zanzibar")
    assert [(h["kind"], h["origin"]) for h in got] == [("user", "human")]  # the prompt once; no objective, no board
    assert not hits(run, "board")
    (s,) = sessions(run).values()
    assert s["title_source"] == "prompt" and s["title"] == 'kilo objective zanzibar "quoted" word'


def _fp(db: Path):
    from voyager_sessions.ingest.adapters.base import fingerprint

    return fingerprint(db, wal=True)


# ---------------------------------------------------------------------------
# the real captures
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["kilo-7.7.9", "kilo-7.7.9-compact"])
def test_real_capture(home: Path, run, name: str) -> None:
    truth = install(name, home)
    summary = scan_capture(run, "kilo")
    assert summary["providers"] == {"kilo": 1}
    turns = check_prompts(run, truth)
    main = turns[0]
    check_title(run, truth, main)
    s = sessions(run)[main]
    assert s["resume"] == f"cd /home/dev/proj && kilo --session {s['native_id']}"
    assert s["source"] == str(home / ".local" / "share" / "kilo" / "kilo.db")
    # The first prompt is also kilo_board.objective: still one event.
    board = sqlite3.connect(f"file:{home / '.local/share/kilo/kilo.db'}?mode=ro", uri=True)
    (objective,) = board.execute("SELECT objective FROM kilo_board").fetchone()
    board.close()
    assert truth["turns"][0]["prompt_marker"] in objective


def test_real_compaction_is_provider_text(home: Path, run) -> None:
    install("kilo-7.7.9-compact", home)
    scan_capture(run, "kilo")
    summary = hits(run, "SUMMARY_KILO33d91d")  # the summary the compaction call wrote, kept in `message`
    assert [(h["kind"], h["origin"]) for h in summary] == [("meta", "provider")]
    assert "<summary>" in summary[0]["snippet"] or "会话摘要" in summary[0]["snippet"]
    # The chunk summary Kilo deleted lives on only in the event log, which is never read.
    assert not hits(run, "SUMMARY_T2KILO33d91d")
    doc = run.json("show", summary[0]["session_id"], "--json")
    assert not [e for e in doc["events"] if e["origin"] == "human" and "SUMMARY" in e["text"]]
    # The compaction request (a user message whose only part is `compaction`) is no human turn.
    assert sum(e["kind"] == "user" for e in doc["events"]) == 2
