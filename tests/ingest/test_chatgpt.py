"""ChatGPT data exports (documented) through ``voyager import`` and ``voyager scan``, and the imports folder.

No real export was seen: the ``conversations.json`` below follows the documented shape (a
``mapping`` tree of nodes, ``current_node``, ``author.role``, ``content.parts``, epoch-second
``create_time``), with CJK text, an edited prompt whose old branch the visible path leaves
behind, hidden custom instructions, thoughts, a code-interpreter call and its output, a
browsing tool, the zip read in place, a re-downloaded export re-reading only what changed,
hostile pieces, a path that is no export, ``--list`` and ``--forget``.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.samples.chatgpt import conversation, node, write_export
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters._exports import kind_of
from voyager_sessions.ingest.adapters.chatgpt import visible_path


def test_an_imported_export_is_searchable_with_its_kinds(home: Path, tmp_path: Path, run) -> None:
    export = write_export(tmp_path / "下载" / "conversations.json", [conversation()])
    res = run("import", str(export))
    assert res.exit_code == 0, res.stderr
    assert "ChatGPT export" in res.stdout
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_GPT", "user", "human")["provider"] == "chatgpt"
    assert one(run, "THINK_GPT", "reasoning", "agent")
    assert one(run, "CODE_GPT", "tool_call", "agent")
    assert one(run, "TOOLOUT_GPT", "tool_result", "tool")
    assert one(run, "REPLY_GPT", "assistant", "agent")
    assert one(run, "PROFILE_GPT", "meta", "provider"), "custom instructions are no prompt"
    assert not hits(run, "OLDPROMPT_GPT") and not hits(run, "RECAP_GPT"), "an edited-away branch, a recap"
    (row,) = sessions(run).values()
    assert row["title"] == "数据库迁移 TITLE_GPT" and row["resume"] is None and row["cwd"] is None
    assert row["session_id"] == "chatgpt:67a1b2c3-0000-4000-8000-000000000001"


def test_the_zip_is_read_in_place_and_a_new_download_rereads_only_what_changed(home: Path, tmp_path: Path, run) -> None:
    export = write_export(
        tmp_path / "dl" / "chatgpt-export.zip", [conversation(), conversation("c2", "第二个 OTHER_GPT")], as_zip=True
    )
    assert kind_of(export) == "chatgpt"
    assert run("import", str(export)).exit_code == 0
    assert scan(run)["new"] == 1 and len(sessions(run)) == 2
    assert sorted(p.name for p in export.parent.iterdir()) == ["chatgpt-export.zip"], "nothing extracted"
    more = conversation(extra_nodes=[node("n10", "n9", "user", ["第二轮 PROMPT2_GPT"])], current="n10")
    write_export(export, [more, conversation("c2", "第二个 OTHER_GPT")], as_zip=True)
    again = scan(run)
    # The changed conversation is read again whole; the unchanged one is not read at all.
    assert again["changed"] == 1 and again["events_added"] == again["events_removed"] + 1
    assert one(run, "PROMPT2_GPT", "user", "human") and one(run, "OTHER_GPT", "title", "provider") is not None


def test_the_imports_folder_is_read_without_the_command(home: Path, run) -> None:
    write_export(home / "voyager-data" / "imports" / "conversations.json", [conversation()])
    assert scan(run)["new"] == 1
    listed = run.json("import", "--list", "--json")["imports"]
    assert [(r["kind"], r["recorded"]) for r in listed] == [("chatgpt", False)]


def test_voyager_imports_names_the_folder(home: Path, tmp_path: Path, run, monkeypatch: pytest.MonkeyPatch) -> None:
    folder = tmp_path / "我的导出"
    write_export(folder / "unpacked" / "conversations-000.json", [conversation()])
    monkeypatch.setenv("VOYAGER_IMPORTS", str(folder))
    assert scan(run)["new"] == 1


def test_hostile_pieces_cost_only_themselves(home: Path, tmp_path: Path, run) -> None:
    bad = conversation(
        "c3",
        extra_nodes=[node("n10", "n9", "critic", ["x"]), node("n11", "n10", "assistant", None, ctype="sparkle")],
        current="n11",
    )
    bad["mapping"]["n5"] = "nonsense"
    loop = conversation("c4")
    loop["mapping"]["root"]["parent"] = "n9"
    export = write_export(
        tmp_path / "conversations.json",
        [conversation(), bad, loop, 7, {"title": "no id"}, {"conversation_id": "c5", "mapping": []}],
    )
    assert run("import", str(export)).exit_code == 0
    out = scan(run)
    assert out["failed"] == 0
    assert len(sessions(run)) == 3
    assert (
        "role:critic" in out["stderr"]
        and "assistant:sparkle" in out["stderr"]
        and "conversation:no-id" in out["stderr"]
    )


def test_an_unpacked_folder_is_imported_whole(home: Path, tmp_path: Path, run) -> None:
    folder = tmp_path / "unpacked 导出"
    write_export(folder / "conversations-000.json", [conversation()])
    write_export(folder / "conversations-001.json", [conversation("c2", "第二个 SHARD_GPT")])
    (folder / "chat.html").write_text("<html></html>")
    res = run("import", str(folder))
    assert res.exit_code == 0 and "ChatGPT" in res.stdout, res.stderr
    assert scan(run)["new"] == 2 and one(run, "SHARD_GPT", "title", "provider") is not None
    assert len(sessions(run)) == 2


def test_what_is_no_export_is_refused_in_one_line(home: Path, tmp_path: Path, run) -> None:
    other = tmp_path / "notes.json"
    other.write_text('{"a": 1}')
    res = run("import", str(other))
    assert (
        res.exit_code == 2
        and "not a ChatGPT, Claude.ai or Gemini Apps export" in res.stderr
        and "Traceback" not in res.stderr
    )
    res = run("import", str(tmp_path / "nowhere.zip"))
    assert res.exit_code == 2 and "no such file" in res.stderr


def test_forget_and_list(home: Path, tmp_path: Path, run) -> None:
    export = write_export(tmp_path / "conversations.json", [conversation()])
    run("import", str(export))
    assert "already recorded" in run("import", str(export)).stdout
    scan(run)
    assert run("import", "--forget", str(export)).exit_code == 0
    assert scan(run)["removed"] == 1 and not sessions(run)
    assert run("import", "--list").exit_code == 1


def test_a_vanished_import_is_listed_as_missing(home: Path, tmp_path: Path, run) -> None:
    export = write_export(tmp_path / "conversations.json", [conversation()])
    run("import", str(export))
    export.unlink()
    (row,) = run.json("import", "--list", "--json")["imports"]
    assert (row["present"], row["kind"]) == (False, None)


def test_visible_path() -> None:
    mapping = {"a": {"parent": None}, "b": {"parent": "a"}, "c": {"parent": "b"}, "x": {"parent": "a"}}
    assert [n.get("parent") for n in visible_path(mapping, "c")] == [None, "a", "b"]
    assert len(visible_path(mapping, None)) == 4
