"""A session kept as one JSON document reads the same streamed as decoded whole (issue #28, huge documents).

Past ``jsondoc.STREAM_JSON_BYTES`` an adapter reads its document's messages one at a time
(``read_json_streamed``, ``doc_with_list``) instead of decoding the file whole. Each family's test document is
read both ways (the threshold lowered to 0 for the second) and must give every event alike,
field for field, and the same last Session; the streamed read must really have streamed.
The bombs that check the memory this buys are in ``test_bounds.py``.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import msgspec
import pytest

from tests.support.items import events, last_session, notices
from voyager_sessions.ingest import jsondoc
from voyager_sessions.ingest.adapters import (
    amp,
    chatgpt,
    continue_cli,
    copilot,
    copilot_vscode,
    gemini,
    kiro,
    mini_swe_agent,
    nanocoder,
    open_interpreter,
    vibe,
)
from voyager_sessions.ingest.adapters.base import Source

Case = Callable[[Path], tuple[Any, Mapping[str, str]]]


def _gemini(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.items import write
    from tests.support.samples.gemini import CWD, legacy_document, ts, user

    doc = legacy_document()
    # A resume's synthetic copy of a turn's results: dropped both ways (the streamed read looks for it first).
    doc["messages"].append(
        {
            "id": "2_response",
            "timestamp": ts(5),
            "type": "user",
            "content": [{"functionResponse": {"id": "c1", "name": "run_shell_command", "response": {"output": "x"}}}],
        }
    )
    doc["messages"].append(user("4", "下一步 NEXTPROMPT", 6))
    doc["summary"] = "迁移 the title"
    folder = home / ".gemini" / "tmp" / hashlib.sha256(CWD.encode()).hexdigest() / "chats"
    write(folder / "session-2026-12-01T08-00-1f2e3d4c.json", [doc])
    return gemini.ADAPTER, {"HOME": str(home)}


def _copilot_cli(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.copilot import legacy_doc

    folder = home / ".copilot" / "history-session-state"
    folder.mkdir(parents=True)
    (folder / "legacy-0001.json").write_text(json.dumps(legacy_doc(), ensure_ascii=False), encoding="utf-8")
    return copilot.ADAPTER, {"HOME": str(home)}


def _copilot_vscode(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.copilot_vscode import rich_session, workspace

    doc = rich_session()
    doc["requests"].append({**doc["requests"][0], "agent": {"id": "azure"}})  # another participant's: named
    (workspace(home) / "rich.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return copilot_vscode.ADAPTER, {"HOME": str(home)}


def _kiro_workspace(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.kiro import write_ide

    write_ide(home / ".config" / "Kiro" / "User")
    return kiro.ADAPTER, {"HOME": str(home)}


def _kiro_chat(home: Path) -> tuple[Any, Mapping[str, str]]:
    chat = home / ".config" / "Kiro" / "User" / "globalStorage" / "kiro.kiroagent" / ("a" * 32) / ("c" * 32 + ".chat")
    chat.parent.mkdir(parents=True)
    doc = {
        "executionId": "e9",
        "chat": [
            {"role": "human", "content": "# System Prompt\nYou are Kiro"},
            {"role": "human", "content": "旧版问题 CHAT_PROMPT"},
            {"role": "bot", "content": [{"type": "text", "text": "旧版回答 CHAT_REPLY"}]},
            {"role": "tool", "content": "exit 0 CHAT_TOOLOUT"},
            {"role": "narrator", "content": "?"},
        ],
        "metadata": {"modelId": "m", "startTime": 1796112000000, "endTime": 1796112060000},
    }
    chat.write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return kiro.ADAPTER, {"HOME": str(home)}


def _vibe_1(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.vibe import legacy_lines, legacy_meta

    root = home / "vibe" / "logs" / "session"
    root.mkdir(parents=True)
    meta = legacy_meta("abcd1234-0000-0000-0000-000000000000")
    meta.pop("title", None)  # the title then comes from the first prompt, known only once it is read
    doc = {"metadata": meta, "messages": legacy_lines()}
    (root / "session_20250101_101010_abcd1234.json").write_text(json.dumps(doc, ensure_ascii=False), encoding="utf-8")
    return vibe.ADAPTER, {"VOYAGER_VIBE_HOME": str(home / "vibe")}


def _amp(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.amp import messages, thread, write_thread

    write_thread(home, thread(messages()))
    return amp.ADAPTER, {"HOME": str(home)}


def _nanocoder(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.nanocoder import doc, messages, write_session

    write_session(home / "nanocoder", doc(messages()))
    return nanocoder.ADAPTER, {"VOYAGER_NANOCODER_HOME": str(home / "nanocoder")}


def _continue(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.continue_cli import doc, history, write_session

    write_session(home / ".continue", doc(history()))
    return continue_cli.ADAPTER, {"VOYAGER_CONTINUE_HOME": str(home / ".continue")}


def _open_interpreter(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.open_interpreter import chat, conversations, write

    write(conversations(home), chat())
    return open_interpreter.ADAPTER, {"HOME": str(home)}


def _mini_swe_agent(home: Path) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.mini_swe_agent import config_dir, trajectory, write

    write(config_dir(home), trajectory("STREAMED"))
    return mini_swe_agent.ADAPTER, {"HOME": str(home)}


def _chatgpt(home: Path, *, as_zip: bool = False) -> tuple[Any, Mapping[str, str]]:
    from tests.support.samples.chatgpt import conversation, write_export

    convs = [conversation(), conversation("67a1b2c3-0000-4000-8000-000000000002", "second 第二"), "not a conversation"]
    write_export(home / "imports" / ("export.zip" if as_zip else "conversations.json"), convs, as_zip=as_zip)
    return chatgpt.ADAPTER, {"VOYAGER_IMPORTS": str(home / "imports"), "HOME": str(home)}


CASES: dict[str, Case] = {
    "chatgpt-export": _chatgpt,
    "chatgpt-export-zip": lambda home: _chatgpt(home, as_zip=True),
    "mini-swe-agent-trajectory": _mini_swe_agent,
    "open-interpreter-conversation": _open_interpreter,
    "amp-thread": _amp,
    "continue-session": _continue,
    "nanocoder-session": _nanocoder,
    "gemini-legacy-json": _gemini,
    "copilot-cli-history-json": _copilot_cli,
    "copilot-vscode-json": _copilot_vscode,
    "kiro-ide-workspace-json": _kiro_workspace,
    "kiro-ide-chat": _kiro_chat,
    "vibe-1.x-single-file": _vibe_1,
}


def _read(adapter: Any, env: Mapping[str, str]) -> list[Any]:
    items: list[Any] = []
    for src in adapter.discover(env):
        assert isinstance(src, Source), src
        items.extend(adapter.read(src))
    return items


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_document_streamed_gives_every_event_it_gives_decoded_whole(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    adapter, env = CASES[name](tmp_path)
    whole = _read(adapter, env)
    passes = 0
    real = jsondoc.StreamedArray.__iter__

    def counted(self: jsondoc.StreamedArray) -> Any:
        nonlocal passes
        passes += 1
        return real(self)

    monkeypatch.setattr(jsondoc.StreamedArray, "__iter__", counted)
    monkeypatch.setattr(jsondoc, "STREAM_JSON_BYTES", 0)
    streamed = _read(adapter, env)
    assert passes >= 1  # it did stream
    assert len(events(whole)) >= 3
    assert events(streamed) == events(whole)
    assert last_session(streamed) == last_session(whole)
    assert [n.reason for n in notices(streamed)] == [n.reason for n in notices(whole)]


@pytest.mark.parametrize("name", sorted(set(CASES) - {"chatgpt-export-zip"}))  # a zip cut short is no zip
def test_a_streamed_document_cut_short_keeps_what_was_read_and_is_read_again(
    name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A document caught half-rewritten: the events before the cut stand, a transient fatal notice says why."""
    adapter, env = CASES[name](tmp_path)
    [path] = [Path(s.path) for s in adapter.discover(env)]
    whole = events(_read(adapter, env))
    data = path.read_bytes()
    path.write_bytes(data[: len(data) * 3 // 4])
    monkeypatch.setattr(jsondoc, "STREAM_JSON_BYTES", 0)
    items = _read(adapter, env)
    [fatal] = [n for n in notices(items) if n.fatal]
    assert fatal.transient and "read again next scan" in fatal.reason and fatal.source == str(path)
    got = events(items)
    assert got == whole[: len(got)]
    if name != "gemini-legacy-json":  # Gemini renders after a first pass over the whole: nothing is half-read
        assert got


def test_a_streamed_trajectory_tells_a_grown_run_from_a_new_one_as_a_whole_one_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """mini-swe-agent's cursor (which run, what it indexed) is the same streamed: a run grown by a step costs that
    step, a new run leaves the earlier one Unchanged."""
    from tests.support.samples.mini_swe_agent import read, trajectory, write

    def rounds(folder: Path) -> list[list[Any]]:
        path = write(folder, trajectory("RUN1", steps=1))
        first = read(path)
        grown = read(write(folder, trajectory("RUN1")), first[-1])
        new = read(write(folder, trajectory("RUN2", t0=1796170000.0)), grown[-1])
        return [first, grown, new]

    whole = rounds(tmp_path / "whole")
    monkeypatch.setattr(jsondoc, "STREAM_JSON_BYTES", 0)
    streamed = rounds(tmp_path / "streamed")
    for a, b in zip(whole, streamed):
        assert events(b) == events(a)
        assert msgspec.structs.replace(last_session(b), source="") == msgspec.structs.replace(
            last_session(a), source=""
        )
        assert b[-1].state == a[-1].state and b[-1].next_seq == a[-1].next_seq
        assert [type(i).__name__ for i in b if type(i).__name__ in ("Partial", "Unchanged")] == [
            type(i).__name__ for i in a if type(i).__name__ in ("Partial", "Unchanged")
        ]


def test_a_broken_zip_member_streamed_is_named_not_raised(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A zip whose member inflates to garbage mid-way (a bad download): the read ends with a notice naming the
    member, what came before stands, and no exception escapes the adapter."""
    from tests.support.samples.chatgpt import conversation

    adapter, env = _chatgpt(tmp_path, as_zip=True)
    [path] = [Path(s.path) for s in adapter.discover(env)]
    convs = [conversation(f"67a1b2c3-0000-4000-8000-{i:012d}", f"title {i}") for i in range(200)]
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("conversations.json", json.dumps(convs, ensure_ascii=False))
    data = bytearray(path.read_bytes())
    middle = len(data) // 2
    data[middle : middle + 64] = bytes(64)  # inside the compressed stream
    path.write_bytes(bytes(data))
    monkeypatch.setattr(jsondoc, "STREAM_JSON_BYTES", 0)
    items = _read(adapter, env)
    [cut] = [n for n in notices(items) if n.source == f"{path}!conversations.json"]
    assert "read again next scan" in cut.reason and cut.fatal and cut.transient, cut
    assert 0 < len([i for i in items if type(i).__name__ == "Session"]) < 200
