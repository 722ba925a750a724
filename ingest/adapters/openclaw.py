"""The OpenClaw adapter: both generations of its transcripts (observed: 2026.9.6 SQLite, 2026.6.35 JSONL).

OpenClaw (formerly Clawdbot) keeps a state dir (``~/.openclaw``; ``$OPENCLAW_STATE_DIR``, or
``$OPENCLAW_HOME/.openclaw``) with one folder per agent, ``agents/<agentId>/``:

* **2026.9 on** (SQLite): ``agent/openclaw-agent.sqlite`` (with its ``-wal``), table
  ``transcript_events(session_id, seq, event_json, event_zstd, event_utf8_bytes, …)``: one row per
  transcript event, ``event_json`` exactly one line of the older JSONL, or, for a large event, that line
  zstd-compressed in ``event_zstd`` (decompressed with a cap: ``ingest/zstd.py``); ``session_windows``
  and ``session_nodes`` name each session's model and the label a person gave it. The same database
  keeps copies of the text for its own search and memory (``session_transcript_fts``,
  ``memory_index_chunks``, ``trajectory_runtime_events``): never read. Only the database of that exact
  name is read (lock files and ``*.memory-reindex-<uuid>`` copies sit beside it).
* **Before** (JSONL): ``sessions/<sessionId>.jsonl``, indexed by ``sessions/sessions.json`` (labels);
  ``*.trajectory.jsonl`` (a runtime trace holding every prompt and reply again), ``*.checkpoint.*.jsonl``,
  and the ``.deleted``/``.reset``/``.bak`` archives are not sessions.

An event is Pi's session format (OpenClaw runs pi-agent): a ``session`` header (id, cwd), ``message``
entries with roles ``user``/``assistant`` (``thinking``, ``text``, ``toolCall`` blocks)/``toolResult``,
``model_change``, ``thinking_level_change``, ``custom`` (runtime state, skipped): read by the Pi
adapter's reader (:mod:`pi`), the sessions' provider and ids OpenClaw's.

A user who upgraded has both: ``openclaw doctor --fix`` imports the JSONL into the database and may leave
the files. A session the agent's database holds is read from there only; its JSONL is not a source.
The older names' roots are read the same way: Clawdbot's ``~/.clawdbot`` (and its older flat
``~/.clawdbot/sessions/``) and Kimi's build, ``~/.kimi_openclaw``. (Tencent's QClaw, ``~/.qclaw``, is a
provider of its own.) Every place is found below a state dir; the registry database's paths are not
followed. Resume: OpenClaw continues a session only with a new message (``openclaw agent --session-id
<id> -m …``), so no command is recorded.
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest, zstd
from voyager_sessions.ingest.adapters._common import (
    UnknownRecords,
    as_dict,
    json_column,
    read_database,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged, fingerprint
from voyager_sessions.ingest.adapters.pi import _PiRead
from voyager_sessions.ingest.files import walk_files, with_side_file
from voyager_sessions.ingest.jsondoc import read_json
from voyager_sessions.ingest.jsonl import Record, max_line_bytes
from voyager_sessions.ingest.sqlite import SessionSignatures, connect_readonly, digest, sqlite_source
from voyager_sessions.core.model import Session, session_id

PROVIDER = "openclaw"
LABEL = "OpenClaw"
DB_NAME = "openclaw-agent.sqlite"
INDEX = "sessions.json"
_HOMES = ("openclaw", "openclaw.clawdbot", "openclaw.kimi")
_REQUIRED = {"transcript_events": frozenset({"session_id", "seq", "event_json"})}
#: Files beside the transcripts that are not sessions (a trace, compaction checkpoints).
_NOT_SESSIONS = (".trajectory.jsonl",)


def state_dirs(env: Mapping[str, str]) -> list[Path]:
    """OpenClaw's state dir, then Clawdbot's and Kimi's (the same layout under older names)."""
    return manifest.agent_homes(_HOMES, env)


def is_transcript(name: str) -> bool:
    """``<id>.jsonl``, not a trace (``.trajectory.jsonl``) nor a compaction checkpoint (``.checkpoint.<uuid>.jsonl``)."""
    return name.endswith(".jsonl") and not name.endswith(_NOT_SESSIONS) and ".checkpoint." not in name


def _agent_dirs(state: Path) -> list[Path]:
    try:
        with os.scandir(state / "agents") as it:
            return sorted(Path(e.path) for e in it if e.is_dir(follow_symlinks=False))
    except OSError:
        return []


_ids_cache: dict[str, tuple[Any, frozenset[str]]] = {}


def database_sessions(db: Path) -> frozenset[str]:
    """The session ids the agent's database holds (memoised while its fingerprint stays); empty if unreadable."""
    key = str(db)
    try:
        fp = fingerprint(db, wal=True)
    except OSError:
        return frozenset()
    hit = _ids_cache.get(key)
    if hit is not None and hit[0] == fp:
        return hit[1]
    ids: frozenset[str] = frozenset()
    try:
        conn = connect_readonly(db)
        try:
            ids = frozenset(r[0] for r in conn.execute("SELECT DISTINCT session_id FROM transcript_events"))
        finally:
            conn.close()
    except sqlite3.Error:
        pass
    _ids_cache[key] = (fp, ids)
    return ids


def _labels(index: Path) -> dict[str, str]:
    """Session id -> the label a person gave it, from ``sessions.json`` (empty when there is none)."""
    doc = read_json(index, fatal=False)
    out: dict[str, str] = {}
    for entry in doc.values() if isinstance(doc, dict) else ():
        entry = as_dict(entry)
        sid = str_or_none(entry.get("sessionId"))
        label = str_or_none(entry.get("label")) or str_or_none(entry.get("displayName"))
        if sid and label:
            out[sid] = label
    return out


class _OpenClawRead(_PiRead):
    """Pi's reader with OpenClaw's provider, labels and no resume command."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None, label: str | None = None) -> None:
        self.binary = "openclaw"
        self._start(source.path, cursor, LABEL)
        self.name_id = Path(source.path).name.removesuffix(".jsonl")
        self.label = label
        if label is None and source.path.endswith(".jsonl"):
            self.label = _labels(Path(source.path).parent / INDEX).get(self.name_id)

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        title = self.facts.user_title or self.label
        return self.facts.session(PROVIDER, title=title, title_source="user", resume=None, source=self.path)


class OpenClawAdapter:
    """OpenClaw's agents' transcript databases and JSONL transcripts, under every state dir it has had."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return state_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for state in state_dirs(env):
            for agent in _agent_dirs(state):
                db = agent / "agent" / DB_NAME
                yield from sqlite_source(PROVIDER, db)
                in_db = database_sessions(db) if os.path.isfile(db) else frozenset()
                yield from self._transcripts(agent / "sessions", in_db)
            yield from self._transcripts(state / "sessions", frozenset())  # Clawdbot's older flat layout

    def _transcripts(self, folder: Path, in_db: frozenset[str]) -> Iterator[Source | Notice]:
        index = folder / INDEX
        seen: dict[str, os.stat_result | None] = {}
        for item in walk_files(folder, ".jsonl", PROVIDER, match=is_transcript, skip_dir=lambda _name: True):
            if isinstance(item, Source):
                if Path(item.path).name.removesuffix(".jsonl") in in_db:
                    continue  # migrated: the agent's database holds this session, read from there
                item = with_side_file(item, index, seen)
            yield item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if source.path.endswith(".jsonl"):
            return _OpenClawRead(source, cursor).run()
        return _read_database(source, cursor)


def _read_database(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        zstd_col = "event_zstd" in schema["transcript_events"]
        labels = _db_labels(conn, schema)
        rows = conn.execute(
            "SELECT session_id, count(*), max(seq), total(coalesce(length(event_json), length(event_zstd))), "
            "max(created_at) FROM transcript_events GROUP BY session_id ORDER BY min(created_at), session_id"
        ).fetchall()
        for native, *sig in rows:
            if not isinstance(native, str) or not native:
                continue
            signature = [*sig, digest(labels.get(native))]
            if signatures.same(native, signature):
                yield Unchanged(session=session_id(PROVIDER, native))
                continue
            yield from _db_session(conn, source, native, labels.get(native), zstd_col, unknown)
            signatures.record(native, signature)
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _db_labels(conn: sqlite3.Connection, schema: dict[str, frozenset[str]]) -> dict[str, str]:
    """Session id -> the label a person gave it (``session_nodes`` for the session a key points to now)."""
    nodes = schema.get("session_nodes", frozenset())
    if not {"current_session_id", "label"} <= nodes:
        return {}
    shown = "display_name" if "display_name" in nodes else "NULL"
    out: dict[str, str] = {}
    for sid, label, name in conn.execute(f"SELECT current_session_id, label, {shown} FROM session_nodes"):
        text = str_or_none(label) or str_or_none(name)
        if isinstance(sid, str) and text:
            out[sid] = text
    return out


def _db_session(
    conn: sqlite3.Connection, source: Source, native: str, label: str | None, zstd_col: bool, unknown: UnknownRecords
) -> Iterator[Item]:
    reader = _OpenClawRead(Source(provider=PROVIDER, path=source.path, fingerprint=source.fingerprint), None, label)
    reader.name_id = native
    yield reader._begin(native)  # the row's session id is the session's, whatever a header names
    columns = "seq, event_json, event_zstd, event_utf8_bytes" if zstd_col else "seq, event_json, NULL, NULL"
    for seq, text, blob, size in conn.execute(
        f"SELECT {columns} FROM transcript_events WHERE session_id = ? ORDER BY seq", (native,)
    ):
        entry = _event(text, blob, size, source.path, seq)
        if isinstance(entry, Notice):
            yield entry
            continue
        if entry is None:
            unknown.saw("event:not-json")
            continue
        yield from reader._record(Record(value=entry, start=0, end=0, complete=True, lineno=seq))
    final = reader._session()
    if final != reader.sent:
        yield final
    if reader.unknown is not None and (notice := reader.unknown.notice(source.path)) is not None:
        yield notice


def _event(text: Any, blob: Any, size: Any, path: str, seq: Any) -> dict[str, Any] | Notice | None:
    """One event's JSON: ``event_json``, or ``event_zstd`` decompressed to at most its recorded size (and never
    past the line cap); a Notice when it cannot be (damaged, or no zstd); None when it is not a JSON object."""
    if text is None and isinstance(blob, (bytes, bytearray)):
        cap = max_line_bytes()
        limit = min(size, cap) if isinstance(size, int) and size > 0 else cap
        try:
            data = zstd.decompress_blob(bytes(blob), limit=limit)
        except zstd.ZstdUnavailable:
            return zstd.missing_notice(path, LABEL, fatal=False, detail=f"event {seq} is compressed")
        except zstd.ZstdError as exc:
            return Notice(source=path, where=f"event {seq}", reason=f"{exc}; skipped")
        value = json_column(data)
    else:
        value = json_column(text)
    return value if isinstance(value, dict) else None


ADAPTER = OpenClawAdapter()
