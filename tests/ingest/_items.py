"""Sorting what an adapter's ``read`` yielded, for the JSONL adapters' tests."""

from __future__ import annotations

from typing import Any

from voyager.ingest.adapters.base import Cursor, Notice

from voyager.model import Event, Session


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
