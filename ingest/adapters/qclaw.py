"""The QClaw adapter: Tencent's OpenClaw build, ``~/.qclaw/agents/<agentId>/sessions/<id>.jsonl`` (documented).

QClaw keeps OpenClaw's older (JSONL) generation under its own home, as agentsview's ``qclaw.go``
reads it: one folder per agent, ``agents/<agentId>/sessions/``, holding ``<sessionId>.jsonl`` per
session and ``sessions.json``, the store index keyed by session key (``{"agent:main:…": {"sessionId",
"label"/"displayName", "sessionFile", "model", …}}``: a label is the session's title, and the index is
part of each transcript's fingerprint). Beside them, ``<id>.trajectory.jsonl`` (a runtime trace holding
every prompt and reply again), compaction checkpoints ``<id>.checkpoint.<uuid>.jsonl`` and the archives
(``.jsonl.deleted.<ts>``, ``.jsonl.reset.<ts>``, ``.jsonl.full.bak``, ``.jsonl.lock``) are not sessions.

A transcript is Pi's session format (OpenClaw runs pi-agent): a ``session`` header (id, cwd),
``message`` entries (``user`` with text blocks, ``assistant`` with ``thinking``/``text``/``toolCall``,
``toolResult``), ``model_change``, ``thinking_level_change``, ``custom`` (runtime state): read by the
Pi adapter's reader (:mod:`.pi`), under QClaw's ids. A prompt from a chat channel keeps the
``[Wed 2026-02-18 11:21 GMT+1] `` prefix QClaw puts before it (it is what the model was sent). Not run
here (a Tencent build); QClaw continues a session through its chat channels, so no command is recorded.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import as_dict, cached_by_stat, str_or_none
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters.pi import _PiRead
from voyager_sessions.ingest.files import open_regular, subdirs, walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import capped_bytes
from voyager_sessions.ingest.jsonl import decode_json
from voyager_sessions.core.model import Session

PROVIDER = "qclaw"
LABEL = "QClaw"
INDEX = "sessions.json"


def state_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_QCLAW_HOME`` or ``~/.qclaw``: the folder holding ``agents/``."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home


def is_transcript(name: str) -> bool:
    """``<id>.jsonl``: not a trace (``.trajectory.jsonl``) nor a compaction checkpoint (``.checkpoint.<uuid>.jsonl``)."""
    return name.endswith(".jsonl") and not name.endswith(".trajectory.jsonl") and ".checkpoint." not in name


def _load_labels(path: str) -> dict[str, str]:
    with open_regular(path) as fh:
        doc = decode_json(capped_bytes(fh))
    out: dict[str, str] = {}
    for entry in doc.values() if isinstance(doc, dict) else ():
        entry = as_dict(entry)
        sid = str_or_none(entry.get("sessionId"))
        label = str_or_none(entry.get("label")) or str_or_none(entry.get("displayName"))
        if sid and label:
            out[sid] = label
    return out


def labels(folder: Path) -> dict[str, str]:
    """Session id -> the label ``sessions.json`` gives it (read once per change; empty when there is none)."""
    return cached_by_stat(str(folder / INDEX), _load_labels, {})


class _QClawRead(_PiRead):
    """Pi's reader with QClaw's provider, titles and no resume command."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        super().__init__(source, cursor)
        self.binary = None
        self.unknown.label = LABEL  # type: ignore[union-attr]
        self.name_id = Path(source.path).name.removesuffix(".jsonl")

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        known = labels(Path(self.path).parent)
        # A name given in the session (``session_info``) or the label the index keeps: both a person's.
        title = self.facts.user_title or known.get(native) or known.get(self.name_id)
        return self.facts.session(PROVIDER, title=title, title_source="user", resume=None, source=self.path)


class QClawAdapter:
    """QClaw's agents' JSONL transcripts."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [state_dir(env) / "agents"]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for agent in subdirs(state_dir(env) / "agents"):
            if isinstance(agent, Notice):
                yield agent
                continue
            folder = agent / "sessions"
            index = os.fspath(folder / INDEX)
            seen: dict[str, os.stat_result | None] = {}
            for item in walk_files(folder, ".jsonl", PROVIDER, match=is_transcript, skip_dir=lambda _name: True):
                # A label set in sessions.json changes only the index: it is part of the fingerprint.
                yield with_side_file(item, index, seen) if isinstance(item, Source) else item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _QClawRead(source, cursor).run()


ADAPTER = QClawAdapter()
