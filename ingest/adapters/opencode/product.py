"""Which agent of the OpenCode family a store belongs to: its name, where it lives, how a session resumes.

Kilo Code CLI is a fork of OpenCode that keeps the same tables in its own database
(``kilo.db`` under its own data dir). Everything that differs between the agents that
share this reader is one value of :class:`Product`; the reader itself never spells a
provider name, a path or a command.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import opt, path_arg, resume_in
from voyager_sessions.ingest.adapters.base import Evidence
from voyager_sessions.core.model import session_id


class Product(msgspec.Struct, frozen=True, kw_only=True):
    """One agent whose sessions are stored in OpenCode's layouts."""

    #: Provider name (the prefix of Voyager's session ids).
    name: str
    #: Human label for ``doctor`` and help output.
    label: str
    #: the manifest's homes (``ingest/manifest.py``) key of the agent's data dir.
    home: str
    #: the manifest's homes (``ingest/manifest.py``) key of an explicitly named database (authoritative when set).
    db_override: str
    #: The database's file name inside the data dir.
    db_name: str
    #: The command that reopens a session (None: none is known, and sessions get no resume command).
    binary: str | None
    #: True: the directory is the command's positional project argument (``opencode <dir> --session``);
    #: False: the command must run in the directory (``cd <dir> && kilo --session``).
    dir_argument: bool
    #: How Voyager knows the format (``doctor`` shows it), and the versions whose real files it was tested on.
    evidence: Evidence = "documented"
    versions: tuple[str, ...] = ()
    #: The folders of ``storage/`` whose ``<project>/ses_*.json`` describe the JSON tree's sessions, in the
    #: order they are read (OpenCode's ``session/``; MiMo Code and iCodeMate keep theirs in ``session_diff/``).
    session_dirs: tuple[str, ...] = ("session",)

    def session_id(self, native: str) -> str:
        return session_id(self.name, native)

    def resume(self, directory: str | None, native: str) -> str | None:
        """The shell command that reopens session ``native``; every part is quoted (ids and paths are data)."""
        if self.binary is None:
            return None
        if directory and self.dir_argument:
            return resume_in(None, self.binary, path_arg(directory), opt("--session", native))
        return resume_in(directory, self.binary, opt("--session", native))

    def named_db(self, env: Mapping[str, str]) -> Path | None:
        """The database an override variable names, if any."""
        return manifest.agent_home(self.db_override, env)

    def data_dir(self, env: Mapping[str, str]) -> Path:
        return manifest.agent_home(self.home, env)  # type: ignore[return-value]  # HOME is the last resort


#: OpenCode. ``opencode [project] -s/--session <id>``: verified against ``opencode --help`` of 1.18.33.
OPENCODE = Product(
    name="opencode",
    label="OpenCode",
    home="opencode",
    db_override="opencode.db",
    db_name="opencode.db",
    binary="opencode",
    dir_argument=True,
    evidence="observed",
    versions=("1.18.33",),
)
