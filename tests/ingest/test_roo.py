"""The Roo Code adapter: peers' samples, and task folders written here from the documented shape (subtasks included)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from tests.support.items import events, notices
from tests.support.peers import PeerHome, check_sample
from voyager_sessions.core.model import Session
from voyager_sessions.core.paths import vscode_user_dirs
from voyager_sessions.ingest.adapters.base import Notice, Source, fingerprint
from voyager_sessions.ingest.adapters.roo import ADAPTER, probe, storage_dirs

EXT = "rooveterinaryinc.roo-cline"


def storage(home: Path, app: str = "Code") -> Path:
    return home / ".config" / app / "User" / "globalStorage" / EXT


def write_task(
    root: Path,
    task_id: str,
    ui_messages: list[Any] | None,
    item: dict[str, Any] | None = None,
    api: list[Any] | None = None,
) -> Path:
    folder = root / "tasks" / task_id
    folder.mkdir(parents=True, exist_ok=True)
    if ui_messages is not None:
        (folder / "ui_messages.json").write_text(json.dumps(ui_messages, ensure_ascii=False), encoding="utf-8")
    if api is not None:
        (folder / "api_conversation_history.json").write_text(json.dumps(api, ensure_ascii=False), encoding="utf-8")
    if item is not None:
        (folder / "history_item.json").write_text(json.dumps(item, ensure_ascii=False), encoding="utf-8")
    return folder


def say(ts: int, what: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"ts": ts, "type": "say", "say": what, "text": text, **extra}


def ask(ts: int, what: str, text: str, **extra: Any) -> dict[str, Any]:
    return {"ts": ts, "type": "ask", "ask": what, "text": text, **extra}


PARENT = "0197a3c2-1111-7000-8000-000000000001"
CHILD = "0197a3c2-2222-7000-8000-000000000002"


def parent_task() -> list[dict[str, Any]]:
    return [
        say(1767600000000, "text", "重构支付模块，拆成两个子任务 REFACTOR_LIME"),
        say(1767600000100, "api_req_started", json.dumps({"tokensIn": 50, "tokensOut": 10, "cost": 0})),
        ask(
            1767600000200,
            "tool",
            json.dumps({"tool": "newTask", "mode": "code", "content": "拆分 PaymentService DELEGATE_LIME"}),
        ),
        say(1767600000300, "subtask_result", "PaymentService 已拆分 RETURNED_LIME"),
        say(1767600000400, "condense_context", "", contextCondense={"summary": "对话摘要 SUMMARY_LIME", "cost": 0.01}),
        say(1767600000500, "completion_result", "重构完成。日本語: 完了。한국어: 완료 DONE_LIME"),
    ]


def child_task() -> list[dict[str, Any]]:
    return [
        say(1767600000210, "text", "拆分 PaymentService DELEGATE_LIME"),
        ask(1767600000220, "command", "pytest tests/payments RUN_LIME"),
        say(1767600000230, "command_output", "12 passed OUT_LIME"),
        say(1767600000240, "completion_result", "PaymentService 已拆分 RETURNED_LIME"),
    ]


def read(folder: Path) -> list[Any]:
    return list(
        ADAPTER.read(Source(provider="roo", path=str(folder), fingerprint=fingerprint(folder), append_only=False))
    )


def session_of(items: list[Any]) -> Session:
    return [i for i in items if isinstance(i, Session)][-1]


def test_a_subtask_links_to_its_parent_and_its_prompt_is_the_parents(tmp_path: Path) -> None:
    root = storage(tmp_path)
    parent = write_task(
        root,
        PARENT,
        parent_task(),
        {
            "id": PARENT,
            "number": 1,
            "ts": 1767600000500,
            "task": "重构支付模块，拆成两个子任务 REFACTOR_LIME",
            "workspace": "/home/dev/pay",
            "tokensIn": 900,
            "tokensOut": 120,
            "mode": "orchestrator",
        },
    )
    child = write_task(
        root,
        CHILD,
        child_task(),
        {
            "id": CHILD,
            "number": 2,
            "ts": 1767600000240,
            "task": "拆分 PaymentService DELEGATE_LIME",
            "workspace": "/home/dev/pay",
            "parentTaskId": PARENT,
            "rootTaskId": PARENT,
        },
    )
    p_items, c_items = read(parent), read(child)
    assert [(e.kind, e.origin) for e in events(p_items)] == [
        ("user", "human"),
        ("tool_call", "agent"),
        ("meta", "agent"),
        ("meta", "provider"),
        ("assistant", "agent"),
    ]
    assert events(p_items)[3].text == "对话摘要 SUMMARY_LIME", "a condensing keeps its summary as meta"
    assert events(p_items)[1].tool == "newTask"
    ps = session_of(p_items)
    assert (ps.parent, ps.cwd, ps.title, ps.title_source, ps.tokens_in, ps.resume) == (
        None,
        "/home/dev/pay",
        "重构支付模块，拆成两个子任务 REFACTOR_LIME",
        "prompt",
        900,
        None,
    )
    assert [(e.kind, e.origin) for e in events(c_items)] == [
        ("user", "provider"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
    ]
    cs = session_of(c_items)
    assert cs.parent == f"roo:{PARENT}" and cs.native_id == CHILD
    assert probe(str(parent)) == "ui_messages"


def test_api_view_of_a_subtask_is_not_a_persons_either(tmp_path: Path) -> None:
    folder = write_task(
        storage(tmp_path),
        CHILD,
        None,
        {"id": CHILD, "task": "t", "parentTaskId": PARENT},
        api=[
            {"role": "user", "content": [{"type": "text", "text": "<task>\n子任务 SUBTASK_LIME\n</task>"}]},
            {
                "role": "assistant",
                "content": [{"type": "reasoning", "text": "想一想 THINK_LIME"}, {"type": "text", "text": "好的"}],
            },
            {"role": "user", "content": [{"type": "text", "text": "<feedback>\n继续 ONWARD_LIME\n</feedback>"}]},
        ],
    )
    assert [(e.kind, e.origin) for e in events(read(folder))] == [
        ("user", "provider"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("user", "human"),
    ]


def test_broken_and_missing_pieces(tmp_path: Path) -> None:
    root = storage(tmp_path)
    broken = write_task(root, "broken", None)
    (broken / "ui_messages.json").write_text('[{"ts": 1, "type": "say", "say": "text", "text": "half')
    (notice,) = read(broken)
    assert isinstance(notice, Notice) and notice.fatal and notice.transient
    odd = write_task(
        root, "odd", [say(1, "text", "the task"), 7, {"type": "whisper"}, say(2, "text", "a reply")], item=None
    )
    (root / "tasks" / "odd" / "history_item.json").write_text("not json")
    items = read(odd)
    assert [e.text for e in events(items)] == ["the task", "a reply"]
    assert "2 records" in notices(items)[0].reason and "Roo Code" in notices(items)[0].reason
    assert session_of(items).title is None
    write_task(root, "empty-folder", None)
    found = list(ADAPTER.discover({"HOME": str(tmp_path)}))
    assert any(isinstance(n, Notice) and n.source.endswith("empty-folder") for n in found)


def test_where_roo_is_looked_for(tmp_path: Path) -> None:
    home = tmp_path / "home"
    write_task(storage(home, "VSCodium"), "a", [say(1, "text", "x")])
    write_task(storage(home, "Cursor"), "b", [say(1, "text", "y")])
    env = {"HOME": str(home)}
    assert sorted(Path(s.path).name for s in ADAPTER.discover(env) if isinstance(s, Source)) == ["a", "b"]
    named = {**env, "VOYAGER_ROO_HOME": str(storage(home, "Cursor"))}
    assert [Path(s.path).name for s in ADAPTER.discover(named) if isinstance(s, Source)] == ["b"]
    assert ADAPTER.roots({**named, "VOYAGER_ZOO_CODE_HOME": "/z"}) == [
        storage(home, "Cursor") / "tasks",
        Path("/z/tasks"),
    ]
    assert storage_dirs({"HOME": "/h", "XDG_CONFIG_HOME": "/x"})[0] == Path("/x/Code/User/globalStorage") / EXT


def test_vscode_user_dirs_per_platform() -> None:
    env = {"HOME": "/h", "APPDATA": "/w", "XDG_CONFIG_HOME": "/x"}
    assert vscode_user_dirs(env, ("Code",), platform="linux") == [Path("/x/Code/User")]
    assert vscode_user_dirs({"HOME": "/h"}, ("Code", "Cursor"), platform="linux") == [
        Path("/h/.config/Code/User"),
        Path("/h/.config/Cursor/User"),
    ]
    assert vscode_user_dirs(env, ("VSCodium",), platform="darwin") == [
        Path("/h/Library/Application Support/VSCodium/User")
    ]
    assert vscode_user_dirs(env, ("Code",), platform="win32") == [Path("/w/Code/User")]


def test_peer_samples(home: Path, run) -> None:
    check_sample(PeerHome("roo", home, run), "roo")
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "roo")
    assert report["evidence"] == "documented" and report["versions"] == []
    assert report["shapes"] == {"api_conversation_history": 1, "ui_messages": 3}
    assert report["indexed_sessions"] == 4


def test_scan_is_read_only_and_a_rewrite_replaces_the_task(home: Path, run) -> None:
    root = storage(home)
    folder = write_task(root, PARENT, parent_task()[:2], {"id": PARENT, "task": "重构支付模块", "workspace": "/w"})
    write_task(root, CHILD, child_task(), {"id": CHILD, "task": "拆分", "parentTaskId": PARENT})
    tree = {str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir" for p in root.rglob("*")}
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["providers"]["roo"] == 2
    assert {
        str(p): hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "dir" for p in root.rglob("*")
    } == tree
    (folder / "ui_messages.json").write_text(json.dumps(parent_task(), ensure_ascii=False), encoding="utf-8")
    doc = json.loads(run("scan", "--json").stdout)
    assert doc["changed"] == 1 and doc["events_removed"] == 1 and doc["events_added"] == 5
    hits = run.json("search", "DELEGATE_LIME", "--json", "--no-refresh")["hits"]
    assert sorted((h["kind"], h["origin"]) for h in hits) == [("tool_call", "agent"), ("user", "provider")]
    sessions = {s["native_id"]: s for s in run.json("list", "--json", "--provider", "roo")["sessions"]}
    assert sessions[CHILD]["parent"] == f"roo:{PARENT}"


def test_an_unknown_kind_is_named_briefly(tmp_path: Path) -> None:
    folder = write_task(storage(tmp_path), "long", [say(1, "text", "task"), say(2, "x" * 10_000, "?")])
    (notice,) = notices(read(folder))
    assert "say:xxx" in notice.reason and len(notice.reason) < 300


# -- Zoo Code (documented, splitrail `zoo_code.rs`): Roo's task folders under its own extension id ---------------

ZOO = "zoocodeorganization.zoo-code"


def zoo_task() -> list[dict[str, Any]]:
    return [
        say(1767700000000, "text", "给接口加缓存 PROMPT_ZOO"),
        say(1767700000050, "reasoning", "先看热点 THINK_ZOO"),
        ask(1767700000100, "command", "redis-cli info 缓存_zoo"),
        say(1767700000200, "command_output", "TOOLOUT_ZOO used_memory"),
        say(1767700000300, "user_feedback", "再加过期时间 PROMPT2_ZOO"),
        say(1767700000400, "completion_result", "已加缓存 REPLY_ZOO。日本語: 完了"),
    ]


def test_zoo_code_tasks_hold_to_the_contract(home: Path, run) -> None:
    from tests.support.scanning import sessions
    from tests.support.documented import check_sample

    root = home / ".config" / "Windsurf" / "User" / "globalStorage" / ZOO
    write_task(
        root,
        "zoo-task-1",
        zoo_task(),
        {"id": "zoo-task-1", "task": "给接口加缓存 PROMPT_ZOO", "workspace": "/home/dev/api"},
    )
    markers = {
        "prompt": ["给接口加缓存 PROMPT_ZOO", "再加过期时间 PROMPT2_ZOO"],
        "thinking": ["THINK_ZOO"],
        "call": ["redis-cli info 缓存_zoo"],
        "result": ["TOOLOUT_ZOO"],
        "reply": ["REPLY_ZOO"],
    }
    check_sample(run, home, "roo", markers, calls=0)  # the panel's messages name no call ids
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["resume"]) == ("roo:zoo-task-1", "/home/dev/api", None)


def test_a_task_zoo_carried_over_from_roo_is_one_session(home: Path, run) -> None:
    from tests.support.scanning import hits, scan

    write_task(storage(home), "same-id", zoo_task())
    write_task(home / ".config" / "Code" / "User" / "globalStorage" / ZOO, "same-id", zoo_task())
    assert scan(run)["failed"] == 0
    assert len({h["session_id"] for h in hits(run, "PROMPT_ZOO")}) == 1


def test_where_zoo_is_looked_for(tmp_path: Path) -> None:
    from voyager_sessions.ingest.adapters.roo import zoo_dirs

    dirs = zoo_dirs({"HOME": str(tmp_path), "XDG_CONFIG_HOME": "/x"})
    assert Path("/x/Code/User/globalStorage") / ZOO in dirs and Path("/x/Positron/User/globalStorage") / ZOO in dirs
    assert zoo_dirs({"HOME": "/h", "VOYAGER_ZOO_CODE_HOME": "/z"}) == [Path("/z")]
    write_task(tmp_path / "z", "t1", zoo_task())
    found = [
        s
        for s in ADAPTER.discover({"HOME": "/nowhere", "VOYAGER_ZOO_CODE_HOME": str(tmp_path / "z")})
        if isinstance(s, Source)
    ]
    assert [Path(s.path).name for s in found] == ["t1"]
