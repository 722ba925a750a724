"""The Open Interpreter adapter (observed 0.4.3): conversation files with no id, cwd or time inside.

The capture itself runs through ``test_captures.py``; here: what each LMC message becomes, the id
and times that come from the file's name and mtime, hostile records, a conversation rewritten with
a new turn (through the CLI), an empty store and where the files are looked for.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

import pytest

from tests.support.captures import CAPTURES
from tests.support.items import events, notices
from tests.support.samples.open_interpreter import NAME, chat, conversations, write
from tests.support.scanning import hits, one, scan, sessions
from voyager_sessions.core.model import Session
from voyager_sessions.ingest.adapters.base import Source, fingerprint
from voyager_sessions.ingest.adapters.open_interpreter import ADAPTER, started_from_name


def read(path: Path) -> list[Any]:
    return list(ADAPTER.read(Source(provider="open-interpreter", path=str(path), fingerprint=fingerprint(path))))


def test_messages_become_events_and_the_name_gives_id_and_start(tmp_path: Path) -> None:
    path = write(tmp_path, chat())
    os.utime(path, (1800000000, 1800000000))
    items = read(path)
    assert [(e.kind, e.origin, e.tool) for e in events(items)] == [
        ("user", "human", None),
        ("assistant", "agent", None),
        ("tool_call", "agent", "python"),
        ("tool_result", "tool", None),
        ("assistant", "agent", None),
    ]
    assert all(e.ts is None and e.exit_code is None for e in events(items)), "the file records neither"
    (session,) = [i for i in items if isinstance(i, Session)]
    assert session.native_id == NAME and session.id == f"open-interpreter:{NAME}"
    assert session.started == started_from_name(NAME) and session.updated == 1800000000.0
    assert (session.cwd, session.resume, session.title) == (None, None, None)
    assert not notices(items)


def test_a_name_without_an_english_date_falls_back_to_the_mtime(tmp_path: Path) -> None:
    assert started_from_name("x__März_05_2026_09-30-15") is None
    assert started_from_name("no date at all") is None
    path = write(tmp_path, chat(), name="hello__März_05_2026_09-30-15")
    os.utime(path, (1800000000, 1800000000))
    (session,) = [i for i in read(path) if isinstance(i, Session)]
    assert session.started == session.updated == 1800000000.0


def test_hostile_records_cost_only_themselves_and_unknown_kinds_are_named(tmp_path: Path) -> None:
    messages = [
        7,
        None,
        {"role": "user", "type": "message", "content": ["not", "text"]},
        {"role": "assistant", "type": "thought", "content": "??"},
        {"role": ["x"], "type": {}},
        *chat("HOSTILE_OI"),
    ]
    items = read(write(tmp_path, messages))
    assert [e.text for e in events(items)][0] == "整理日志 HOSTILE_OI_PROMPT"
    (notice,) = notices(items)
    assert "assistant/thought" in notice.reason and "Open Interpreter" in notice.reason and not notice.fatal


def test_a_file_that_is_not_a_conversation_is_named(tmp_path: Path) -> None:
    (notice,) = read(write(tmp_path, {"messages": []}))
    assert notice.fatal and "not a list of messages" in notice.reason
    half = tmp_path / "half__March_05_2026_09-30-15.json"
    half.write_text('[{"role": "user", "type": "message", "content": "cut')
    (notice,) = read(half)
    assert notice.fatal and notice.transient


def test_a_rewritten_conversation_adds_its_new_turn_once(home: Path, run) -> None:
    path = write(conversations(home), chat("TURN1_OI"))
    assert scan(run)["sessions"] == 1
    write(conversations(home), chat("TURN1_OI") + chat("TURN2_OI")[:1] + chat("TURN2_OI")[-1:])
    scan(run)
    one(run, "TURN1_OI_PROMPT", "user", "human")
    one(run, "TURN2_OI_PROMPT", "user", "human")
    one(run, "TURN2_OI_REPLY", "assistant", "agent")
    assert len(sessions(run)) == 1
    path.unlink()
    scan(run)
    assert not hits(run, "TURN1_OI_PROMPT"), "a deleted conversation leaves the index"


def test_an_empty_store_is_no_error(home: Path, run) -> None:
    conversations(home).mkdir(parents=True)
    doc = scan(run)
    assert doc["sources"] == 0 and "skipped" not in doc["stderr"] and "open-interpreter" not in doc["stderr"]
    report = {p["provider"]: p for p in run.json("doctor", "--json")["providers"]}["open-interpreter"]
    assert report["problems"] == [] and report["roots_found"]


def test_an_empty_conversation_is_named_not_silently_empty(home: Path, run) -> None:
    write(conversations(home), [])
    doc = scan(run)
    assert doc["sessions"] == 0 and "no session found" in doc["stderr"]


def test_xdg_config_home_moves_the_store_and_the_voyager_variable_wins(
    home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(conversations(home), chat(), name="home__March_05_2026_09-30-15")
    write(tmp_path / "xdg" / "open-interpreter" / "conversations", chat(), name="xdg__March_05_2026_09-30-15")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))
    found = [Path(s.path).stem for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)]
    assert found == ["xdg__March_05_2026_09-30-15"]
    monkeypatch.setenv("VOYAGER_OPEN_INTERPRETER_HOME", str(home / ".config" / "open-interpreter"))
    found = [Path(s.path).stem for s in ADAPTER.discover(dict(os.environ)) if isinstance(s, Source)]
    assert found == ["home__March_05_2026_09-30-15"]


@pytest.mark.skipif(CAPTURES is None, reason="shared/fixtures/agents not found")
def test_the_capture_is_read_without_writing_anything(home: Path, run) -> None:
    shutil.copytree(CAPTURES / "interpreter-0.4.3" / ".config", home / ".config")  # type: ignore[operator]
    config = home / ".config"
    before = {p: p.is_dir() or p.read_bytes() for p in config.rglob("*")}
    assert scan(run)["sessions"] == 2
    assert {p: p.is_dir() or p.read_bytes() for p in config.rglob("*")} == before, (
        "nothing changed or created beside them"
    )
    listed = sessions(run)
    assert all(s["resume"] is None for s in listed.values()), "no resume by id"
    res = run("resume", next(iter(listed)))
    assert res.exit_code != 0 and "voyager export" in res.stderr
