"""The Cursor adapter: three surfaces, each peer read a different one, so all three are read.

``ide``          the editor's ``state.vscdb`` databases (``<Cursor user dir>/globalStorage`` and
                 ``workspaceStorage/*``): composers and bubbles, and the legacy chat panel.
``cli``          the Cursor CLI's ``<cursor home>/chats/*/<id>/store.db``, one chat each.
``transcripts``  ``<cursor home>/projects/*/agent-transcripts/``: JSONL or text copies of
                 agent conversations (read only where no richer surface holds them).

Where they live: ``VOYAGER_CURSOR_HOME`` (else ``CURSOR_CONFIG_DIR``, else ``~/.cursor``) for
the CLI's chats and transcripts; ``VOYAGER_CURSOR_APP_DIR`` (else the platform's
``…/Cursor/User``, see ``paths.vscode_user_dirs``) for the editor. Discovery only lists
and stats: a scan where nothing changed reads no database.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._vscode import STATE_DB, session_files, workspace_dirs
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters.cursor import cli, ide, transcripts
from voyager_sessions.ingest.sqlite import sqlite_source

PROVIDER = "cursor"


def app_dirs(env: Mapping[str, str]) -> list[Path]:
    """The editor's user dirs: the override alone when set, else the platform's default."""
    override = manifest.agent_home("cursor.app", env)
    return [override] if override is not None else paths.vscode_user_dirs(env, "Cursor")


def cursor_home(env: Mapping[str, str]) -> Path:
    return manifest.agent_dir("cursor", env)


def _subdirs(path: Path) -> list[Path]:
    try:
        with os.scandir(path) as it:
            return sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


class CursorAdapter:
    """Cursor's editor chats, CLI chats and agent transcripts (see the module doc)."""

    name: ClassVar[str] = PROVIDER

    def __init__(self) -> None:
        #: The editor dirs the last discovery used: a transcript read checks them for a richer copy.
        self._app_dirs: list[Path] | None = None

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = cursor_home(env)
        return [*app_dirs(env), home / "chats", home / "projects"]

    def watch_places(self, env: Mapping[str, str]) -> list[tuple[Path, str]]:
        """Where a watcher looks: the editor's global and per-workspace ``state.vscdb`` folders (not the rest of
        ``User``: ``History`` alone holds a folder per edited file), and the CLI's chats and projects."""
        home = cursor_home(env)
        return [
            *((user / "globalStorage", "") for user in app_dirs(env)),
            *((user / "workspaceStorage", "*") for user in app_dirs(env)),
            (home / "chats", "**"),
            (home / "projects", "**"),
        ]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        dirs = app_dirs(env)
        self._app_dirs = dirs
        for user_dir in dirs:
            yield from sqlite_source(PROVIDER, user_dir / "globalStorage" / STATE_DB, empty_ok=True)
            for ws in workspace_dirs(user_dir):
                yield from sqlite_source(PROVIDER, ws / STATE_DB, empty_ok=True)
        home = cursor_home(env)
        for bucket in _subdirs(home / "chats"):
            for chat in _subdirs(bucket):
                yield from sqlite_source(PROVIDER, chat / "store.db", empty_ok=True)
        for project in _subdirs(home / "projects"):
            if os.path.isdir(project / transcripts.TRANSCRIPTS):
                # A .txt beside its .jsonl is the same transcript: the .jsonl is read.
                yield from session_files(project / transcripts.TRANSCRIPTS, PROVIDER, ".jsonl", ".txt")

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        name = os.path.basename(source.path)
        if name == STATE_DB:
            return ide.read_state_db(source, cursor)
        if name == "store.db":
            return cli.read_store(source, cursor)
        dirs = self._app_dirs if self._app_dirs is not None else app_dirs(os.environ)
        return transcripts.read_transcript(source, cursor, dirs)


def probe(path: str | os.PathLike[str]) -> str:
    """Which documented variant the store at ``path`` is, for ``voyager doctor`` (see each surface's module)."""
    p = os.fspath(path)
    name = os.path.basename(p)
    if name == STATE_DB:
        return ide.probe_state_db(p)
    if name == "store.db":
        return cli.probe_store(p)
    return transcripts.probe_transcript(p)


ADAPTER = CursorAdapter()
