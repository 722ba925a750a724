"""Sorting what an adapter's ``read`` yielded, for the JSONL adapters' tests."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from voyager_sessions.core.model import Event, Session
from voyager_sessions.ingest.adapters.base import Cursor, Notice


def events(items: list[Any]) -> list[Event]:
    return [i for i in items if isinstance(i, Event)]


def notices(items: list[Any]) -> list[Notice]:
    return [i for i in items if isinstance(i, Notice)]


def last_session(items: list[Any]) -> Session:
    return [i for i in items if isinstance(i, Session)][-1]


def cursor_of(items: list[Any]) -> Cursor:
    found = [i for i in items if isinstance(i, Cursor)]
    assert len(found) == 1 and items[-1] is found[0], "exactly one Cursor, last"
    return found[0]


def write(path: Path, lines: list[Any], *, raw_tail: bytes = b"") -> Path:
    """A JSONL file of ``lines`` (dicts as JSON, bytes as they are), then ``raw_tail`` unterminated."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as fh:
        for line in lines:
            fh.write(line if isinstance(line, bytes) else json.dumps(line, ensure_ascii=False).encode() + b"\n")
        fh.write(raw_tail)
    return path


def append(path: Path, lines: list[Any]) -> None:
    with open(path, "ab") as fh:
        for line in lines:
            fh.write(json.dumps(line, ensure_ascii=False).encode() + b"\n")
