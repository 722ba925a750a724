"""Claude.ai data exports (documented) through ``voyager import`` and ``voyager scan``.

No real export was seen: the ``conversations.json`` below follows the documented shape
(``uuid``, ``name``, ``chat_messages`` with ``sender``, ``text``/``content`` blocks,
``created_at``), with CJK text, thinking, a tool use and its result, an attachment (meta:
attached, not typed), messages with only ``text``, an edited prompt left behind by
``current_leaf_message_uuid``, the zip read in place, and hostile pieces.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.samples.claude_ai import ROOT, conversation, msg, write_export
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters._exports import kind_of
from voyager_sessions.ingest.adapters.claude_ai import visible_branch


def test_an_imported_export_is_searchable_with_its_kinds(home: Path, tmp_path: Path, run) -> None:
    export = write_export(tmp_path / "dl" / "data-2026-01-01.zip", [conversation()], as_zip=True)
    assert kind_of(export) == "claude-ai"
    res = run("import", str(export))
    assert res.exit_code == 0 and "Claude.ai export" in res.stdout, res.stderr
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_CAI", "user", "human")["provider"] == "claude-ai"
    assert one(run, "TEXTONLY_CAI", "user", "human")
    assert one(run, "THINK_CAI", "reasoning", "agent")
    assert one(run, "SEARCH_CAI", "tool_call", "agent")
    assert one(run, "TOOLOUT_CAI", "tool_result", "tool")
    assert one(run, "REPLY_CAI", "assistant", "agent") and one(run, "PLAIN_CAI", "assistant", "agent")
    assert one(run, "ATTACH_CAI", "meta", "provider"), "an attachment is not typed"
    assert not hits(run, "OLDPROMPT_CAI"), "the branch an edit left behind"
    (row,) = sessions(run).values()
    assert row["title"] == "登录修复 TITLE_CAI" and row["resume"] is None
    assert row["session_id"] == "claude-ai:c1a2b3c4-0000-4000-8000-00000000000a"


def test_without_a_leaf_every_message_in_order(home: Path, tmp_path: Path, run) -> None:
    export = write_export(tmp_path / "conversations.json", [conversation(leaf=None)])
    run("import", str(export))
    scan(run)
    assert one(run, "OLDPROMPT_CAI", "user", "human") and one(run, "PROMPT_CAI", "user", "human")


def test_hostile_pieces_cost_only_themselves(home: Path, tmp_path: Path, run) -> None:
    bad = conversation(
        "c2",
        leaf=None,
        extra=[5, msg("m6", "m5", "system", text="x"), msg("m7", "m6", "assistant", [{"type": "sparkle"}, 3])],
    )
    export = write_export(
        tmp_path / "conversations.json",
        [conversation(), bad, {"name": "no id"}, {"uuid": "c3", "chat_messages": "no"}, None],
    )
    run("import", str(export))
    out = scan(run)
    assert out["failed"] == 0 and len(sessions(run)) == 2
    for word in ("sender:system", "block:sparkle", "message:not-object", "conversation:no-id"):
        assert word in out["stderr"], word


def test_a_broken_export_is_named_not_empty(home: Path, tmp_path: Path, run) -> None:
    export = write_export(tmp_path / "conversations.json", [conversation()])
    run("import", str(export))
    export.write_text('[{"uuid": "x", "chat_messages": [', encoding="utf-8")
    res = run("scan", "--json")
    assert res.exit_code == 1 and json.loads(res.stdout)["failed"] == 1
    assert "conversations.json: not JSON" in res.stderr


def test_visible_branch() -> None:
    ms = [
        {"uuid": "a", "parent_message_uuid": ROOT},
        {"uuid": "b", "parent_message_uuid": "a"},
        {"uuid": "x", "parent_message_uuid": ROOT},
    ]
    assert [m["uuid"] for m in visible_branch(ms, "b")] == ["a", "b"]
    assert visible_branch(ms, "nope") == ms
    loop = [{"uuid": "a", "parent_message_uuid": "b"}, {"uuid": "b", "parent_message_uuid": "a"}]
    assert [m["uuid"] for m in visible_branch(loop, "b")] == ["a", "b"]


def test_a_conversation_gone_from_a_new_download_leaves_the_index(home: Path, tmp_path: Path, run) -> None:
    export = write_export(tmp_path / "conversations.json", [conversation(), conversation("c2", "第二个 GONE_CAI")])
    run("import", str(export))
    scan(run)
    assert len(sessions(run)) == 2
    write_export(export, [conversation()])
    scan(run)
    assert list(sessions(run)) == ["claude-ai:c1a2b3c4-0000-4000-8000-00000000000a"] and not hits(run, "GONE_CAI")
