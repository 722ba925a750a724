"""Replaying VS Code's object mutation log (chat sessions as ``.jsonl``, VS Code 1.109+) into the object it describes.

Each line is one entry (``objectMutationLog.ts`` in microsoft/vscode, read for this module):

``{"kind": 0, "v": state}``                 the whole object (first line; again after compaction)
``{"kind": 1, "k": [path…], "v": value}``  set the value at ``k`` (replacing it entirely)
``{"kind": 2, "k": [path…], "v": [items]?, "i": n?}``  array at ``k``: truncate to ``n`` when
                                            given, then append the items
``{"kind": 3, "k": [path…]}``              delete the value at ``k``

A path is object keys and array indexes. As in VS Code's reader, a set with an empty path
changes nothing. A later set replaces what an earlier entry wrote, so text a set
overwrote is gone (it must not be found). An entry whose path does not lead anywhere,
or of a kind this module does not know, is skipped and named; a bad line (half-written
last line, garbage) is named by the JSONL reader and costs only itself.
"""

from __future__ import annotations

import os
from typing import Any

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.jsonl import read_records

INITIAL, SET, PUSH, DELETE = 0, 1, 2, 3
#: Name at most this many entries that could not be applied; the rest are counted.
MAX_NAMED = 3
_MISSING = object()


class _PathError(ValueError):
    pass


def _step(current: Any, key: Any) -> Any:
    if isinstance(current, dict) and isinstance(key, str):
        if key not in current:
            raise _PathError(f"no key {key[:40]!r}")
        return current[key]
    if isinstance(current, list) and isinstance(key, int) and not isinstance(key, bool):
        if not 0 <= key < len(current):
            raise _PathError(f"index {key} out of range")
        return current[key]
    raise _PathError(f"cannot step into a {type(current).__name__} with {type(key).__name__}")


def _parent(state: Any, path: list[Any]) -> Any:
    current = state
    for key in path[:-1]:
        current = _step(current, key)
    return current


def apply_set(state: Any, path: list[Any], value: Any) -> None:
    """Set (or, with ``_MISSING``, delete) the value at ``path``; ``_PathError`` when the path leads nowhere."""
    if not path:
        return  # VS Code's reader ignores a root replacement
    parent, last = _parent(state, path), path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        if value is _MISSING:
            parent.pop(last, None)
        else:
            parent[last] = value
    elif isinstance(parent, list) and isinstance(last, int) and not isinstance(last, bool):
        if value is _MISSING:
            if 0 <= last < len(parent):
                parent[last] = None  # JS ``arr[i] = undefined`` keeps the slot
        elif 0 <= last < len(parent):
            parent[last] = value
        elif last == len(parent):
            parent.append(value)
        else:
            raise _PathError(f"index {last} past the end")
    else:
        raise _PathError(f"cannot set into a {type(parent).__name__}")


def apply_push(state: Any, path: list[Any], values: Any, start: Any) -> None:
    """Truncate the array at ``path`` to ``start`` (when given), then append ``values``."""
    if not path:
        raise _PathError("push with an empty path")
    parent, last = _parent(state, path), path[-1]
    if isinstance(parent, dict) and isinstance(last, str):
        arr = parent.get(last)
    elif isinstance(parent, list) and isinstance(last, int) and not isinstance(last, bool) and 0 <= last < len(parent):
        arr = parent[last]
    else:
        raise _PathError(f"cannot push into a {type(parent).__name__}")
    if arr is None:
        arr = []  # a missing array starts empty (VS Code: ``current[key] || []``)
    elif not isinstance(arr, list):
        raise _PathError(f"push onto a {type(arr).__name__}, not an array")
    if isinstance(start, int) and not isinstance(start, bool) and start >= 0:
        del arr[start:]
    if isinstance(values, list):
        arr.extend(values)
    parent[last] = arr


def replay(path: str | os.PathLike[str]) -> tuple[Any, list[Notice]]:
    """The object the log at ``path`` describes (None when it has no initial entry), and what was skipped."""
    name = os.fspath(path)
    state: Any = None
    notices: list[Notice] = []
    failed: list[str] = []
    for record in read_records(name, 0):
        if isinstance(record, Notice):
            notices.append(record)
            if record.fatal:
                return None, notices
            continue
        entry = record.value
        kind = entry.get("kind") if isinstance(entry, dict) else None
        try:
            if kind == INITIAL:
                state = entry.get("v")
                continue
            if kind not in (SET, PUSH, DELETE):
                raise _PathError(f"an entry of kind {kind!r}, which Voyager does not know")
            if state is None:
                raise _PathError("a change before the initial state")
            keys = entry.get("k")
            if not isinstance(keys, list):
                raise _PathError("no key path")
            if kind == SET:
                apply_set(state, keys, entry.get("v"))
            elif kind == DELETE:
                apply_set(state, keys, _MISSING)
            else:
                apply_push(state, keys, entry.get("v"), entry.get("i"))
        except _PathError as exc:
            failed.append(f"line {record.lineno}: {exc}")
    if failed:
        named = "; ".join(failed[:MAX_NAMED]) + (
            f" (and {len(failed) - MAX_NAMED} more)" if len(failed) > MAX_NAMED else ""
        )
        notices.append(
            Notice(
                source=name,
                reason=f"{len(failed)} change{'s' if len(failed) != 1 else ''} could not be applied, skipped: {named}",
            )
        )
    return state, notices
