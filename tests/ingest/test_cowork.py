"""The Claude Desktop Cowork adapter (documented) against session folders built here as agentsview's reader describes them.

No real Cowork session was captured (the desktop app does not run here). Each session is a card
``local_<uuid>.json`` (title, ``cliSessionId``, times) beside a folder whose ``.claude/projects``
holds a Claude Code transcript named by that id, and its subagents; the rest of the folder (the
work's outputs) and ``skills-plugin/`` are not sessions. Checked: the contract (kinds, one prompt,
paired tool calls, files untouched), the card's title and a rename seen by the stat pass, the
``ai-title`` line when the card has none, outputs never read, no resume command, and the places.
"""

from __future__ import annotations
import json
from pathlib import Path
from typing import Any
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.cowork import ADAPTER, STORE_APP_DIR, card_path, sessions_roots
from tests.support.samples.cowork import CLI, LOCAL, MARKERS, rec, transcript, write


def test_a_session_holds_to_the_contract(home: Path, run) -> None:
    write(home)
    assert check_sample(run, home, "cowork", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert row["session_id"] == f"cowork:{CLI}" and row["title"] == "Invoices CARDTITLE_CWK"
    assert row["resume"] is None and row["model"] == "claude-sonnet-4-5"
    assert not [h for h in hits(run, "PROMPT_CWK") if h["provider"] == "claude"]


def test_a_rename_in_the_app_is_seen(home: Path, run) -> None:
    write(home)
    scan(run)
    card = home / ".config/Claude/local-agent-mode-sessions/org-1/ws-1" / f"{LOCAL}.json"
    doc = json.loads(card.read_text())
    card.write_text(json.dumps({**doc, "title": "Renamed RENAMED_CWK"}))
    out = scan(run)
    assert out["changed"] + out["grown"] == 1, out
    (row,) = sessions(run).values()
    assert row["title"] == "Renamed RENAMED_CWK"


def test_without_a_card_title_the_generated_one(home: Path, run) -> None:
    write(home, card={"cliSessionId": CLI})
    scan(run)
    (row,) = sessions(run).values()
    assert row["title"] == "发票整理 AITITLE_CWK" and row["title_source"] == "agent"


def test_a_card_with_a_bom_or_cut_short(home: Path, run) -> None:
    write(home)
    card = home / ".config/Claude/local-agent-mode-sessions/org-1/ws-1" / f"{LOCAL}.json"
    card.write_bytes(b"\xef\xbb\xbf" + card.read_bytes())  # what a Windows editor saves
    scan(run)
    assert sessions(run)[f"cowork:{CLI}"]["title"] == "Invoices CARDTITLE_CWK"
    card.write_bytes(card.read_bytes()[:40])
    out = scan(run)
    assert out["failed"] == 0 and sessions(run)[f"cowork:{CLI}"]["title"] == "发票整理 AITITLE_CWK", (
        "no card: the transcript"
    )


def test_a_subagent_is_a_session_under_its_parent(home: Path, run) -> None:
    path = write(home)
    sub = path.parent / CLI / "subagents" / "agent-a1.jsonl"
    sub.parent.mkdir(parents=True)
    sub.write_text(
        json.dumps(rec("user", "子任务 SUB_CWK", "s1", "2026-03-01T10:00:02Z", isSidechain=True), ensure_ascii=False)
        + "\n"
    )
    scan(run)
    child = sessions(run)[one(run, "SUB_CWK", "user", "provider")["session_id"]]
    assert child["parent"] == f"cowork:{CLI}"


def test_a_cut_line_costs_only_itself(home: Path, run) -> None:
    lines: list[Any] = transcript()
    path = write(home, lines=lines[:3])
    with path.open("a") as f:
        f.write('{"type": "user", "message": {"content": [\n')
        f.write("".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines[3:]))
    assert scan(run)["failed"] == 0 and one(run, "REPLY_CWK", "assistant", "agent")


def test_places(tmp_path: Path) -> None:
    h = str(tmp_path)
    assert sessions_roots({"HOME": h}, platform="linux") == [tmp_path / ".config/Claude/local-agent-mode-sessions"]
    assert sessions_roots({"HOME": h}, platform="darwin") == [
        tmp_path / "Library/Application Support/Claude/local-agent-mode-sessions"
    ]
    assert sessions_roots({"HOME": h, "APPDATA": "/a", "LOCALAPPDATA": "/l"}, platform="win32") == [
        Path("/a/Claude/local-agent-mode-sessions"),
        Path("/l") / STORE_APP_DIR / "local-agent-mode-sessions",
    ]
    assert sessions_roots({"HOME": h, "VOYAGER_COWORK_HOME": "/v"}) == [Path("/v")]
    assert ADAPTER.roots({"HOME": h})[0].is_relative_to(tmp_path)
    assert card_path(f"/r/o/w/{LOCAL}/.claude/projects/x/{CLI}.jsonl") == f"/r/o/w/{LOCAL}.json"
    assert card_path(f"/r/o/w/other/.claude/projects/x/{CLI}.jsonl") is None
