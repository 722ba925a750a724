"""Drafts of events, numbered once a record is understood; and the small value parsers several adapters share.

An adapter that reads a whole document (a session kept as one JSON file, a database
row, a folder re-read after a change) first turns each record into *drafts*:
``(kind, origin, text, fields)`` tuples, with empty text allowed. :func:`number` turns
them into Events through an :class:`~voyager_sessions.ingest.adapters._common.EventCounter`,
which drops the empty ones, so a mapping never has to check for text itself.

A tool call's text is the one rule's (:func:`voyager_sessions.ingest.toolcall.tool_call_text`).
:func:`exit_code` accepts an exit
status only when the record states one (an int, or a string of digits, which Kiro and
others write); anything else stays ``None``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

import msgspec

from voyager_sessions.ingest.adapters._common import EventCounter
from voyager_sessions.ingest.jsonl import decode_json
from voyager_sessions.core.model import Event, Kind, Origin

#: (kind, origin, text, Event fields) of one event before it is numbered.
Draft = tuple[Kind, Origin, Any, dict[str, Any]]

_decode = decode_json
_INT = re.compile(r"-?\d{1,10}")
_ABSOLUTE = re.compile(r"^(/|[A-Za-z]:[\\/]|\\\\)")


def number(counter: EventCounter, drafts: Iterable[Draft]) -> Iterator[Event]:
    """The Events of ``drafts`` in order; a draft without text (or text that is not a string) yields none."""
    for kind, origin, text, fields in drafts:
        if isinstance(text, str):
            event = counter.make(kind, origin, text, **fields)
            if event is not None:
                yield event


def json_value(text: Any) -> Any:
    """``text`` decoded as JSON when it is a JSON string; ``None`` when it is not text or not JSON."""
    if not isinstance(text, (str, bytes)) or not text:
        return None
    try:
        return _decode(text)
    except (msgspec.DecodeError, RecursionError):
        return None


def exit_code(value: Any) -> int | None:
    """An exit status as recorded: an int, or a string of digits (``"0"``, ``"-1"``); ``None`` otherwise."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _INT.fullmatch(value.strip()):
        return int(value.strip())
    return None


def epoch_text(value: Any) -> Any:
    """A numeric string (``"1779012000000"``) as a number, for :func:`~._common.epoch`; anything else unchanged."""
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return value


def absolute_path(text: Any) -> str | None:
    """``text`` when it is an absolute POSIX or Windows path without NUL, else ``None``.

    Several agents name a session's folder after its cwd (base64, percent-encoding); what such
    a name decodes to is taken for a cwd only when it names one place wherever it is used.
    """
    if isinstance(text, str) and _ABSOLUTE.match(text) and "\x00" not in text:
        return text
    return None
