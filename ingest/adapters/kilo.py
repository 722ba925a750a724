"""Kilo Code adapter: the CLI's (and the rebuilt extension's) OpenCode store, and the old extension's task folders.

Kilo Code CLI (observed 7.7.9) is a fork of OpenCode and keeps the same tables, in
``kilo.db`` under ``$XDG_DATA_HOME/kilo`` (``~/.local/share/kilo``). It adds tables of its
own (``kilo_board``, ``kilo_board_message``: ``kilo_board.objective`` repeats the first
prompt) which the reader never opens, so nothing is indexed twice. What is Kilo's here is
one :class:`~voyager_sessions.ingest.adapters.opencode.Product`: its name, where it
lives (``VOYAGER_KILO_HOME`` / ``VOYAGER_KILO_DB`` override, see the manifest's homes (``ingest/manifest.py``))
and how a session resumes (``kilo --session <id>``, run in the session's directory).

Kilo's VS Code extension moved onto the same OpenCode core in 2026-04 (its new sessions are in
``kilo.db`` too). Before that it was a Roo Code fork and kept Cline-family task folders,
``<User>/globalStorage/kilocode.kilo-code/tasks/<id>/`` (documented by agentsview's
``kilo_legacy.go`` and splitrail's ``kilo_code.rs``): ``ui_messages.json`` and
``api_conversation_history.json``, read by :mod:`._cline_tasks` as Roo's are, and a
``task_metadata.json`` that holds only the files in context. No title, cwd or model is kept
beside a task: the working directory and the model come from the ``environment_details`` Kilo
sent with each request (``Current Workspace Directory (<dir>) Files``; ``<model>`` under
``# Current Mode``), read from the head of the API history. Those tasks cannot be reopened
outside the editor (no resume command); ``VOYAGER_KILO_VSCODE_HOME`` names the extension's
storage dir outright.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _cline_tasks as tasks
from voyager_sessions.ingest.adapters._drafts import absolute_path
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters.opencode import OpenCodeAdapter, Product
from voyager_sessions.ingest.adapters.opencode import probe as opencode_probe
from voyager_sessions.ingest.files import open_regular

__all__ = ["ADAPTER", "KILO", "probe"]

KILO = Product(
    name="kilo",
    label="Kilo Code CLI",
    home="kilo",
    db_override="kilo.db",
    db_name="kilo.db",
    binary="kilo",
    dir_argument=False,
    evidence="observed",
    versions=("7.7.9",),
)

#: The old extension's storage folder (VS Code writes the id in lower case).
EXTENSION = "kilocode.kilo-code"
LEGACY_LABEL = "Kilo Code (VS Code extension)"
TASK_METADATA = "task_metadata.json"
#: How much of a task's API history is read for its working directory and model (the first request has both).
HEAD_BYTES = 256 << 10
_WORKSPACE = re.compile(r"Current Workspace Directory \(([^()\n]{1,4096})\) Files")
_MODEL = re.compile(r"#\s*Current\s+Mode.{0,2000}?<model>\s*([^<>\s][^<>]{0,200}?)\s*</model>", re.S | re.I)


def legacy_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_KILO_VSCODE_HOME`` when set (authoritative), else the old extension's dir under every editor."""
    named = manifest.agent_home("kilo.vscode", env)
    return [named] if named is not None else paths.vscode_extension_dirs(EXTENSION, env)


def legacy_facts(folder: Path) -> tasks.TaskFacts:
    """The cwd and model the first request of a task told its model (nothing when its API history is missing)."""
    try:
        with open_regular(folder / tasks.API_HISTORY) as fh:
            head = fh.read(HEAD_BYTES).decode("utf-8", "replace")
    except OSError:
        return tasks.TaskFacts()
    # The history is JSON: the environment details sit in a string, with its escapes.
    head = head.replace("\\n", "\n").replace('\\"', '"').replace("\\\\", "\\")
    cwd = _WORKSPACE.search(head)
    model = _MODEL.search(head)
    return tasks.TaskFacts(
        cwd=absolute_path(cwd.group(1).strip()) if cwd else None,
        model=model.group(1).strip() if model else None,
    )


def _is_task(path: str) -> bool:
    return os.path.basename(os.path.dirname(path)) == "tasks"


class KiloAdapter(OpenCodeAdapter):
    """Kilo's OpenCode store (:class:`OpenCodeAdapter`), and the old VS Code extension's task folders."""

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [*super().roots(env), *(d / "tasks" for d in legacy_dirs(env))]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        yield from super().discover(env)
        for storage in legacy_dirs(env):
            yield from tasks.discover_tasks(storage, self.name, LEGACY_LABEL, (TASK_METADATA,))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not _is_task(source.path):
            return super().read(source, cursor)
        folder = Path(source.path)
        if not os.path.isdir(folder):
            return iter([Notice(source=source.path, reason=f"not a {LEGACY_LABEL} task folder; skipped", fatal=True)])
        return tasks.TaskRead(source, self.name, LEGACY_LABEL, legacy_facts(folder)).run()


def probe(path: str | os.PathLike[str]) -> str:
    """The OpenCode store's shape, or which view an old extension's task folder is read from (``voyager doctor``)."""
    p = os.fspath(path)
    return tasks.task_shape(p) if _is_task(p) and os.path.isdir(p) else opencode_probe(p)


ADAPTER = KiloAdapter(KILO)
