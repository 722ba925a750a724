"""One JSON value, decoded as leniently as the data allows or strictly: what every reader of agents' JSON shares.

The bottom of the JSON readers: ``jsonl`` reads lines with it and ``jsonstream`` (which ``jsonl``
walks its long lines with) reads a member's name with it, so it imports neither.
``decode_line`` is the lenient decoding of one line; ``decode_json`` the strict one for JSON kept
inside a record (tool arguments, a column, a side file's lines), which every adapter uses so that a
value nested too deeply is bad JSON like any other. ``jsonl`` names them all again for its readers.
"""

from __future__ import annotations

import json
import re
from typing import Any

import msgspec

_SURROGATE = re.compile("[\ud800-\udfff]")
_decode = msgspec.json.Decoder().decode


class BadLine(ValueError):
    """A line that is not a JSON record; the message says why, in a few words."""


class TooDeep(BadLine):
    """JSON nested more deeply than the decoders can follow (``jsondoc`` flattens such a document)."""


def decode_line(line: bytes) -> Any:
    """One JSON value from ``line``, as leniently as the data allows; :class:`BadLine` when it is none.

    The fast path is msgspec. What it refuses is tried again with the standard
    library on text decoded with U+FFFD for invalid UTF-8: that reads lone UTF-16
    surrogate escapes (``"\\ud83d"``, what ``JSON.stringify`` writes when a string is cut
    inside an emoji), which are then replaced by U+FFFD too. A value nested too deeply
    for either decoder is refused, never a crash.
    """
    try:
        return _decode(line)
    except RecursionError:
        raise TooDeep("nested too deeply") from None
    except msgspec.DecodeError as exc:
        first = exc
    if b"\x00" in line:
        raise BadLine("binary data (NUL bytes, what a crash or power loss leaves), not JSON")
    try:
        value = json.loads(line.decode("utf-8", "replace"))
    except RecursionError:
        raise TooDeep("nested too deeply") from None
    except ValueError:
        raise BadLine(f"malformed JSON: {_short(first)}") from None
    return scrub_surrogates(value)


def decode_json(data: str | bytes) -> Any:
    """``data`` decoded as JSON, strictly and fast, for JSON kept inside a record: tool arguments, a database
    column, a side file.

    Bad JSON raises ``msgspec.DecodeError`` (a ``ValueError``), and so does a value nested too
    deeply to decode: as the ``RecursionError`` msgspec raises it would escape the adapter and
    cost the whole source, not the one value.
    """
    try:
        return _decode(data)
    except RecursionError:
        raise msgspec.DecodeError("JSON nested too deeply") from None


def scrub_surrogates(value: Any, depth: int = 0) -> Any:
    """``value`` with every lone surrogate in its strings (keys included) replaced by U+FFFD."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return _SURROGATE.sub("\ufffd", value)
        return value
    if depth > 2000:
        return value
    if isinstance(value, list):
        return [scrub_surrogates(v, depth + 1) for v in value]
    if isinstance(value, dict):
        return {scrub_surrogates(k, depth + 1): scrub_surrogates(v, depth + 1) for k, v in value.items()}
    return value


def _short(exc: Exception) -> str:
    text = str(exc)
    return text if len(text) <= 120 else text[:117] + "..."
