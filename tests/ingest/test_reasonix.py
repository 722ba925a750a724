"""Reasonix (observed 1.38.11): logs of ``RX4F`` zstd frames written here in the observed shape.

The real capture is read by tests/ingest/test_captures.py; here the corners: a crafted frame that would
inflate far past what it declares stops at its declared size, a damaged frame costs only itself, a batch
without its end is not read (and is read once it ends), an append is read from where the last read stopped.
"""

from __future__ import annotations

import base64
import json
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

from voyager_sessions.core.model import Event, Session
from voyager_sessions.ingest.adapters.base import Cursor, Notice, Source, fingerprint
from voyager_sessions.ingest.adapters.reasonix import ADAPTER, MAGIC

zstandard = pytest.importorskip("zstandard")
SID = "0123456789abcdef0123456789abcdef"


def frame(record: dict[str, Any] | bytes, *, declared: int | None = None) -> bytes:
    raw = record if isinstance(record, bytes) else json.dumps(record, ensure_ascii=False).encode()
    packed = zstandard.ZstdCompressor().compress(raw)
    size = len(raw) if declared is None else declared
    return MAGIC + len(packed).to_bytes(4, "big") + size.to_bytes(4, "big") + packed


def batch(
    seq: int, *events: tuple[str, dict[str, Any]], when: str = "2026-12-07T15:00:27.3Z", end: bool = True
) -> bytes:
    out = frame({"recordType": "batch/begin", "firstSeq": seq, "eventCount": len(events), "createdAt": when})
    for n, (kind, payload) in enumerate(events):
        body = base64.b64encode(json.dumps(payload, ensure_ascii=False).encode()).decode()
        out += frame(
            {
                "recordType": "batch/event",
                "createdAt": "0001-01-01T00:00:00Z",
                "event": {"seq": seq + n, "kind": kind, "payload": body},
            }
        )
    if end:
        out += frame({"recordType": "batch/end", "firstSeq": seq, "eventCount": len(events)})
    return out


def user(text: str) -> tuple[str, dict[str, Any]]:
    return (
        "message/complete",
        {
            "message": {
                "role": "user",
                "origin": "user",
                "content": f"<reasoning-language>zh</reasoning-language>\n\n{text}",
                "raw_content": text,
            }
        },
    )


def reply(text: str) -> tuple[str, dict[str, Any]]:
    return ("message/complete", {"message": {"role": "assistant", "content": text}})


def log_path(home: Path) -> Path:
    folder = home / ".reasonix" / "projects" / "-home-dev-shop" / "sessions-v4" / SID
    folder.mkdir(parents=True, exist_ok=True)
    return folder / "events.frames"


def read(path: Path, cursor: Cursor | None = None) -> list[Any]:
    source = Source(provider="reasonix", path=str(path), fingerprint=fingerprint(path), append_only=True)
    return list(ADAPTER.read(source, cursor))


def texts(items: list[Any]) -> list[tuple[str, str, str]]:
    return [(e.kind, e.origin, e.text) for e in items if isinstance(e, Event)]


def test_the_person_s_words_the_host_context_and_the_workspace(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    host = (
        "message/complete",
        {"message": {"role": "user", "origin": "host", "content": 'ctx\nCurrent workspace: "/home/dev/shop"\n'}},
    )
    path.write_bytes(batch(1, host, user("迁移 失败 PROMPT_A")) + batch(3, reply("完成 REPLY_A")))
    items = read(path)
    assert texts(items) == [
        ("meta", "provider", 'ctx\nCurrent workspace: "/home/dev/shop"\n'),
        ("user", "human", "迁移 失败 PROMPT_A"),
        ("assistant", "agent", "完成 REPLY_A"),
    ]
    session = [i for i in items if isinstance(i, Session)][-1]
    assert session.cwd == "/home/dev/shop" and session.resume == f"cd /home/dev/shop && reasonix --resume {SID}"
    assert session.started is not None


def test_a_batch_without_its_end_waits_and_an_append_is_read_from_the_cursor(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    path.write_bytes(batch(1, user("first PROMPT_A")) + batch(2, reply("half REPLY_B"), end=False))
    items = read(path)
    assert [t for _, _, t in texts(items)] == ["first PROMPT_A"]
    cursor = items[-1]
    assert isinstance(cursor, Cursor) and cursor.offset < path.stat().st_size
    with path.open("ab") as f:  # the writer finishes the batch, then starts another turn
        f.write(frame({"recordType": "batch/end", "firstSeq": 2, "eventCount": 1}) + batch(3, user("second PROMPT_C")))
    more = read(path, cursor)
    assert [t for _, _, t in texts(more)] == ["half REPLY_B", "second PROMPT_C"]
    assert [e.seq for e in more if isinstance(e, Event)] == [1, 2]


def test_a_damaged_frame_costs_only_itself(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    good1, good2 = batch(1, user("before PROMPT_A")), batch(2, reply("after REPLY_B"))
    broken = bytearray(batch(9, reply("lost")))
    broken[20:30] = b"\xff" * 10  # inside the first frame's zstd data
    path.write_bytes(good1 + bytes(broken) + b"garbage between frames" + good2)
    items = read(path)
    assert [t for _, _, t in texts(items)] == ["before PROMPT_A", "after REPLY_B"]
    assert any(isinstance(i, Notice) and not i.fatal for i in items)


def test_a_frame_that_inflates_past_what_it_declares_stops_there(tmp_path: Path) -> None:
    """A crafted frame: 256 MiB of zeros compressed to a few KiB, declaring 100 bytes. The read decodes at most
    what the frame declares (never past the line cap), names the frame, and goes on to the next."""
    path = log_path(tmp_path)
    bomb = zstandard.ZstdCompressor().compress(b"\0" * (256 << 20))
    crafted = MAGIC + len(bomb).to_bytes(4, "big") + (100).to_bytes(4, "big") + bomb
    path.write_bytes(batch(1, user("before PROMPT_A")) + crafted + batch(2, reply("after REPLY_B")))
    tracemalloc.start()
    try:
        items = read(path)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert [t for _, _, t in texts(items)] == ["before PROMPT_A", "after REPLY_B"]
    assert any(isinstance(i, Notice) and "more than" in i.reason for i in items)
    assert peak < 64 << 20, f"peak {peak:,} bytes"


def test_a_frame_declaring_more_than_the_cap_is_skipped_unread(tmp_path: Path) -> None:
    path = log_path(tmp_path)
    huge = frame(b"x" * 100, declared=(1 << 32) - 1)  # a raw size past any line cap
    path.write_bytes(batch(1, user("before PROMPT_A")) + huge + batch(2, reply("after REPLY_B")))
    items = read(path)
    assert [t for _, _, t in texts(items)] == ["before PROMPT_A", "after REPLY_B"]
    assert any(isinstance(i, Notice) and "over the cap" in i.reason for i in items)
