"""Crush (``crush``, documented): the peers' samples, and databases written here from Crush's own migrations."""

from __future__ import annotations

import json
import shlex
import sqlite3
import subprocess

from tests.support.shell import option_words
from tests.support.peers import PeerHome, check_markers, tree
from tests.support.samples.crush import part, project_store, write_projects
from tests.support.scanning import kinds, search
from voyager_sessions.ingest.adapters.base import Hints, Notice
from voyager_sessions.ingest.adapters.crush import ADAPTER, resume_command


def test_peer_sample_as_it_is_names_the_missing_data_dirs(home, run, monkeypatch):
    # The sample's projects.json points at /home/dev/...: with HOME elsewhere those dirs do not exist.
    monkeypatch.delenv("VOYAGER_LOOK_WITHIN")  # (the tests' pin would name them as outside the sandbox instead)
    peer = PeerHome("crush", home, run)
    doc = peer.scan
    assert doc["sessions"] == 0
    missing = [s for s in doc["skipped"] if "does not exist" in s["reason"]]
    assert {s["where"] for s in missing} == {"project /test/project", "project /work/crush"}, doc
    assert "/home/dev/.local/share/crush/projects/test-project" in peer.stderr
    doctor = run("doctor").stdout
    assert "/home/dev/.local/share/crush/projects/work-crush does not exist" in doctor


def test_data_dirs_outside_the_pinned_folders_are_named_not_read(home, run):
    """With VOYAGER_LOOK_WITHIN (the tests' sandbox), a data dir projects.json names elsewhere is not statted."""
    peer = PeerHome("crush", home, run)
    outside = [s for s in peer.scan["skipped"] if "outside VOYAGER_LOOK_WITHIN" in s["reason"]]
    assert {s["where"] for s in outside} == {"project /test/project", "project /work/crush"}, peer.scan
    assert tree(home) == peer.before


def test_peer_sample_read_through_a_projects_json_of_its_own(home, run):
    peer = PeerHome("crush", home, run)  # scanned once as it is: nothing readable (see above)
    global_dir = home / ".local/share/crush"
    write_projects(
        global_dir,
        [
            {"path": "/test/project", "data_dir": str(global_dir / "projects" / "test-project")},
            {"path": "/work/crush", "data_dir": str(global_dir / "projects" / "work-crush")},
        ],
    )
    peer.before = tree(home)
    doc = run.json("scan", "--json")
    assert doc["failed"] == 0 and doc["sessions"] == 4, doc
    check_markers(peer, "crush")
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "crush")
    assert report["evidence"] == "documented" and report["shapes"] == {"crush.db": 2} and not report["failed_sources"]
    sessions = peer.sessions()
    assert sessions["crush:live"]["cwd"] == "/test/project"
    assert sessions["crush:crush-1"]["resume"] == "crush --cwd /work/crush --session crush-1"
    err = next(h for h in peer.hits("ContextWindowExceededError"))
    assert err["kind"] == "meta" and err["origin"] == "provider"
    assert tree(home) == peer.before


def test_documented_shape(home, run, tmp_path):
    project = tmp_path / "proj dir" / "app"
    project_store(home, project)
    write_projects(
        home / ".local/share/crush", [{"path": str(project), "data_dir": ".crush"}]
    )  # relative: the project's
    before = tree(home), tree(project)
    res = run("scan", "--json")
    doc = json.loads(res.stdout)
    assert res.exit_code == 0 and doc["sessions"] == 2 and doc["failed"] == 0, doc
    assert kinds(run, "BUILD_PROMPT") == [("user", "human")]
    assert kinds(run, "THINKING_MARK") == [("reasoning", "agent")]
    assert kinds(run, "运行构建") == [("assistant", "agent")]
    calls = search(run, '"go build ./..."')
    assert [(h["kind"], h["tool"]) for h in calls] == [("tool_call", "bash")]
    out = search(run, "BUILD_ERR_12")
    assert [(h["kind"], h["origin"], h["tool"], h["exit_code"]) for h in out] == [("tool_result", "tool", "bash", None)]
    shell = search(run, "HUMAN_SHELL")
    assert [(h["kind"], h["origin"]) for h in shell] == [("tool_call", "human")]
    vet = [h for h in search(run, "vet") if h["kind"] == "tool_result"]
    assert [(h["tool"], h["exit_code"]) for h in vet] == [("shell", 2)]  # the one exit code Crush records
    assert kinds(run, "COMPACTION_SUMMARY") == [("meta", "provider")]
    assert kinds(run, "拼错") == [("assistant", "agent")]  # after the malformed row
    assert kinds(run, "PROVIDER_ERROR") == [("meta", "provider")]
    assert kinds(run, "SUBTASK_PROMPT") == [("user", "provider")] and kinds(run, "SUBTASK_REPLY") == [
        ("assistant", "agent")
    ]
    assert search(run, "TITLE_CALL_COPY") == []  # the title side call copies the prompt
    reasons = " | ".join(f"{s.get('where')}: {s['reason']}" for s in doc["skipped"])
    assert "session s-main, message 5" in reasons and "part hologram" in reasons, reasons
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    main, task = sessions["crush:s-main"], sessions["crush:s-task"]
    assert task["parent"] == "crush:s-main" and task["resume"] is None
    assert main["cwd"] == str(project) and main["title"] == "修复构建"
    assert shlex.split(main["resume"]) == ["crush", "--cwd", str(project), "--session", "s-main"]
    assert (tree(home), tree(project)) == before


def test_home_crush_db_and_change_detection_within_one_second(home, run, tmp_path):
    db = project_store(home, home)  # ~/.crush/crush.db, listed nowhere
    first = run.json("scan", "--json")
    assert first["sessions"] == 2
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    # ~/.crush is the default data dir of the project HOME: that is where Crush finds it again.
    assert sessions["crush:s-main"]["cwd"] == str(home)
    assert shlex.split(sessions["crush:s-main"]["resume"]) == ["crush", "--cwd", str(home), "--session", "s-main"]
    assert run.json("scan", "--json")["unchanged"] == 1
    # A streaming reply rewrites its row within the same second: same updated_at, longer parts.
    conn = sqlite3.connect(db)
    conn.execute(
        "UPDATE messages SET parts = ? WHERE id = 't2'",
        (
            json.dumps(
                [part("text", text="TestRetry 不稳定 SUBTASK_REPLY，原因是共享端口 STREAMED_MORE")], ensure_ascii=False
            ),
        ),
    )
    conn.commit()
    conn.close()
    again = run.json("scan", "--json")
    assert again["changed"] == 1 and again["events_added"] == 2 and again["events_removed"] == 2, again
    assert kinds(run, "STREAMED_MORE") == [("assistant", "agent")] and len(search(run, "BUILD_PROMPT")) == 1


def test_resume_command_survives_hostile_paths_and_ids():
    for native, project in [("s; rm -rf ~", "/tmp/a b/$(reboot)"), ("`id`'\"", "/x\ny"), ("-s", None)]:
        cmd = resume_command(native, project, "/d/.crush")
        assert subprocess.run(["sh", "-n", "-c", cmd], capture_output=True).returncode == 0, cmd
        parts = shlex.split(cmd)
        words = option_words("--session", native)  # a dash id: attached to its option (issue 38)
        assert parts[-len(words) :] == words
        assert parts[2] == (project or "/d/.crush")


def test_crush_global_data_and_the_voyager_variable(home, tmp_path):
    project = tmp_path / "p"
    project_store(home, project)
    elsewhere = tmp_path / "crush-global"
    write_projects(elsewhere, [{"path": str(project), "data_dir": str(project / ".crush")}])
    env = {"HOME": str(home), "CRUSH_GLOBAL_DATA": str(elsewhere)}
    assert [s.path for s in ADAPTER.discover(env)] == [str(project / ".crush" / "crush.db")]
    override = tmp_path / "override"
    override.mkdir()
    env["VOYAGER_CRUSH_HOME"] = str(override)
    found = list(ADAPTER.discover(env))
    assert len(found) == 1 and "VOYAGER_CRUSH_HOME" in found[0].reason  # named, and nothing else probed
    assert ADAPTER.roots(env) == [override / "projects.json", override / "crush.db"]


def test_a_broken_projects_json_is_named(home, run, tmp_path):
    global_dir = home / ".local/share/crush"
    global_dir.mkdir(parents=True)
    (global_dir / "projects.json").write_text('{"projects": [')
    res = run("scan", "--json")
    assert "projects.json" in res.stderr and "malformed JSON" in res.stderr


def test_a_project_crush_db_is_found_through_the_cwds_of_indexed_sessions(home, run, tmp_path):
    project = tmp_path / "unlisted"
    project_store(home, project)  # <project>/.crush/crush.db, in no projects.json
    assert [s for s in ADAPTER.discover({"HOME": str(home)}, Hints()) if not isinstance(s, Notice)] == []
    found = [s.path for s in ADAPTER.discover({"HOME": str(home)}, Hints(cwds=frozenset({str(project), "/nowhere"})))]
    assert found == [str(project / ".crush" / "crush.db")]
    # Through the scan: a session of another agent that ran in the project leads to it.
    dsh_log = home / ".dsh/sessions/--p--/session-1/session.jsonl"
    dsh_log.parent.mkdir(parents=True)
    dsh_log.write_text(
        json.dumps({"type": "session", "version": 0, "id": "session-1", "createdAt": 1, "cwd": str(project)})
        + "\n"
        + json.dumps(
            {
                "type": "user/message",
                "seq": 0,
                "time": 2,
                "data": {"content": [{"type": "text", "text": "hello"}], "source": {"kind": "user"}},
            }
        )
        + "\n"
    )
    doc = run.json("scan", "--json")
    assert doc["providers"].get("crush") == 2, doc
    sessions = {s["session_id"]: s for s in run.json("list", "--json")["sessions"]}
    assert sessions["crush:s-main"]["cwd"] == str(project)
    # The override is authoritative: no hinted directory is looked into either.
    named = list(
        ADAPTER.discover(
            {"HOME": str(home), "VOYAGER_CRUSH_HOME": str(tmp_path / "o")}, Hints(cwds=frozenset({str(project)}))
        )
    )
    assert [type(i).__name__ for i in named] == ["Notice"] and named[0].source == str(tmp_path / "o")


#: Working directories and data dirs as a hostile or corrupt session file may name them.
HOSTILE_DIRS = ["/" + "x" * 5000, "/home/dev/\x00nul", "relative/../../etc"]


def test_hostile_cwds_and_data_dirs_never_stop_discovery(home, tmp_path):
    # Path.is_dir/is_file raised OSError (name too long) out of discover: the scan itself failed.
    project = tmp_path / "unlisted"
    project_store(home, project)
    global_dir = home / ".local/share/crush"
    write_projects(global_dir, [{"path": "/p", "data_dir": d} for d in HOSTILE_DIRS])
    items = list(ADAPTER.discover({"HOME": str(home)}, Hints(cwds=frozenset({*HOSTILE_DIRS, str(project)}))))
    assert [s.path for s in items if not isinstance(s, Notice)] == [str(project / ".crush" / "crush.db")]
    reasons = [n.reason for n in items if isinstance(n, Notice)]
    assert len(reasons) == 3 and all(len(r) < 400 for r in reasons), reasons
    assert any("cannot be looked into (File name too long)" in r for r in reasons)
