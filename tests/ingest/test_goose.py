"""Goose (``goose``, documented): the peers' samples, and stores written here from the documented shape."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from tests.ingest._cli import kinds, search
from tests.ingest._peers import PeerHome, check_markers, tree
from voyager_sessions.ingest.adapters.goose import ADAPTER, resume_command

SCHEMA = [
    """CREATE TABLE schema_version (version INTEGER PRIMARY KEY, applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP)""",
    """CREATE TABLE sessions (id TEXT PRIMARY KEY, name TEXT NOT NULL DEFAULT '', description TEXT NOT NULL DEFAULT '',
        user_set_name BOOLEAN DEFAULT FALSE, session_type TEXT NOT NULL DEFAULT 'user', working_dir TEXT NOT NULL,
        created_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP, updated_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP,
        extension_data TEXT DEFAULT '{}', accumulated_input_tokens INTEGER, accumulated_output_tokens INTEGER,
        provider_name TEXT, model_config_json TEXT, parent_session_id TEXT)""",
    """CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, message_id TEXT, session_id TEXT NOT NULL,
        role TEXT NOT NULL, content_json TEXT NOT NULL, created_timestamp INTEGER NOT NULL,
        timestamp TIMESTAMP DEFAULT CURRENT_TIMESTAMP, tokens INTEGER, metadata_json TEXT)""",
]
VISIBLE = '{"userVisible":true,"agentVisible":true}'
HIDDEN = '{"userVisible":false,"agentVisible":true}'


def text(t: str) -> dict[str, Any]:
    return {"type": "text", "text": t, "annotations": []}


def sessions_dir(home: Path) -> Path:
    d = home / ".local/share/goose/sessions"
    d.mkdir(parents=True, exist_ok=True)
    return d


def write_db(home: Path, sessions: list[dict[str, Any]], messages: list[tuple]) -> Path:
    db = sessions_dir(home) / "sessions.db"
    conn = sqlite3.connect(db)
    for stmt in SCHEMA:
        conn.execute(stmt)
    conn.execute("INSERT INTO schema_version (version) VALUES (15)")
    for s in sessions:
        cols = ", ".join(s)
        conn.execute(f"INSERT INTO sessions ({cols}) VALUES ({', '.join('?' * len(s))})", tuple(s.values()))
    conn.executemany(
        "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?,?,?,?,?)",
        [
            (sid, role, json.dumps(c, ensure_ascii=False) if not isinstance(c, str) else c, ts, meta)
            for sid, role, c, ts, meta in messages
        ],
    )
    conn.commit()
    conn.close()
    return db


MAIN = {
    "id": "20261102_1",
    "name": "修复部署脚本",
    "description": "",
    "user_set_name": 1,
    "session_type": "user",
    "working_dir": "/home/dev/ops",
    "created_at": "2026-11-02 09:00:00",
    "updated_at": "2026-11-02 09:05:00",
    "accumulated_input_tokens": 5000,
    "accumulated_output_tokens": 700,
    "provider_name": "anthropic",
    "model_config_json": json.dumps({"model_name": "claude-sonnet-4-6"}),
}
SUB = {
    "id": "20261102_2",
    "name": "",
    "description": "Check the nginx config",
    "session_type": "sub_agent",
    "working_dir": "/home/dev/ops",
    "created_at": "2026-11-02 09:02:00",
    "updated_at": "2026-11-02 09:03:00",
    "parent_session_id": "20261102_1",
}


def messages() -> list[tuple]:
    m, s = MAIN["id"], SUB["id"]
    return [
        (m, "user", [text("部署脚本在 staging 上失败了，帮我看看 deploy.sh")], 1_793_000_000, VISIBLE),
        (
            m,
            "assistant",
            [
                {"type": "thinking", "thinking": "先跑一下脚本看 exit code", "signature": "sig"},
                text("我先运行部署脚本。"),
                {
                    "type": "toolRequest",
                    "id": "call_1",
                    "toolCall": {
                        "status": "success",
                        "value": {"name": "developer__shell", "arguments": {"command": "bash deploy.sh --env staging"}},
                    },
                },
            ],
            1_793_000_001,
            VISIBLE,
        ),
        (
            m,
            "user",
            [
                {
                    "type": "toolResponse",
                    "id": "call_1",
                    "toolResult": {
                        "status": "success",
                        "value": {"content": [text("deploy.sh: line 12: 权限不够 DEPLOY_DENIED_13")], "isError": True},
                    },
                }
            ],
            1_793_000_002,
            VISIBLE,
        ),
        (
            m,
            "assistant",
            [
                {
                    "type": "toolRequest",
                    "id": "call_2",
                    "toolCall": {"status": "error", "error": "could not parse tool call BROKEN_CALL"},
                }
            ],
            1_793_000_003,
            VISIBLE,
        ),
        (
            m,
            "user",
            [{"type": "toolResponse", "id": "call_2", "toolResult": {"status": "error", "error": "TOOL_FAILED_Z"}}],
            1_793_000_004,
            VISIBLE,
        ),
        (
            m,
            "assistant",
            [
                {
                    "type": "toolConfirmationRequest",
                    "id": "c",
                    "toolName": "developer__text_editor",
                    "arguments": {},
                    "prompt": "Allow editing deploy.sh? CONFIRM_PROMPT",
                },
                {"type": "systemNotification", "notificationType": "inlineMessage", "msg": "Compacting NOTIFY_MSG"},
                {"type": "hologram", "data": "x"},
            ],
            1_793_000_005,
            VISIBLE,
        ),
        (m, "user", [text("Summary of the conversation so far COMPACTED_SUMMARY")], 1_793_000_006, HIDDEN),
        (m, "user", "{this is not json", 1_793_000_007, VISIBLE),
        (m, "assistant", [text("脚本缺少执行权限，已经 chmod +x。")], 1_793_000_008, VISIBLE),
        (s, "user", [text("检查 nginx 配置里的 upstream SUBAGENT_PROMPT")], 1_793_000_100, VISIBLE),
        (s, "assistant", [text("upstream 指向了旧端口 SUBAGENT_REPLY")], 1_793_000_101, VISIBLE),
    ]


def test_peer_samples(home, run):
    peer = PeerHome("goose", home, run)
    assert peer.scan["failed"] == 0 and peer.scan["sessions"] == 2, peer.scan
    # "authentication" is the prompt of a sub_agent session: the parent agent wrote it, so it is a user
    # event of origin provider, never human (the rule every adapter keeps). Its parent session
    # ('parent') is not in the sample, so that prompt is checked here rather than by check_markers,
    # which also wants the parent indexed.
    child_prompt = "authentication"
    peer.truth = {
        **peer.truth,
        "turns": [{k: v for k, v in t.items() if v != child_prompt} for t in peer.truth["turns"]],
    }
    check_markers(peer, "goose")
    users = [h for h in peer.hits(child_prompt) if h["kind"] == "user"]
    assert [(h["origin"], h["session_id"]) for h in users] == [("provider", "goose:child")]
    sessions = peer.sessions()
    assert sessions["goose:child"]["parent"] == "goose:parent"
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "goose")
    assert report["evidence"] == "documented" and not report["failed_sources"]
    assert report["shapes"] == {"sessions.db": 1, "legacy-jsonl": 1}, report
    # The unknown block type is named with the schema version; the known non-conversation blocks are meta.
    assert "block futureContent" in peer.stderr and "schema 15" in peer.stderr
    assert {(h["kind"], h["origin"]) for h in peer.hits("Approve the proposed edit")} == {("meta", "provider")}
    assert tree(home) == peer.before


def test_documented_shape(home, run, tmp_path):
    write_db(home, [MAIN, SUB], messages())
    before = tree(home)
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["sessions"] == 2 and doc["failed"] == 0, doc
    assert kinds(run, '"staging 上失败"') == [("user", "human")]
    assert kinds(run, '"exit code"') == [("reasoning", "agent")]
    assert kinds(run, "运行部署脚本") == [("assistant", "agent")]
    calls = search(run, '"bash deploy.sh --env staging"')
    assert [(h["kind"], h["tool"]) for h in calls] == [("tool_call", "developer__shell")]  # the command itself
    out = search(run, "DEPLOY_DENIED_13")
    assert [(h["kind"], h["tool"], h["exit_code"]) for h in out] == [("tool_result", "developer__shell", None)]
    assert kinds(run, "BROKEN_CALL") == [("tool_call", "agent")] and kinds(run, "TOOL_FAILED_Z") == [
        ("tool_result", "tool")
    ]
    for marker in ("CONFIRM_PROMPT", "NOTIFY_MSG", "COMPACTED_SUMMARY"):
        assert kinds(run, marker) == [("meta", "provider")], marker
    assert kinds(run, "chmod") == [("assistant", "agent")]  # after the malformed row: neighbours kept
    reasons = " | ".join(f"{s.get('where')}: {s['reason']}" for s in doc["skipped"])
    assert "malformed JSON" in reasons and "message 8" in reasons and "block hologram" in reasons, reasons
    assert kinds(run, "SUBAGENT_PROMPT") == [("user", "provider")]
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    main, sub = sessions["goose:20261102_1"], sessions["goose:20261102_2"]
    assert sub["parent"] == "goose:20261102_1" and sub["resume"] is None
    assert main["title"] == "修复部署脚本" and main["cwd"] == "/home/dev/ops"
    assert main["resume"] == "cd /home/dev/ops && goose session --resume --session-id 20261102_1"
    shown = run.json("show", "goose:20261102_1", "--json")["session"]
    assert shown["model"] == "claude-sonnet-4-6" and shown["title_source"] == "user"
    assert search(run, "修复部署脚本")[0]["kind"] == "title"  # a person named it: searchable by its name
    assert tree(home) == before


def test_only_sessions_that_changed_are_read_again(home, run, tmp_path):
    db = write_db(home, [MAIN, SUB], messages())
    first = run.json("scan", "--json")
    assert run.json("scan", "--json")["unchanged"] == 1
    conn = sqlite3.connect(db)
    conn.execute(
        "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) VALUES (?,?,?,?,?)",
        (
            SUB["id"],
            "assistant",
            json.dumps([text("端口改好了 SUB_SECOND")], ensure_ascii=False),
            1_793_000_102,
            VISIBLE,
        ),
    )
    conn.commit()
    conn.close()
    again = run.json("scan", "--json")
    assert again["changed"] == 1 and again["events_added"] == 3 and again["events_removed"] == 2, (first, again)
    assert kinds(run, "SUB_SECOND") == [("assistant", "agent")] and len(search(run, "DEPLOY_DENIED_13")) == 1


def test_legacy_jsonl_read_once(home, run, tmp_path):
    write_db(home, [MAIN], messages()[:2])
    meta = {"description": "旧版会话", "working_dir": "/home/dev/old", "message_count": 2}
    lines = [
        meta,
        {"id": "m1", "role": "user", "created": 1_750_000_000, "content": [text("旧版提示 LEGACY_PROMPT")]},
        {"id": "m2", "role": "assistant", "created": 1_750_000_001, "content": [text("旧版回答 LEGACY_REPLY")]},
    ]
    body = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    (sessions_dir(home) / "20250601_1.jsonl").write_text(body)
    (sessions_dir(home) / f"{MAIN['id']}.jsonl").write_text(body.replace("LEGACY", "MIGRATED"))  # sessions.db holds it
    old = home / ".goose" / "sessions"
    old.mkdir(parents=True)
    (old / "20240101_1.jsonl").write_text(body.replace("LEGACY", "OLDHOME"))
    doc = run.json("scan", "--json")
    assert doc["sessions"] == 3 and doc["failed"] == 0, doc
    assert kinds(run, "LEGACY_PROMPT") == [("user", "human")] and kinds(run, "LEGACY_REPLY") == [("assistant", "agent")]
    assert search(run, "MIGRATED_PROMPT") == []  # the migrated copy: the database holds that session
    assert kinds(run, "OLDHOME_PROMPT") == [("user", "human")]
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    assert (
        sessions["goose:20250601_1"]["cwd"] == "/home/dev/old" and sessions["goose:20250601_1"]["title"] == "旧版会话"
    )


def test_resume_command_survives_hostile_ids_and_paths(tmp_path):
    for native, cwd in [("20261102_1; rm -rf ~", "/tmp/a b/$(reboot)"), ("`id`'\"", "/x\nnew line"), ("--help", None)]:
        cmd = resume_command(native, cwd)
        assert subprocess.run(["sh", "-n", "-c", cmd], capture_output=True).returncode == 0, cmd
        parts = shlex.split(cmd)
        assert parts[-1] == native
        if cwd:
            assert parts[:2] == ["cd", cwd] and parts[3:7] == ["goose", "session", "--resume", "--session-id"]


def test_goose_path_root_and_the_voyager_variable(home, tmp_path):
    write_db(home, [MAIN], messages()[:1])
    root = tmp_path / "goose-root"
    db = root / "data" / "sessions" / "sessions.db"
    db.parent.mkdir(parents=True)
    db.write_bytes((sessions_dir(home) / "sessions.db").read_bytes())
    found = [s.path for s in ADAPTER.discover({"HOME": str(home), "GOOSE_PATH_ROOT": str(root)})]
    assert found == [str(db)]
    override = tmp_path / "override"
    found = list(
        ADAPTER.discover({"HOME": str(home), "GOOSE_PATH_ROOT": str(root), "VOYAGER_GOOSE_HOME": str(override)})
    )
    assert len(found) == 1 and found[0].fatal and str(override / "sessions" / "sessions.db") == found[0].source
    assert ADAPTER.roots({"HOME": str(home), "VOYAGER_GOOSE_HOME": str(override)}) == [override / "sessions"]


def test_a_block_whose_type_is_a_list_or_an_object_is_named_not_fatal(home, run):
    # `btype not in _SILENT` raised TypeError (unhashable) out of the read: every later session lost.
    lines = [
        {"description": "d", "working_dir": "/home/dev/old"},
        {
            "id": "m1",
            "role": "user",
            "created": 1_750_000_000,
            "content": [{"type": ["text"]}, {"type": {"a": 1}}, text("还在 STILL_READ")],
        },
    ]
    sessions_dir(home).mkdir(parents=True, exist_ok=True)
    (sessions_dir(home) / "20250601_1.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    res = run("scan", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["failed"] == 0, res.stdout
    assert kinds(run, "STILL_READ") == [("user", "human")]
