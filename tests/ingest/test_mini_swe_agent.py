"""The mini-swe-agent adapter (observed 2.4.6): one trajectory file that every run overwrites.

The capture itself runs through ``test_captures.py``; here: the task cut out of its template,
what a person typed in the interactive modes versus mini's own messages, hostile records, a run
growing step by step and a new run overwriting the file (through the CLI: the earlier run stays
findable), an empty store and where the file is looked for.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.support.captures import CAPTURES
from tests.support.items import events, notices
from tests.support.samples.mini_swe_agent import TEMPLATE, config_dir, read, trajectory, write
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Source, Unchanged
from voyager_sessions.ingest.adapters.mini_swe_agent import ADAPTER, FILE, split_task


def test_the_task_is_the_persons_and_the_template_around_it_is_not(tmp_path: Path) -> None:
    items = read(write(tmp_path, trajectory("LOGIN")))
    evs = events(items)
    assert [(e.kind, e.origin) for e in evs] == [
        ("meta", "provider"),
        ("user", "human"),
        ("meta", "provider"),
        ("reasoning", "agent"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
        ("assistant", "agent"),
        ("tool_call", "agent"),
        ("tool_result", "tool"),
    ]
    assert evs[1].text == "修复登录 LOGIN_TASK"
    assert "You can execute bash commands." in evs[2].text and "LOGIN_TASK" not in evs[2].text
    assert evs[5].text == "grep -r login LOGIN_CMD" and evs[5].tool == "bash" and evs[5].call_id == "call_1"
    assert (evs[6].text, evs[6].exit_code, evs[6].is_error) == ("LOGIN_OUT 找到了\n", 0, False)
    assert (evs[9].exit_code, evs[9].is_error) == (-1, True)
    assert [e.text for e in evs if e.kind == "reasoning"] == ["想一想 LOGIN_THINK"], "reasoning indexed once"
    (session,) = [i for i in items if isinstance(i, Session)]
    assert (session.cwd, session.resume, session.model, session.started) == (
        None,
        None,
        "openai/mock-model",
        1796167163.0,
    )
    assert session.native_id.startswith("run-") and (session.tokens_in, session.tokens_out) == (20, 4)


def test_without_a_template_the_whole_first_message_is_the_prompt() -> None:
    assert split_task("Please solve this issue: fix it\n\nmore", "Please solve this issue: {{ task }}\n\nmore") == (
        "fix it",
        "Please solve this issue: \n\nmore",
    )
    assert split_task("Your task: x", None) is None
    assert split_task("something else entirely", TEMPLATE) is None
    assert split_task("{% if a %}x", "{% if a %}{{task}}") is None


def test_what_a_person_typed_in_the_interactive_modes_is_human_and_mines_own_is_meta(tmp_path: Path) -> None:
    doc = trajectory("IA")
    doc["messages"][6:6] = [
        {
            "role": "user",
            "content": "The user added a new task: 也修复注销 NEWTASK_IA",
            "extra": {"interrupt_type": "UserNewTask"},
        },
        {
            "role": "user",
            "content": "Commands not executed. The user rejected your commands with the following message: "
            "不要删 REJECT_IA",
            "extra": {"interrupt_type": "UserRejection"},
        },
        {
            "role": "user",
            "content": "Interrupted by user: Temporary interruption caught.",
            "extra": {"interrupt_type": "UserInterruption"},
        },
        {
            "role": "user",
            "content": "User command: \n```bash\nls -la HUMANCMD_IA\n```",
            "extra": {"actions": [{"command": "ls"}]},
        },
        {
            "role": "user",
            "content": "Please always provide EXACTLY ONE action FORMATERR_IA",
            "extra": {"interrupt_type": "FormatError"},
        },
    ]
    evs = [(e.kind, e.origin, e.text) for e in events(read(write(tmp_path, doc)))]
    assert ("user", "human", "也修复注销 NEWTASK_IA") in evs
    assert ("user", "human", "不要删 REJECT_IA") in evs
    assert ("user", "human", "ls -la HUMANCMD_IA") in evs
    assert ("meta", "provider", "Interrupted by user: Temporary interruption caught.") in evs
    assert ("meta", "provider", "Please always provide EXACTLY ONE action FORMATERR_IA") in evs
    assert sum(1 for k, o, _ in evs if (k, o) == ("user", "human")) == 4


def test_hostile_records_cost_only_themselves(tmp_path: Path) -> None:
    doc = trajectory("HOSTILE")
    doc["info"] = ["not", "an", "object"]
    doc["messages"][2:2] = [
        7,
        None,
        {"role": {"x": 1}},
        {"role": "assistant", "content": 5, "tool_calls": {"a": 1}, "extra": {"response": {"choices": "x"}}},
        {"role": "tool", "content": ["x"], "extra": {"returncode": 10**30}},
        {"role": "narrator", "content": "?"},
    ]
    items = read(write(tmp_path, doc))
    # No template (info is broken): the whole first message is the person's.
    assert [e for e in events(items) if e.origin == "human"][0].text.startswith(
        "Please solve this issue: 修复登录 HOSTILE_TASK"
    )
    assert any(e.text == "HOSTILE_OUT 找到了\n" for e in events(items))
    (notice,) = notices(items)
    assert "role:narrator" in notice.reason and not notice.fatal
    (bad,) = read(write(tmp_path, {"messages": {"not": "a list"}}))
    assert bad.fatal and "not a mini-swe-agent trajectory" in bad.reason


def test_a_new_run_leaves_the_earlier_one_unchanged_through_the_cursor(tmp_path: Path) -> None:
    path = write(tmp_path, trajectory("RUN1", steps=1))
    first = read(path)
    grown = read(write(tmp_path, trajectory("RUN1")), first[-1])
    assert {i.id for i in grown if isinstance(i, Session)} == {i.id for i in first if isinstance(i, Session)}
    assert not [i for i in grown if isinstance(i, Unchanged)], "the same run, grown by a step"
    new = read(write(tmp_path, trajectory("RUN2", t0=1796170000.0)), grown[-1])
    (old_id,) = {i.id for i in first if isinstance(i, Session)}
    assert [i.session for i in new if isinstance(i, Unchanged)] == [old_id]
    assert old_id not in {i.id for i in new if isinstance(i, Session)}


def test_an_overwritten_run_stays_findable_and_a_grown_one_is_not_doubled(home: Path, run) -> None:
    write(config_dir(home), trajectory("FIRSTRUN", steps=1))
    assert scan(run)["sessions"] == 1
    write(config_dir(home), trajectory("FIRSTRUN"))
    scan(run)
    one(run, "FIRSTRUN_TASK", "user", "human")
    one(run, "FIRSTRUN_REPLY", "assistant", "agent")
    assert len(sessions(run)) == 1, "a run saved after each step is one session"
    write(config_dir(home), trajectory("SECONDRUN", t0=1796170000.0))
    scan(run)
    first = one(run, "FIRSTRUN_TASK", "user", "human")
    second = one(run, "SECONDRUN_TASK", "user", "human")
    assert first["session_id"] != second["session_id"]
    assert len(sessions(run)) == 2
    write(config_dir(home), trajectory("THIRDRUN", t0=1796180000.0))
    scan(run)
    assert {len(hits(run, m)) > 0 for m in ("FIRSTRUN_TASK", "SECONDRUN_TASK", "THIRDRUN_TASK")} == {True}
    assert len(sessions(run)) == 3


def test_the_same_task_run_again_is_a_new_session(home: Path, run) -> None:
    write(config_dir(home), trajectory("AGAIN"))
    scan(run)
    write(config_dir(home), trajectory("AGAIN", t0=1796190000.0))
    scan(run)
    assert len([h for h in hits(run, "AGAIN_TASK") if h["origin"] == "human"]) == 2


def test_an_empty_store_is_no_error(home: Path, run) -> None:
    config_dir(home).mkdir(parents=True)
    (config_dir(home) / ".env").write_text("MSWEA_CONFIGURED=true\n")
    doc = scan(run)
    assert doc["sources"] == 0 and "mini" not in doc["stderr"]
    report = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["mini-swe-agent"]
    assert report["problems"] == [] and report["sources"] == 0


def test_the_global_config_variable_moves_the_file_and_the_voyager_variable_wins(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(config_dir(home), trajectory("HOME"))
    write(tmp_path / "mswea", trajectory("MOVED"))
    write(tmp_path / "xdg" / "mini-swe-agent", trajectory("XDG"))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    assert [Path(s.path).parent.name for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)] == [
        "mini-swe-agent"
    ]
    assert [str(Path(s.path).parent) for s in ADAPTER.discover(dict(os.environ))] == [
        str(tmp_path / "xdg" / "mini-swe-agent")
    ]
    monkeypatch.setenv("MSWEA_GLOBAL_CONFIG_DIR", str(tmp_path / "mswea"))
    assert [Path(s.path).parent.name for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)] == ["mswea"]
    monkeypatch.setenv("VOYAGER_MINI_SWE_AGENT_HOME", str(config_dir(home)))
    assert [str(Path(s.path).parent) for s in ADAPTER.discover(dict(os.environ))] == [str(config_dir(home))]


@pytest.mark.skipif(CAPTURES is None, reason="shared/fixtures/agents not found")
def test_the_capture_is_read_without_writing_anything(home: Path, run) -> None:
    shutil.copytree(CAPTURES / "mini-2.4.6" / ".config", home / ".config")  # type: ignore[operator]
    config = home / ".config"
    before = {p: p.is_dir() or p.read_bytes() for p in config.rglob("*")}
    assert scan(run)["sessions"] == 1
    assert {p: p.is_dir() or p.read_bytes() for p in config.rglob("*")} == before, (
        "nothing changed or created beside it"
    )
    (listed,) = sessions(run).values()
    assert listed["resume"] is None
    res = run("resume", listed["session_id"])
    assert res.exit_code != 0 and "voyager export" in res.stderr


def test_an_earlier_run_survives_a_file_caught_half_written(home: Path, run) -> None:
    write(config_dir(home), trajectory("BEFORECUT"))
    scan(run)
    path = config_dir(home) / FILE
    path.write_text(json.dumps(trajectory("AFTERCUT", t0=1796170000.0))[:200])  # mini caught mid-write
    res = run("scan", "--json")
    assert json.loads(res.stdout)["failed"] == 1 and "malformed JSON" in res.stderr
    one(run, "BEFORECUT_TASK", "user", "human")
    write(config_dir(home), trajectory("AFTERCUT", t0=1796170000.0))
    scan(run)
    one(run, "AFTERCUT_TASK", "user", "human")
    one(run, "BEFORECUT_TASK", "user", "human")
