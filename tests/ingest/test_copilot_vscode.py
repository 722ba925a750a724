"""Copilot Chat in VS Code (documented): peers' samples, and session files written here in both documented shapes.

The JSONL mutation log is replayed with the semantics of VS Code's own reader
(``objectMutationLog.ts``): those are pinned here entry kind by entry kind.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.items import write
from tests.support.peers import PeerHome, check_markers, tree
from tests.support.samples.copilot_vscode import CODE, request, rich_session, workspace
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.copilot_vscode import ADAPTER, probe, responder, user_dirs
from voyager_sessions.ingest.mutation_log import replay


def test_peer_samples_every_marker(home, run):
    peer = PeerHome("copilot-vscode", home, run)
    check_markers(peer, "copilot-vscode")
    assert peer.hits("partial") == []  # the stale marker: overwritten by a kind-1 set
    assert peer.scan["failed"] == 0 and peer.scan["skipped"] == [], peer.scan
    assert tree(home) == peer.before
    report = next(p for p in run.json("doctor", "--json")["providers"] if p["provider"] == "copilot-vscode")
    assert report["shapes"] == {"jsonl": 2, "json-v3": 2} and report["evidence"] == "documented"


def test_json_session_mapped(home, run):
    chats = workspace(home)
    (chats / "rich.json").write_text(json.dumps(rich_session(), ensure_ascii=False), encoding="utf-8")
    before = tree(home)
    doc = scan(run)
    sid = "copilot-vscode:rich"
    assert one(run, "PROMPTCVS", "user", "human")["session_id"] == sid
    assert one(run, "数据库迁移失败", "user", "human")
    assert one(run, "THINKCVS", "reasoning")
    # Streamed markdown fragments are one reply, an inline file reference kept by name.
    reply = one(run, "REPLYHALFCVS", "assistant")
    assert "Let me db.py run REPLYHALFCVS" in reply["snippet"].replace("\u2026", "")
    call = one(run, "pytest", "tool_call")
    assert call["tool"] == "run_in_terminal" and call["snippet"].startswith("pytest -q tests")
    out = one(run, "TOOLOUTCVS", "tool_result")
    assert out["exit_code"] == 1
    assert one(run, "filePath", "tool_call")["tool"] == "copilot_readFile"
    assert one(run, "READOUTCVS", "tool_result")["exit_code"] is None
    assert one(run, "REPLYCVS", "assistant")
    assert one(run, "ERRORCVS", "meta", "provider")
    assert one(run, "PROMPT2CVS", "user", "human")
    # Another extension's participant answered r2: left out, and named.
    assert hits(run, "OTHERPARTICIPANTCVS") == [] and hits(run, "OTHERREPLYCVS") == []
    assert "ms-azuretools.vscode-azure" in doc["stderr"] and "brandNewPart" in doc["stderr"]
    s = sessions(run)[sid]
    assert s["cwd"] == "/home/dev/商店" and s["title"] == "迁移数据库" and s["resume"] is None
    assert s["model"] == "copilot/gpt-5"
    assert tree(home) == before
    assert probe(chats / "rich.json") == "json-v3"


def test_jsonl_log_replayed_like_vscode(home, run):
    chats = workspace(home)
    session = rich_session()
    first = dict(session, requests=[])
    write(
        chats / "rich.jsonl",
        [
            {"kind": 0, "v": first},
            {"kind": 2, "k": ["requests"], "v": session["requests"][:1]},
            {"kind": 1, "k": ["requests", 0, "response", 1], "v": {"value": "OVERWRITTEN "}},
            {"kind": 2, "k": ["requests"], "v": [request("rx", "DROPPEDCVS", [{"value": "dropped reply"}])]},
            {"kind": 2, "k": ["requests"], "i": 1, "v": [request("r9", "KEPTCVS 最后", [{"value": "fine"}])]},
            {"kind": 3, "k": ["customTitle"]},
            {"kind": 1, "k": ["requests", 7, "response"], "v": []},  # leads nowhere: named, skipped
            {"kind": 9, "k": ["x"]},
        ],
        raw_tail=b'{"kind":1,"k":["requests",0,"message","text"],"v":"HALFWRITTEN',
    )
    # The .json of the same id is older: the log is read.
    (chats / "rich.json").write_text(json.dumps(dict(session, sessionId="rich"), ensure_ascii=False))
    doc = scan(run)
    assert doc["sources"] == 1
    assert one(run, "PROMPTCVS", "user", "human") and one(run, "KEPTCVS", "user", "human")
    assert hits(run, "DROPPEDCVS") == [] and hits(run, "HALFWRITTEN") == []
    assert one(run, "OVERWRITTEN", "assistant") and hits(run, "PROMPT2CVS") == []
    assert sessions(run)["copilot-vscode:rich"]["title"] != "迁移数据库"  # deleted by kind 3
    assert "could not be applied" in doc["stderr"] and "index 7" in doc["stderr"] and "kind 9" in doc["stderr"]
    assert probe(chats / "rich.jsonl") == "jsonl"


def test_a_grown_log_is_read_again(home, run):
    chats = workspace(home)
    path = write(
        chats / "s.jsonl",
        [
            {"kind": 0, "v": {"version": 3, "sessionId": "s", "requests": []}},
            {"kind": 2, "k": ["requests"], "v": [request("a", "GROWONECVS", [{"value": "ok"}])]},
        ],
    )
    doc = scan(run)
    assert doc["events_added"] == 2
    with open(path, "ab") as fh:
        fh.write(
            json.dumps({"kind": 2, "k": ["requests"], "v": [request("b", "GROWTWOCVS", [{"value": "yes"}])]}).encode()
            + b"\n"
        )
    doc = scan(run)
    assert doc["changed"] == 1 and doc["events_added"] == 4 and doc["events_removed"] == 2, doc
    assert one(run, "GROWTWOCVS", "user", "human")["session_id"] == "copilot-vscode:s"
    assert scan(run)["unchanged"] == 1


def test_global_containers_and_other_builds(home, run):
    workspace(home)
    (workspace(home) / "moved.json").write_text(json.dumps(dict(rich_session(), sessionId="moved")))
    glob = home / CODE / "globalStorage"
    (glob / "emptyWindowChatSessions").mkdir(parents=True)
    (glob / "emptyWindowChatSessions" / "e1.json").write_text(
        json.dumps({"version": 3, "sessionId": "e1", "requests": [request("q", "EMPTYWINDOWCVS", [])]})
    )
    (glob / "transferredChatSessions").mkdir()
    (glob / "transferredChatSessions" / "moved.json").write_text(json.dumps(rich_session()))
    insiders = home / ".config" / "Code - Insiders" / "User" / "globalStorage" / "emptyWindowChatSessions"
    insiders.mkdir(parents=True)
    (insiders / "i1.jsonl").write_text(
        json.dumps({"kind": 0, "v": {"version": 3, "sessionId": "i1", "requests": [request("q", "INSIDERSCVS", [])]}})
        + "\n"
    )
    doc = scan(run)
    assert doc["sources"] == 3, doc  # the transferred copy of "moved" is already in its workspace
    assert sessions(run)["copilot-vscode:e1"]["cwd"] is None
    assert one(run, "EMPTYWINDOWCVS", "user", "human") and one(run, "INSIDERSCVS", "user", "human")


def test_not_a_session_and_broken_files(home, run):
    chats = workspace(home)
    (chats / "index.json").write_text(json.dumps({"entries": {}}))
    (chats / "broken.json").write_text("{not json")
    (chats / "nolog.jsonl").write_text(json.dumps({"kind": 1, "k": ["a"], "v": 1}) + "\n")
    (chats / "good.json").write_text(
        json.dumps({"version": 3, "sessionId": "good", "requests": [request("q", "GOODNEIGHBOURCVS", [])]})
    )
    doc = scan(run)
    assert one(run, "GOODNEIGHBOURCVS", "user", "human")
    assert doc["failed"] == 3 and "not a chat session" in doc["stderr"] and "no initial state" in doc["stderr"]


def test_override_is_authoritative(home, run, monkeypatch):
    workspace(home)
    (workspace(home) / "def.json").write_text(json.dumps({"version": 3, "requests": [request("q", "DEFAULTCVS", [])]}))
    other = home.parent / "portable" / "User"
    chats = other / "workspaceStorage" / "w" / "chatSessions"
    chats.mkdir(parents=True)
    (chats / "o.json").write_text(json.dumps({"version": 3, "requests": [request("q", "OVERRIDECVS", [])]}))
    monkeypatch.setenv("VOYAGER_COPILOT_VSCODE_HOME", str(other))
    scan(run)
    assert one(run, "OVERRIDECVS", "user", "human") and hits(run, "DEFAULTCVS") == []
    assert user_dirs({"HOME": "/h", "VOYAGER_COPILOT_VSCODE_HOME": "/o"}) == [Path("/o")]
    assert user_dirs({"HOME": "/h", "XDG_CONFIG_HOME": "/x"}) == [
        Path("/x/Code/User"),
        Path("/x/Code - Insiders/User"),
        Path("/x/VSCodium/User"),
    ]
    assert ADAPTER.roots({"HOME": "/h"})[0] == Path("/h/.config/Code/User")


@pytest.mark.parametrize(
    "agent, who",
    [
        (None, None),
        ({"id": "github.copilot.default"}, None),
        ({"id": "x", "extensionId": {"value": "GitHub.copilot-chat"}}, None),
        (
            {"id": "mermaid", "extensionId": {"value": "MermaidChart.vscode-mermaid-chart"}},
            "MermaidChart.vscode-mermaid-chart",
        ),
        ({"id": "setup.agent"}, "setup.agent"),
    ],
)
def test_responder(agent, who):
    assert responder({"agent": agent} if agent is not None else {}) == who


# ---------------------------------------------------------------------------
# the mutation log, entry kind by entry kind (objectMutationLog.ts)
# ---------------------------------------------------------------------------


def test_replay_semantics(tmp_path):
    path = write(
        tmp_path / "l.jsonl",
        [
            {"kind": 0, "v": {"a": {"b": [1, 2, 3]}, "t": "x", "list": ["p", "q"]}},
            {"kind": 1, "k": ["a", "b", 1], "v": 20},  # set an array element
            {"kind": 1, "k": ["a", "b", 3], "v": 4},  # set one past the end appends (as JS does)
            {"kind": 2, "k": ["a", "b"], "v": [5]},  # push
            {"kind": 2, "k": ["list"], "i": 1},  # truncate only
            {"kind": 2, "k": ["fresh"], "v": [1]},  # push onto a missing array creates it
            {"kind": 3, "k": ["t"]},  # delete
            {"kind": 1, "k": [], "v": {"replaced": True}},  # root replacement: ignored by VS Code's reader
            {"kind": 1, "k": ["a", "new"], "v": {"n": 1}},  # set a new key
        ],
    )
    state, notices = replay(path)
    assert state == {"a": {"b": [1, 20, 3, 4, 5], "new": {"n": 1}}, "list": ["p"], "fresh": [1]}
    assert notices == []


def test_replay_compaction_restarts_and_bad_entries_are_named(tmp_path):
    path = write(
        tmp_path / "l.jsonl",
        [
            {"kind": 1, "k": ["early"], "v": 1},  # before any initial state
            {"kind": 0, "v": {"old": True}},
            {"kind": 0, "v": {"new": [1]}},  # a compaction writes a new initial state
            {"kind": 2, "k": ["new", 0], "v": [2]},  # not an array at that path (VS Code would throw)
            {"kind": 1, "k": ["missing", "deep"], "v": 1},
            "not an entry",
        ],
    )
    state, notices = replay(path)
    assert state == {"new": [1]}
    assert len(notices) == 1 and "4 changes could not be applied" in notices[0].reason, notices


def test_a_response_part_whose_kind_is_a_list_or_an_object_is_named_not_fatal():
    # `kind in _SILENT_PARTS` raised TypeError (unhashable) out of the read: the session lost.
    from voyager_sessions.ingest.adapters._common import UnknownRecords
    from voyager_sessions.ingest.adapters.copilot_vscode import session_items

    doc = rich_session()
    doc["requests"][0]["response"][:0] = [{"kind": {"odd": 1}}, {"kind": ["odd"]}]
    unknown = UnknownRecords("Copilot Chat")
    items, _ = session_items(doc, "rich", cwd=None, source="x", unknown=unknown)
    assert any("PROMPTCVS" in getattr(i, "text", "") for i in items)
    assert unknown.notice("x") is not None and "response part" in unknown.notice("x").reason
