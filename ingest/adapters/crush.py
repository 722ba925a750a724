"""The Crush adapter (``crush``, documented): one ``crush.db`` per project.

Where (disputed among peers, so both are read): Crush registers every project it opens in
``projects.json`` in its global data dir (``$CRUSH_GLOBAL_DATA``, else
``$XDG_DATA_HOME/crush``, default ``~/.local/share/crush``): ``{"projects": [{"path",
"data_dir", …}]}``, each project's sessions in ``<data_dir>/crush.db`` (``data_dir`` defaults
to ``<project>/.crush``; a relative one is taken from the project's path, as Crush does);
fast-resume and agent-trace read it that way. FAD/cass read ``~/.crush/crush.db`` and
``./.crush/crush.db``: the first is read, the second in every working directory Voyager's
indexed sessions ran in (the scan's hints). A ``data_dir`` that ``projects.json`` lists but that does not exist is named in
a Notice (a moved or deleted project), never skipped silently.

Shape (Crush's own migrations; agent-trace's and fast-resume's test schemas):
``sessions(id, parent_session_id, title, message_count, prompt_tokens, completion_tokens,
cost, updated_at, created_at)`` and ``messages(id, session_id, role, parts, model, provider,
created_at, updated_at, finished_at, is_summary_message)``; times are epoch seconds or
milliseconds. ``parts`` is a JSON list of ``{"type", "data"}``: ``text``, ``reasoning``
(``thinking``), ``tool_call`` (``name``, ``input`` JSON text), ``tool_result`` (in a ``tool``
message: ``content``, ``is_error``; no exit code), ``finish`` (``reason``: ``end_turn``,
``tool_use``, ``stop``, ``canceled``, ``max_tokens`` carry no text; ``error`` carries the
provider's message: meta, is_error), ``shell_command`` (a command the person ran with
``!``: the one place Crush records an exit code), ``image_url``/``binary`` (no text). A
summary message (``is_summary_message``, compaction) is meta. A session with a parent is a
subagent's (its prompts are the parent agent's); ``title-<parent>`` sessions are Crush's
title side calls, copies of the first prompt, and are not indexed.

One database, many sessions: each session's change is detected on its row and its
messages' count, update times and total size (``updated_at`` has second resolution, a
streaming reply is updated within the second), kept in ``Cursor.state``.

Resume: ``crush --cwd <project> --session <id>`` (Crush's root command took ``-s/--session``
in March 2026, #2422; ``-c/--cwd`` names the project: the one ``projects.json`` lists, or the
directory holding a ``.crush`` data dir); for a database in another directory,
``crush --data-dir <dir> --session <id>``.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    SessionEvents,
    UnknownRecords,
    as_dict,
    cached_by_stat,
    epoch,
    int_or_none,
    read_database,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Hints, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.jsonl import decode_json
from voyager_sessions.ingest.sqlite import SessionSignatures, digest, probe_store, sqlite_source
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "crush"
LABEL = "Crush"
DB_NAME = "crush.db"
PROJECTS = "projects.json"
_REQUIRED = {"sessions": frozenset({"id"}), "messages": frozenset({"session_id", "role", "parts"})}
_SESSION_COLS = (
    "parent_session_id",
    "title",
    "message_count",
    "prompt_tokens",
    "completion_tokens",
    "cost",
    "updated_at",
    "created_at",
)
_MESSAGE_COLS = ("model", "provider", "created_at", "updated_at", "finished_at", "is_summary_message")
#: Crush's shell tool; its input's ``command`` is the searchable text.
_SHELL_TOOLS = frozenset({"bash"})
#: Finish reasons that end a turn without anything to read.
_QUIET_FINISH = frozenset({"end_turn", "tool_use", "stop", "max_tokens", "unknown"})

_decode = decode_json


def projects(global_dir: Path) -> list[tuple[str | None, Path]] | Notice:
    """(project path, data dir) for every project ``projects.json`` lists, or a Notice when it cannot be read."""
    doc = cached_by_stat(str(global_dir / PROJECTS), lambda p: read_json_object(p, fatal=False), None)
    if doc is None:
        return []
    if isinstance(doc, Notice):
        return doc
    out = []
    for entry in doc.get("projects") if isinstance(doc.get("projects"), list) else ():
        entry = as_dict(entry)
        project, data_dir = str_or_none(entry.get("path")), str_or_none(entry.get("data_dir"))
        if data_dir is None:
            if project is None:
                continue
            data_dir = os.path.join(project, ".crush")
        elif not os.path.isabs(data_dir) and project:
            data_dir = os.path.join(project, data_dir)  # Crush resolves a relative data dir against the project
        out.append((project, Path(data_dir)))
    return out


def _dir_problem(path: Path) -> str | None:
    """Why ``path`` (a data dir projects.json names) cannot be read as a directory, or None when it can."""
    try:
        if stat.S_ISDIR(os.stat(path).st_mode):
            return None
    except (FileNotFoundError, NotADirectoryError):
        pass
    except OSError as exc:  # no permission, a name too long
        return f"cannot be looked into ({exc.strerror or exc})"
    except ValueError:  # a NUL in the name
        return "is not a usable path"
    return "does not exist (moved or deleted?)"


def _short(text: str, limit: int = 200) -> str:
    """``text`` cut for a notice: a path from a hostile file may be megabytes long."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def resume_command(native: str, project: str | None, data_dir: str | None) -> str | None:
    """The shell command that reopens session ``native`` in its project (every part quoted)."""
    if project:
        return resume_in(None, "crush", opt("--cwd", project), opt("--session", native))
    if data_dir:
        return resume_in(None, "crush", opt("--data-dir", data_dir), opt("--session", native))
    return None


class _Mapper(SessionEvents):
    """Turns one session's messages into events."""

    def message(self, role: Any, parts: list[Any], summary: bool, ts: float | None) -> Iterator[Event]:
        if role not in ("user", "assistant", "tool", "system"):
            self.unknown.saw(f"role {role}")
            return
        for part in parts:
            part = as_dict(part)
            ptype, data = part.get("type"), as_dict(part.get("data"))
            if ptype == "text":
                yield from self.text(role, str_or_none(data.get("text")), ts, meta=summary or role == "system")
            elif ptype == "reasoning":
                yield from self.emit("reasoning", "agent", str_or_none(data.get("thinking")), ts)
            elif ptype == "tool_call":
                call_id, name = str_or_none(data.get("id")), str_or_none(data.get("name"))
                self.tools[call_id or ""] = name
                yield from self.emit(
                    "tool_call",
                    "agent",
                    tool_call_text(name, data.get("input"), _SHELL_TOOLS),
                    ts,
                    tool=name,
                    call_id=call_id,
                )
            elif ptype == "tool_result":
                call_id = str_or_none(data.get("tool_call_id"))
                yield from self.emit(
                    "tool_result",
                    "tool",
                    str_or_none(data.get("content")) or "",
                    ts,
                    tool=str_or_none(data.get("name")) or self.tools.get(call_id or ""),
                    call_id=call_id,
                    is_error=data.get("is_error") is True,
                )
            elif ptype == "finish":
                reason = data.get("reason")
                if reason not in _QUIET_FINISH:
                    text = ": ".join(
                        t for t in (str_or_none(data.get("message")), str_or_none(data.get("details"))) if t
                    )
                    yield from self.emit(
                        "meta", "provider", text or None, epoch(data.get("time")) or ts, is_error=reason == "error"
                    )
            elif ptype == "shell_command":
                command = str_or_none(data.get("command"))
                yield from self.emit("tool_call", "human", tool_call_text("shell", command), ts, tool="shell")
                yield from self.emit(
                    "tool_result",
                    "tool",
                    str_or_none(data.get("output")) or "",
                    ts,
                    tool="shell",
                    exit_code=int_or_none(data.get("exit_code")),
                )
            elif ptype not in ("image_url", "binary"):
                self.unknown.saw(f"part {ptype}")


def _session(source: str, row: sqlite3.Row, project: str | None) -> Session:
    native = row["id"]
    parent = str_or_none(row["parent_session_id"])
    title = str_or_none(row["title"])
    data_dir = os.path.dirname(source)
    return Session(
        id=session_id(PROVIDER, native),
        provider=PROVIDER,
        native_id=native,
        title=title,
        title_source="agent" if title else None,  # Crush titles a session with a side call to the model
        cwd=project,
        started=epoch(row["created_at"]),
        updated=epoch(row["updated_at"]),
        parent=session_id(PROVIDER, parent) if parent else None,
        resume=None if parent else resume_command(native, project, None if project else data_dir),
        source=source,
        tokens_in=int_or_none(row["prompt_tokens"]) or None,
        tokens_out=int_or_none(row["completion_tokens"]) or None,
    )


def _project_of(db: str, env_dirs: list[Path]) -> str | None:
    """The project whose data dir holds ``db``: as ``projects.json`` lists it, else the directory
    that holds a default ``.crush`` data dir (Crush looks for the nearest ``.crush`` upwards)."""
    here = os.path.realpath(os.path.dirname(db))
    for global_dir in env_dirs:
        listed = projects(global_dir)
        if isinstance(listed, Notice):
            continue
        for project, data_dir in listed:
            if os.path.realpath(data_dir) == here:
                return project
    folder = os.path.dirname(db)
    return os.path.dirname(folder) if os.path.basename(folder) == ".crush" else None


def _read(source: Source, cursor: Cursor | None, global_dirs: list[Path]) -> Iterator[Item]:
    return read_database(
        source.path,
        LABEL,
        _REQUIRED,
        cursor,
        lambda conn, schema, signatures: _sessions(source.path, conn, schema, signatures, global_dirs),
    )


def _sessions(
    path: str,
    conn: sqlite3.Connection,
    schema: dict[str, frozenset[str]],
    signatures: SessionSignatures,
    global_dirs: list[Path],
) -> Iterator[Item]:
    s_cols, m_cols = schema["sessions"], schema["messages"]
    picks = ", ".join(c if c in s_cols else f"NULL AS {c}" for c in _SESSION_COLS)
    m_picks = ", ".join(c if c in m_cols else f"NULL AS {c}" for c in _MESSAGE_COLS)
    order = "created_at, rowid" if "created_at" in m_cols else "rowid"
    upd = "updated_at" if "updated_at" in m_cols else "NULL"
    project = _project_of(path, global_dirs)
    unknown = UnknownRecords(LABEL)
    aggregates = {
        sid: list(rest)
        for sid, *rest in conn.execute(
            f"SELECT session_id, count(*), max({upd}), sum({upd}), sum(length(parts)) FROM messages GROUP BY session_id"
        )
    }
    rows = conn.execute(
        f"SELECT id, {picks} FROM sessions ORDER BY {'created_at, ' if 'created_at' in s_cols else ''}id"
    ).fetchall()
    for row in rows:
        native = row["id"]
        if not isinstance(native, str) or not native:
            continue
        parent = str_or_none(row["parent_session_id"])
        if parent and native == f"title-{parent}":
            continue  # the title side call: the first prompt again, and the title the session already has
        signature = [digest(*tuple(row)), project, *aggregates.get(native, [0, None, None, None])]
        if signatures.same(native, signature):
            yield Unchanged(session=session_id(PROVIDER, native))
            continue
        meta = _session(path, row, project)
        yield meta
        mapper = _Mapper(meta.id, parent is not None, unknown)
        for message in conn.execute(
            f"SELECT rowid AS rid, role, parts, {m_picks} FROM messages WHERE session_id = ? ORDER BY {order}",
            (native,),
        ):
            try:
                parts = _decode(message["parts"]) if isinstance(message["parts"], (str, bytes)) else None
            except (msgspec.DecodeError, RecursionError) as exc:
                parts = exc
            if not isinstance(parts, list):
                reason = f"malformed JSON: {parts}" if isinstance(parts, Exception) else "parts is not a JSON list"
                yield Notice(
                    source=path,
                    where=f"session {native}, message {message['rid']}",
                    reason=f"{reason}; message skipped",
                )
                continue
            if message["model"] and meta.model is None:
                meta = msgspec.structs.replace(meta, model=str(message["model"]))
            yield from mapper.message(
                message["role"], parts, bool(message["is_summary_message"]), epoch(message["created_at"])
            )
        if meta.model is not None:
            yield meta
        signatures.record(native, signature)
    if (notice := unknown.notice(path)) is not None:
        yield notice


def probe(path: str) -> str:
    """``crush.db`` for a database Voyager can read, else what is wrong with it (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "crush.db")


class CrushAdapter:
    """Crush's per-project ``crush.db`` files, found through ``projects.json``, and ``~/.crush/crush.db``."""

    name: ClassVar[str] = PROVIDER

    def _global_dirs(self, env: Mapping[str, str]) -> list[Path]:
        return [p for p in (manifest.agent_home("crush", env),) if p is not None]

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        found = [p / PROJECTS for p in self._global_dirs(env)]
        home = manifest.agent_home("crush.home", env)
        return list(dict.fromkeys([*found, *([home / DB_NAME] if home is not None else [])]))

    def discover(self, env: Mapping[str, str], hints: Hints | None = None) -> Iterator[Source | Notice]:
        seen: set[str] = set()
        named = bool(env.get("VOYAGER_CRUSH_HOME"))
        for global_dir in self._global_dirs(env):
            listed = projects(global_dir)
            if isinstance(listed, Notice):
                yield listed
                continue
            for project, data_dir in listed:
                db = data_dir / DB_NAME
                problem = (
                    "lies outside VOYAGER_LOOK_WITHIN"  # not even statted: discovery stays where it was told
                    if hints is not None and not hints.allows(data_dir)
                    else _dir_problem(data_dir)
                )
                if problem is not None:
                    yield Notice(
                        source=str(global_dir / PROJECTS),
                        where=f"project {_short(project or '?')}",
                        reason=f"its data dir {_short(str(data_dir))} {problem}; not read",
                    )
                    continue
                key = os.path.realpath(db)
                if key not in seen:  # a data dir without crush.db has no session yet
                    seen.add(key)
                    yield from sqlite_source(PROVIDER, db)
        home = manifest.agent_home("crush.home", env)
        if home is not None and os.path.realpath(home / DB_NAME) not in seen:
            seen.add(os.path.realpath(home / DB_NAME))
            yield from sqlite_source(PROVIDER, home / DB_NAME)
        if not named:
            # A project's .crush/crush.db that projects.json does not list (an older Crush, or one
            # run with another global data dir), in the directories Voyager's sessions ran in.
            for cwd in sorted(hints.cwds if hints else ()):
                db = Path(cwd) / ".crush" / DB_NAME
                # os.path.isfile: a cwd from a session file may be too long, hold a NUL or lie in an
                # unreadable folder; Path.is_file raises for some of those.
                if os.path.isfile(db) and os.path.realpath(db) not in seen:
                    seen.add(os.path.realpath(db))
                    yield from sqlite_source(PROVIDER, db)
        if named and home is not None and not (home / DB_NAME).exists() and not (home / PROJECTS).exists():
            yield Notice(
                source=str(home), reason=f"VOYAGER_CRUSH_HOME names a directory with no {PROJECTS} and no {DB_NAME}"
            )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        # Which project a database belongs to is known only from projects.json; read() is not
        # handed the scan's environment, and the scan runs with the process's own.
        return _read(source, cursor, self._global_dirs(os.environ))


ADAPTER = CrushAdapter()
