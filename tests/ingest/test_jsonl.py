"""The JSONL reader on hostile and broken input: each line stands alone, nothing blocks, time is linear."""

from __future__ import annotations

import json
import time
import tracemalloc
from pathlib import Path

import msgspec
import pytest

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.jsonl import Record, decode_json, read_records


def _records(path: Path, offset: int = 0) -> tuple[list[Record], list[Notice]]:
    items = list(read_records(str(path), offset))
    return [i for i in items if isinstance(i, Record)], [i for i in items if isinstance(i, Notice)]


def _line(obj: object) -> bytes:
    return json.dumps(obj, ensure_ascii=False).encode() + b"\n"


def test_a_deeply_nested_line_costs_that_line_only(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    deep = b"[" * 1000 + b"]" * 1000 + b"\n"
    p.write_bytes(_line({"n": 1}) + deep + _line({"n": 3}))
    recs, notices = _records(p)
    assert [r.value["n"] for r in recs] == [1, 3]
    assert len(notices) == 1 and "nested too deeply" in notices[0].reason and notices[0].where == "line 2"
    # Lines appended later are read too (the bad line does not stop the file).
    with p.open("ab") as fh:
        fh.write(_line({"n": 4}))
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
    assert [r.value["text"] for r in recs] == ["cut \ufffd here", "pair \U0001F600 ok"]
    assert all(isinstance(r.value["text"].encode("utf-8"), bytes) for r in recs)  # valid UTF-8 now


def test_a_nul_byte_costs_its_line_not_the_file(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(_line({"n": 1}) + b'{"n": 2\x00}\n' + _line({"n": 3}) + b"\x00" * 40)
    recs, notices = _records(p)
    assert [r.value["n"] for r in recs] == [1, 3]
    assert {n.where for n in notices} == {"line 2", "line 4"} and all("binary" in n.reason for n in notices)


def test_a_byte_order_mark_on_the_first_line_is_ignored(tmp_path: Path) -> None:
    p = tmp_path / "s.jsonl"
    p.write_bytes(b"\xef\xbb\xbf" + _line({"n": 1}) + _line({"n": 2}))
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
    p.write_bytes(_line({"n": 1}) + big + _line({"n": 3}))
    tracemalloc.start()
    try:
        recs, notices = _records(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert [r.value["n"] for r in recs] == [1, 3]
    assert len(notices) == 1 and "longer than" in notices[0].reason and notices[0].where == "line 2"
    assert peak < 8 << 20, peak  # the 20 MB line was never held: one line cap plus a chunk or two
    assert recs[1].start == len(_line({"n": 1})) + len(big)  # offsets stay exact past the skipped line


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
