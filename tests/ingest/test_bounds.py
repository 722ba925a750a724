"""Bounded memory per source (issue #28, item 3): a crafted source of each adapter family, scanned in a subprocess.

Every family is fed a bomb: many short valid records (a zstd log inflating a few KiB into
millions of lines, a JSONL file, one JSON document, a database). The scan must end, stay
under the documented peak RSS, and, past the per-source caps, say which source it cut and
which cap did it.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from tests.support.bomb import PEAK_RSS_BOUND_MB, json_document, scan_peak
from tests.support.scanning import scan
from voyager_sessions.ingest.adapters import dsh
from voyager_sessions.ingest.adapters.base import Source, fingerprint

zstandard = pytest.importorskip("zstandard")


def _dsh_line(text: str) -> bytes:
    return (
        json.dumps(
            {
                "type": "user/message",
                "seq": 1,
                "time": 1_790_000_000_000,
                "data": {"source": {"kind": "user"}, "content": [{"type": "text", "text": text}]},
            }
        )
        + "\n"
    ).encode()


def dsh_bomb(home: Path, lines: int, text: str = "bomb words here") -> Path:
    """A DeepSeek Harness log of one header and ``lines`` user messages, compressed to a few KiB."""
    folder = home / ".dsh" / "sessions" / "--home-dev--" / "bomb"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "session.jsonl.zstd"
    header = json.dumps({"type": "session", "id": "bomb", "createdAt": 1_790_000_000_000, "cwd": "/home/dev"})
    with open(path, "wb") as fh, zstandard.ZstdCompressor(level=19).stream_writer(fh) as out:
        out.write(header.encode() + b"\n")
        line = _dsh_line(text)
        for _ in range(lines // 10_000):
            out.write(line * 10_000)
        out.write(line * (lines % 10_000))
    return path


def test_the_dsh_adapter_streams_a_session_instead_of_holding_it(home, monkeypatch):
    """The first event leaves the adapter long before the end of the log (it used to wait for it)."""
    path = dsh_bomb(home, 20_000)
    seen = 0
    real = dsh._DshRead._record

    def counting(self, record):
        nonlocal seen
        seen += 1
        return real(self, record)

    monkeypatch.setattr(dsh._DshRead, "_record", counting)
    items = dsh.ADAPTER.read(Source(provider="dsh", path=str(path), fingerprint=fingerprint(path), append_only=False))
    first = next(i for i in items if type(i).__name__ == "Event")
    assert first.text == "bomb words here"
    assert seen < 100, seen
    items.close()


def test_past_the_per_source_event_cap_the_rest_is_not_indexed_and_the_source_named(home, run, monkeypatch):
    path = dsh_bomb(home, 3_000)
    monkeypatch.setenv("VOYAGER_DSH_HOME", str(home / ".dsh"))
    monkeypatch.setenv("VOYAGER_MAX_SOURCE_EVENTS", "1000")
    doc = scan(run)
    assert doc["events_added"] == 1000
    assert str(path) in doc["stderr"] and "1,000 events (VOYAGER_MAX_SOURCE_EVENTS)" in doc["stderr"]
    # The source is recorded as read: the next scan does not cut it again.
    again = scan(run)
    assert again["unchanged"] == 1 and again["events_added"] == 0


def test_the_character_cap_cuts_a_source_of_few_long_events(home, run, monkeypatch):
    dsh_bomb(home, 10, "long words " * 100)
    monkeypatch.setenv("VOYAGER_DSH_HOME", str(home / ".dsh"))
    monkeypatch.setenv("VOYAGER_MAX_SOURCE_CHARS", "1000")
    doc = scan(run)
    assert doc["events_added"] == 0  # the first event alone is past the cap
    assert "more than 1,000 characters of text (VOYAGER_MAX_SOURCE_CHARS)" in doc["stderr"]


@pytest.mark.slow
def test_a_zstd_bomb_scans_in_bounded_memory(home):
    """130 MiB of valid lines inflated from a few KiB: a million events the DSH adapter used to hold at once."""
    path = dsh_bomb(home, 900_000)
    assert path.stat().st_size < 64 << 10
    doc = scan_peak(home, {"VOYAGER_DSH_HOME": str(home / ".dsh")})
    assert doc["events_added"] == 900_000
    assert doc["peak_mb"] <= PEAK_RSS_BOUND_MB, doc["peak_mb"]


def test_dsh_steps_streamed_without_an_end_are_not_held_without_bound(home, monkeypatch):
    """Deltas of steps that never end (nor get their message) are indexed once too many are open, each cut at a cap."""
    monkeypatch.setattr(dsh, "MAX_OPEN_STREAMS", 10)
    monkeypatch.setattr(dsh, "MAX_STREAM_CHARS", 100)
    folder = home / ".dsh" / "sessions" / "--home-dev--" / "chunks"
    folder.mkdir(parents=True)
    path = folder / "session.jsonl"
    rows = [{"type": "session", "id": "chunks", "createdAt": 1_790_000_000_000}]
    for step in range(50):
        for _ in range(20):
            rows.append(
                {
                    "type": "assistant/chunk",
                    "seq": 1,
                    "time": 1_790_000_000_000,
                    "data": {
                        "turn": 1,
                        "step": step,
                        "chunk": {"type": "text-delta", "index": 0, "text": "0123456789"},
                    },
                }
            )
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    src = Source(provider="dsh", path=str(path), fingerprint=fingerprint(path), append_only=False)
    events = [i for i in dsh.ADAPTER.read(src) if type(i).__name__ == "Event"]
    assert len(events) == 50 and {len(e.text) for e in events} == {100}


def cline_bomb(home: Path, messages: int) -> Path:
    """A Cline CLI session file of ``messages`` short prompts, written without holding it."""
    folder = home / ".cline" / "data" / "sessions" / "1796200000000_bomb"
    folder.mkdir(parents=True)
    path = folder / "1796200000000_bomb.messages.json"
    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"version": 1, "sessionId": "1796200000000_bomb", "messages": [')
        for i in range(messages):
            fh.write(
                ("," if i else "")
                + json.dumps(
                    {
                        "id": f"m{i}",
                        "role": "user",
                        "ts": 1_790_000_000_000 + i,
                        "content": [{"type": "text", "text": '<user_input mode="act">bomb words here</user_input>'}],
                    }
                )
            )
        fh.write("]}")
    return path


def test_a_cline_session_past_the_stream_threshold_is_indexed_message_by_message(home, run, monkeypatch):
    """A document larger than STREAM_JSON_BYTES (here lowered) is indexed, not skipped by VOYAGER_MAX_JSON_BYTES."""
    from voyager_sessions.ingest import jsondoc

    path = cline_bomb(home, 3000)
    monkeypatch.setattr(jsondoc, "STREAM_JSON_BYTES", 1 << 16)
    monkeypatch.setenv("VOYAGER_MAX_JSON_BYTES", str(1 << 16))
    assert path.stat().st_size > 1 << 18
    doc = scan(run)
    assert doc["events_added"] == 3000 and doc["failed"] == 0, doc["stderr"]


def _dense_cline(home: Path, values: int) -> Path:
    """A Cline session of three messages, the middle one holding ``values`` empty arrays (3 bytes of text, a
    Python list each when decoded whole): small on disk, huge in memory."""
    folder = home / ".cline" / "data" / "sessions" / "1796200000000_dense"
    folder.mkdir(parents=True)
    path = folder / "1796200000000_dense.messages.json"

    def message(i: int, text: str) -> str:
        body = {"id": f"m{i}", "role": "user", "ts": 1_790_000_000_000 + i, "content": [{"type": "text", "text": text}]}
        return json.dumps(body)

    with open(path, "w", encoding="utf-8") as fh:
        fh.write('{"version": 1, "sessionId": "1796200000000_dense", "messages": [')
        fh.write(message(0, "before the dense one") + ",")
        fh.write(
            '{"id": "m1", "role": "user", "ts": 1790000000001, "content": [{"type": "text", "text": "x"}], "extra": ['
        )
        chunk = ",".join(["[]"] * 10_000)
        for i in range(values // 10_000):
            fh.write(("," if i else "") + chunk)
        fh.write("]}," + message(2, "after the dense one") + "]}")
    return path


@pytest.mark.slow
def test_a_document_of_many_small_values_below_the_threshold_is_streamed_not_decoded_whole(home, run, monkeypatch):
    """Ten million ``[]`` are 30 MB of text and 800 MB of Python lists: below STREAM_JSON_BYTES a document whose
    decoded form is estimated past WHOLE_COST (here lowered) is streamed, with the events a whole read gives."""
    from voyager_sessions.ingest import jsondoc

    path = _dense_cline(home, 400_000)
    assert jsondoc.jsonstream.COUNTED_FROM < path.stat().st_size < jsondoc.STREAM_JSON_BYTES
    assert not jsondoc.costly(path.read_bytes())  # at the real budget: decoded whole
    whole = scan(run)
    assert whole["failed"] == 0 and whole["events_added"] >= 2, whole["stderr"]
    monkeypatch.setattr(jsondoc, "WHOLE_COST", 4 << 20)
    assert jsondoc.costly(path.read_bytes())
    doc = jsondoc.read_json_streamed(path, "messages", ("version",))
    assert isinstance(doc["messages"], jsondoc.StreamedArray)
    texts = [m["content"][0]["text"] for m in doc["messages"] if m.get("id") != "m1"]
    assert texts == ["before the dense one", "after the dense one"]


@pytest.mark.slow
def test_a_dense_document_below_the_threshold_scans_in_bounded_memory(home):
    """A 24 MiB Cline session of eight million empty arrays in one message: decoded whole it would peak near
    700 MB (16 MiB of it peaked at 438 MB); streamed, the messages around it are indexed and the peak is bounded."""
    from voyager_sessions.ingest import jsondoc

    path = _dense_cline(home, 8_000_000)
    assert path.stat().st_size < jsondoc.STREAM_JSON_BYTES
    doc = scan_peak(home, {"VOYAGER_CLINE_HOME": str(home / ".cline" / "data")})
    assert doc["events_added"] >= 2 and doc["failed"] == 0, doc["stderr"][-2000:]
    assert doc["peak_mb"] <= PEAK_RSS_BOUND_MB, doc["peak_mb"]


@pytest.mark.slow
def test_a_huge_single_document_session_scans_in_bounded_memory(home):
    """A 300 MB Cline session (over the 256 MiB whole-document cap; 210 MB of it peaked at 595 MB)."""
    path = cline_bomb(home, 1_850_000)
    assert path.stat().st_size > 256 << 20
    doc = scan_peak(home, {"VOYAGER_CLINE_HOME": str(home / ".cline" / "data")})
    assert doc["events_added"] == 1_000_000  # the per-source event cap
    assert "VOYAGER_MAX_SOURCE_EVENTS" in doc["stderr"]
    assert doc["peak_mb"] <= PEAK_RSS_BOUND_MB, doc["peak_mb"]


#: A long prompt (~2 KB): a bomb of hundreds of MB in few enough messages to index in a slow test's time.
BOMB_TEXT = "bomb words here " + " ".join(["lorem ipsum dolor sit amet"] * 75)
#: What each single-document family's bomb weighs: past the 256 MiB cap that used to skip it.
BOMB_BYTES = 340 << 20
_T = "2026-12-01T08:00:00Z"


def _copilot_request(i: int) -> dict[str, object]:
    agent = {"id": "github.copilot.editsAgent", "extensionId": {"value": "GitHub.copilot-chat"}}
    return {
        "requestId": f"r{i}",
        "message": {"text": BOMB_TEXT},
        "response": [],
        "timestamp": 1_767_225_600_000,
        "agent": agent,
    }


#: family: (the session file under HOME, its top-level keys, the key of its messages, one message, env).
DOCUMENT_BOMBS: dict[str, tuple[str, dict[str, object], str, object, dict[str, str]]] = {
    "gemini-legacy-json": (
        ".gemini/tmp/proj/chats/session-2026-12-01T08-00-1f2e3d4c.json",
        {"sessionId": "1f2e3d4c-bomb", "projectHash": "ab", "startTime": _T, "lastUpdated": _T},
        "messages",
        lambda i: {"id": f"m{i}", "timestamp": _T, "type": "user", "content": BOMB_TEXT},
        {},
    ),
    "copilot-cli-history-json": (
        ".copilot/history-session-state/bomb.json",
        {"sessionId": "bomb", "startTime": _T},
        "chatMessages",
        lambda i: {"role": "user", "content": BOMB_TEXT},
        {},
    ),
    "copilot-vscode-json": (
        ".config/Code/User/workspaceStorage/ws1/chatSessions/bomb.json",
        {"version": 3, "sessionId": "bomb", "creationDate": 1_767_225_500_000},
        "requests",
        _copilot_request,
        {},
    ),
    "kiro-ide-workspace-json": (
        ".config/Kiro/User/globalStorage/kiro.kiroagent/workspace-sessions/L2hvbWUvZGV2/bomb.json",
        {"sessionId": "bomb", "workspaceDirectory": "/home/dev"},
        "history",
        lambda i: {"message": {"role": "user", "content": BOMB_TEXT, "id": f"m{i}"}},
        {},
    ),
    "amp-thread": (
        ".local/share/amp/threads/T-bomb.json",
        {"v": 7, "id": "T-bomb", "created": 1_767_225_600_000},
        "messages",
        lambda i: {"role": "user", "content": BOMB_TEXT},
        {},
    ),
    "continue-session": (
        ".continue/sessions/bomb.json",
        {"sessionId": "bomb", "title": "bomb"},
        "history",
        lambda i: {"message": {"role": "user", "content": BOMB_TEXT}},
        {},
    ),
    "mini-swe-agent-trajectory": (
        ".config/mini-swe-agent/last_mini_run.traj.json",
        {"info": {"mini_version": "2.4.6", "config": {"model": {"model_name": "m"}}}},
        "messages",
        lambda i: {"role": "assistant", "content": BOMB_TEXT},
        {},
    ),
    "nanocoder-session": (
        ".local/share/nanocoder/sessions/bomb.json",
        {"id": "bomb", "title": "bomb", "workingDirectory": "/home/dev"},
        "messages",
        lambda i: {"role": "user", "content": BOMB_TEXT},
        {},
    ),
    "open-interpreter-conversation": (
        ".config/open-interpreter/conversations/bomb__March_05_2026_09-30-15.json",
        {},
        "",
        lambda i: {"role": "user", "type": "message", "content": BOMB_TEXT},
        {},
    ),
    "vibe-1.x-single-file": (
        "vibe/logs/session/session_20250101_101010_abcd1234.json",
        {"metadata": {"session_id": "abcd1234-bomb", "start_time": _T, "environment": {"working_directory": "/d"}}},
        "messages",
        lambda i: {"role": "user", "content": BOMB_TEXT},
        {"VOYAGER_VIBE_HOME": "vibe"},
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("family", sorted(DOCUMENT_BOMBS))
def test_a_huge_session_document_of_every_family_scans_in_bounded_memory(home, family):
    """A 340 MiB session document of each family that kept one whole (Gemini's, Copilot's, Kiro's, Vibe 1.x's,
    Continue's, Nanocoder's, Amp's, Open Interpreter's, mini-swe-agent's):
    past the 256 MiB cap it was skipped with exit 1, and below it decoded whole in ~4x its size. Now it is
    indexed, every message, within the documented peak."""
    rel, head, key, item, env = DOCUMENT_BOMBS[family]
    count = BOMB_BYTES // len(json.dumps(item(0)))
    path = json_document(home / rel, head, key, item, count)
    assert path.stat().st_size > 256 << 20
    doc = scan_peak(home, {k: str(home / v) for k, v in env.items()})
    assert doc["failed"] == 0 and doc["sessions"] == 1, doc["stderr"][-2000:]
    assert doc["events_added"] == count, doc["stderr"][-2000:]
    assert doc["peak_mb"] <= PEAK_RSS_BOUND_MB, doc["peak_mb"]


def _chatgpt_conversation(i: int) -> dict[str, object]:
    """A ChatGPT conversation of 20 long prompts in a chain (the shape of ``conversations.json``)."""
    mapping: dict[str, object] = {"root": {"id": "root", "parent": None, "children": ["n0"], "message": None}}
    for k in range(20):
        message = {
            "id": f"n{k}",
            "author": {"role": "user"},
            "create_time": 1_767_225_600.0 + k,
            "content": {"content_type": "text", "parts": [BOMB_TEXT]},
            "status": "finished_successfully",
            "metadata": {},
            "recipient": "all",
        }
        mapping[f"n{k}"] = {"id": f"n{k}", "parent": f"n{k - 1}" if k else "root", "children": [], "message": message}
    cid = f"67a1b2c3-0000-4000-8000-{i:012d}"
    return {"title": f"bomb {i}", "create_time": 1_767_225_600.0, "mapping": mapping, "current_node": "n19", "id": cid}


@pytest.mark.slow
def test_a_huge_export_scans_in_bounded_memory(home):
    """A 340 MiB ChatGPT conversations.json (past the 256 MiB cap that skipped it): every conversation indexed,
    one at a time, within the documented peak."""
    count = BOMB_BYTES // len(json.dumps(_chatgpt_conversation(0)))
    path = json_document(home / "imports" / "conversations.json", {}, "", _chatgpt_conversation, count)
    assert path.stat().st_size > 256 << 20
    doc = scan_peak(home, {"VOYAGER_IMPORTS": str(home / "imports")})
    assert doc["failed"] == 0 and doc["sessions"] == count, doc["stderr"][-2000:]
    assert doc["events_added"] == 20 * count, doc["stderr"][-2000:]
    assert doc["peak_mb"] <= PEAK_RSS_BOUND_MB, doc["peak_mb"]


def test_every_cap_variable_is_documented():
    """Each VOYAGER_MAX_* variable the code reads is in docs/limits.md and in the README's Limits section."""
    import re

    root = Path(__file__).resolve().parents[2]
    code = "".join(
        p.read_text(encoding="utf-8")
        for d in ("ingest", "search", "store", "voyager_sessions")
        for p in (root / d).rglob("*.py")
    )
    names = set(re.findall(r"VOYAGER_MAX_[A-Z_]+", code))
    assert {"VOYAGER_MAX_SOURCE_EVENTS", "VOYAGER_MAX_JSON_BYTES", "VOYAGER_MAX_ZSTD_BYTES"} <= names
    limits = (root / "docs" / "limits.md").read_text(encoding="utf-8")
    readme = (root / "README.md").read_text(encoding="utf-8")
    assert not {n for n in names if n not in limits or n not in readme}


@pytest.mark.slow
def test_a_database_of_a_million_rows_scans_in_bounded_memory(home):
    """A Goose sessions.db whose one session holds 900,000 short messages (rows read as they come)."""
    from tests.support.samples.goose import MAIN, write_db

    db = write_db(home, [MAIN], [])
    conn = sqlite3.connect(db)
    content = json.dumps([{"type": "text", "text": "bomb words here", "annotations": []}])
    conn.executemany(
        "INSERT INTO messages (session_id, role, content_json, created_timestamp, metadata_json) "
        "VALUES (?, 'user', ?, ?, '{\"userVisible\":true,\"agentVisible\":true}')",
        ((MAIN["id"], content, 1_793_000_000 + i) for i in range(900_000)),
    )
    conn.commit()
    conn.close()
    doc = scan_peak(home)
    assert doc["events_added"] == 900_000, doc["stderr"][-2000:]
    assert doc["peak_mb"] <= PEAK_RSS_BOUND_MB, doc["peak_mb"]


@pytest.mark.slow
def test_a_jsonl_session_of_a_million_lines_scans_in_bounded_memory(home):
    """A Claude Code file of 900,000 prompts: streamed line by line."""
    from tests.support.sessions import claude_session_lines

    first = claude_session_lines()[1]
    folder = home / ".claude" / "projects" / "-home-dev-shop"
    folder.mkdir(parents=True)
    with open(folder / "5f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e5f.jsonl", "w", encoding="utf-8") as fh:
        for i in range(900_000):
            fh.write(first.replace('"uuid": "u1"', f'"uuid": "u{i}"'))
    doc = scan_peak(home)
    assert doc["events_added"] == 900_000, doc["stderr"][-2000:]
    assert doc["peak_mb"] <= PEAK_RSS_BOUND_MB, doc["peak_mb"]
