"""What every VS Code-family editor (VS Code, Cursor, Windsurf) keeps the same way: key-value ``state.vscdb``
databases and ``workspaceStorage/<id>/workspace.json`` manifests.

An editor's ``state.vscdb`` is a large SQLite key-value store shared with everything else
the editor remembers (layouts, caches, extension state); chats are a handful of its keys.
The helpers here read *only* named keys or key ranges, through the primary-key index
(``key >= prefix AND key < prefix-successor``, which SQLite answers from the index, where
``LIKE`` may scan the table), so a multi-gigabyte database costs what its chats cost.
``workspace_folder`` turns a workspace's manifest into the folder it was opened on (the
session's cwd); manifests are read once per change (``cached_by_stat``). ``chat_items``
is how a database's chats are read again: each by its signature, an unchanged one as
``Unchanged``. ``session_files`` lists chat files kept in two encodings (Copilot's
``.json``/``.jsonl``, Cursor's transcripts' ``.txt``/``.jsonl``), each session once. Nothing
here knows a chat format.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote, urlsplit

from voyager_sessions.ingest.adapters._common import cached_by_stat
from voyager_sessions.ingest.adapters.base import Item, Notice, Source, Unchanged
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.core.model import Event, session_id

#: The file name of a VS Code-family editor's key-value database.
STATE_DB = "state.vscdb"


def key_range(prefix: str) -> tuple[str, str]:
    """``(low, high)`` such that ``low <= key < high`` holds exactly for keys starting with ``prefix``."""
    return prefix, prefix[:-1] + chr(ord(prefix[-1]) + 1)


def as_text(value: Any) -> str | None:
    """A key-value cell as text: editors store JSON as TEXT or as a UTF-8 BLOB; NULL stays None."""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, str):
        return value
    return None


def table_exists(conn: sqlite3.Connection, name: str) -> bool:
    return conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (name,)).fetchone() is not None


def item(conn: sqlite3.Connection, table: str, key: str) -> str | None:
    """The value of ``key`` in ``table`` (``ItemTable``, ``cursorDiskKV``) as text, or None when absent or NULL."""
    row = conn.execute(f"SELECT value FROM {table} WHERE key = ?", (key,)).fetchone()
    return as_text(row[0]) if row is not None else None


def items(conn: sqlite3.Connection, table: str, prefix: str, columns: str = "key, value") -> Iterator[tuple[Any, ...]]:
    """The rows of ``table`` whose key starts with ``prefix``, in key order, through the key index."""
    low, high = key_range(prefix)
    yield from conn.execute(f"SELECT {columns} FROM {table} WHERE key >= ? AND key < ? ORDER BY key", (low, high))


def has_prefix(conn: sqlite3.Connection, table: str, prefix: str) -> bool:
    low, high = key_range(prefix)
    return conn.execute(f"SELECT 1 FROM {table} WHERE key >= ? AND key < ? LIMIT 1", (low, high)).fetchone() is not None


def uri_path(uri: Any) -> str | None:
    """The path a ``file://`` (or ``vscode-remote://``) URI names, percent-decoded; None for anything else.

    ``file:///home/me/a%20b`` -> ``/home/me/a b``; a ``file://host/share`` authority is not
    part of the path; a Windows drive (``/c:/x``) loses its leading slash. A remote URI's
    path is the folder on the remote machine, which is still where the session ran.
    """
    if not isinstance(uri, str) or not uri:
        return None
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    if parts.scheme not in ("file", "vscode-remote") or not parts.path:
        return None
    path = unquote(parts.path)
    if len(path) > 2 and path[0] == "/" and path[2] == ":" and path[1].isalpha():
        path = path[1:]
    return path or None


def _load_manifest(path: str) -> str | None:
    doc = read_json_object(path, fatal=False)
    if not isinstance(doc, dict):
        return None
    # ``folder`` for a folder window; ``workspace`` names a .code-workspace file, not a folder.
    return uri_path(doc.get("folder"))


def workspace_folder(workspace_dir: str | os.PathLike[str]) -> str | None:
    """The folder ``workspaceStorage/<id>`` was opened on, from its ``workspace.json``; None if unknown."""
    return cached_by_stat(os.path.join(os.fspath(workspace_dir), "workspace.json"), _load_manifest, None)


def workspace_dirs(user_dir: Path) -> list[Path]:
    """``<user dir>/workspaceStorage/*`` directories, sorted ([] when there are none)."""
    root = user_dir / "workspaceStorage"
    try:
        with os.scandir(root) as it:
            return sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


def chat_items(
    provider: str,
    native: str,
    signature: str,
    known: dict[str, Any],
    out: dict[str, Any],
    read: Callable[[], list[Item]],
) -> Iterator[Item]:
    """One chat of a key-value database: ``Unchanged`` when ``known`` (the last read's) holds its
    ``signature``, else what ``read()`` gives.

    ``out`` receives ``native -> [signature, events]`` for the next read's ``known``. A chat
    whose last read indexed no event is not ``Unchanged``: nothing of it is in the index.
    """
    before = known.get(native)
    if isinstance(before, list) and len(before) == 2 and before[0] == signature:
        out[native] = before
        if before[1]:
            yield Unchanged(session=session_id(provider, native))
        return
    produced = read()
    out[native] = [signature, sum(1 for i in produced if isinstance(i, Event))]
    yield from produced


def session_files(folder: Path, provider: str, preferred: str, other: str) -> list[Source | Notice]:
    """A Source for every ``*<preferred>`` and ``*<other>`` file under ``folder`` (dot files aside), except an
    ``<id><other>`` beside its ``<id><preferred>``: the same session in two encodings is read from the first."""
    found = list(
        walk_files(
            folder,
            "",
            provider,
            append_only=False,
            empty_ok=True,
            match=lambda n: n.endswith((preferred, other)) and not n.startswith("."),
        )
    )
    kept = {s.path[: -len(preferred)] for s in found if isinstance(s, Source) and s.path.endswith(preferred)}
    return [
        i for i in found if not (isinstance(i, Source) and i.path.endswith(other) and i.path[: -len(other)] in kept)
    ]
