"""The Codex CLI adapter: ``$CODEX_HOME/{sessions,archived_sessions}/**/rollout-*.jsonl`` to Sessions and Events.

Owns where Codex keeps its rollouts (the dated ``sessions/YYYY/MM/DD/`` tree and the flat
``archived_sessions/``) and the title index beside them (``session_index.jsonl``, part of every
rollout's fingerprint), and so how a refresh finds what changed. What a rollout says, record by
record, is ``_codex_read``'s (see docs/agents.md), imported only when a rollout is read: every
search refreshes first, and a refresh that finds nothing changed pays for the stat pass alone.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import Focus, side_stamp, walk_files, with_side_file

PROVIDER = "codex"


class CodexAdapter:
    """Codex CLI rollouts under ``$CODEX_HOME/sessions`` and ``$CODEX_HOME/archived_sessions``."""

    name: ClassVar[str] = PROVIDER
    #: The manifest home holding ``sessions/`` and ``archived_sessions/`` (TRAE CLI, a fork writing the same
    #: rollouts under its own home, changes it, and its reader).
    home: ClassVar[str] = "codex"

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = manifest.agent_dir(self.home, env)
        return [home / "sessions", home / "archived_sessions"]

    def watch_roots(self, env: Mapping[str, str]) -> list[Path]:
        """What a file-system watcher must see: the rollouts, and the index their titles come from."""
        return [manifest.agent_dir(self.home, env) / "session_index.jsonl", *self.roots(env)]

    def discover_changed(self, env: Mapping[str, str], focus: Focus) -> Iterator[Source | Notice]:
        """The rollouts where a file-system watcher saw changes (all of them when the title index changed)."""
        index = manifest.agent_dir(self.home, env) / "session_index.jsonl"
        return self._walk(env, None if focus.hit(os.fspath(index)) else focus)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return self._walk(env, None)

    def _walk(self, env: Mapping[str, str], focus: Focus | None) -> Iterator[Source | Notice]:
        # A thread renamed in session_index.jsonl is seen by the stat pass (the title lives there).
        # As text: with_side_file runs once a rollout on every refresh, and a Path is made text each time.
        index = os.fspath(manifest.agent_dir(self.home, env) / "session_index.jsonl")
        sides: dict = {}  # one stat of it, however many rollouts
        stamps: dict[str, tuple[int, int]] = {}

        def side(folder: str) -> tuple[int, int]:  # what with_side_file below gives every rollout
            return side_stamp(index, stamps)

        for root in self.roots(env):
            for item in walk_files(root, ".jsonl", self.name, name_prefix="rollout-", focus=focus, side=side):
                yield with_side_file(item, index, sides) if isinstance(item, Source) else item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        from voyager_sessions.ingest.adapters._codex_read import CodexRead

        return CodexRead(source, cursor).run()


ADAPTER = CodexAdapter()
