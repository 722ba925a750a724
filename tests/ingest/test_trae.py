"""The Trae IDE adapter (documented) against ``state.vscdb`` databases built here as agentsview's reader reads them.

No real Trae install was captured (a desktop IDE). Its agent sessions are one ``ItemTable`` value,
``memento/icube-ai-agent-storage``, in the global and the workspaces' databases; newer builds keep
an encrypted ``ModularData/ai-agent/database.db``. Checked: the contract (kinds, one prompt, files
untouched, an unchanged rescan), the workspace's folder as cwd, the assistant's text kept in
``agentTaskContent``, a changed session read again while the others stay ``Unchanged``, the
encrypted store reported (never "no sessions"), the Chinese builds, and the places.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.trae import ADAPTER, ENCRYPTED, KEY, probe, user_dirs
from tests.support.samples.trae import USER, session, state_db, workspace


def test_a_workspaces_sessions_hold_to_the_contract(home: Path, run) -> None:
    state_db(workspace(home) / "state.vscdb", [session("s-1", "修复登录 PROMPT_TRAE")], {"other.key": "OTHER_TRAE"})
    state_db(home / USER / "globalStorage/state.vscdb", None, {"workbench.x": "{}"})
    markers = {"prompt": ["修复登录 PROMPT_TRAE"], "reply": ["REPLY_TRAE"], "absent": ["OTHER_TRAE"]}
    assert check_sample(run, home, "trae", markers, calls=0)["new"] == 2  # both databases; one holds no chat
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"], row["resume"]) == (
        "trae:s-1",
        "/home/dev/登录",
        "doubao-1.6",
        None,
    )


def test_agent_task_content_and_the_chinese_builds(home: Path, run) -> None:
    plan = {"guideline": {"planItems": [{"content": "第一步 PLAN1_TRAE"}, {"content": "第二步"}]}}
    state_db(home / ".config/Trae CN/User/globalStorage/state.vscdb", [session("s-2", "做个计划 PROMPT_CN_TRAE", plan)])
    scan(run)
    assert one(run, "PROMPT_CN_TRAE", "user", "human") and one(run, "PLAN1_TRAE", "assistant", "agent")


def test_a_changed_session_is_read_again_and_the_others_stay(home: Path, run) -> None:
    path = state_db(
        workspace(home) / "state.vscdb",
        [session("s-1", "修复登录 PROMPT_TRAE"), session("s-3", "别的 PROMPT_OTHER_TRAE")],
    )
    scan(run)
    changed = session("s-1", "修复登录 PROMPT_TRAE")
    changed["messages"].append({"role": "user", "content": "再加测试 PROMPT2_TRAE", "timestamp": 1782000009000})
    state_db(path, [changed, session("s-3", "别的 PROMPT_OTHER_TRAE")])
    out = scan(run)
    assert out["changed"] == 1 and out["events_added"] == 3, out  # the one changed session, read whole again
    assert one(run, "PROMPT2_TRAE", "user", "human") and hits(run, "PROMPT_OTHER_TRAE")


def test_the_newer_encrypted_store_is_reported_never_empty(home: Path, run) -> None:
    modular = home / ".config/Trae/ModularData/ai-agent/database.db"
    modular.parent.mkdir(parents=True)
    modular.write_bytes(b"\x8f\x02encrypted pages" * 20)
    res = run("scan", "--json")
    assert ENCRYPTED in res.stderr and json.loads(res.stdout)["failed"] == 1
    assert probe(str(modular)) == ENCRYPTED
    doc = run.json("doctor", "--json")
    (row,) = [p for p in doc["providers"] if p["provider"] == "trae"]
    assert row["sources"] == 1, row


def test_places(tmp_path: Path) -> None:
    dirs = user_dirs({"HOME": str(tmp_path), "XDG_CONFIG_HOME": "/x"})
    assert dirs[0] == Path("/x/Trae/User") and Path("/x/TRAE SOLO CN/User") in dirs
    assert user_dirs({"HOME": "/h", "VOYAGER_TRAE_HOME": "/v"}) == [Path("/v")]
    assert ADAPTER.roots({"HOME": "/h", "VOYAGER_TRAE_HOME": "/v/User"}) == [
        Path("/v/User"),
        Path("/v/ModularData/ai-agent/database.db"),
    ]


def test_a_broken_value_is_named_not_fatal(home: Path, run) -> None:
    path = workspace(home) / "state.vscdb"
    state_db(path, None, {KEY: '{"list": [{"sessionId": "s-9", "messages": [{"role": "user"'})
    state_db(home / USER / "globalStorage/state.vscdb", [session("s-1", "修复登录 PROMPT_TRAE")])
    res = run("scan", "--json")
    assert res.exit_code == 0 and "holds no session list" in res.stderr, res.stderr
    assert one(run, "PROMPT_TRAE", "user", "human"), "the other database is read whatever this one holds"
