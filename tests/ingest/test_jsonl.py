"""The JSONL reader on hostile and broken input: each line stands alone, nothing blocks, time is linear."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path
from typing import Any

import msgspec
import pytest

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest import jsonl
from voyager_sessions.ingest.jsonl import BadLine, Record, decode_json, read_records


def _records(path: Path, offset: int = 0) -> tuple[list[Record], list[Notice]]:
    items = list(read_records(str(path), offset))
    return [i for i in items if isinstance(i, Record)], [i for i in items if isinstance(i, Notice)]


def json_line(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


def test_a_deeply_nested_line_costs_that_line_only(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    deep = b"[" * 1000 + b"]" * 1000 + b"\n"
    p.write_bytes(json_line({"n": 1}) + deep + json_line({"n": 3}))
    recs, notices = _records(p)
    assert [r.value["n"] for r in recs] == [1, 3]
    assert len(notices) == 1 and "nested too deeply" in notices[0].reason and notices[0].where == "line 2"
    # Lines appended later are read too (the bad line does not stop the file).
    with p.open("ab") as fh:
        fh.write(json_line({"n": 4}))
    assert [r.value["n"] for r in _records(p, recs[-1].end)[0]] == [4]


def test_json_inside_a_record_nested_too_deeply_is_bad_json_not_a_crash() -> None:
    # msgspec raises RecursionError for it; escaping the adapter, that would cost the whole source.
    with pytest.raises(msgspec.DecodeError, match="nested too deeply"):
        decode_json("[" * 100_000 + "]" * 100_000)
    assert decode_json(b'{"a": ["\\u6570"]}') == {"a": ["\u6570"]}


def test_a_lone_surrogate_escape_is_read_and_replaced(tmp_path: Path) -> None:
    # What Node's JSON.stringify writes when a string is cut inside an emoji.
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"text": "cut \\ud83d here"}\n{"text": "pair \\ud83d\\ude00 ok"}\n')
    recs, notices = _records(p)
    assert not notices
    assert [r.value["text"] for r in recs] == ["cut \ufffd here", "pair \U0001f600 ok"]
    assert all(isinstance(r.value["text"].encode("utf-8"), bytes) for r in recs)  # valid UTF-8 now


def test_a_nul_byte_costs_its_line_not_the_file(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(json_line({"n": 1}) + b'{"n": 2\x00}\n' + json_line({"n": 3}) + b"\x00" * 40)
    recs, notices = _records(p)
    assert [r.value["n"] for r in recs] == [1, 3]
    assert {n.where for n in notices} == {"line 2", "line 4"} and all("binary" in n.reason for n in notices)


def test_a_byte_order_mark_on_the_first_line_is_ignored(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + json_line({"n": 1}) + json_line({"n": 2}))
    recs, notices = _records(p)
    assert [r.value["n"] for r in recs] == [1, 2] and not notices


def test_invalid_utf8_keeps_the_line_with_replacement_characters(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b'{"text": "caf\xe9 ok"}\n')
    recs, notices = _records(p)
    assert recs[0].value["text"] == "caf\ufffd ok" and not notices


def test_a_line_longer_than_the_cap_is_skipped_in_bounded_memory(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv("VOYAGER_MAX_LINE_BYTES", str(1 << 20))
    p = tmp_path / "s.jsonl"
    big = b'{"text": "' + b"x" * (20 << 20) + b'"}\n'
    p.write_bytes(json_line({"n": 1}) + big + json_line({"n": 3}))
    tracemalloc.start()
    try:
        recs, notices = _records(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [r.value["n"] for r in recs] == [1, 3]
    assert len(notices) == 1 and "longer than" in notices[0].reason and notices[0].where == "line 2"
    assert peak < 8 << 20, peak  # the 20 MB line was never held: one line cap plus a chunk or two
    assert recs[1].start == len(json_line({"n": 1})) + len(big)  # offsets stay exact past the skipped line


def test_an_empty_file_is_named(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"")
    recs, notices = _records(p)
    assert not recs and len(notices) == 1 and "empty" in notices[0].reason and not notices[0].fatal


def test_a_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    import os

    p = tmp_path / "s.jsonl"
    os.mkfifo(p)
    t = time.perf_counter()
    recs, notices = _records(p)
    assert time.perf_counter() - t < 5
    assert not recs and notices[0].fatal and "FIFO" in notices[0].reason


# -- typed decoding: the fields an adapter reads, and nothing different about bad lines -------------

_HOSTILE_LINES = [
    b'{"type": "user", "message": {"content": "hi", "role": "user"}, "uuid": "u1"}',
    b'{"type": "user", "junk": ' + b"[" * 5000 + b"]" * 5000 + b', "message": {"content": "x"}}',  # deep, unread
    b'{"type": "user", "message": {"content": ' + b"[" * 5000 + b"]" * 5000 + b"}}",  # deep, read
    b'{"type": "user", "junk": "caf\xe9", "message": {"content": "ok"}}',  # invalid UTF-8, unread
    b'{"type": "user", "message": {"content": "caf\xe9"}}',  # invalid UTF-8, read
    b'{"type": "user", "junk": "cut \\ud83d", "message": {"content": "ok"}}',  # lone surrogate escape, unread
    b'{"type": "user", "message": {"content": "cut \\ud83d here"}}',  # lone surrogate escape, read
    b'{"type": "user", "message": "not an object"}',
    b'{"type": "user", "message": ["a", "list"]}',
    b'{"type": 7, "timestamp": [], "isMeta": "yes", "message": {"content": 5, "usage": "many"}}',  # mistyped
    b'{"type": "user", "type": "assistant", "message": {"content": "dup", "content": "last"}}',  # duplicate keys
    b'["an", "array"]',
    b'"a string"',
    b"42",
    b"null",
    b'{"n": 2\x00}',
    b'{"type": "user", "message": ',
    b"{}",
    # Every field the adapter reads, each where it changes what comes out (a field the typed decode forgot
    # to name would show as a difference from the lenient read).
    b'{"type": "summary", "summary": "a generated title"}',
    b'{"type": "custom-title", "customTitle": "renamed by hand"}',
    b'{"type": "user", "isMeta": true, "version": "9.9.9", "message": {"content": "plain words, injected"}}',
    b'{"type": "user", "isCompactSummary": true, "message": {"content": "compacted summary"}}',
    b'{"type": "user", "isSidechain": true, "cwd": "/elsewhere", "gitBranch": "feat", "message": {"content": "sub"}}',
    b'{"type": "assistant", "isApiErrorMessage": true, "timestamp": "2026-11-20T10:01:00Z", '
    b'"message": {"id": "m9", "model": "claude-x", "content": "API error", "usage": {"input_tokens": 3}}}',
    b'{"type": "assistant", "message": {"id": "m10", "model": "claude-y", "content": [{"type": "text", "text": "ok"}], '
    b'"usage": {"input_tokens": 5, "output_tokens": 7}}, "sessionId": "other"}',
    b'{"type": "mystery-record", "message": {"content": "?"}}',
]


def _outcome(decode, line: bytes):
    try:
        return ("ok", decode(line))
    except BadLine as exc:
        return ("bad", str(exc))


def test_a_typed_decode_sees_what_the_lenient_decoder_sees():
    """Claude Code's typed decoder: on every hostile line, the same BadLine, or the same value as the lenient
    decoder's fitted to the reader's Struct (a field of the wrong type read as absent), or the same non-object."""
    from voyager_sessions.ingest.adapters._claude_read import _fitted, _Line
    from voyager_sessions.ingest.jsonl import decode_line, typed_decoder

    typed = typed_decoder(_Line, _fitted)
    for line in _HOSTILE_LINES:
        lenient = _outcome(decode_line, line)
        got = _outcome(typed, line)
        if lenient[0] == "bad":
            assert got == lenient, line[:80]
        elif isinstance(lenient[1], dict):
            assert got[0] == "ok" and type(got[1]) is _Line and got[1] == _fitted(lenient[1]), line[:80]
        else:  # not an object: the typed decode hands the line to the lenient one, and the reader skips it
            assert got == lenient, line[:80]


def test_a_mistyped_line_reads_as_its_fields_absent():
    """What the typed decode refuses is fitted by the reader's rule, never lost: a message that is not an
    object is no message, content of no known type no content, a block that is not an object no block."""
    from voyager_sessions.ingest.adapters._claude_read import _Block, _fitted

    fitted = _fitted({"type": "user", "message": "not an object", "cwd": "/x"})
    assert fitted.message is None and fitted.cwd == "/x"
    fitted = _fitted({"type": "assistant", "message": {"content": 5, "usage": "many", "model": "m"}})
    assert fitted.message.content is None and fitted.message.usage is None and fitted.message.model == "m"
    fitted = _fitted({"message": {"content": ["a", {"type": "text", "text": "kept"}, 3]}})
    assert fitted.message.content == [_Block(type="text", text="kept")]


@pytest.mark.parametrize("name", ["5f1c2a9e-7b3d-4c21-9e8f-0a1b2c3d4e5f.jsonl", "agent-a1b2c3.jsonl"])
def test_the_claude_adapter_reads_the_same_typed_or_not(tmp_path: Path, monkeypatch, name: str) -> None:
    from tests.support.sessions import claude_session_lines
    from voyager_sessions.ingest.adapters import _claude_read, claude
    from voyager_sessions.ingest.adapters.base import Source, fingerprint
    from voyager_sessions.ingest.jsonl import decode_line

    p = tmp_path / name
    p.write_bytes("".join(claude_session_lines()).encode() + b"\n".join(_HOSTILE_LINES) + b"\n")
    source = Source(provider="claude", path=str(p), fingerprint=fingerprint(p), append_only=True)
    typed = list(claude.ADAPTER.read(source))
    monkeypatch.setattr(
        _claude_read.ClaudeRead, "decode", staticmethod(lambda line: _claude_read._fitted(decode_line(line)))
    )
    lenient = list(claude.ADAPTER.read(source))
    assert typed == lenient
    assert sum(type(i).__name__ == "Event" for i in typed) >= 8


def _read_all(path: Path) -> list[tuple[Any, int, int, bool, int] | str]:
    out: list[tuple[Any, int, int, bool, int] | str] = []
    for r in read_records(str(path)):
        out.append((r.value, r.start, r.end, r.complete, r.lineno) if isinstance(r, Record) else r.reason)
    return out


@pytest.mark.parametrize("seed", range(30))
def test_a_long_line_streamed_reads_as_it_does_whole(tmp_path: Path, monkeypatch, seed: int) -> None:
    """Past ``LONG_LINE`` a line is read by the streamed walk (issue #38: a 60 MiB line decoded whole peaked near
    400 MB): the same records, offsets and notices as decoded whole, whatever the lines hold."""
    import random

    rng = random.Random(seed)
    lines: list[bytes] = []
    for i in range(rng.randint(1, 8)):
        roll = rng.random()
        if roll < 0.15:
            lines.append(b'{"broken": ')
        elif roll < 0.25:
            lines.append(b"")
        else:
            value = {"i": i, "t": '数据 "q" \\ \n' * rng.randint(0, 40), "n": [1, 2.5, None, True, {"d": [[]]}]}
            lines.append(json.dumps(value, ensure_ascii=rng.random() < 0.5).encode())
    data = b"\n".join(lines) + (b"\n" if rng.random() < 0.7 else b"")
    path = tmp_path / "s.jsonl"
    path.write_bytes(data)
    whole = _read_all(path)
    monkeypatch.setattr(jsonl, "LONG_LINE", rng.choice([0, 1, 10]))
    monkeypatch.setattr(jsonl, "_CHUNK", rng.choice([1, 3, 64, 1 << 20]))
    streamed = _read_all(path)
    assert [r if isinstance(r, tuple) else "notice" for r in streamed] == [
        r if isinstance(r, tuple) else "notice" for r in whole
    ]


def test_a_long_line_of_one_huge_string_is_kept_cut_and_costs_nothing_around_it(tmp_path: Path, monkeypatch) -> None:
    from voyager_sessions.ingest import jsonstream

    monkeypatch.setattr(jsonl, "LONG_LINE", 1000)
    monkeypatch.setattr(jsonl, "_CHUNK", 4096)  # a line within one read is decoded whole (it is small)
    monkeypatch.setattr(jsonstream, "MAX_STRING_BYTES", 5000)
    path = tmp_path / "s.jsonl"
    huge = json.dumps({"t": "x\\n" * 100_000, "after": 1})
    path.write_text('{"a": 1}\n' + huge + '\n{"b": 2}\n')
    got = _read_all(path)
    assert got[0][0] == {"a": 1} and got[2][0] == {"b": 2}  # type: ignore[index]
    value, start, end, complete, lineno = got[1]  # type: ignore[misc]
    assert value["after"] == 1 and 0 < len(value["t"]) <= 5000 and lineno == 2 and complete
    assert (start, end) == (9, 9 + len(huge) + 1)


def test_a_long_line_past_the_cap_or_unfinished_is_named(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(jsonl, "LONG_LINE", 100)
    monkeypatch.setattr(jsonl, "_CHUNK", 64)
    monkeypatch.setenv("VOYAGER_MAX_LINE_BYTES", str(1 << 16))
    path = tmp_path / "s.jsonl"
    path.write_text('{"a": 1}\n' + json.dumps({"t": "y" * 100_000}) + '\n{"b": 2}\n' + json.dumps({"t": "z" * 500}))
    got = _read_all(path)
    assert got[0][0] == {"a": 1} and got[2][0] == {"b": 2}  # type: ignore[index]
    assert "longer than 65,536" in got[1]  # type: ignore[operator]
    assert got[3][2] == len(path.read_bytes()) and got[3][3] is False  # type: ignore[index]  # unfinished, as whole
