"""The Amp adapter (documented) against thread files built here in the shape peers' parsers and test data show.

No real Amp thread was seen (Amp needs an ampcode.com login): the files below follow the
documented ``T-<id>.json`` shape, with CJK text, thinking, a shell call whose result states
its exit code in Amp's own ``run`` spelling and one in the canonical spelling, a failed
tool, token usage, the title and the working directory, a rewritten thread adding only its
new turn through the CLI, a hostile file, an empty thread and the places.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.support.samples.amp import TID, messages, thread, write_thread
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.ingest.adapters.amp import ADAPTER, result_text, resume_command, threads_dir
from voyager_sessions.ingest.adapters.base import Source, fingerprint

CWD = "/home/dev/支付 service"


def test_a_thread_maps_to_its_kinds(home: Path, run) -> None:
    write_thread(home, thread(messages()))
    out = scan(run)
    assert out["failed"] == 0 and out["new"] == 1
    assert one(run, "PROMPT_AMP", "user", "human")["provider"] == "amp"
    assert one(run, "THINK_AMP", "reasoning", "agent")
    assert one(run, "pytest -q 测试.py", "tool_call", "agent")
    assert one(run, "TOOLOUT_AMP", "tool_result", "tool")
    assert one(run, "READ_AMP", "tool_result", "tool")
    assert one(run, "EDITFAIL_AMP", "tool_result", "tool")
    assert one(run, "REPLY_AMP", "assistant", "agent")
    assert [h["kind"] for h in hits(run, "TITLE_AMP")] == ["title"]
    (row,) = sessions(run).values()
    assert row["cwd"] == CWD and row["title"] == "迁移数据库 TITLE_AMP"
    assert row["resume"] == resume_command(CWD, TID)


def test_exit_codes_errors_and_tokens(home: Path) -> None:
    path = write_thread(home, thread(messages()))
    items = list(ADAPTER.read(Source(provider="amp", path=str(path), fingerprint=fingerprint(path))))
    session = items[0]
    assert (session.model, session.tokens_in, session.tokens_out) == ("claude-sonnet-4", 215, 45)
    assert session.started == 1767225600.0 and session.updated == 1767225607.0
    results = {e.call_id: e for e in items if getattr(e, "kind", None) == "tool_result"}
    assert (results["toolu_1"].exit_code, results["toolu_1"].is_error) == (1, True)
    assert (results["toolu_2"].exit_code, results["toolu_2"].is_error) == (None, False)
    assert results["toolu_3"].is_error is True
    assert [e.kind for e in items if getattr(e, "kind", None) == "user"] == ["user"], "tool results are no prompts"


def test_result_text() -> None:
    assert result_text({"output": "x", "exitCode": 0}) == "x"
    assert result_text({"diff": "--- a"}) == "--- a"
    assert result_text(["a", "b"]) == "a\nb"
    assert result_text({"foo": "数据"}) == '{"foo":"数据"}'
    assert result_text(None) == ""


def test_a_rewritten_thread_adds_only_its_new_turn(home: Path, run) -> None:
    path = write_thread(home, thread(messages()))
    first = scan(run)
    more = [*messages(), {"role": "user", "content": [{"type": "text", "text": "第二轮 PROMPT2_AMP"}]}]
    path.write_text(json.dumps(thread(more), ensure_ascii=False), encoding="utf-8")
    second = scan(run)
    assert (second["changed"], second["events_added"], second["events_removed"]) == (1, 1, 0), (first, second)
    assert one(run, "PROMPT2_AMP", "user", "human")


def test_hostile_pieces_cost_only_themselves(home: Path, run) -> None:
    items = [
        *messages(),
        7,
        {"role": "info", "content": "x"},
        {"role": "user", "content": [5, {"type": "sparkle"}]},
        {"role": "assistant", "content": "纯文本 PLAIN_AMP", "usage": "nope"},
    ]
    write_thread(home, thread(items, env=[], meta=None, created="soon"))
    write_thread(home, "{broken", tid="T-broken")
    write_thread(home, thread([]), tid="T-empty")
    out = scan(run)
    assert one(run, "REPLY_AMP", "assistant", "agent") and one(run, "PLAIN_AMP", "assistant", "agent")
    assert "role:info" in out["stderr"] and "block:sparkle" in out["stderr"]
    assert "T-broken.json" in out["stderr"]


def test_places_and_what_is_not_a_thread(tmp_path: Path) -> None:
    assert threads_dir({"HOME": str(tmp_path)}) == tmp_path / ".local/share/amp/threads"
    assert threads_dir({"HOME": "/h", "XDG_DATA_HOME": "/x"}) == Path("/x/amp/threads")
    assert threads_dir({"HOME": "/h", "VOYAGER_AMP_HOME": "/v"}) == Path("/v/threads")
    root = tmp_path / ".local/share/amp/threads"
    root.mkdir(parents=True)
    (root / f"{TID}.json").write_text("{}")
    (root / "index.json").write_text("{}")
    found = [s.path for s in ADAPTER.discover({"HOME": str(tmp_path)})]
    assert found == [str(root / f"{TID}.json")]


@pytest.mark.parametrize("evil", ["a; touch pwned", "$(touch pwned)", "it's"])
def test_the_resume_command_is_quoted(evil: str) -> None:
    import shlex

    assert shlex.split(resume_command(evil, evil)) == ["cd", evil, "&&", "amp", "threads", "continue", evil]


@pytest.mark.parametrize("uri", ["http://x/y", "file://relative", 5])
def test_a_cwd_only_from_a_file_uri(uri: Any) -> None:
    from voyager_sessions.ingest.adapters.amp import cwd_of

    assert cwd_of({"env": {"initial": {"trees": [{"uri": uri}]}}}) is None
