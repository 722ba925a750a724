"""The Claude Desktop Cowork adapter: the desktop app's local agent sessions (documented, not yet observed).

Claude Desktop's "Cowork" (local agent mode) runs Claude Code inside a folder of its own per
session and keeps, under ``<Claude>/local-agent-mode-sessions/<orgId>/<workspaceId>/``:

* ``local_<uuid>.json``, the session's card: ``title`` (what the app shows), ``cliSessionId`` (the
  Claude Code session that holds the conversation), ``createdAt``/``lastActivityAt`` (epoch ms),
  ``userSelectedFolders``, the model;
* ``local_<uuid>/.claude/projects/<encoded dir>/<cliSessionId>.jsonl``, that session's transcript in
  Claude Code's format (and its subagents under ``<cliSessionId>/subagents/**/agent-*.jsonl``), read
  by :class:`~._claude_read.ClaudeRead`. The encoded folder's name differs between app versions, so only
  ``.claude/projects`` of each ``local_<uuid>/`` is walked, never the rest of that folder (the work's
  outputs, which can be large); ``skills-plugin/`` beside the sessions is the app's, not a session.

The card's title names the session (``ai-title`` lines in the transcript, the title the app
generated, when the card has none; a ``/rename`` in the transcript wins over both), and its
size and mtime are part of the transcript's fingerprint, so a rename in the app is seen. Sessions
are ``cowork:<cliSessionId>``: never mistaken for the same transcript read as a Claude Code one
(it is not under ``~/.claude``). The evidence is agentsview's ``cowork.go`` (not a real install:
the desktop app does not run here). No resume command: the app reopens its sessions.

``<Claude>`` is ``~/.config/Claude`` (``$XDG_CONFIG_HOME``), ``~/Library/Application Support/Claude``
on macOS, ``%APPDATA%\\Claude`` on Windows, or, installed from the Microsoft Store,
``%LOCALAPPDATA%\\Packages\\Claude_pzs8sxrjxfjjc\\LocalCache\\Roaming\\Claude``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import cached_by_stat, epoch, str_or_none
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters._claude_read import ClaudeRead
from voyager_sessions.ingest.files import subdirs, walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.core.model import Session, TitleSource

PROVIDER = "cowork"
LABEL = "Claude Desktop Cowork"
SESSIONS = "local-agent-mode-sessions"
#: Claude Desktop's user-data dir when it was installed from the Microsoft Store (below %LOCALAPPDATA%).
STORE_APP_DIR = Path("Packages", "Claude_pzs8sxrjxfjjc", "LocalCache", "Roaming", "Claude")
_PROJECTS = os.sep + os.path.join(".claude", "projects") + os.sep


def sessions_roots(env: Mapping[str, str], *, platform: str | None = None) -> list[Path]:
    """``$VOYAGER_COWORK_HOME`` when set (authoritative), else ``local-agent-mode-sessions`` in Claude Desktop's
    user-data dir for this platform (on Windows also the Microsoft Store install's)."""
    named = manifest.agent_home(PROVIDER, env)
    if named is not None:
        return [named]
    roots = [d / SESSIONS for d in paths.app_dirs(env, "Claude", platform=platform)]
    if (sys.platform if platform is None else platform).startswith("win"):
        local = Path(env["LOCALAPPDATA"]) if env.get("LOCALAPPDATA") else paths.home(env) / "AppData" / "Local"
        roots.append(local / STORE_APP_DIR / SESSIONS)
    return roots


def card_path(transcript: str) -> str | None:
    """The session card ``local_<uuid>.json`` of a transcript under ``local_<uuid>/.claude/projects/``."""
    folder, found, _ = transcript.partition(_PROJECTS)
    return folder + ".json" if found and os.path.basename(folder).startswith("local_") else None


def _load_card(path: str) -> dict[str, Any]:
    doc = read_json_object(path, fatal=False)  # a BOM, a cut or a size past the cap: no card, the transcript still read
    return doc if isinstance(doc, dict) else {}


def card(transcript: str) -> dict[str, Any]:
    """The session card beside a transcript (empty when missing or unreadable), read once per change."""
    path = card_path(transcript)
    return cached_by_stat(path, _load_card, {}) if path else {}


class CoworkRead(ClaudeRead):
    """A Cowork transcript: Claude Code's reader, with the card's title and times and no resume command."""

    provider = PROVIDER
    label = LABEL

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        super().__init__(source, cursor)
        self.card = card(source.path)

    @staticmethod
    def resume_command(cwd: str | None, native_id: str) -> str | None:
        return None  # the desktop app reopens its sessions; it has no command

    def _title(self) -> tuple[str | None, TitleSource | None]:
        if self.facts.user_title:
            return self.facts.user_title, "user"
        title = str_or_none(self.card.get("title"))
        if title and title.strip() and not self.is_agent_file and self.card.get("cliSessionId") == self.stem:
            return title.strip(), None  # the app's title: generated or typed, the card does not say
        return self.facts.line_title, "agent"

    def _session(self) -> Session:
        session = super()._session()
        if session.started is None and session.updated is None:  # a session created but never run
            started, updated = epoch(self.card.get("createdAt")), epoch(self.card.get("lastActivityAt"))
            return msgspec.structs.replace(session, started=started, updated=updated)
        return session


class CoworkAdapter:
    """Claude Desktop Cowork sessions: each ``local_<uuid>/.claude/projects`` under every org and workspace."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return sessions_roots(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in sessions_roots(env):
            yield from self._root(root)

    def _root(self, root: Path) -> Iterator[Source | Notice]:
        for org in subdirs(root):
            if isinstance(org, Notice):
                yield org
                continue
            for workspace in subdirs(org):
                if isinstance(workspace, Notice):
                    yield workspace
                    continue
                for folder in subdirs(workspace):
                    if isinstance(folder, Notice):
                        yield folder
                    elif folder.name.startswith("local_"):
                        yield from self._session_folder(folder)

    @staticmethod
    def _session_folder(folder: Path) -> Iterator[Source | Notice]:
        side = f"{folder}.json"
        for item in walk_files(folder / ".claude" / "projects", ".jsonl", PROVIDER):
            # A rename in the app rewrites only the card: it is part of the transcript's fingerprint.
            yield with_side_file(item, side) if isinstance(item, Source) else item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return CoworkRead(source, cursor).run()


ADAPTER = CoworkAdapter()
