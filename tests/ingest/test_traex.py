"""The TRAE CLI adapter (documented) against rollouts built here in Codex's format, under TRAE CLI's home.

No real TRAE CLI rollout was captured (the CLI needs a login); agentsview reads TRAE CLI with its
Codex parser unchanged, so the lines below are Codex rollout records (``session_meta``, a person's
``user_message``, the model's reasoning, a shell call and its output, the reply) under
``~/.trae/cli/sessions/YYYY/MM/DD/`` and ``archived_sessions/``; with CJK text, an appended turn,
a cut last line, Codex's own home left to Codex, and the quoted resume command.
"""

from __future__ import annotations
import json
import shlex
from pathlib import Path
from typing import Any
import pytest
from tests.support.scanning import hits, one, scan, sessions
from tests.support.documented import check_sample
from voyager_sessions.ingest.adapters.traex import ADAPTER
from tests.support.samples.traex import SID, CWD, MARKERS, line, rollout, write


def test_a_rollout_holds_to_the_contract(home: Path, run) -> None:
    write(home, rollout())
    assert check_sample(run, home, "traex", MARKERS)["new"] == 1
    (row,) = sessions(run).values()
    assert (row["session_id"], row["cwd"], row["model"]) == (f"traex:{SID}", CWD, "doubao-seed-code")
    assert shlex.split(row["resume"]) == ["traex", "resume", SID]


def test_archived_rollouts_are_read_and_codex_keeps_its_own(home: Path, run) -> None:
    write(home, rollout(), folder="archived_sessions")
    write(home, rollout(prompt="codex 的 PROMPT_CDX"), root=".codex")
    scan(run)
    assert one(run, "PROMPT_TRX", "user", "human")["provider"] == "traex"
    assert {h["provider"] for h in hits(run, "PROMPT_CDX")} == {"codex"}


def test_an_appended_turn_and_a_cut_line(home: Path, run) -> None:
    more = line("event_msg", {"type": "user_message", "message": "第二轮 PROMPT2_TRX"}, "2026-12-01T08:05:00.000Z")
    cut = json.dumps(more, ensure_ascii=False).encode()
    path = write(home, [*rollout(), cut[:30]])
    assert scan(run)["failed"] == 0 and one(run, "REPLY_TRX", "assistant", "agent")
    with path.open("ab") as f:
        f.write(cut[30:] + b"\n")
    assert scan(run)["grown"] == 1
    assert one(run, "PROMPT2_TRX", "user", "human")


def test_a_bad_record_costs_only_itself(home: Path, run) -> None:
    lines: list[Any] = rollout()
    write(home, [*lines[:5], b'{"type": "response_item", "payload": {\n', *lines[5:]])
    assert scan(run)["failed"] == 0
    assert one(run, "REPLY_TRX", "assistant", "agent") and one(run, "TOOLOUT_TRX", "tool_result", "tool")


def test_places(tmp_path: Path) -> None:
    assert ADAPTER.roots({"HOME": str(tmp_path)}) == [
        tmp_path / ".trae/cli/sessions",
        tmp_path / ".trae/cli/archived_sessions",
    ]
    assert ADAPTER.roots({"HOME": "/h", "VOYAGER_TRAEX_HOME": "/v"}) == [
        Path("/v/sessions"),
        Path("/v/archived_sessions"),
    ]


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(home: Path, run, evil: str) -> None:
    lines = rollout()
    lines[0]["payload"]["id"] = evil
    write(home, lines)
    scan(run)
    (row,) = sessions(run).values()
    assert shlex.split(row["resume"]) == ["traex", "resume", evil]
