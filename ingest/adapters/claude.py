"""The Claude Code adapter: ``<claude home>/projects/**/*.jsonl`` to Sessions and Events.

Owns where Claude Code keeps its transcripts and how a refresh finds what changed among them:
one file is one session; subagent transcripts (``agent-*.jsonl``, beside the sessions or under
``<sessionId>/subagents/``) are sessions of their own, and a session's ``<id>.jsonl`` is the
canary of its ``<id>/`` folder (see ``scan.settled``). What a transcript says, line by line, is
``_claude_read``'s (see docs/agents.md), imported only when a transcript is read: every search
refreshes first, and a refresh that finds nothing changed pays for the stat pass alone, not for
the format's Structs and the reading kit (~3 ms of a ~200 ms search at 10,000 sessions).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import Focus, side_stamp, walk_files, with_side_file

PROVIDER = "claude"


class ClaudeAdapter:
    """Claude Code transcripts under ``$CLAUDE_CONFIG_DIR/projects`` (default ``~/.claude/projects``)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [manifest.agent_dir("claude", env) / "projects"]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        return self._walk(env, None)

    def _walk(self, env: Mapping[str, str], focus: Focus | None) -> Iterator[Source | Notice]:
        sides: dict = {}  # one stat of each project's index, however many sessions it holds
        stamps: dict[str, tuple[int, int]] = {}
        nested = os.sep + "subagents"

        def side(folder: str) -> tuple[int, int]:  # what with_side_file below gives a source in ``folder``
            return (0, 0) if folder.endswith(nested) else side_stamp(folder + os.sep + "sessions-index.json", stamps)

        for root in self.roots(env):
            # A session's subagents run only after its transcript says so: ``<id>.jsonl`` is the canary of
            # ``<id>/`` (a refresh need not walk the folder of a session long idle: see scan.settled).
            for item in walk_files(root, ".jsonl", self.name, focus=focus, canary=_transcript_of, side=side):
                if isinstance(item, Source):
                    folder = item.path.rpartition(os.sep)[0]
                    if not folder.endswith(nested):  # the index is the project's: a subagents folder has none
                        # A session renamed in its project's sessions-index.json is seen by the stat pass.
                        # (Joined by hand: this runs once per session on every refresh.)
                        item = with_side_file(item, folder + os.sep + "sessions-index.json", sides)
                yield item

    def discover_changed(self, env: Mapping[str, str], focus: Focus) -> Iterator[Source | Notice]:
        """The sources where a file-system watcher saw changes (a changed ``sessions-index.json`` re-stats its project)."""
        return self._walk(env, focus)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        from voyager_sessions.ingest.adapters._claude_read import ClaudeRead

        return ClaudeRead(source, cursor).run()


def _transcript_of(folder: str) -> str:
    """The transcript beside a session's folder (``<id>/`` holds the subagents of ``<id>.jsonl``)."""
    return folder + ".jsonl"


ADAPTER = ClaudeAdapter()
