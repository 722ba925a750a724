"""The Posit Assistant adapter (documented) against conversation folders written here as agentsview reads them.

No real conversation was captured (an IDE extension). A conversation is a tree of nodes
(``conversation.json``) naming the AI SDK model messages appended to ``lm-messages.jsonl``; the
workspace's ``workspace.json`` names the project. Checked: the contract (kinds, one prompt, paired
tool call, files untouched, an unchanged rescan), the summary tags as meta, an inactive branch left
out, the render log not indexed, a subagent's conversation under its parent, a turn added, a bad
line costing only itself, a tree cut short costing only the turns' order, and the place.
"""

from __future__ import annotations
import json
from pathlib import Path
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from tests.support.items import write
from voyager_sessions.ingest.adapters.posit_assistant import workspaces_dir
from tests.support.samples.posit_assistant import MARKERS, lm, tree, conversation, workspace


def test_a_conversation_holds_to_the_contract(home: Path, run) -> None:
    conversation(workspace(home) / "conv-1", lm(), tree())
    assert check_sample(run, home, "posit-assistant", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["title"], row["cwd"], row["git_branch"], row["model"]) == (
        "posit-assistant:conv-1",
        "销量趋势",
        "/home/dev/销量分析",
        "main",
        "claude-sonnet-4-5",
    )


def test_a_subagents_conversation_sits_under_its_parent(home: Path, run) -> None:
    parent = conversation(workspace(home) / "conv-1", lm(), tree())
    sub_lm = [
        {"id": 0, "message": {"role": "user", "content": "检查数据 DELEGATE_PST"}},
        {"id": 1, "message": {"role": "assistant", "content": "数据完整 SUBREPLY_PST"}},
    ]
    conversation(parent / "subagents" / "sub-1", sub_lm, tree("subagent", "conv-1", [[0], [1]]))
    scan(run)
    child = sessions(run)[one(run, "DELEGATE_PST", "user", "provider")["session_id"]]
    assert child["parent"] == "posit-assistant:conv-1" and child["cwd"] == "/home/dev/销量分析"


def test_a_turn_added_and_a_bad_line(home: Path, run) -> None:
    folder = conversation(workspace(home) / "conv-1", [*lm()[:2], b"{broken\n", *lm()[2:]], tree())
    assert scan(run)["failed"] == 0 and one(run, "REPLY_PST", "assistant", "agent")
    more = [*lm(), {"id": 6, "message": {"role": "user", "content": "改成柱状图 PROMPT2_PST"}}]
    write(folder / "lm-messages.jsonl", more)
    (folder / "conversation.json").write_text(json.dumps(tree(ids=[[0, 1], [2, 3], [4], [6]]), ensure_ascii=False))
    out = scan(run)
    assert out["changed"] == 1 and out["events_added"] == 1, out
    assert one(run, "PROMPT2_PST", "user", "human") and not hits(run, "INACTIVE_PST")


def test_a_tree_cut_by_a_crash_costs_the_order_not_the_conversation(home: Path, run) -> None:
    folder = conversation(workspace(home) / "conv-1", lm(), tree())
    (folder / "conversation.json").write_text(json.dumps(tree(), ensure_ascii=False)[:60])
    out = json.loads(run("scan", "--json").stdout)
    assert out["failed"] == 0 and out["new"] == 1, out
    assert one(run, "PROMPT_PST", "user", "human") and one(run, "REPLY_PST", "assistant", "agent")
    assert hits(run, "INACTIVE_PST"), "with no tree to say which branch is current, every model message is read"
    (folder / "conversation.json").write_text(json.dumps(tree(), ensure_ascii=False))
    assert scan(run)["changed"] == 1 and not hits(run, "INACTIVE_PST"), "the tree back: its branch again"
    (folder / "conversation.json").write_text(json.dumps(tree(ids=[[0, 1], ["2"], ["3"]]), ensure_ascii=False))
    assert scan(run)["changed"] == 1 and one(run, "REPLY_PST", "assistant", "agent"), (
        "the messages of a broken node are read after the tree's"
    )
    assert not hits(run, "INACTIVE_PST"), "a message an inactive node names is still left out"


def test_place(tmp_path: Path) -> None:
    assert workspaces_dir({"HOME": str(tmp_path)}) == tmp_path / ".posit/assistant/workspaces"
    assert workspaces_dir({"HOME": "/h", "VOYAGER_POSIT_ASSISTANT_HOME": "/v"}) == Path("/v/workspaces")
