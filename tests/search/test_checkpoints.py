"""Checkpoints are searchable beside the session's own events, shown first, and survive rescans."""

from __future__ import annotations

from tests.support.sessions import CLAUDE_SID, claude_session_lines


def test_checkpoint_is_found_shown_first_and_kept_across_rescans(corpus, run):
    run("scan")
    res = run(
        "checkpoint", "save", CLAUDE_SID[:8], "--objective", "Ship the 迁移 fix", "--blocker", "flaky quokka lock"
    )
    assert res.exit_code == 0, res.stderr
    hits = run.json("search", "--json", "quokka")["hits"]
    assert [(h["session_id"], h["kind"], h["origin"]) for h in hits] == [
        (f"claude:{CLAUDE_SID}", "checkpoint", "voyager")
    ]
    assert run.json("search", "--json", "kind:checkpoint", "迁移")["total"] == 1
    tl = run.json("show", "--json", CLAUDE_SID)
    assert tl["events"][0]["kind"] == "checkpoint" and "quokka" in tl["events"][0]["text"]

    # The session's file is rewritten: its events are replaced, the checkpoint stays.
    lines = claude_session_lines()
    lines[1] = lines[1].replace("帮我看看", "请检查")
    corpus["claude"].write_text("".join(lines), encoding="utf-8")
    assert run("scan").exit_code == 0
    assert run.json("search", "--json", "quokka")["total"] == 1

    # A changed save replaces it; clear removes it.
    run("checkpoint", "save", CLAUDE_SID[:8], "--blocker", "and a wombat")
    assert run.json("search", "--json", "quokka")["total"] == 1
    assert run.json("search", "--json", "wombat")["total"] == 1
    assert run("checkpoint", "clear", CLAUDE_SID[:8]).exit_code == 0
    assert run("search", "quokka").exit_code == 1
