"""The Cursor adapter (documented): peers' samples, and stores written here in each documented shape.

Editor ``state.vscdb`` (composers + bubbles, the legacy chat panel), the CLI's ``store.db``
(hex metadata, a protobuf tree of content-addressed JSON messages), agent transcripts
(JSONL, text, subagents). Every scan goes through the real CLI; every provider file must
be byte-identical afterwards with nothing created beside it.
"""

from __future__ import annotations

import hashlib
import json
import shlex
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.support.items import write
from tests.support.peers import PeerHome, check_markers, tree
from tests.support.samples.cursor import CLI_MESSAGES, cli_store, kv_db, msg
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest import sqlite as sqlite_kit
from voyager_sessions.ingest.adapters import cursor as cursor_pkg
from voyager_sessions.ingest.adapters.cursor import ADAPTER, cli, ide, probe, transcripts

APP = Path(".config/Cursor/User")

# ---------------------------------------------------------------------------
# builders (the shapes docs/agents.md and the peers document)
# ---------------------------------------------------------------------------


def composer(
    cid: str,
    name: str,
    bubbles: list[tuple[str, dict[str, Any]]],
    *,
    listed: list[str] | None = None,
    updated: int = 1_767_225_700_000,
) -> dict[str, Any]:
    """``composerData:<cid>`` and its ``bubbleId:`` rows; ``listed`` = the header's bubble ids (default: all)."""
    order = listed if listed is not None else [bid for bid, _ in bubbles]
    rows: dict[str, Any] = {
        f"composerData:{cid}": {
            "_v": 3,
            "composerId": cid,
            "name": name,
            "createdAt": 1_767_225_600_000,
            "lastUpdatedAt": updated,
            "fullConversationHeadersOnly": [
                {"bubbleId": b, "type": dict(bubbles).get(b, {}).get("type", 2)} for b in order
            ],
        }
    }
    for bid, bubble in bubbles:
        rows[f"bubbleId:{cid}:{bid}"] = {"_v": 3, "bubbleId": bid, **bubble}
    return rows


def ide_home(home: Path) -> dict[str, Any]:
    """A global database with one realistic composer (CJK, thinking, a terminal tool, a reverted turn), a NULL
    composer, a corrupt one, and a workspace that opened the composer (its cwd)."""
    cid = "6f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e5f"
    rows = composer(
        cid,
        "数据库迁移",
        [
            ("u1", {"type": 1, "text": "数据库迁移失败了 PROMPTCURIDE", "createdAt": "2026-01-01T10:00:00Z"}),
            (
                "a1",
                {
                    "type": 2,
                    "text": "",
                    "thinking": {"text": "THINKCURIDE the schema first"},
                    "modelInfo": {"modelName": "claude-4-sonnet"},
                    "tokenCount": {"inputTokens": 120, "outputTokens": 30},
                },
            ),
            (
                "a2",
                {
                    "type": 2,
                    "text": "",
                    "toolFormerData": {
                        "tool": 15,
                        "name": "run_terminal_cmd",
                        "toolCallId": "toolu_1",
                        "status": "completed",
                        "rawArgs": json.dumps(
                            {"command": "pytest -q tests/migrate", "explanation": "run the migration tests"}
                        ),
                        "result": json.dumps({"output": "TOOLOUTCURIDE 3 passed", "exitCodeV2": 0}),
                    },
                },
            ),
            ("bad", {"type": 2}),
            ("ax", {"type": 2, "text": "STALEREVERTEDCUR an answer the user reverted"}),
            (
                "a3",
                {"type": 2, "text": "REPLYCURIDE 修好了: the guard was missing", "createdAt": "2026-01-01T10:00:09Z"},
            ),
        ],
        listed=["u1", "a1", "a2", "bad", "a3"],
    )
    rows[f"bubbleId:{cid}:bad"] = "{not json"
    rows["composerData:nullcomposer"] = None
    rows["composerData:broken"] = "{{{"
    rows["agentKv:blob:0f"] = b"\x00\x01binary"
    db = kv_db(home / APP / "globalStorage" / "state.vscdb", rows, {"some.editor.state": "{}"})
    ws = home / APP / "workspaceStorage" / "a1b2"
    kv_db(ws / "state.vscdb", items={"composer.composerData": {"allComposers": [{"composerId": cid}]}})
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/%E6%95%B0%E6%8D%AE%20app"}))
    return {"db": db, "cid": cid}


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t}


# ---------------------------------------------------------------------------
# peers' samples
# ---------------------------------------------------------------------------


def test_peer_samples_every_marker_and_variant(home, run):
    peer = PeerHome("cursor", home, run)
    check_markers(peer, "cursor", subagent_turns=("subagent",))
    assert peer.scan["failed"] == 0 and peer.scan["skipped"] == [], peer.scan
    assert tree(home) == peer.before  # read-only: byte-identical, nothing created
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "cursor")
    assert report["evidence"] == "documented" and not report["problems"] and not report["failed_sources"]
    # Which documented variant each store turned out to be.
    assert report["shapes"] == {
        "composer-bubbles": 1,
        "aichat-legacy": 1,
        "cli-flat": 1,
        "cli-empty": 1,
        "transcript-jsonl": 2,
        "subagent-transcript-jsonl": 1,
    }, report["shapes"]


# ---------------------------------------------------------------------------
# the editor's state.vscdb
# ---------------------------------------------------------------------------


def test_ide_composer_bubbles_mapped(home, run):
    built = ide_home(home)
    before = tree(home)
    doc = scan(run)
    sid = f"cursor:{built['cid']}"
    assert one(run, "PROMPTCURIDE", "user", "human")["session_id"] == sid
    assert one(run, "数据库迁移失败了", "user", "human")["session_id"] == sid
    assert one(run, "THINKCURIDE", "reasoning")["session_id"] == sid
    call = one(run, "pytest", "tool_call")
    assert call["tool"] == "run_terminal_cmd" and call["snippet"].startswith("pytest -q tests/migrate")
    out = one(run, "TOOLOUTCURIDE", "tool_result")
    assert out["exit_code"] == 0
    assert one(run, "REPLYCURIDE", "assistant")["session_id"] == sid
    assert hits(run, "STALEREVERTEDCUR") == []  # a bubble the header no longer lists
    s = sessions(run)[sid]
    assert s["cwd"] == "/home/dev/数据 app" and s["model"] == "claude-4-sonnet" and s["title"] == "数据库迁移"
    assert s["resume"] is None
    # The corrupt composer and bubble are named; their neighbours are indexed; the NULL one is silent.
    assert "composerData:broken" in doc["stderr"] and f"bubbleId:{built['cid']}:bad" in doc["stderr"]
    assert "nullcomposer" not in doc["stderr"] and "agentKv" not in doc["stderr"]
    assert doc["failed"] == 0
    assert tree(home) == before
    assert probe(built["db"]) == "composer-bubbles"


def test_ide_rows_still_in_the_wal_are_read(home, run):
    db = home / APP / "globalStorage" / "state.vscdb"
    kv_db(db)
    writer = sqlite3.connect(db)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("PRAGMA wal_autocheckpoint=0")
    for key, value in composer("c-wal", "wal", [("u", {"type": 1, "text": "WALONLYCUR prompt"})]).items():
        writer.execute("INSERT INTO cursorDiskKV VALUES (?, ?)", (key, json.dumps(value)))
    writer.commit()
    try:
        assert Path(f"{db}-wal").stat().st_size > 0
        wal_before = hashlib.sha256(Path(f"{db}-wal").read_bytes()).hexdigest()
        main_before = hashlib.sha256(db.read_bytes()).hexdigest()
        scan(run)
        assert one(run, "WALONLYCUR", "user", "human")["session_id"] == "cursor:c-wal"
        assert hashlib.sha256(Path(f"{db}-wal").read_bytes()).hexdigest() == wal_before
        assert hashlib.sha256(db.read_bytes()).hexdigest() == main_before
    finally:
        writer.close()


def test_changed_database_rereads_only_changed_composers(home, run, monkeypatch):
    db = kv_db(
        home / APP / "globalStorage" / "state.vscdb",
        {
            **composer(
                "c-a", "a", [("u", {"type": 1, "text": "KEEPCURA question"}), ("r", {"type": 2, "text": "answer a"})]
            ),
            **composer(
                "c-b", "b", [("u", {"type": 1, "text": "first CHANGECURB"}), ("r", {"type": 2, "text": "answer b"})]
            ),
        },
    )
    scan(run)
    read: list[str] = []
    real = ide._bubble_rows
    monkeypatch.setattr(ide, "_bubble_rows", lambda conn, cid: read.append(cid) or real(conn, cid))
    # The editor appends a turn to b: a new bubble row, and the header lists it.
    rows = composer(
        "c-b",
        "b",
        [
            ("u", {"type": 1, "text": "first CHANGECURB"}),
            ("r", {"type": 2, "text": "answer b"}),
            ("u2", {"type": 1, "text": "追问 SECONDCURB"}),
        ],
        updated=1_767_225_800_000,
    )
    kv_db(db, rows)
    doc = scan(run)
    assert doc["changed"] == 1 and read == ["c-b"], (doc, read)
    assert doc["events_added"] == 3 and doc["events_removed"] == 2, doc
    assert one(run, "SECONDCURB", "user", "human")["session_id"] == "cursor:c-b"
    assert one(run, "KEEPCURA", "user", "human")["session_id"] == "cursor:c-a"
    # A bubble rewritten in place (the table replaces the row), its header untouched, is seen too.
    read.clear()
    kv_db(db, {"bubbleId:c-a:r": {"type": 2, "text": "answer a, EDITEDCURA"}})
    doc = scan(run)
    assert read == ["c-a"] and one(run, "EDITEDCURA", "assistant")["session_id"] == "cursor:c-a"

    # Nothing changed: the stat pass decides, no database is opened at all.
    def refuse(*args, **kwargs):
        raise AssertionError("a no-op rescan opened a database")

    for module in (ide, cli, transcripts, sqlite_kit):  # the kit's opener too: open_store calls it
        monkeypatch.setattr(module, "connect_readonly", refuse)
    doc = scan(run)
    assert doc["unchanged"] == doc["sources"] and doc["changed"] == doc["new"] == 0


def test_invalid_utf8_costs_only_its_own_bytes(home, run):
    db = kv_db(
        home / APP / "globalStorage" / "state.vscdb",
        composer(
            "c-u", "u", [("u", {"type": 1, "text": "placeholder"}), ("r", {"type": 2, "text": "UTFNEIGHBOURCUR ok"})]
        ),
    )
    conn = sqlite3.connect(db)
    bad = json.dumps({"type": 1, "text": "UTFBROKENCUR "}).encode().replace(b"CUR ", b"CUR \xff\xfe bytes")
    conn.execute("UPDATE cursorDiskKV SET value = CAST(? AS TEXT) WHERE key = 'bubbleId:c-u:u'", (bad,))
    conn.commit()
    conn.close()
    doc = scan(run)
    assert doc["failed"] == 0
    assert one(run, "UTFNEIGHBOURCUR", "assistant")["session_id"] == "cursor:c-u"
    assert "\ufffd" in one(run, "UTFBROKENCUR", "user", "human")["snippet"]


def test_empty_stores_are_quiet(home, run):
    kv_db(
        home / APP / "globalStorage" / "state.vscdb",
        {"composerData:draft": {"composerId": "draft", "name": "draft"}},
        {"workbench.editor.state": "{}"},
    )
    kv_db(home / APP / "workspaceStorage" / "w1" / "state.vscdb", items={"other": "1"})
    store = home / ".cursor" / "chats" / ("0" * 32) / "fresh" / "store.db"
    store.parent.mkdir(parents=True)
    conn = sqlite3.connect(store)
    conn.execute("CREATE TABLE blobs (id TEXT PRIMARY KEY, data BLOB)")
    conn.execute("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT)")
    conn.commit()
    conn.close()
    doc = scan(run)
    assert doc["sources"] == 3 and doc["sessions"] == 0 and doc["failed"] == 0 and doc["skipped"] == [], doc
    assert probe(home / APP / "globalStorage" / "state.vscdb") == "composer-inline"
    assert probe(home / APP / "workspaceStorage" / "w1" / "state.vscdb") == "no-chat"
    assert probe(store) == "cli-empty"


def test_legacy_chat_panel(home, run):
    ws = home / APP / "workspaceStorage" / "w9"
    kv_db(
        ws / "state.vscdb",
        items={
            "workbench.panel.aichat.view.aichat.chatdata": {
                "tabs": [
                    {
                        "tabId": "t-1",
                        "chatTitle": "旧的聊天",
                        "bubbles": [
                            {"type": "user", "text": "旧问题 LEGACYPROMPTCUR"},
                            {"type": "ai", "rawText": "LEGACYREPLYCUR 回答"},
                            {"type": "mystery", "text": "?"},
                        ],
                    }
                ]
            }
        },
    )
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///srv/old"}))
    doc = scan(run)
    assert one(run, "LEGACYPROMPTCUR", "user", "human")["session_id"] == "cursor:aichat-t-1"
    assert one(run, "LEGACYREPLYCUR", "assistant")["session_id"] == "cursor:aichat-t-1"
    assert sessions(run)["cursor:aichat-t-1"]["cwd"] == "/srv/old"
    assert "mystery" in doc["stderr"]  # an unknown bubble type is named, not guessed


# ---------------------------------------------------------------------------
# the CLI's store.db
# ---------------------------------------------------------------------------


def test_cli_store_tree(home, run):
    store = cli_store(
        home / ".cursor" / "chats" / hashlib.md5("/home/dev/登录 app".encode()).hexdigest() / "chat-1" / "store.db",
        CLI_MESSAGES,
        stale=[{"role": "user", "content": "<user_query>STALEREWOUNDCUR</user_query>"}],
        workspace="file:///home/dev/%E7%99%BB%E5%BD%95%20app",
    )
    before = tree(home)
    scan(run)
    assert one(run, "PROMPTCURCLI", "user", "human")["session_id"] == "cursor:chat-1"
    assert one(run, "请修复登录", "user", "human")
    assert one(run, "USERINFOCUR", "meta", "provider")  # Cursor's context around the query
    assert one(run, "THINKCURCLI", "reasoning")
    call = one(run, "auth", "tool_call")
    assert call["tool"] == "Shell" and call["snippet"].startswith("pytest -q auth")
    assert one(run, "TOOLOUTCURCLI", "tool_result")["exit_code"] is None  # none recorded: none invented
    assert one(run, "REPLYCURCLI", "assistant")
    assert hits(run, "STALEREWOUNDCUR") == [] and hits(run, "SYSTEMPROMPTCUR") == []
    s = sessions(run)["cursor:chat-1"]
    assert s["cwd"] == "/home/dev/登录 app" and s["title"] == "迁移 chat" and s["model"] == "gpt-5"
    assert shlex.split(s["resume"]) == ["cd", "/home/dev/登录 app", "&&", "cursor-agent", "--resume", "chat-1"]
    assert tree(home) == before
    assert probe(store) == "cli-tree"


HOSTILE = ["a b;c", "$(touch pwned)", "`id`", 'it\'s "quoted"', "line\nbreak", "-rf", "ü 数据"]


@pytest.mark.parametrize("bad", HOSTILE)
def test_cli_resume_command_survives_hostile_ids_and_paths(home, run, bad):
    cwd = f"/tmp/{bad}/proj"
    chat = f"id {bad}"
    from urllib.parse import quote

    cli_store(
        home / ".cursor" / "chats" / ("f" * 32) / chat / "store.db", CLI_MESSAGES, workspace="file://" + quote(cwd)
    )
    scan(run)
    resume = sessions(run)[f"cursor:{chat}"]["resume"]
    assert shlex.split(resume) == ["cd", cwd, "&&", "cursor-agent", "--resume", chat]
    assert subprocess.run(["sh", "-n", "-c", resume]).returncode == 0


def test_cli_store_flat_and_pct_encoded_cwd(home, run):
    store = home / ".cursor" / "chats" / "%2Fwork%2F%E9%A1%B9%E7%9B%AE" / "c2" / "store.db"
    store.parent.mkdir(parents=True)
    conn = sqlite3.connect(store)
    conn.execute("CREATE TABLE meta (key TEXT, value BLOB)")
    conn.execute("CREATE TABLE blobs (key TEXT, value BLOB)")
    conn.execute("INSERT INTO meta VALUES ('0', ?)", (json.dumps({"createdAt": 1_767_225_600_000, "name": "flat"}),))
    conn.execute(
        "INSERT INTO blobs VALUES ('u', ?)", (json.dumps({"role": "user", "content": [text("FLATPROMPTCUR")]}),)
    )
    conn.execute("INSERT INTO blobs VALUES ('x', ?)", (b"\x0a\x20" + bytes(32),))  # a tree node: not a message
    conn.execute("INSERT INTO blobs VALUES ('a', ?)", (json.dumps({"role": "assistant", "content": "FLATREPLYCUR"}),))
    conn.commit()
    conn.close()
    doc = scan(run)
    assert one(run, "FLATPROMPTCUR", "user", "human")["session_id"] == "cursor:c2"
    assert one(run, "FLATREPLYCUR", "assistant")
    assert sessions(run)["cursor:c2"]["cwd"] == "/work/项目" and doc["skipped"] == []
    assert probe(store) == "cli-flat"


# ---------------------------------------------------------------------------
# agent transcripts
# ---------------------------------------------------------------------------


def test_transcripts_jsonl_text_and_subagent(home, run):
    project = home / ".cursor" / "projects" / "home-dev-shop"
    (project).mkdir(parents=True)
    (project / ".workspace-trusted").write_text(json.dumps({"workspacePath": "/home/dev/shop"}))
    root = project / "agent-transcripts"
    uid = "11111111-2222-3333-4444-555555555555"
    write(
        root / uid / f"{uid}.jsonl",
        [
            msg("user", text("<user_query>\n部署失败 TPROMPTCUR\n</user_query>")),
            msg(
                "assistant",
                {"type": "thinking", "thinking": "TTHINKCUR logs first"},
                {
                    "type": "tool_use",
                    "id": "t1",
                    "name": "Shell",
                    "input": {"command": "kubectl logs api", "description": "Read the api logs"},
                },
            ),
            msg("user", {"type": "tool_result", "tool_use_id": "t1", "content": "TTOOLOUTCUR OOMKilled"}),
            {"type": "turn_ended"},
            {"type": "weirdrecord"},
            msg("assistant", text("TREPLYCUR 内存不足")),
        ],
        raw_tail=b'{"role":"assistant","message":{"content":[{"type":"text","text":"TPARTIAL',
    )
    write(
        root / uid / "subagents" / "99999999-0000-0000-0000-000000000000.jsonl",
        [
            msg("user", text("<user_query>TSUBTASKCUR list the pods</user_query>")),
            msg("assistant", text("TSUBREPLYCUR 3 pods")),
        ],
    )
    txt = root / "22222222-0000-0000-0000-000000000000.txt"
    txt.write_text(
        "user:\n<user_query>\nXPROMPTCUR 为什么慢\n</user_query>\n\nassistant:\n[Thinking] XTHINKCUR\n"
        "  profile it\nChecking the profile.\n[Tool call] Shell\n  command=py-spy top\n"
        "[Tool result] Shell\n  XTOOLOUTCUR hot loop\nXREPLYCUR the loop is hot\n",
        encoding="utf-8",
    )
    (root / "33333333-0000-0000-0000-000000000000.txt").write_text("user:\nTXTSHADOWEDCUR\n")
    write(root / "33333333-0000-0000-0000-000000000000.jsonl", [msg("user", text("JSONLWINSCUR"))])
    before = tree(home)
    doc = scan(run)
    main = f"cursor:{uid}.transcript"
    assert one(run, "TPROMPTCUR", "user", "human")["session_id"] == main
    assert one(run, "TTHINKCUR", "reasoning")["session_id"] == main
    assert one(run, "kubectl", "tool_call")["snippet"].startswith("kubectl logs api")
    assert one(run, "Read the api logs", "tool_call")  # the agent's reason, kept as a shell comment
    assert one(run, "TTOOLOUTCUR", "tool_result")["session_id"] == main
    assert one(run, "TREPLYCUR", "assistant")["session_id"] == main
    assert hits(run, "TPARTIAL") == []  # a half-written last line costs itself only
    assert "weirdrecord" in doc["stderr"] and "turn_ended" not in doc["stderr"]
    sub = one(run, "TSUBTASKCUR", "user", "provider")  # the parent agent wrote it
    listed = sessions(run)
    assert listed[sub["session_id"]]["parent"] == main and listed[main]["cwd"] == "/home/dev/shop"
    assert one(run, "TSUBREPLYCUR", "assistant")["session_id"] == sub["session_id"]
    text_sid = "cursor:22222222-0000-0000-0000-000000000000.transcript"
    assert one(run, "XPROMPTCUR", "user", "human")["session_id"] == text_sid
    assert one(run, "XTHINKCUR", "reasoning") and one(run, "XTOOLOUTCUR", "tool_result")
    assert one(run, "py-spy", "tool_call")["tool"] == "Shell"
    assert one(run, "XREPLYCUR", "assistant")
    assert one(run, "JSONLWINSCUR", "user") and hits(run, "TXTSHADOWEDCUR") == []
    assert tree(home) == before
    assert probe(txt) == "transcript-txt"


def test_transcript_yields_to_the_richer_copy(home, run):
    uid = "44444444-0000-0000-0000-000000000000"
    ide_uid = "55555555-0000-0000-0000-000000000000"
    cli_store(home / ".cursor" / "chats" / ("0" * 32) / uid / "store.db", CLI_MESSAGES)
    kv_db(
        home / APP / "globalStorage" / "state.vscdb",
        composer(ide_uid, "ide", [("u", {"type": 1, "text": "IDECOPYCUR from the composer"})]),
    )
    root = home / ".cursor" / "projects" / "p" / "agent-transcripts"
    write(root / uid / f"{uid}.jsonl", [msg("user", text("<user_query>COPYONLYCUR</user_query>"))])
    write(root / uid / "subagents" / "66666666-0000-0000-0000-000000000000.jsonl", [msg("user", text("SUBOFCLICUR"))])
    write(root / f"{ide_uid}.jsonl", [msg("user", text("IDETRANSCRIPTCUR"))])
    scan(run)
    assert hits(run, "COPYONLYCUR") == [] and hits(run, "IDETRANSCRIPTCUR") == []
    assert one(run, "PROMPTCURCLI", "user", "human")["session_id"] == f"cursor:{uid}"
    assert one(run, "IDECOPYCUR", "user", "human")["session_id"] == f"cursor:{ide_uid}"
    sub = one(run, "SUBOFCLICUR", "user", "provider")
    assert sessions(run)[sub["session_id"]]["parent"] == f"cursor:{uid}"


# ---------------------------------------------------------------------------
# where Cursor lives
# ---------------------------------------------------------------------------


def test_homes_and_override_precedence(tmp_path):
    home = tmp_path / "h"
    base = {"HOME": str(home)}
    assert cursor_pkg.cursor_home(base) == home / ".cursor"
    assert cursor_pkg.cursor_home({**base, "CURSOR_CONFIG_DIR": "/c"}) == Path("/c")
    assert cursor_pkg.cursor_home({**base, "CURSOR_CONFIG_DIR": "/c", "VOYAGER_CURSOR_HOME": "/v"}) == Path("/v")
    assert cursor_pkg.app_dirs(base) == [home / ".config" / "Cursor" / "User"]
    assert cursor_pkg.app_dirs({**base, "XDG_CONFIG_HOME": "/x"}) == [Path("/x/Cursor/User")]
    assert cursor_pkg.app_dirs({**base, "XDG_CONFIG_HOME": "/x", "VOYAGER_CURSOR_APP_DIR": "/a"}) == [Path("/a")]


def test_override_is_authoritative(home, run, monkeypatch):
    ide_home(home)  # in the default place: must not be read
    elsewhere = home.parent / "elsewhere"
    kv_db(
        elsewhere / "globalStorage" / "state.vscdb",
        composer("c-o", "o", [("u", {"type": 1, "text": "OVERRIDECUR prompt"})]),
    )
    monkeypatch.setenv("VOYAGER_CURSOR_APP_DIR", str(elsewhere))
    monkeypatch.setenv("VOYAGER_CURSOR_HOME", str(home.parent / "no-cursor-home"))
    scan(run)
    assert one(run, "OVERRIDECUR", "user", "human") and hits(run, "PROMPTCURIDE") == []
    assert ADAPTER.roots(dict(__import__("os").environ))[0] == elsewhere


def test_text_transcript_tool_arguments_nested_too_deeply_or_with_lone_surrogates():
    # json.loads raised RecursionError out of the read, and passed a lone surrogate on to the index.
    deep = "[" * 1000 + "]" * 1000
    assert transcripts._tool_args(["  " + deep]) == deep
    assert transcripts._tool_args(['  {"command": "cut \\ud83d here"}']) == {"command": "cut \ufffd here"}
    assert transcripts._tool_args(["  command=py-spy top"]) == {"command": "py-spy top"}


def test_a_broken_composer_header_costs_the_header_not_its_bubbles(home, run):
    # The header was the only way to its bubbles: a header that did not decode (or whose list named none
    # of the bubbles, its ids garbled) lost every message of the chat.
    rows = composer(
        "c-h",
        "t",
        [("u", {"type": 1, "text": "HEADERLESSPROMPT 为什么"}), ("r", {"type": 2, "text": "HEADERLESSREPLY ok"})],
    )
    rows["composerData:c-h"] = '{"composerId": "c-h", "fullConversationHeadersOnly": [{"bubbleId": "u'  # cut short
    rows.update(composer("c-g", "g", [("u", {"type": 1, "text": "GARBLEDIDSPROMPT"})], listed=["u\ufffd"]))
    kv_db(home / APP / "globalStorage" / "state.vscdb", rows)
    doc = scan(run)
    assert doc["failed"] == 0
    assert one(run, "HEADERLESSPROMPT", "user", "human")["session_id"] == "cursor:c-h"
    assert one(run, "HEADERLESSREPLY", "assistant")["session_id"] == "cursor:c-h"
    assert one(run, "GARBLEDIDSPROMPT", "user", "human")["session_id"] == "cursor:c-g"
    assert "header skipped, its bubbles read in key order" in doc["stderr"]
