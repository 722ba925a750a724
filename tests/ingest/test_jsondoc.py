"""Whole JSON documents on hostile input: one absurdly nested value costs that value, not the document."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.jsondoc import MAX_DEPTH, flatten_deep, read_json

DEEP = "[" * 600 + '{"a":' * 400 + "1" + "}" * 400 + "]" * 600


def test_a_value_nested_too_deeply_is_read_as_null_and_named(tmp_path: Path) -> None:
    p = tmp_path / "ui_messages.json"
    p.write_text(
        '[{"say": "text", "text": "first kept"}, {"say": "tool", "args": ' + DEEP + "}, "
        '{"say": "text", "text": "third kept \\"[[[\\" {{"}]'
    )
    notices: list[Notice] = []
    doc = read_json(p, notices=notices)
    assert not isinstance(doc, Notice), doc
    assert doc[0]["text"] == "first kept" and doc[2]["text"] == 'third kept "[[[" {{'
    inner = doc[1]["args"]
    for _ in range(MAX_DEPTH - 3):  # args is at depth 3 (the list, then the message)
        inner = inner[0] if isinstance(inner, list) else inner["a"]
    assert inner == [None]  # nesting kept down to the limit, the rest read as null
    assert len(notices) == 1 and "nested more than 128 deep" in notices[0].reason and not notices[0].fatal
    assert notices[0].source == str(p)


def test_without_a_notices_list_the_document_is_still_read(tmp_path: Path) -> None:
    p = tmp_path / "doc.json"
    p.write_text('{"deep": ' + DEEP + ', "title": "still here"}')
    assert read_json(p)["title"] == "still here"


def test_brackets_inside_strings_do_not_count() -> None:
    text = json.dumps({"s": "[" * 500 + '\\" {' * 300, "n": [[1]]}).encode()
    assert flatten_deep(text, limit=2) == (text.replace(b"[[1]]", b"[null]"), 1)
    assert flatten_deep(text) == (text, 0)


def test_malformed_deep_text_is_still_refused(tmp_path: Path) -> None:
    p = tmp_path / "doc.json"
    p.write_text('{"a": ' + "[" * 2000)  # cut short: no closing brackets at all
    n = read_json(p)
    assert isinstance(n, Notice) and n.fatal


def test_a_document_its_own_reader_decodes_whole_is_read_no_further_than_the_cap(monkeypatch) -> None:
    """Side files read by their adapter's own decoder (Claude's sessions index, OpenCode's tree) obey the same cap."""
    import io

    from voyager_sessions.ingest.jsondoc import capped_bytes

    monkeypatch.setenv("VOYAGER_MAX_JSON_BYTES", str(1 << 16))
    assert capped_bytes(io.BytesIO(b"x" * (1 << 16))) == b"x" * (1 << 16)
    big = io.BytesIO(b"x" * (1 << 20))
    with pytest.raises(ValueError, match="VOYAGER_MAX_JSON_BYTES"):
        capped_bytes(big)
    assert big.tell() == (1 << 16) + 1
