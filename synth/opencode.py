"""Synthetic OpenCode stores in each shape OpenCode has shipped, from neutral ``synth.Conversation``s.

Owns the description of OpenCode's on-disk layouts for tests, the bench and the demo:
the JSON ``storage/`` tree, the v1 SQLite tables, v2 with ``session_part``, v2 inline,
and a 1.x database part-way through (or done with) OpenCode 2's copy into ``session_v2``.
The adapter (``voyager_sessions.ingest.adapters.opencode``) must read what these write; the tests
compare both against plain SQL over the same files, so a writer that drifted from the
adapter's expectations shows up as an oracle mismatch, not a silent pass.

Where the DDL comes from (so a reader can judge it):

* v1: copied from a database OpenCode 1.18.33 created (``tests/fixtures/opencode-1.18.33``;
  ``tests/fixtures/opencode/real-1.18.33`` was written by that release's ``opencode import``),
  including the *empty* ``session_message`` table 1.18.33 creates beside the v1 tables.
* v2 ``session_v2`` / ``session_message`` / ``kv``: the column sets of published captures of
  OpenCode 2.0.x databases; inline ``data`` follows the same captures (tool items name the
  tool ``name``, the call ``id``, and put output in ``state.content``).
* v2 ``session_part``: no capture was available; it mirrors v1 ``part`` (id, message_id,
  session_id, timestamps, data) with v2 content items as ``data``. The adapter relies only
  on ``id``, ``message_id`` and ``data``.

Low-level writers (``V1Writer``, ``V2Writer``) are public so tests can add the rows the
neutral model cannot express (errors, synthetic text, subagents, unknown types, bad JSON).
Everything written is invented text.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from synth import Conversation, ToolCall, Turn

PROVIDER_ID = "synthetic"

V1_DDL = """
CREATE TABLE `project` (
  `id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `icon_url` text,
  `icon_url_override` text, `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_initialized` integer, `sandboxes` text NOT NULL, `commands` text
);
CREATE TABLE `workspace` (
  `id` text PRIMARY KEY, `type` text NOT NULL, `name` text DEFAULT '' NOT NULL, `branch` text, `directory` text,
  `extra` text, `project_id` text NOT NULL, `time_used` integer NOT NULL
);
CREATE TABLE `session` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, `slug` text NOT NULL,
  `directory` text NOT NULL, `path` text, `title` text NOT NULL, `version` text NOT NULL, `share_url` text,
  `summary_additions` integer, `summary_deletions` integer, `summary_files` integer, `summary_diffs` text,
  `metadata` text, `cost` real DEFAULT 0 NOT NULL, `tokens_input` integer DEFAULT 0 NOT NULL,
  `tokens_output` integer DEFAULT 0 NOT NULL, `tokens_reasoning` integer DEFAULT 0 NOT NULL,
  `tokens_cache_read` integer DEFAULT 0 NOT NULL, `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text,
  `permission` text, `agent` text, `model` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_compacting` integer, `time_archived` integer
);
CREATE TABLE `message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `data` text NOT NULL
);
CREATE TABLE `part` (
  `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL
);
CREATE TABLE `event_sequence` (`aggregate_id` text PRIMARY KEY, `seq` integer NOT NULL, `owner_id` text);
CREATE TABLE `event` (
  `id` text PRIMARY KEY, `aggregate_id` text NOT NULL, `seq` integer NOT NULL, `type` text NOT NULL,
  `data` text NOT NULL
);
CREATE INDEX `message_session_time_created_id_idx` ON `message` (`session_id`,`time_created`,`id`);
CREATE INDEX `part_message_id_id_idx` ON `part` (`message_id`,`id`);
CREATE INDEX `part_session_idx` ON `part` (`session_id`);
CREATE INDEX `session_parent_idx` ON `session` (`parent_id`);
"""

# 1.18.33 creates this (empty) beside the v1 tables; a v1 database must still read as v1.
V1_SESSION_MESSAGE_DDL = """
CREATE TABLE `session_message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL, `seq` integer NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL
);
CREATE UNIQUE INDEX `session_message_session_seq_idx` ON `session_message` (`session_id`,`seq`);
"""

V2_DDL = """
CREATE TABLE IF NOT EXISTS `project` (
  `id` text PRIMARY KEY, `worktree` text NOT NULL, `vcs` text, `name` text, `icon_url` text,
  `icon_url_override` text, `icon_color` text, `time_created` integer NOT NULL, `time_updated` integer NOT NULL,
  `time_initialized` integer, `time_active` integer DEFAULT 0 NOT NULL, `sandboxes` text NOT NULL, `commands` text
);
CREATE TABLE `session_v2` (
  `id` text PRIMARY KEY, `project_id` text NOT NULL, `workspace_id` text, `parent_id` text, `fork_session_id` text,
  `fork_boundary` text, `slug` text NOT NULL, `directory` text NOT NULL, `path` text, `title` text,
  `version` text NOT NULL, `share_url` text, `summary_additions` integer, `summary_deletions` integer,
  `summary_files` integer, `summary_diffs` text, `metadata` text, `cost` real DEFAULT 0 NOT NULL,
  `tokens_input` integer DEFAULT 0 NOT NULL, `tokens_output` integer DEFAULT 0 NOT NULL,
  `tokens_reasoning` integer DEFAULT 0 NOT NULL, `tokens_cache_read` integer DEFAULT 0 NOT NULL,
  `tokens_cache_write` integer DEFAULT 0 NOT NULL, `revert` text, `permission` text, `agent` text, `model` text,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `time_idle` integer, `time_viewed` integer,
  `idle_outcome` text, `time_compacting` integer, `time_archived` integer, `time_suspended` integer,
  `resume_attempts` integer DEFAULT 0 NOT NULL
);
CREATE TABLE `session_message` (
  `id` text PRIMARY KEY, `session_id` text NOT NULL, `type` text NOT NULL, `seq` integer NOT NULL,
  `time_created` integer NOT NULL, `time_updated` integer NOT NULL, `data` text NOT NULL
);
CREATE TABLE `kv` (
  `key` text PRIMARY KEY, `value` text NOT NULL, `time_created` integer NOT NULL, `time_updated` integer NOT NULL
);
CREATE INDEX `session_v2_parent_idx` ON `session_v2` (`parent_id`);
CREATE UNIQUE INDEX `session_message_session_seq_idx` ON `session_message` (`session_id`,`seq`);
CREATE INDEX `session_message_session_time_created_id_idx` ON `session_message` (`session_id`,`time_created`,`id`);
"""

SESSION_PART_DDL = """
CREATE TABLE `session_part` (
  `id` text PRIMARY KEY, `message_id` text NOT NULL, `session_id` text NOT NULL, `time_created` integer NOT NULL,
  `time_updated` integer NOT NULL, `data` text NOT NULL
);
CREATE INDEX `session_part_message_id_id_idx` ON `session_part` (`message_id`,`id`);
"""


def _ms(ts: float) -> int:
    return int(round(ts * 1000))


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _tag(sid: str) -> str:
    """A short, id-safe stem derived from a session id, so message ids are unique per database."""
    return "".join(c for c in sid if c.isalnum())[-12:]


def _model(conv: Conversation) -> dict[str, str]:
    return {"id": conv.model, "providerID": PROVIDER_ID}


def _tokens(turn: Turn) -> dict[str, Any]:
    # Deterministic stand-ins: the adapter only has to carry them through.
    return {
        "input": 10 + len(turn.text) // 4,
        "output": 5 + len(turn.text) // 8,
        "reasoning": 0,
        "cache": {"read": 0, "write": 0},
    }


def connect(path: str | Path) -> sqlite3.Connection:
    """A writer connection in WAL mode, as OpenCode opens its database."""
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    conn = sqlite3.connect(path, isolation_level=None)
    conn.execute("PRAGMA journal_mode=WAL")
    return conn


# ---------------------------------------------------------------------------
# Low-level row writers
# ---------------------------------------------------------------------------


class V1Writer:
    """Rows of the v1 tables (``session``, ``message``, ``part``, ``project``) in 1.18.33's layout."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    @classmethod
    def create(cls, path: str | Path, *, with_session_message: bool = True) -> V1Writer:
        conn = connect(path)
        conn.executescript(V1_DDL + (V1_SESSION_MESSAGE_DDL if with_session_message else ""))
        return cls(conn)

    def project(self, pid: str, worktree: str, *, vcs: str | None = "git", time: int = 0) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO project (id, worktree, vcs, time_created, time_updated, sandboxes) "
            "VALUES (?, ?, ?, ?, ?, '[]')",
            (pid, worktree, vcs, time, time),
        )

    def session(
        self,
        sid: str,
        *,
        directory: str,
        title: str,
        created: int,
        updated: int,
        parent_id: str | None = None,
        model: Mapping[str, str] | None = None,
        project_id: str = "global",
        tokens: tuple[int, int] = (0, 0),
        workspace_id: str | None = None,
    ) -> None:
        self.conn.execute(
            "INSERT INTO session (id, project_id, workspace_id, parent_id, slug, directory, path, title, version, "
            "tokens_input, tokens_output, agent, model, time_created, time_updated) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, '1.18.33', ?, ?, 'build', ?, ?, ?)",
            (
                sid,
                project_id,
                workspace_id,
                parent_id,
                sid[-6:].lower(),
                directory,
                directory.lstrip("/"),
                title,
                tokens[0],
                tokens[1],
                _dumps(dict(model)) if model else None,
                created,
                updated,
            ),
        )

    def message(self, sid: str, mid: str, data: Mapping[str, Any] | str, created: int) -> None:
        """``data`` as a dict, or as raw text (to store a malformed row on purpose)."""
        text = data if isinstance(data, str) else _dumps(dict(data))
        self.conn.execute(
            "INSERT INTO message (id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?)",
            (mid, sid, created, created, text),
        )

    def part(self, sid: str, mid: str, pid: str, data: Mapping[str, Any] | str, created: int) -> None:
        text = data if isinstance(data, str) else _dumps(dict(data))
        self.conn.execute(
            "INSERT INTO part (id, message_id, session_id, time_created, time_updated, data) VALUES (?, ?, ?, ?, ?, ?)",
            (pid, mid, sid, created, created, text),
        )


class V2Writer:
    """Rows of the v2 tables (``session_v2``, ``session_message``, optionally ``session_part``)."""

    def __init__(self, conn: sqlite3.Connection, *, parts: bool) -> None:
        self.conn = conn
        self.parts = parts
        self._seq: dict[str, int] = {}

    @classmethod
    def create(cls, path: str | Path, *, parts: bool) -> V2Writer:
        conn = connect(path)
        conn.executescript(V2_DDL + (SESSION_PART_DDL if parts else ""))
        return cls(conn, parts=parts)

    def session(
        self,
        sid: str,
        *,
        directory: str,
        title: str | None,
        created: int,
        updated: int,
        parent_id: str | None = None,
        model: Mapping[str, str] | None = None,
        project_id: str = "global",
        tokens: tuple[int, int] = (0, 0),
    ) -> None:
        self.conn.execute(
            "INSERT INTO session_v2 (id, project_id, parent_id, slug, directory, path, title, version, tokens_input, "
            "tokens_output, model, time_created, time_updated) VALUES (?, ?, ?, ?, ?, '', ?, '2.0.26', ?, ?, ?, ?, ?)",
            (
                sid,
                project_id,
                parent_id,
                sid[-6:].lower(),
                directory,
                title,
                tokens[0],
                tokens[1],
                _dumps(dict(model)) if model else None,
                created,
                updated,
            ),
        )

    def message(
        self, sid: str, mid: str, mtype: str, data: Mapping[str, Any] | str, created: int, seq: int | None = None
    ) -> int:
        """Append a ``session_message`` row; ``seq`` defaults to the next one with a gap (real seqs are sparse)."""
        if seq is None:
            seq = self._seq.get(sid, 1) + 3
        self._seq[sid] = max(seq, self._seq.get(sid, 0))
        text = data if isinstance(data, str) else _dumps(dict(data))
        self.conn.execute(
            "INSERT INTO session_message (id, session_id, type, seq, time_created, time_updated, data) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (mid, sid, mtype, seq, created, created, text),
        )
        return seq

    def part(self, sid: str, mid: str, pid: str, data: Mapping[str, Any] | str, created: int) -> None:
        text = data if isinstance(data, str) else _dumps(dict(data))
        self.conn.execute(
            "INSERT INTO session_part (id, message_id, session_id, time_created, time_updated, data) "
            "VALUES (?, ?, ?, ?, ?, ?)",
            (pid, mid, sid, created, created, text),
        )

    def kv(self, key: str, value: Any, time: int = 0) -> None:
        self.conn.execute(
            "INSERT OR REPLACE INTO kv (key, value, time_created, time_updated) VALUES (?, ?, ?, ?)",
            (key, value if isinstance(value, str) else _dumps(value), time, time),
        )


# ---------------------------------------------------------------------------
# Neutral turns -> OpenCode parts / content items
# ---------------------------------------------------------------------------


def v1_tool_part(call: ToolCall, start: int) -> dict[str, Any]:
    """A v1 ``tool`` part: ``tool``/``callID``, string ``output``, exit code in ``state.metadata.exit``."""
    state: dict[str, Any] = {"status": "running", "input": call.input, "time": {"start": start}}
    if call.is_error:
        state.update(status="error", error=call.output or "tool failed", time={"start": start, "end": start + 1})
    elif call.output is not None:
        meta = {"exit": call.exit_code} if call.exit_code is not None else {}
        state.update(
            status="completed",
            output=call.output,
            title=call.name,
            metadata=meta,
            time={"start": start, "end": start + 1},
        )
    return {"type": "tool", "callID": call.call_id, "tool": call.name, "state": state}


def v2_tool_item(call: ToolCall, start: int) -> dict[str, Any]:
    """A v2 tool item as 2.0.x stores it: ``name``/``id``, output as ``state.content`` blocks."""
    state: dict[str, Any] = {"status": "running", "input": call.input}
    if call.is_error:
        state.update(status="error", error={"type": "tool.execution", "message": call.output or "tool failed"})
    elif call.output is not None:
        meta: dict[str, Any] = {"truncated": False}
        if call.exit_code is not None:
            meta["exit"] = call.exit_code
        state.update(status="completed", content=[{"type": "text", "text": call.output}], metadata=meta)
    return {
        "type": "tool",
        "id": call.call_id,
        "name": call.name,
        "executed": False,
        "state": state,
        "time": {"created": start, "ran": start, "completed": start + 1},
    }


def _assistant_items(turn: Turn, *, v2: bool) -> list[dict[str, Any]]:
    start = _ms(turn.ts)
    items: list[dict[str, Any]] = []
    if turn.reasoning:
        items.append({"type": "reasoning", "text": turn.reasoning})
    for call in turn.tool_calls:
        items.append(v2_tool_item(call, start) if v2 else v1_tool_part(call, start))
    if turn.text:
        items.append({"type": "text", "text": turn.text})
    return items


def _msg_id(conv: Conversation, i: int) -> str:
    return f"msg_{_tag(conv.id)}{i:06d}"


# ---------------------------------------------------------------------------
# Whole stores
# ---------------------------------------------------------------------------


def add_v1(w: V1Writer, conv: Conversation, *, parent_id: str | None = None, project_id: str = "global") -> None:
    """Write one conversation into v1 tables (session row, then messages with their parts)."""
    last = _ms(conv.turns[-1].ts) if conv.turns else _ms(conv.started)
    w.session(
        conv.id,
        directory=conv.cwd,
        title=conv.title or "New session",
        created=_ms(conv.started),
        updated=last,
        parent_id=parent_id,
        model=_model(conv),
        project_id=project_id,
        tokens=(
            sum(_tokens(t)["input"] for t in conv.turns if t.role == "assistant"),
            sum(_tokens(t)["output"] for t in conv.turns if t.role == "assistant"),
        ),
    )
    prev_user = None
    for i, turn in enumerate(conv.turns):
        mid = _msg_id(conv, i)
        created = _ms(turn.ts)
        if turn.role == "user":
            prev_user = mid
            w.message(
                conv.id,
                mid,
                {
                    "role": "user",
                    "time": {"created": created},
                    "agent": "build",
                    "model": {"providerID": PROVIDER_ID, "modelID": conv.model},
                },
                created,
            )
            w.part(conv.id, mid, f"prt_{mid[4:]}00", {"type": "text", "text": turn.text}, created)
            continue
        w.message(
            conv.id,
            mid,
            {
                "role": "assistant",
                "time": {"created": created, "completed": created + 5},
                "parentID": prev_user,
                "modelID": conv.model,
                "providerID": PROVIDER_ID,
                "mode": "build",
                "agent": "build",
                "path": {"cwd": conv.cwd, "root": conv.cwd},
                "cost": 0,
                "tokens": _tokens(turn),
            },
            created,
        )
        for j, item in enumerate(_assistant_items(turn, v2=False)):
            w.part(conv.id, mid, f"prt_{mid[4:]}{j:02d}", item, created + j)


def add_v2(w: V2Writer, conv: Conversation, *, parent_id: str | None = None) -> None:
    """Write one conversation into v2 tables: inline ``data``, or header rows plus ``session_part`` rows."""
    last = _ms(conv.turns[-1].ts) if conv.turns else _ms(conv.started)
    assistants = [t for t in conv.turns if t.role == "assistant"]
    w.session(
        conv.id,
        directory=conv.cwd,
        title=conv.title,
        created=_ms(conv.started),
        updated=last,
        parent_id=parent_id,
        model=_model(conv),
        tokens=(sum(_tokens(t)["input"] for t in assistants), sum(_tokens(t)["output"] for t in assistants)),
    )
    for i, turn in enumerate(conv.turns):
        mid = _msg_id(conv, i)
        created = _ms(turn.ts)
        if turn.role == "user":
            data: dict[str, Any] = {"time": {"created": created}, "files": []}
            items = [{"type": "text", "text": turn.text}]
        else:
            data = {
                "time": {"created": created, "completed": created + 5},
                "agent": "build",
                "model": _model(conv),
                "finish": "stop",
                "cost": 0,
                "tokens": _tokens(turn),
            }
            items = _assistant_items(turn, v2=True)
        if w.parts:
            w.message(conv.id, mid, turn.role, data, created)
            for j, item in enumerate(items):
                w.part(conv.id, mid, f"prt_{mid[4:]}{j:02d}", item, created + j)
        else:
            if turn.role == "user":
                data["text"] = turn.text
            else:
                data["content"] = items
            w.message(conv.id, mid, turn.role, data, created)


def write_v1(path: str | Path, convs: Iterable[Conversation], *, parents: Mapping[str, str] | None = None) -> None:
    """A v1 ``opencode.db`` (with 1.18.33's empty ``session_message``) holding ``convs``."""
    w = V1Writer.create(path)
    for conv in convs:
        add_v1(w, conv, parent_id=(parents or {}).get(conv.id))
    w.conn.close()


def write_v2(
    path: str | Path, convs: Iterable[Conversation], *, inline: bool = False, parents: Mapping[str, str] | None = None
) -> None:
    """A v2 database: content in ``session_part`` rows, or inline in ``session_message.data`` when ``inline``."""
    w = V2Writer.create(path, parts=not inline)
    for conv in convs:
        add_v2(w, conv, parent_id=(parents or {}).get(conv.id))
    w.conn.close()


def write_migrating(
    path: str | Path,
    convs: Iterable[Conversation],
    *,
    phase: str | None,
    cursor: str | None = None,
    deleted: Iterable[str] = (),
    v2_only: Iterable[Conversation] = (),
    inline: bool = True,
) -> None:
    """A 1.x database that OpenCode 2 has opened and is copying (or has copied) into ``session_v2``.

    Every conversation in ``convs`` is in the 1.x tables. Those OpenCode has copied so far
    are also in the v2 tables: all of them when ``phase == "completed"``; with a ``cursor``,
    ids at or above it (the copy walks down from the newest id); with no kv state (``phase``
    None) none. ``deleted`` ids were copied and then deleted in OpenCode 2, so they stay only
    in the 1.x tables. ``v2_only`` are sessions OpenCode 2 created itself.
    """
    convs = list(convs)
    gone = set(deleted)
    w1 = V1Writer.create(path, with_session_message=False)
    w1.conn.executescript(V2_DDL + ("" if inline else SESSION_PART_DDL))
    w2 = V2Writer(w1.conn, parts=not inline)
    for conv in convs:
        add_v1(w1, conv)
        copied = phase == "completed" or (phase is not None and cursor is not None and conv.id >= cursor)
        if copied and conv.id not in gone:
            add_v2(w2, conv)
    for conv in v2_only:
        add_v2(w2, conv)
    if phase is not None:
        state: dict[str, str] = {"phase": phase}
        if cursor is not None:
            state["cursor"] = cursor
        w2.kv("migration.v1-v2", state)
    w1.conn.close()


def write_json_tree(
    storage: str | Path,
    convs: Iterable[Conversation],
    *,
    parents: Mapping[str, str] | None = None,
    project: tuple[str, str] | None = None,
) -> None:
    """The early-1.x JSON tree: ``storage/{session/<project>,message/<session>,part/<message>}/*.json``.

    ``project`` = (id, worktree) writes ``storage/project/<id>.json`` as a git project.
    """
    root = Path(storage)
    pid = project[0] if project else "global"
    if project:
        _write(
            root / "project" / f"{pid}.json", {"id": pid, "worktree": project[1], "vcs": "git", "time": {"created": 0}}
        )
    for conv in convs:
        last = _ms(conv.turns[-1].ts) if conv.turns else _ms(conv.started)
        info: dict[str, Any] = {
            "id": conv.id,
            "projectID": pid,
            "directory": conv.cwd,
            "version": "0.9.0",
            "time": {"created": _ms(conv.started), "updated": last},
        }
        if conv.title:
            info["title"] = conv.title
        parent = (parents or {}).get(conv.id)
        if parent:
            info["parentID"] = parent
        _write(root / "session" / pid / f"{conv.id}.json", info)
        prev_user = None
        for i, turn in enumerate(conv.turns):
            mid = _msg_id(conv, i)
            created = _ms(turn.ts)
            msg: dict[str, Any] = {"id": mid, "sessionID": conv.id, "role": turn.role, "time": {"created": created}}
            if turn.role == "user":
                prev_user = mid
                items = [{"type": "text", "text": turn.text}]
            else:
                msg.update(
                    parentID=prev_user,
                    modelID=conv.model,
                    providerID=PROVIDER_ID,
                    cost=0,
                    tokens=_tokens(turn),
                    path={"cwd": conv.cwd, "root": conv.cwd},
                )
                items = _assistant_items(turn, v2=False)
            _write(root / "message" / conv.id / f"{mid}.json", msg)
            for j, item in enumerate(items):
                pid_ = f"prt_{mid[4:]}{j:02d}"
                _write(
                    root / "part" / mid / f"{pid_}.json", {**item, "id": pid_, "sessionID": conv.id, "messageID": mid}
                )


def _write(path: Path, doc: Mapping[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(_dumps(dict(doc)), encoding="utf-8")
