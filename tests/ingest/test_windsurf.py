"""Windsurf (documented): the encrypted Cascade store is detected and reported once, never silently skipped;
the legacy chat panel in workspace ``state.vscdb`` files is read."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.peers import tree
from tests.support.samples.cursor import kv_db
from tests.support.scanning import one, scan, sessions
from voyager_sessions.ingest.adapters.windsurf import ADAPTER, ENCRYPTED, app_dirs, cascade_dir, probe

APP = Path(".config/Windsurf/User")


def cascade(home: Path, n: int = 2) -> Path:
    d = home / ".codeium" / "windsurf" / "cascade"
    d.mkdir(parents=True)
    for i in range(n):
        (d / f"{i:08x}-aaaa-bbbb-cccc-dddddddddddd.pb").write_bytes(bytes(range(256)) * 4)
    return d


def test_encrypted_cascade_is_reported_once_and_in_doctor(home, run):
    d = cascade(home)
    before = tree(home)
    res = run("scan", "--json")
    assert res.exit_code == 1  # present, and nothing of it can be read: said plainly
    first = {**json.loads(res.stdout), "stderr": res.stderr}
    assert first["failed"] == 1 and first["sessions"] == 0
    assert "Windsurf Cascade history present (2 conversation files)" in first["stderr"] and ENCRYPTED in first["stderr"]
    again = scan(run)  # unchanged: not read again, nothing said again
    assert again["unchanged"] == 1 and again["failed"] == 0 and "Cascade" not in again["stderr"]
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "windsurf")
    assert report["sources"] == 1 and report["shapes"] == {ENCRYPTED: 1}
    assert len(report["failed_sources"]) == 1 and ENCRYPTED in report["failed_sources"][0]
    assert report["problems"] == []  # said once, not twice
    text = run("doctor").stdout
    assert f"cannot use {d}: Windsurf Cascade history present" in text
    # A new conversation changes the folder: said once more.
    (d / "ffffffff-aaaa-bbbb-cccc-dddddddddddd.pb").write_bytes(b"\x00" * 64)
    assert "3 conversation files" in run("scan").stderr
    assert {k: v for k, v in tree(home).items() if "ffffffff" not in k} == before  # read-only throughout


def test_doctor_before_any_scan_names_the_store(home, run):
    cascade(home, 1)
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "windsurf")
    assert report["problems"] == [f"{cascade_dir({'HOME': str(home)})}: {ENCRYPTED}"]


def test_legacy_chat_read_and_rescanned_per_tab(home, run):
    ws = home / APP / "workspaceStorage" / "w1"
    chat = {
        "tabs": [
            {
                "tabId": "t1",
                "chatTitle": "旧聊天",
                "bubbles": [
                    {"type": "user", "text": "怎么部署 WSPROMPT"},
                    {"type": "ai", "text": "WSREPLY use the script"},
                ],
            },
            {"tabId": "t2", "bubbles": [{"type": 1, "text": "WSPROMPT2 second tab"}]},
        ]
    }
    kv_db(ws / "state.vscdb", items={"aiChat.chatdata": chat, "unrelated.editor.key": "{}"})
    (ws / "workspace.json").write_text(json.dumps({"folder": "file:///home/dev/site"}))
    before = tree(home)
    doc = scan(run)
    assert doc["sessions"] == 2 and doc["skipped"] == []
    assert one(run, "WSPROMPT", "user", "human")["session_id"] == "windsurf:aichat-t1"
    assert one(run, "WSREPLY", "assistant")["session_id"] == "windsurf:aichat-t1"
    assert sessions(run)["windsurf:aichat-t1"]["cwd"] == "/home/dev/site"
    assert tree(home) == before
    assert probe(ws / "state.vscdb") == "aichat-legacy"
    # One tab grows: only it is replaced; the other is Unchanged.
    chat["tabs"][1]["bubbles"].append({"type": 2, "text": "WSREPLY2 answered"})
    kv_db(ws / "state.vscdb", items={"aiChat.chatdata": chat})
    doc = scan(run)
    assert doc["events_added"] == 2 and doc["events_removed"] == 1, doc
    assert one(run, "WSREPLY2", "assistant")["session_id"] == "windsurf:aichat-t2"


def test_homes(tmp_path):
    env = {"HOME": str(tmp_path)}
    assert cascade_dir(env) == tmp_path / ".codeium" / "windsurf" / "cascade"
    assert cascade_dir({**env, "VOYAGER_WINDSURF_HOME": "/w"}) == Path("/w/cascade")
    assert app_dirs(env) == [tmp_path / ".config" / "Windsurf" / "User"]
    assert app_dirs({**env, "VOYAGER_WINDSURF_APP_DIR": "/a"}) == [Path("/a")]
    assert ADAPTER.roots(env)[0] == tmp_path / ".codeium" / "windsurf" / "cascade"
