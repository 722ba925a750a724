"""The Roo Code adapter: the VS Code extension's task folders (documented by peers, not yet observed).

Roo Code is a fork of Cline's extension and keeps tasks in the same shape (read by
:mod:`._cline_tasks`) under ``<User>/globalStorage/rooveterinaryinc.roo-cline/tasks/<id>/``
of every VS Code-family app (or ``$VOYAGER_ROO_HOME``, the storage dir named outright).
What is Roo's own is ``history_item.json`` beside the conversation: the task's text
(the title), ``workspace`` (the cwd), token counts, and ``parentTaskId`` for a subtask
that another task's ``new_task`` started (its session's parent; its first message was
written by that parent, so it is not a person's prompt). Peers' samples hold the three
combinations: ``history_item.json`` + ``ui_messages.json``, ``ui_messages.json`` alone, and
``history_item.json`` + ``api_conversation_history.json``. No resume command: the IDE
reopens tasks.

Zoo Code, the community fork that carried on after Roo Code shut down (May 2026), keeps the same
task folders under ``<User>/globalStorage/zoocodeorganization.zoo-code/tasks/<id>/`` (documented by
splitrail's ``zoo_code.rs``, which reads them with its Roo parser), in VS Code's forks' user dirs too
(Windsurf, Positron, Antigravity); ``$VOYAGER_ZOO_CODE_HOME`` names its storage dir outright. Its
tasks are Roo's sessions read from another folder: a task Zoo carried over from Roo keeps its id,
and is one session whichever folder holds it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _cline_tasks as tasks
from voyager_sessions.ingest.adapters._common import epoch, int_or_none, str_or_none
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.jsondoc import read_json_object

PROVIDER = "roo"
EXTENSION = "rooveterinaryinc.roo-cline"
ZOO_EXTENSION = "zoocodeorganization.zoo-code"
#: The editors whose user dirs may hold Zoo Code's tasks: VS Code's family, and forks splitrail finds it in.
ZOO_APPS = (*paths.VSCODE_APPS, "Windsurf", "Positron", "Antigravity")
HISTORY_ITEM = "history_item.json"


def storage_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_ROO_HOME`` when set (authoritative), else the extension's dir under every VS Code-family app."""
    named = manifest.agent_home("roo", env)
    return [named] if named is not None else paths.vscode_extension_dirs(EXTENSION, env)


def zoo_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_ZOO_CODE_HOME`` when set (authoritative), else Zoo Code's dir under every editor it runs in."""
    named = manifest.agent_home("roo.zoo", env)
    return [named] if named is not None else paths.vscode_extension_dirs(ZOO_EXTENSION, env, ZOO_APPS)


def roo_facts(folder: Path) -> tasks.TaskFacts:
    """What ``history_item.json`` says about a task (nothing when it is missing or unreadable)."""
    item = read_json_object(folder / HISTORY_ITEM, fatal=False)
    if not isinstance(item, dict):
        return tasks.TaskFacts()
    parent = str_or_none(item.get("parentTaskId"))
    return tasks.TaskFacts(
        title=tasks.task_title(item.get("task")),
        cwd=str_or_none(item.get("workspace")),
        parent=parent if parent != folder.name else None,
        updated=epoch(item.get("ts")),
        tokens_in=int_or_none(item.get("tokensIn")),
        tokens_out=int_or_none(item.get("tokensOut")),
    )


class RooAdapter:
    """Roo Code's task folders (the Cline-family shape), one session per task."""

    name: ClassVar[str] = "roo"

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [d / "tasks" for d in (*storage_dirs(env), *zoo_dirs(env))]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for storage in storage_dirs(env):
            yield from tasks.discover_tasks(storage, PROVIDER, "Roo Code", (HISTORY_ITEM,))
        for storage in zoo_dirs(env):
            yield from tasks.discover_tasks(storage, PROVIDER, "Zoo Code", (HISTORY_ITEM,))

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        folder = Path(source.path)
        label = "Zoo Code" if folder.parent.parent.name == ZOO_EXTENSION else "Roo Code"
        if not os.path.isdir(folder):
            return iter([Notice(source=source.path, reason=f"not a {label} task folder; skipped", fatal=True)])
        return tasks.TaskRead(source, PROVIDER, label, roo_facts(folder)).run()


def probe(path: str) -> str:
    """Which view a task folder is read from (for ``voyager doctor``)."""
    return tasks.task_shape(path)


ADAPTER = RooAdapter()
