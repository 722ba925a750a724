"""The streamed JSON walk (issue #38, item 4): the same values as a whole decode, in linear work, in bounded memory.

A document past ``jsondoc.STREAM_JSON_BYTES`` is read by ``ingest/jsonstream.py`` a window at a
time. These tests attack it the way the probe did: random documents of hostile strings (escapes,
escaped quotes and backslashes, surrogate pairs, invalid UTF-8, non-ASCII) read through windows
as small as one byte and compared with a whole decode; a string of megabytes whose every window
boundary falls inside it, counted in bytes looked at (the ijson reader looked at the whole string
again at every read: quadratic); depth, cost and string caps; documents cut short.
"""

from __future__ import annotations

import io
import json
import random
from typing import Any

import pytest

from voyager_sessions.ingest import jsonstream
from voyager_sessions.ingest.jsonl import decode_line
from voyager_sessions.ingest.jsonstream import Malformed, Stats, array_items, clean_end, string_end, top_values

_PIECES = [
    '"',
    "\\",
    "\\\\",
    '\\"',
    "\n",
    "\t",
    "é",
    "数据",
    "😀",
    "\ud83d",
    "\x00",
    "}",
    "]",
    ",",
    "{",
    "[",
    ":",
    "a",
    " ",
]


def _text(rng: random.Random, longest: int) -> str:
    return "".join(rng.choice(_PIECES) for _ in range(rng.randint(0, longest)))


def _value(rng: random.Random, depth: int = 0) -> Any:
    roll = rng.random()
    if depth > 5 or roll < 0.35:
        return rng.choice(
            [
                _text(rng, 30),
                rng.randint(-(10**6), 10**6),
                10**30 + rng.randint(0, 9),  # past 64 bits: yajl refused it and stopped the document
                rng.random() * 1e6,
                True,
                False,
                None,
                "",
            ]
        )
    if roll < 0.7:
        return [_value(rng, depth + 1) for _ in range(rng.randint(0, 4))]
    return {_text(rng, 8): _value(rng, depth + 1) for _ in range(rng.randint(0, 4))}


def _dumps(value: Any, rng: random.Random) -> bytes:
    text = json.dumps(
        value,
        ensure_ascii=rng.random() < 0.5,
        indent=rng.choice([None, 0, 2]),
        separators=rng.choice([None, (",", ":"), (" , ", " : ")]),
    )
    return text.encode("utf-8", "surrogatepass")


def _decoded(pieces: list[bytes]) -> list[Any]:
    return [decode_line(p) for p in pieces]


@pytest.mark.parametrize("seed", range(60))
def test_items_and_header_values_equal_a_whole_decode_through_any_window(seed, monkeypatch):
    rng = random.Random(seed)
    monkeypatch.setattr(jsonstream, "WINDOW", rng.choice([1, 2, 3, 5, 7, 16, 64, 4096]))
    items = [_value(rng) for _ in range(rng.randint(0, 12))]
    head = {"version": _value(rng), "title": _text(rng, 20)}
    tail = {"after": _value(rng)}
    bare = rng.random() < 0.3
    doc = items if bare else {**head, "messages": items, **tail}
    data = _dumps(doc, rng)
    whole = decode_line(data)
    expected = whole if bare else whole["messages"]

    stats = Stats()
    got = _decoded(list(array_items(io.BytesIO(data), None if bare else "messages", stats)))
    assert got == expected
    assert (stats.too_deep, stats.cut_strings, stats.too_large) == (0, 0, 0)
    if not bare:
        values = {k: decode_line(v) for k, v in top_values(io.BytesIO(data), ("title", "after", "version"), Stats())}
        assert values == {"title": whole["title"], "after": whole["after"], "version": whole["version"]}


def _reference_end(text: bytes, pos: int) -> int:
    """Where the string whose content starts at ``pos`` closes, one byte at a time."""
    i = pos
    while i < len(text):
        if text[i] == 0x5C:
            i += 2
            continue
        if text[i] == 0x22:
            return i
        i += 1
    return -1


@pytest.mark.parametrize("seed", range(200))
def test_string_end_finds_the_closing_quote_across_any_split(seed):
    rng = random.Random(seed)
    content = "".join(
        rng.choice(["\\\\", '\\"', "\\n", "\\u00e9", "a", "数", "\\\\\\\\", '\\\\\\"']) for _ in range(30)
    )
    text = content.encode() + b'"' + b"tail"
    expected = _reference_end(text, 0)
    # Whole, then fed in two windows split anywhere (carrying the open escape across).
    assert string_end(text, 0, False) == (expected, False)
    cut = rng.randint(0, len(text))
    first, escaped = string_end(text[:cut], 0, False)
    if first >= 0:
        assert first == expected
    else:
        second, _ = string_end(text[cut:], 0, escaped)
        assert cut + second == expected


def test_a_string_spanning_every_window_is_looked_at_a_bounded_number_of_times(monkeypatch):
    """The probe: one string of megabytes (a 95 KB zip inflating to a 96 MB one took 37 s). Every window is
    looked at once by ``string_end``, escapes or not: work in bytes, not seconds."""
    monkeypatch.setattr(jsonstream, "WINDOW", 4096)
    looked = 0
    real = jsonstream.string_end

    def counting(buf: bytes, pos: int, escaped: bool) -> tuple[int, bool]:
        nonlocal looked
        looked += len(buf) - pos
        return real(buf, pos, escaped)

    monkeypatch.setattr(jsonstream, "string_end", counting)
    for body in (b"a" * (4 << 20), b'\\"' * (2 << 20), b"\\\\" * (2 << 20), b"\\n" * (2 << 20)):
        looked = 0
        data = b'[{"t": "' + body + b'"}, {"after": 1}]'
        pieces = list(array_items(io.BytesIO(data), None, Stats()))
        assert len(pieces) == 2 and decode_line(pieces[1]) == {"after": 1}
        assert looked <= 2 * len(data), (len(body), looked)


@pytest.mark.parametrize("cap", range(96, 109))
def test_a_string_past_the_cap_is_cut_cleanly_and_the_rest_is_read(monkeypatch, cap):
    monkeypatch.setattr(jsonstream, "MAX_STRING_BYTES", cap)
    monkeypatch.setattr(jsonstream, "WINDOW", 7)
    units = ("a", "é", "数据", "😀", "\n", '"', "\\", "\\u00e9")
    for unit, ascii_only in [(u, a) for u in units for a in (False, True)]:  # ASCII: "😀" is a surrogate pair
        original = unit * 200
        data = json.dumps([{"t": original, "n": 1}, {"next": "kept"}], ensure_ascii=ascii_only).encode()
        stats = Stats()
        first, second = _decoded(list(array_items(io.BytesIO(data), None, stats)))
        assert stats.cut_strings == 1
        assert original.startswith(first["t"]) and 0 < len(first["t"]) < len(original), unit
        assert first["n"] == 1 and second == {"next": "kept"}


@pytest.mark.parametrize("blob", [b"\\\\" * 80, b"a\\", b"a\\u00", b"a\\\\\\u12", "é".encode()[:1], "数".encode()[:2]])
def test_clean_end_never_leaves_half_an_escape_or_character(blob):
    kept = blob[: clean_end(blob)]
    assert isinstance(decode_line(b'"' + kept + b'"'), str)


def test_values_nested_too_deeply_are_null_without_being_held(monkeypatch):
    monkeypatch.setattr(jsonstream, "WINDOW", 64)
    deep = "[" * 100_000 + "]" * 100_000
    data = ('[{"a": ' + deep + ', "b": 2}, {"c": 3}]').encode()
    stats = Stats()
    first, second = _decoded(list(array_items(io.BytesIO(data), None, stats)))
    assert stats.too_deep == 1 and first["b"] == 2 and second == {"c": 3}
    inner = first["a"]
    for _ in range(jsonstream.MAX_DEPTH - 2):
        inner = inner[0]
    assert inner == [None]


def test_an_item_too_costly_to_hold_is_skipped_alone(monkeypatch):
    """Ten thousand empty objects cost far more decoded than their bytes: counted per value, not per byte."""
    monkeypatch.setattr(jsonstream, "MAX_PIECE_COST", 100_000)
    monkeypatch.setattr(jsonstream, "COUNTED_FROM", 1_000)
    monkeypatch.setattr(jsonstream, "WINDOW", 512)
    data = json.dumps([{"small": 1}, {"many": [{}] * 10_000}, {"after": 2}]).encode()
    stats = Stats()
    assert _decoded(list(array_items(io.BytesIO(data), None, stats))) == [{"small": 1}, {"after": 2}]
    assert stats.too_large == 1


def test_invalid_utf8_and_huge_numbers_cost_nothing_around_them():
    data = b'[{"t": "ok"}, {"t": "bad \xff\xfe bytes", "n": 123456789012345678901234567890}, {"t": "after"}]'
    got = _decoded(list(array_items(io.BytesIO(data), None, Stats())))
    assert got[0] == {"t": "ok"} and got[2] == {"t": "after"}
    assert got[1]["t"] == "bad \ufffd\ufffd bytes" and got[1]["n"] == 123456789012345678901234567890


@pytest.mark.parametrize("cut", [1, 10, 25, 40])
def test_a_document_cut_short_gives_the_items_before_then_says_so(cut):
    data = json.dumps({"messages": [{"i": i, "t": "x" * 5} for i in range(3)]}).encode()
    short = data[: len(data) - cut]
    got: list[Any] = []
    with pytest.raises(Malformed):
        for piece in array_items(io.BytesIO(short), "messages", Stats()):
            got.append(decode_line(piece))
    assert got == [{"i": i, "t": "xxxxx"} for i in range(len(got))]


def test_items_within_a_window_are_found_by_msgspec_not_walked(monkeypatch):
    """The fast path (msgspec's skipping decoder says where an item ends) holds with the msgspec installed: a
    change in its error text would fall back to the walk, correct but several times slower."""
    walked = 0
    real = jsonstream._Walk.piece

    def counting(self: Any) -> bytes | None:
        nonlocal walked
        walked += 1
        return real(self)

    monkeypatch.setattr(jsonstream._Walk, "piece", counting)
    data = json.dumps({"messages": [{"i": i, "t": "数据 " * 20} for i in range(200)]}).encode()
    assert len(list(array_items(io.BytesIO(data), "messages", Stats()))) == 200
    assert walked <= 200 * 4096 // jsonstream.WINDOW + 3  # only the items a window boundary cuts


@pytest.mark.parametrize("seed", range(20))
def test_small_items_split_in_batches_are_the_items_of_a_whole_decode(seed, monkeypatch):
    """Many small items are split from a window by one msgspec call; a string holding what looks like the end of one
    item and the start of the next (``}, {``) must not end a batch."""
    rng = random.Random(seed)
    monkeypatch.setattr(jsonstream, "WINDOW", rng.choice([2048, 4096, 65536]))
    calls = 0
    real = jsonstream._split

    def counting(data: bytes) -> list:
        nonlocal calls
        calls += 1
        return real(data)

    monkeypatch.setattr(jsonstream, "_split", counting)
    decoys = ["}, {", "},{", '"}, {"', "], [", '\\"}, {\\"', "}\n,\n{", "x"]
    items = [
        {"i": i, "t": rng.choice(decoys) * rng.randint(0, 3), "n": [i, {"d": rng.choice(decoys)}]} for i in range(3000)
    ]
    data = _dumps({"messages": items}, rng)
    got = _decoded(list(array_items(io.BytesIO(data), "messages", Stats())))
    assert got == items
    assert calls > 0  # batches were tried (and, where a decoy ended one, refused)
