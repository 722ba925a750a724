"""The OpenClaude adapter: ``~/.openclaude/projects/<cwd, / → ->/<id>.jsonl`` (documented, not yet observed).

OpenClaude (Gitlawb/openclaude) is a fork of Claude Code that talks to any model; peers'
readers (agentsview's ``openclaude.go``) read its transcripts with their Claude Code parser
unchanged: the same project folders, records, subagent files and ``sessions-index.json``.
What is OpenClaude's own is only its home (``$OPENCLAUDE_CONFIG_DIR`` re-roots
``~/.openclaude``, as ``CLAUDE_CONFIG_DIR`` does Claude Code's), its ids (``openclaude:`` sessions never
collide with Claude Code's) and its resume command, ``openclaude --resume <id>`` in the
session's directory (a fork keeping Claude Code's flag; *verify*). Everything else is
:class:`~._claude_read.ClaudeRead`'s. Not run here: the npm package is not on this machine's registry.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import opt, resume_in
from voyager_sessions.ingest.adapters.base import Cursor, Item, Source
from voyager_sessions.ingest.adapters._claude_read import ClaudeRead
from voyager_sessions.ingest.adapters.claude import ClaudeAdapter

PROVIDER = "openclaude"
LABEL = "OpenClaude"


def projects_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_OPENCLAUDE_HOME``, ``$OPENCLAUDE_CONFIG_DIR`` or ``~/.openclaude``, with ``projects/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / "projects"


def resume_command(cwd: str | None, native_id: str) -> str | None:
    return resume_in(cwd, "openclaude", opt("--resume", native_id))


class OpenClaudeRead(ClaudeRead):
    """An OpenClaude transcript: Claude Code's reader with OpenClaude's ids, label and resume command."""

    provider = PROVIDER
    label = LABEL

    @staticmethod
    def resume_command(cwd: str | None, native_id: str) -> str | None:
        return resume_command(cwd, native_id)


class OpenClaudeAdapter(ClaudeAdapter):
    """OpenClaude's Claude Code-format transcripts (Claude Code's discovery: a renamed session's
    ``sessions-index.json`` is part of its fingerprint; a watcher's change set walks only what changed)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [projects_dir(env)]

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return OpenClaudeRead(source, cursor).run()


ADAPTER = OpenClaudeAdapter()
