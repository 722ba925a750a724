"""Windsurf: its current history cannot be read; its legacy chat can.

``cascade``         ``<windsurf home>/cascade/*.pb`` (``VOYAGER_WINDSURF_HOME``, else
                    ``~/.codeium/windsurf``): Cascade conversations as encrypted protobuf. No
                    peer has a decoder (AV, DJ). The folder is one source; reading it reports,
                    once per change (a failed source is not read again until it changes), that
                    it is there and unreadable, so ``voyager doctor`` lists it under "cannot
                    use" and a scan never reports "no Windsurf sessions" as if there were none.
``aichat-legacy``   ``<Windsurf user dir>/workspaceStorage/<id>/state.vscdb`` ``ItemTable`` keys
                    ``workbench.panel.aichat.view.aichat.chatdata`` / ``aiChat.chatdata`` (AV): the
                    chat panel Cursor also had, read with the same code (``_aichat``); cwd from
                    the workspace's ``workspace.json``.

Not read (*verify*): a ``codeium.windsurf`` blob in ``globalStorage/state.vscdb`` that one
community patch reads (DJ #308 found no Cascade transcript in ``state.vscdb`` on 3.5.17).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _aichat
from voyager_sessions.ingest.adapters._common import UnknownRecords
from voyager_sessions.ingest.adapters._vscode import STATE_DB, table_exists, workspace_dirs, workspace_folder
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import folder_fingerprint
from voyager_sessions.ingest.sqlite import connect_readonly, open_store, sqlite_source, unreadable

PROVIDER = "windsurf"
#: What ``probe`` and the read say about Cascade's store.
ENCRYPTED = "unreadable (encrypted; no reader exists)"


def app_dirs(env: Mapping[str, str]) -> list[Path]:
    override = manifest.agent_home("windsurf.app", env)
    return [override] if override is not None else paths.vscode_user_dirs(env, "Windsurf")


def cascade_dir(env: Mapping[str, str]) -> Path:
    return manifest.agent_dir("windsurf", env) / "cascade"


def _conversations(folder: Path) -> list[Path]:
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.name.endswith(".pb") and e.is_file(follow_symlinks=False))
    except OSError:
        return []


def read_cascade(path: str) -> Iterator[Item]:
    n = len(_conversations(Path(path)))
    yield Notice(
        source=path,
        fatal=True,
        reason=f"Windsurf Cascade history present ({n} conversation file{'s' if n != 1 else ''}) but "
        f"{ENCRYPTED}; not indexed",
    )


def read_legacy(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    """The legacy chat tabs of one workspace database (tabs whose signature is in ``cursor`` are Unchanged)."""
    path = source.path
    known = cursor.state.get("tabs") if cursor is not None else None
    known = known if isinstance(known, dict) else {}
    out: dict[str, list] = {}
    unknown = UnknownRecords("Windsurf")
    opened = open_store(path, "Windsurf", {}, lenient_text=True)
    if isinstance(opened, Notice):
        yield opened
        return
    conn, schema = opened
    try:
        if "ItemTable" in schema:
            ws = Path(path).parent
            yield from _aichat.read_tabs(
                conn,
                _aichat.CHAT_KEYS,
                PROVIDER,
                path,
                cwd=workspace_folder(ws),
                fallback=ws.name,
                known=known,
                out=out,
                unknown=unknown,
            )
    except sqlite3.DatabaseError as exc:
        yield unreadable(path, exc)
        return
    finally:
        conn.close()
    if (notice := unknown.notice(path)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=0, tail_hash="", state={"tabs": out})


class WindsurfAdapter:
    """Windsurf's encrypted Cascade store (detected and reported) and its legacy chat panel (read)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [cascade_dir(env), *app_dirs(env)]

    def watch_places(self, env: Mapping[str, str]) -> list[tuple[Path, str]]:
        """Where a watcher looks: the Cascade folder, and each workspace's ``state.vscdb`` folder (not the rest of
        ``User``)."""
        return [(cascade_dir(env), "**"), *((user / "workspaceStorage", "*") for user in app_dirs(env))]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        cascade = cascade_dir(env)
        files = _conversations(cascade)
        if files:
            try:
                fp = folder_fingerprint(cascade, files)
            except OSError:
                pass
            else:
                yield Source(provider=PROVIDER, path=str(cascade), fingerprint=fp, append_only=False)
        for user_dir in app_dirs(env):
            for ws in workspace_dirs(user_dir):
                yield from sqlite_source(PROVIDER, ws / STATE_DB, empty_ok=True)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if os.path.isdir(source.path):
            return read_cascade(source.path)
        return read_legacy(source, cursor)


def probe(path: str | os.PathLike[str]) -> str:
    """``cascade`` stores are unreadable (encrypted); a workspace database holds ``aichat-legacy`` or ``no-chat``."""
    p = os.fspath(path)
    if os.path.isdir(p):
        return ENCRYPTED
    try:
        conn = connect_readonly(p, lenient_text=True)
    except sqlite3.Error:
        return "unreadable"
    try:
        if not table_exists(conn, "ItemTable"):
            return "no-chat"
        found = [
            k
            for k in _aichat.CHAT_KEYS
            if conn.execute("SELECT 1 FROM ItemTable WHERE key = ?", (k,)).fetchone() is not None
        ]
        return "aichat-legacy" if found else "no-chat"
    except sqlite3.DatabaseError:
        return "unreadable"
    finally:
        conn.close()


ADAPTER = WindsurfAdapter()
