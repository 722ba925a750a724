"""Reading an OpenCode database: every slice of its layout, one session at a time, only what changed.

A whole source is read inside one read transaction, so the migrating layout sees the kv
cursor and both table sets at the same instant. For each :class:`~.schema.Slice`, one
grouped pass over the message and part tables gives every session's
:class:`~.signature.Signature`; sessions whose signature is the one in the cursor are
``Unchanged``, the others are read whole or, when only their last message and newer ones
changed, from that message on (``Partial``).

Rows stream through SQLite cursors; nothing fetches a whole table. Where the message table
has an index on ``session_id`` (and the part table one on ``message_id``), each session is
one indexed query. OpenCode creates those indexes, but a database without them (copied,
repaired, written by another tool) would make every per-session query scan the whole
table; there the sessions to read come from one ordered pass instead
(:meth:`SliceReader.read_pass`), and what the per-session queries would have answered
(tokens, model, the rows before the last message) is gathered on the way.
"""

from __future__ import annotations

import itertools
import sqlite3
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

import msgspec

from voyager_sessions.ingest.adapters._common import int_or_none as _int
from voyager_sessions.ingest.adapters._common import release
from voyager_sessions.ingest.adapters._common import str_or_none as _str
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Partial, Source, Unchanged
from voyager_sessions.ingest.adapters.opencode import signature as sg
from voyager_sessions.ingest.adapters.opencode.emit import (
    Ctx,
    Emitter,
    agent_title,
    as_dict,
    is_summary,
    loads,
    model_name,
    secs,
)
from voyager_sessions.ingest.adapters.opencode.product import Product
from voyager_sessions.ingest.adapters.opencode.schema import (
    MIGRATION_KEY,
    PART_ORDER,
    SESSION_ORDER,
    Generation,
    Migration,
    Slice,
    detect_shape,
    layout,
)
from voyager_sessions.ingest.sqlite import digest, has_index, open_store, unreadable
from voyager_sessions.core.model import Event, Session


def _col(row: sqlite3.Row, name: str) -> Any:
    """A column that may not exist in this release's table."""
    return row[name] if name in row.keys() else None


def _json_list(values: list[str]) -> str:
    """A list as one JSON parameter, for ``json_each(?)``: no limit on how many, one statement."""
    return msgspec.json.encode(values).decode()


def sqlite_order(values: Iterable[Any]) -> tuple[tuple[int, Any], ...]:
    """A sort key that orders row values as SQLite's ``ORDER BY`` does: NULL, numbers, text, blobs.

    (Text compares by code point, which is the byte order of its UTF-8: SQLite's BINARY collation.)
    """
    out: list[tuple[int, Any]] = []
    for v in values:
        if v is None:
            out.append((0, 0))
        elif isinstance(v, (int, float)):
            out.append((1, v))
        elif isinstance(v, str):
            out.append((2, v))
        else:
            out.append((3, bytes(v)))
    return tuple(out)


class Database:
    """One open database and what its schema offers; builds the queries a generation's tables need."""

    def __init__(
        self, conn: sqlite3.Connection, schema: Mapping[str, frozenset[str]], source: str, product: Product
    ) -> None:
        self.conn = conn
        self.schema = schema
        self.source = source
        self.product = product
        self.projects = self._projects()
        self.branches = self._branches()
        self._indexed: dict[Generation, bool] = {}
        #: Text in this database is UTF-8 (SQLite's default; a database may say UTF-16).
        self.utf8 = str(conn.execute("PRAGMA encoding").fetchone()[0]).upper() == "UTF-8"

    def json_bytes(self, column: str) -> str:
        """``column`` (JSON kept as text) as its UTF-8 bytes, where the database's text is UTF-8: the reader parses
        them as they are, instead of SQLite's text being decoded into a Python string (by the connection's
        lenient text factory, a Python call per value) only for the parser to encode it back. Other values (a
        blob, a number, NULL) come as they are."""
        if not self.utf8:
            return column
        return f"(CASE WHEN typeof({column}) = 'text' THEN CAST({column} AS BLOB) ELSE {column} END)"

    def cols(self, table: str) -> frozenset[str]:
        return self.schema.get(table, frozenset())

    def order(self, table: str, alias: str, names: Iterable[str], *, desc: bool = False) -> str:
        """ORDER BY terms for the columns of ``names`` this table has (id always exists)."""
        have = self.cols(table)
        suffix = " DESC" if desc else ""
        return ", ".join(f"{alias}.{n}{suffix}" for n in names if n in have or n == "id")

    def key_columns(self, gen: Generation) -> list[str]:
        """The columns that order a session's messages (what ``seq`` follows), as present."""
        have = self.cols(gen.messages)
        return [n for n in gen.message_order if n in have or n == "id"]

    def indexed(self, gen: Generation) -> bool:
        """Whether one session's messages (and their parts) can be found without scanning whole tables."""
        if gen not in self._indexed:
            ok = has_index(self.conn, gen.messages, "session_id")
            if ok and gen.parts is not None:
                ok = has_index(self.conn, gen.parts, "message_id")
            self._indexed[gen] = ok
        return self._indexed[gen]

    # -- update times ---------------------------------------------------------

    def update_value(self, table: str, alias: str) -> str:
        """SQL for one row's update time as an integer mod 2^32 (``NULL`` without the column).

        OpenCode stores integer milliseconds; a REAL time counts in thousandths and an
        ISO-text one through ``julianday`` in milliseconds, so an edit within the same second
        still shows. Mod 2^32, a sum of them cannot overflow, and it stays an exact integer
        (SQLite's ``total()`` is a float, which loses single milliseconds past 2^53): a
        session's prefix signature is its whole sum minus the sum of its tail.
        """
        if "time_updated" not in self.cols(table):
            return "NULL"
        col = f"{alias}.time_updated"
        return (
            f"(CASE typeof({col}) WHEN 'integer' THEN {col} WHEN 'real' THEN CAST({col} * 1000 AS INTEGER) "
            f"WHEN 'text' THEN CAST(julianday({col}) * 86400000 AS INTEGER) END) % 4294967296"
        )

    def _newest(self, table: str, alias: str) -> str:
        return f"max({alias}.time_updated)" if "time_updated" in self.cols(table) else "NULL"

    def part_owner(self, part: str) -> str:
        """Which session a part row counts for: its own ``session_id`` when it has one (no join needed).

        OpenCode sets it to its message's session. A part whose ``session_id`` disagrees is
        still read with its message; only its later edits then go unnoticed until that
        message's session changes otherwise (malformed data; the join to tell would cost a
        lookup for every part on every rescan)."""
        return "p.session_id" if "session_id" in self.cols(part) else "m.session_id"

    def aggregates(self, gen: Generation) -> dict[str, tuple[sg.Rows, sg.Rows]]:
        """session id -> its message rows and part rows, summarised, in one grouped query per table."""
        msg, part = gen.messages, gen.parts
        rows: dict[str, sg.Rows] = {}
        parts: dict[str, sg.Rows] = {}
        if msg not in self.schema or "session_id" not in self.cols(msg):
            return {}
        for sid, n, newest, updates, top in self.conn.execute(
            f"SELECT m.session_id, count(*), {self._newest(msg, 'm')}, sum({self.update_value(msg, 'm')}), max(m.id) "
            f"FROM {msg} m GROUP BY m.session_id"
        ):
            rows[sid] = sg.Rows(n, newest, updates, top)
        if part is not None:
            owner = self.part_owner(part)
            join = "" if owner.startswith("p.") else f" JOIN {msg} m ON p.message_id = m.id"
            for sid, n, newest, updates, top in self.conn.execute(
                f"SELECT {owner}, count(*), {self._newest(part, 'p')}, sum({self.update_value(part, 'p')}), max(p.id) "
                f"FROM {part} p{join} GROUP BY {owner}"
            ):
                parts[sid] = sg.Rows(n, newest, updates, top)
        return {sid: (rows.get(sid, sg.NO_ROWS), parts.get(sid, sg.NO_ROWS)) for sid in rows.keys() | parts.keys()}

    # -- sessions -------------------------------------------------------------

    def sessions(self, sl: Slice) -> Iterator[sqlite3.Row]:
        table = sl.gen.sessions
        yield from self.conn.execute(
            f"SELECT * FROM {table} s {sl.where} ORDER BY {self.order(table, 's', SESSION_ORDER)}", sl.params
        )

    def session_row(self, gen: Generation, native: str) -> sqlite3.Row | None:
        return self.conn.execute(f"SELECT * FROM {gen.sessions} WHERE id = ?", (native,)).fetchone()

    def _projects(self) -> dict[str, str | None]:
        """project id -> worktree, when the project is a repository.

        OpenCode's catch-all ``global`` project has worktree ``/`` and no vcs; calling that a
        repository would be wrong, so only projects with a vcs (or, lacking the column, a
        worktree other than ``/``) count.
        """
        cols = self.cols("project")
        if not {"id", "worktree"} <= cols:
            return {}
        out: dict[str, str | None] = {}
        vcs = "vcs" if "vcs" in cols else "NULL"
        for pid, worktree, v in self.conn.execute(f"SELECT id, worktree, {vcs} FROM project"):
            keep = bool(v) if "vcs" in cols else worktree not in (None, "", "/")
            out[pid] = worktree if keep and isinstance(worktree, str) and worktree else None
        return out

    def _branches(self) -> dict[str, str]:
        cols = self.cols("workspace")
        if not {"id", "branch"} <= cols:
            return {}
        return {wid: b for wid, b in self.conn.execute("SELECT id, branch FROM workspace") if isinstance(b, str) and b}

    def session_meta(self, gen: Generation, row: sqlite3.Row, facts: SessionFacts) -> Session:
        native = row["id"]
        directory = _str(row["directory"])
        parent = _str(_col(row, "parent_id"))
        tokens_in, tokens_out = _col(row, "tokens_input"), _col(row, "tokens_output")
        if not (_int(tokens_in) or _int(tokens_out)):
            # Sessions imported or created before OpenCode kept per-session totals have 0 there
            # while their messages carry the real counts (seen with ``opencode import`` on 1.18.33).
            s_in, s_out = facts.tokens(native)
            if s_in is not None or s_out is not None:
                tokens_in, tokens_out = s_in, s_out
        model = model_name(_col(row, "model")) or facts.model(native)
        title = agent_title(_col(row, "title"))
        p = self.product
        return Session(
            id=p.session_id(native),
            provider=p.name,
            native_id=native,
            title=title,
            title_source="agent" if title else None,
            cwd=directory,
            git_repo=self.projects.get(_col(row, "project_id")),
            git_branch=self.branches.get(_col(row, "workspace_id")),
            model=model,
            started=secs(_col(row, "time_created")),
            updated=secs(_col(row, "time_updated")),
            parent=p.session_id(parent) if parent else None,
            resume=p.resume(directory, native),
            source=self.source,
            tokens_in=_int(tokens_in),
            tokens_out=_int(tokens_out),
            agent_version=release(_col(row, "version")),  # the release that created the session
        )

    # -- messages and parts ---------------------------------------------------

    def walk_sql(self, gen: Generation, where: str, *, counted: bool = False, among: bool = False) -> str:
        """The (message, part) rows a :class:`Walk` consumes: messages by their key, parts by (time, id).

        Columns by position (``SID`` … ``KEYS``, then the key columns). ``counted`` adds each
        row's update time and each part's owner, for a walk that keeps the rows' signature
        itself; otherwise those are NULL (computing them costs a little on every row).
        ``among``: the rows of every session a JSON array parameter lists, sessions in the
        order :meth:`sessions` reads them.
        """
        msg, part = gen.messages, gen.parts
        mcols = self.cols(msg)
        keys = ", ".join(f"m.{c}" for c in self.key_columns(gen))
        m_ts = "m.time_created" if "time_created" in mcols else "NULL"
        mtype = "m.type" if gen.typed else "NULL"
        mupd = self.update_value(msg, "m") if counted else "NULL"
        frm, order = f"{msg} m", self.order(msg, "m", gen.message_order)
        if among:
            # One scan of the messages (CROSS JOIN keeps them the outer loop: the other way round
            # would scan them once per session), each looking up its session by primary key for
            # the order sessions are read in, then one sort.
            frm += f" CROSS JOIN {gen.sessions} s ON s.id = m.session_id"
            where = f"m.session_id IN (SELECT value FROM json_each(?)) AND {where}"
            order = f"{self.order(gen.sessions, 's', SESSION_ORDER)}, {order}"
        if part is None:
            pcols = "NULL, NULL, NULL, NULL"
        else:
            pupd, owner = (self.update_value(part, "p"), self.part_owner(part)) if counted else ("NULL", "NULL")
            pcols = f"p.id, {self.json_bytes('p.data')}, {pupd}, {owner}"
            frm += f" LEFT JOIN {part} p ON p.message_id = m.id"
            order += ", " + self.order(part, "p", PART_ORDER)
        return (
            f"SELECT m.session_id, m.id, {mtype}, {m_ts}, {self.json_bytes('m.data')}, {pcols}, {mupd}, {keys} "
            f"FROM {frm} WHERE {where} ORDER BY {order}"
        )

    def _from_key(self, gen: Generation, from_key: list[Any] | None) -> tuple[str, tuple[Any, ...]]:
        if from_key is None:
            return "", ()
        cols = ", ".join(f"m.{c}" for c in self.key_columns(gen))
        return f" AND ({cols}) >= ({', '.join('?' * len(from_key))})", tuple(from_key)

    def session_rows(self, gen: Generation, native: str, from_key: list[Any] | None = None) -> Iterator[sqlite3.Row]:
        """One session's rows (from message ``from_key`` on) through the (session, key) index."""
        where, params = self._from_key(gen, from_key)
        return self.conn.execute(self.walk_sql(gen, f"m.session_id = ?{where}"), (native, *params))

    def pass_rows(self, gen: Generation, natives: list[str]) -> Iterator[sqlite3.Row]:
        """The rows of every session in ``natives``, in that order, counted, from one statement.

        SQLite finds and orders them once (a transient index on ``session_id``, then a sort
        of each session's rows) instead of scanning the tables once per session.
        """
        return self.conn.execute(self.walk_sql(gen, "1", counted=True, among=True), (_json_list(natives),))

    def suffix_from(self, gen: Generation, native: str, key: list[Any]) -> sg.Suffix:
        """Count and update sums of a session's messages from ``key`` on, and of their parts.

        A few rows (the last turn), read through the (session, key) index rather than the
        whole session.
        """
        msg, part = gen.messages, gen.parts
        where, params = self._from_key(gen, key)
        n, upd = self.conn.execute(
            f"SELECT count(*), sum({self.update_value(msg, 'm')}) FROM {msg} m WHERE m.session_id = ?{where}",
            (native, *params),
        ).fetchone()
        out = sg.Suffix(messages=n, message_updates=upd)
        if part is not None:
            owner = self.part_owner(part)
            also = f" AND {owner} = ?" if owner.startswith("p.") else ""
            out.parts, out.part_updates = self.conn.execute(
                f"SELECT count(*), sum({self.update_value(part, 'p')}) FROM {part} p JOIN {msg} m ON p.message_id = m.id "
                f"WHERE m.session_id = ?{also}{where}",
                (native, *((native,) if also else ()), *params),
            ).fetchone()
        return out


class SessionFacts:
    """What a Session header needs from a session's messages when its own row does not say: tokens, model.

    Indexed tables answer one session at a time. Without an index every such question would
    scan the table, so the answers for all the sessions of a pass (``natives``) come from one
    grouped query each, asked the first time one of them is needed.
    """

    def __init__(self, db: Database, gen: Generation, natives: list[str] | None = None) -> None:
        self.db = db
        self.gen = gen
        self.natives = natives
        self._tokens: dict[str, tuple[int | None, int | None]] | None = None
        self._models: dict[str, str | None] | None = None

    def _among(self) -> tuple[str, tuple[Any, ...]]:
        return " AND m.session_id IN (SELECT value FROM json_each(?))", (_json_list(self.natives or []),)

    def tokens(self, native: str) -> tuple[int | None, int | None]:
        gen, conn = self.gen, self.db.conn
        head = (
            f"SELECT m.session_id, sum(json_extract(m.data, '$.tokens.input')), "
            f"sum(json_extract(m.data, '$.tokens.output')) FROM {gen.messages} m "
            f"WHERE json_valid(m.data){gen.assistant_filter}"
        )
        try:
            # json_extract runs in SQLite: no message body is materialised in Python.
            if self.natives is None:
                row = conn.execute(f"{head} AND m.session_id = ?", (native,)).fetchone()
                return _int(row[1]), _int(row[2])
            if self._tokens is None:
                among, params = self._among()
                self._tokens = {
                    sid: (_int(a), _int(b))
                    for sid, a, b in conn.execute(f"{head}{among} GROUP BY m.session_id", params)
                }
        except sqlite3.OperationalError:  # an SQLite built without JSON functions
            return None, None
        return self._tokens.get(native, (None, None))

    def model(self, native: str) -> str | None:
        """The model of the newest assistant message that names one (within ``model_lookback`` messages)."""
        gen, db = self.gen, self.db
        order = db.order(gen.messages, "m", gen.message_order, desc=True)
        if self.natives is None:
            rows = db.conn.execute(
                f"SELECT m.data FROM {gen.messages} m WHERE m.session_id = ?{gen.assistant_filter} "
                f"ORDER BY {order} LIMIT {gen.model_lookback}",
                (native,),
            )
            return _first_model(gen, (data for (data,) in rows))
        if self._models is None:
            among, params = self._among()
            sql = (
                f"SELECT sid, data FROM (SELECT m.session_id AS sid, m.data AS data, row_number() OVER "
                f"(PARTITION BY m.session_id ORDER BY {order}) AS rn FROM {gen.messages} m "
                f"WHERE 1{gen.assistant_filter}{among}) WHERE rn <= {gen.model_lookback} ORDER BY sid, rn"
            )
            self._models = {
                sid: _first_model(gen, (data for _sid, data in group))
                for sid, group in itertools.groupby(db.conn.execute(sql, params), key=lambda r: r[0])
            }
        return self._models.get(native)


def _first_model(gen: Generation, datas: Iterable[Any]) -> str | None:
    for data in datas:
        try:
            d = loads(data)
        except ValueError:
            continue
        name = model_name(d.get("model")) or model_name({"id": d.get("modelID"), "providerID": d.get("providerID")})
        if name and (gen.typed or d.get("role") == "assistant"):
            return name
    return None


# ---------------------------------------------------------------------------
# One session's rows -> events
# ---------------------------------------------------------------------------


# Column positions of ``Database.walk_sql``.
SID, MID, MTYPE, MTS, MDATA, PID, PDATA, PUPD, POWNER, MUPD, KEYS = range(11)


class Walk:
    """Walks one session's (message, part) rows grouped by message, emitting events as each row arrives.

    Only the current message's header is held; parts stream through. An assistant
    message's error is emitted after its parts (where OpenCode shows it). It remembers
    where the last message started (its key, its first ``seq``, its rows' update sums):
    what a later read needs to resume there.
    """

    def __init__(self, gen: Generation, native: str, em: Emitter, ctx: Ctx, *, counted: bool = False) -> None:
        self.gen = gen
        self.native = native
        self.em = em
        self.ctx = ctx
        self.counted = counted
        self._last_row: sqlite3.Row | None = None
        self.last_seq = 0
        #: The last message's row and its parts' rows, summarised (only when ``counted``).
        self.last_rows = sg.Suffix()

    @property
    def last_key(self) -> list[Any] | None:
        """The ordering key of the last message walked (None when there was none)."""
        return None if self._last_row is None else list(self._last_row[KEYS:])

    def run(self, rows: Iterable[sqlite3.Row]) -> Iterator[Event | Notice]:
        em, ctx, counted = self.em, self.ctx, self.counted
        cur_id: object = object()
        cur: _Message | None = None
        for row in rows:
            if row[MID] != cur_id:
                if cur is not None:
                    yield from cur.finish(em)
                cur_id = row[MID]
                self._last_row = row
                self.last_seq = em.seq
                if counted:
                    self.last_rows = sg.Suffix()
                    self.last_rows.add_message(row[MUPD])
                cur = _Message.from_row(row, typed=self.gen.typed, ctx=ctx)
                if cur.notice is not None:
                    yield cur.notice
                else:
                    yield from cur.start(em)
            assert cur is not None
            if row[PID] is None:
                continue
            if counted and row[POWNER] == self.native:
                self.last_rows.add_part(row[PUPD])
            if not cur.ok:
                continue
            try:
                part = loads(row[PDATA])
            except ValueError as exc:
                yield ctx.malformed(f"part {row[PID]}", exc)
                continue
            cur.has_parts = True
            if cur.role in ("user", "assistant"):
                yield from em.part(cur.role, part, cur.ts, summary=cur.summary)
            else:
                # Parts of a provider row (synthetic, system …) are provider text too.
                yield from em.meta(part.get("text") if part.get("type") == "text" else None, cur.ts)
        if cur is not None:
            yield from cur.finish(em)


class _Message:
    """The header of the message being walked: role, time, and what to emit when it ends."""

    __slots__ = ("mid", "role", "ts", "data", "summary", "ok", "notice", "has_parts", "typed")

    def __init__(self) -> None:
        self.mid = ""
        self.role = ""
        self.ts: float | None = None
        self.data: dict[str, Any] = {}
        self.summary = False
        self.ok = False
        self.notice: Notice | None = None
        self.has_parts = False
        self.typed = False

    @classmethod
    def from_row(cls, row: sqlite3.Row, *, typed: bool, ctx: Ctx) -> _Message:
        m = cls()
        m.mid, m.typed = row[MID], typed
        try:
            m.data = loads(row[MDATA])
        except ValueError as exc:
            # One bad row costs that message (and its parts), never the session.
            m.notice = ctx.malformed(f"message {m.mid}", exc)
            return m
        m.ts = secs(row[MTS]) if row[MTS] is not None else secs(as_dict(m.data.get("time")).get("created"))
        if typed:
            m.role = row[MTYPE] if isinstance(row[MTYPE], str) else ""
        else:
            role = m.data.get("role")
            m.role = role if isinstance(role, str) else ""
            if m.role not in ("user", "assistant"):
                ctx.unknown.saw(f"message:{m.role or '?'}")
                return m
        m.summary = is_summary(m.role, m.data)
        m.ok = True
        return m

    def start(self, em: Emitter) -> Iterator[Event]:
        if not self.ok or not self.typed or self.role in ("user", "assistant"):
            return iter(())
        return em.v2_row(self.role, self.data, self.ts)

    def finish(self, em: Emitter) -> Iterator[Event]:
        if not self.ok:
            return
        if self.typed and self.role in ("user", "assistant") and not self.has_parts:
            # v2 inline (or a v2-with-parts message that kept its content inline).
            if self.role == "user":
                yield from em.user_text(self.data.get("text"), self.ts)
            else:
                content = self.data.get("content")
                for item in content if isinstance(content, list) else ():
                    if isinstance(item, dict):
                        yield from em.part("assistant", item, self.ts)
        if self.role == "assistant" and self.data.get("error"):
            yield from em.assistant_error(self.data.get("error"), self.ts)


# ---------------------------------------------------------------------------
# A slice: its sessions, what changed, and reading them
# ---------------------------------------------------------------------------


class _Pending(msgspec.Struct):
    """A session to read in the ordered pass: what deciding that took, nothing of its rows."""

    native: str
    sig: sg.Signature
    tail: sg.Tail | None


class SliceReader:
    """Reads one slice of a database's layout against the marks of the previous read."""

    def __init__(
        self, db: Database, sl: Slice, ctx: Ctx, known: dict[str, sg.Mark] | None, marks: dict[str, sg.Mark]
    ) -> None:
        self.db = db
        self.gen = sl.gen
        self.slice = sl
        self.ctx = ctx
        self.known = known
        self.marks = marks
        self.nkeys = len(db.key_columns(sl.gen))
        self.has_parts = sl.gen.parts is not None

    def read(self) -> Iterator[Item]:
        gen, db = self.gen, self.db
        aggregates = db.aggregates(gen)
        indexed = db.indexed(gen)
        facts = SessionFacts(db, gen)
        pending: list[_Pending] = []
        for row in db.sessions(self.slice):
            native = row["id"]
            if not isinstance(native, str) or not native:
                continue
            msgs, parts = aggregates.get(native, (sg.NO_ROWS, sg.NO_ROWS))
            sig = sg.Signature(gen.name, digest(*row), msgs, parts)
            before = self.known.get(native) if self.known is not None else None
            if before is not None and before.sig == sig:
                self.marks[native] = before
                yield Unchanged(session=db.product.session_id(native))
                continue
            tail = before.tail if before is not None else None
            if (
                tail is not None
                and before is not None
                and (
                    before.sig.generation != gen.name
                    or tail.parent != _col(row, "parent_id")
                    or len(tail.key) != self.nkeys
                )
            ):
                tail = None
            if indexed:
                yield from self._read_session(row, sig, tail, facts)
            else:
                pending.append(_Pending(native, sig, tail))
        if pending:
            yield from self.read_pass(pending)

    def _start(self, row: sqlite3.Row, facts: SessionFacts) -> tuple[Session, Emitter]:
        meta = self.db.session_meta(self.gen, row, facts)
        return meta, Emitter(meta.id, subagent=meta.parent is not None, ctx=self.ctx)

    def _read_session(
        self, row: sqlite3.Row, sig: sg.Signature, tail: sg.Tail | None, facts: SessionFacts
    ) -> Iterator[Item]:
        """One session through the indexes: whole, or from its last message when only that changed."""
        native = row["id"]
        resume = tail is not None and self._prefix(native, sig, tail.key) == tail.prefix
        meta, em = self._start(row, facts)
        yield meta
        if resume:
            assert tail is not None
            em.seq = tail.seq
            yield Partial(session=meta.id, from_seq=tail.seq)
        walk = Walk(self.gen, native, em, self.ctx)
        yield from walk.run(self.db.session_rows(self.gen, native, tail.key if resume and tail else None))
        last = None if walk.last_key is None else self._prefix(native, sig, walk.last_key)
        self._remember(native, sig, walk, last, tail if resume else None, _col(row, "parent_id"))

    def read_pass(self, pending: list[_Pending]) -> Iterator[Item]:
        """The sessions of ``pending``, in order, from one statement over tables without the indexes.

        A session that may resume at its last message has the rows before that message walked
        without emitting, counted, and compared with what they were; if they differ, that one
        session is read again whole (one more scan, for an edit of an old row).
        """
        gen, db = self.gen, self.db
        natives = [p.native for p in pending]
        facts = SessionFacts(db, gen, natives)
        groups = itertools.groupby(db.pass_rows(gen, natives), key=lambda r: r[SID])
        head = next(groups, None)
        for p in pending:
            rows: Iterator[sqlite3.Row] = iter(())
            if head is not None and head[0] == p.native:
                rows, head = head[1], None
            row = db.session_row(gen, p.native)
            if row is not None:
                yield from self._read_walked(row, p, rows, facts)
            if head is None:
                head = next(groups, None)  # (skips what a session read again whole left of its rows)

    def _read_walked(
        self, row: sqlite3.Row, p: _Pending, rows: Iterator[sqlite3.Row], facts: SessionFacts
    ) -> Iterator[Item]:
        meta, em = self._start(row, facts)
        yield meta
        resume = False
        counted = True
        if p.tail is not None:
            rows, before = _split(rows, p.tail.key, p.native)
            resume = _direct_prefix(p.sig, before) == p.tail.prefix
            if not resume:
                rows, counted = self.db.session_rows(self.gen, p.native), False
        if resume:
            assert p.tail is not None
            em.seq = p.tail.seq
            yield Partial(session=meta.id, from_seq=p.tail.seq)
        walk = Walk(self.gen, p.native, em, self.ctx, counted=counted)
        yield from walk.run(rows)
        last = None
        if walk.last_key is not None:
            last = (
                sg.prefix(p.sig, walk.last_rows, has_parts=self.has_parts)
                if counted
                else self._prefix(p.native, p.sig, walk.last_key)
            )
        self._remember(p.native, p.sig, walk, last, p.tail if resume else None, _col(row, "parent_id"))

    def _prefix(self, native: str, sig: sg.Signature, key: list[Any]) -> sg.Prefix:
        """What came before message ``key``: the whole minus the rows from it on (a few, through the index)."""
        return sg.prefix(sig, self.db.suffix_from(self.gen, native, key), has_parts=self.has_parts)

    def _remember(
        self, native: str, sig: sg.Signature, walk: Walk, last: sg.Prefix | None, resumed: sg.Tail | None, parent: Any
    ) -> None:
        """The session's mark: its signature, and where a later read may resume (before ``last``, its last message)."""
        tail: sg.Tail | None = None
        if walk.last_key is not None and last is not None:
            tail = sg.Tail(walk.last_key, walk.last_seq, last, parent)
        elif resumed is not None:
            tail = resumed  # nothing from the key on any more: keep the old resume point
        self.marks[native] = sg.Mark(sig, tail)


def _split(rows: Iterator[sqlite3.Row], key: list[Any], native: str) -> tuple[Iterator[sqlite3.Row], sg.Suffix]:
    """Consume the rows of the messages before ``key``, counting them; return the rest and the count."""
    limit = sqlite_order(key)
    counted = sg.Suffix()
    mid: object = object()
    for row in rows:
        if row[MID] != mid:
            if sqlite_order(row[KEYS:]) >= limit:
                return itertools.chain((row,), rows), counted
            mid = row[MID]
            counted.add_message(row[MUPD])
        if row[PID] is not None and row[POWNER] == native:
            counted.add_part(row[PUPD])
    return iter(()), counted


def _direct_prefix(sig: sg.Signature, before: sg.Suffix) -> sg.Prefix:
    """The prefix as :func:`signature.prefix` has it (the whole minus the rest) from the rows before, counted.

    An SQL sum over no value is NULL, and whole minus rest is then NULL only where the whole is.
    """
    return sg.Prefix(
        before.messages,
        None if sig.messages.updates is None else (before.message_updates or 0),
        before.parts,
        None if sig.parts.updates is None else (before.part_updates or 0),
    )


# ---------------------------------------------------------------------------
# The whole source
# ---------------------------------------------------------------------------


def _migration_state(db: Database, ctx: Ctx) -> Iterator[Notice | Migration]:
    """OpenCode 2's copy progress from ``kv['migration.v1-v2']``; ``Migration()`` when absent (nothing copied yet)."""
    if not {"key", "value"} <= db.cols("kv"):
        yield Migration()
        return
    row = db.conn.execute("SELECT value FROM kv WHERE key = ?", (MIGRATION_KEY,)).fetchone()
    if row is None or row[0] is None or row[0] == "":
        yield Migration()
        return
    try:
        state = loads(row[0])
    except ValueError as exc:
        yield Notice(
            source=ctx.source,
            where=f"kv {MIGRATION_KEY}",
            reason=f"unreadable migration state ({exc}); treating as not started",
        )
        yield Migration()
        return
    phase, cursor = _str(state.get("phase")), _str(state.get("cursor"))
    if phase not in (None, "sessions", "completed"):
        yield Notice(
            source=ctx.source,
            where=f"kv {MIGRATION_KEY}",
            reason=f"unknown migration phase {phase!r}; reading 1.x sessions below the cursor",
        )
    yield Migration(phase, cursor)


def read_db(source: Source, product: Product, known: dict[str, sg.Mark] | None = None) -> Iterator[Item]:
    """Every session of the database at ``source`` (Session first, then its events), then a Cursor of marks."""
    path = source.path
    ctx = Ctx(path, product.label)
    # One read transaction for the whole source: the kv cursor, session_v2 and the 1.x tables
    # are then one consistent snapshot even while OpenCode writes. lenient_text: a TEXT cell
    # that is not UTF-8 costs its own bad bytes (U+FFFD), not the database.
    opened = open_store(path, product.label, {}, lenient_text=True)
    if isinstance(opened, Notice):
        yield opened
        return
    conn, schema = opened
    try:
        shape = detect_shape(schema)
        if shape == "unknown-schema":
            names = ", ".join(sorted(schema)) or "no tables"
            yield Notice(source=path, reason=f"unknown-schema: no OpenCode table set recognised ({names})", fatal=True)
            return
        marks: dict[str, sg.Mark] = {}
        try:
            db = Database(conn, schema, path, product)
            migration = Migration()
            if shape == "migrating":
                for item in _migration_state(db, ctx):
                    if isinstance(item, Notice):
                        yield item
                    else:
                        migration = item
            for sl in layout(shape, schema, migration):
                yield from SliceReader(db, sl, ctx, known, marks).read()
        except sqlite3.DatabaseError as exc:
            yield unreadable(path, exc)
            return
        yield from ctx.summary()
        yield Cursor(offset=0, next_seq=0, tail_hash="", state={"sessions": sg.dump(marks)})
    finally:
        conn.close()
