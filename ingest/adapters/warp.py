"""The Warp adapter: the agent prompts in Warp's ``warp.sqlite`` (documented, not yet observed), read-only.

Owns what Voyager knows about Warp's local store. The evidence is agentsview's Warp parser
and several peers' fixture databases (a Swift test schema, a schema check naming
``agent_conversations``, ``ai_queries``, ``blocks``), not a real install (Warp is a desktop
app with a vendor account). Places: ``$XDG_STATE_HOME/warp-terminal/`` (default
``~/.local/state/warp-terminal``) on Linux; on macOS ``~/Library/Group Containers/
2BBY89MBSN.dev.warp/Library/Application Support/dev.warp.Warp-Stable/`` and the older
``~/Library/Application Support/dev.warp.Warp-Stable/``.

* ``ai_queries(exchange_id, conversation_id, start_ts, input, model_id, working_directory,
  output_status)``: one row an exchange; ``input`` is JSON ``[{"Query": {"text", "context"}}]``
  for what the person asked (exchanges without a ``Query`` are the agent's own steps);
* ``agent_conversations(conversation_id, conversation_data, last_modified_at)``: the
  conversation's usage summary (tokens, tool counts), no text.

Warp keeps the person's prompts locally, not the agent's replies or tool output (they live on
Warp's servers): each conversation is a session of prompts (human), its cwd and model from
the exchanges. Times are ``YYYY-MM-DD HH:MM:SS[.ffffff]`` in UTC. One database holds every
conversation: a signature per conversation (its exchanges' count, newest rowid, total input
size, and ``last_modified_at``) makes an untouched one ``Unchanged``. The database holds
much else (terminal blocks, settings): never read. No resume command (an app).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    parse_ts,
    read_database,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import json_value
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.sqlite import SessionSignatures, probe_store, sqlite_source
from voyager_sessions.core.model import Session, session_id

PROVIDER = "warp"
LABEL = "Warp"
DB_NAME = "warp.sqlite"
_REQUIRED = {"ai_queries": frozenset({"conversation_id", "input"})}


def db_paths(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_WARP_HOME/warp.sqlite`` when set (authoritative), else the Linux and macOS places."""
    found: dict[str, Path] = {}
    for home in ("warp", "warp.mac", "warp.mac-legacy"):
        base = manifest.agent_home(home, env)
        if base is not None:
            found.setdefault(str(base), base / DB_NAME)
    return list(found.values())


def query_text(raw: Any) -> str | None:
    """What the person asked in one exchange's ``input`` (``[{"Query": {"text": …}}]``), or None."""
    items = json_value(raw) if isinstance(raw, (str, bytes)) else raw
    if not isinstance(items, list):
        return None
    texts = [
        t.strip()
        for item in items
        if isinstance(t := as_dict(as_dict(item).get("Query")).get("text"), str) and t.strip()
    ]
    return "\n".join(texts) or None


def _ts(value: Any) -> float | None:
    return parse_ts(value.replace(" ", "T", 1)) if isinstance(value, str) else None


def _read(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    def body(
        conn: sqlite3.Connection, schema: dict[str, frozenset[str]], signatures: SessionSignatures
    ) -> Iterator[Item]:
        unknown = UnknownRecords(LABEL)
        cols = schema["ai_queries"]

        def col(name: str) -> str:
            return name if name in cols else "NULL"

        modified: dict[Any, Any] = {}
        if "agent_conversations" in schema and {"conversation_id", "last_modified_at"} <= schema["agent_conversations"]:
            modified = dict(conn.execute("SELECT conversation_id, last_modified_at FROM agent_conversations"))
        groups = conn.execute(
            "SELECT conversation_id, count(*), max(rowid), total(length(input)) FROM ai_queries "
            "GROUP BY conversation_id"
        ).fetchall()
        for conv, n, top, size in groups:
            if not isinstance(conv, str) or not conv:
                continue
            sig = [n, top, size, modified.get(conv)]
            if signatures.same(conv, sig):
                yield Unchanged(session=session_id(PROVIDER, conv))
                continue
            signatures.record(conv, sig)
            rows = conn.execute(
                f"SELECT {col('start_ts')}, input, {col('model_id')}, {col('working_directory')} "
                f"FROM ai_queries WHERE conversation_id = ? ORDER BY {col('start_ts')}, rowid",
                (conv,),
            ).fetchall()
            yield from _session(conv, rows, source.path, unknown)
        if (notice := unknown.notice(source.path)) is not None:
            yield notice

    return read_database(source.path, LABEL, _REQUIRED, cursor, body)


def _session(conv: str, rows: list[Any], path: str, unknown: UnknownRecords) -> Iterator[Item]:
    sid = session_id(PROVIDER, conv)
    counter = EventCounter(sid, 0)
    events = []
    started = updated = None
    cwd = model = None
    for start, raw, model_id, workdir in rows:
        ts = _ts(start)
        started = started if started is not None else ts
        updated = ts or updated
        cwd = cwd or str_or_none(workdir)
        model = str_or_none(model_id) or model
        if raw is not None and json_value(raw) is None and not isinstance(raw, list):
            unknown.saw("input:not-json")
            continue
        if (text := query_text(raw)) and (ev := counter.make("user", "human", text, ts=ts)) is not None:
            events.append(ev)
    if not events:
        return  # only the agent's own steps: nothing a person asked
    yield Session(
        id=sid, provider=PROVIDER, native_id=conv, cwd=cwd, model=model, started=started, updated=updated, source=path
    )
    yield from events


class WarpAdapter:
    """The agent prompts in Warp's one SQLite database."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return db_paths(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        named = bool(env.get("VOYAGER_WARP_HOME"))
        for path in db_paths(env):
            # Warp's database holds its settings and terminal history too: no conversation is normal.
            yield from sqlite_source(PROVIDER, path, named=named, empty_ok=True)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _read(source, cursor)


ADAPTER = WarpAdapter()


def probe(path: str) -> str:
    """``ai_queries`` (the documented table), or a problem (for ``voyager doctor``)."""
    return probe_store(path, _REQUIRED, "ai_queries")
