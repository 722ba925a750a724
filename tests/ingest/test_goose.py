"""Goose (``goose``, documented): the peers' samples, and stores written here from the documented shape."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess

from tests.support.peers import PeerHome, check_markers, tree
from tests.support.samples.goose import MAIN, SUB, VISIBLE, messages, sessions_dir, text, write_db
from tests.support.scanning import kinds, search
from voyager_sessions.ingest.adapters.goose import ADAPTER, resume_command


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
        assert parts[-1] == native or parts[-1] == f"--session-id={native}"  # a dash id: attached (issue 38)
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
