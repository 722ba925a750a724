"""The Qoder CLI adapter: ``~/.qoder/projects/<cwd, / → ->/<id>.jsonl`` (documented, not yet observed).

Owns what Voyager knows of Qoder CLI (``qodercli``) beyond Claude Code's transcript format,
which peers' readers agree it writes unchanged (same records, same project folder naming):
the places (``~/.qoder/projects`` and QoderWork's ``~/.qoderwork/projects``), a
``runtime-config`` head line (model tier, reasoning effort: no conversation), subagents under
``<sessionId>/subagents/*.jsonl`` whatever their names, billing fields on assistant lines
(credits; token counts there read 0 and are kept as written), and the resume command
``qodercli -r <id>``. Everything else is :class:`~._claude_read.ClaudeRead`'s. Not run here: the CLI
asks for a Qoder login even for custom models. ``<sessionId>/state.json`` is run state, not
read. iFlow CLI's users were moved to Qoder in 2026.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import opt, resume_in
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters._claude_read import ClaudeRead, _Line
from voyager_sessions.ingest.files import walk_files

PROVIDER = "qoder"
LABEL = "Qoder CLI"


def projects_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_QODER_HOME/projects`` when set (authoritative), else ``~/.qoder/projects`` and
    ``~/.qoderwork/projects``."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None
    if env.get("VOYAGER_QODER_HOME"):
        return [home / "projects"]
    work = manifest.agent_home("qoder.work", env)
    return [home / "projects", *([work / "projects"] if work is not None else [])]


def resume_command(cwd: str | None, native_id: str) -> str | None:
    return resume_in(cwd, "qodercli", opt("-r", native_id))


class _QoderRead(ClaudeRead):
    """A Qoder transcript: Claude Code's reader with Qoder's ids, label, head line and subagent folders."""

    provider = PROVIDER
    label = LABEL

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        super().__init__(source, cursor)
        # Subagent transcripts live under <sessionId>/subagents/, named or not agent-*.
        self.is_agent_file = self.is_agent_file or self.nested_parent is not None

    @staticmethod
    def resume_command(cwd: str | None, native_id: str) -> str | None:
        return resume_command(cwd, native_id)

    def _line(self, line: _Line) -> Iterator[Item]:
        if line.type == "runtime-config":
            return iter(())  # the model tier and settings of the run: no conversation
        return super()._line(line)


class QoderAdapter:
    """Qoder CLI's Claude-format transcripts."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return projects_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in projects_dirs(env):
            yield from walk_files(root, ".jsonl", PROVIDER)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _QoderRead(source, cursor).run()


ADAPTER = QoderAdapter()
