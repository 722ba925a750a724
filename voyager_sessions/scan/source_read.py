"""Reading one source: its adapter's stream turned into index documents and the state rows that describe them.

:class:`SourceRead` consumes the items an adapter yields (Session, Event, Unchanged,
Partial, Cursor, Notice), one at a time, in named steps, its events already prepared for
the index (``search.prepare.PreparedEvent``, made in-process or on a worker, see
:mod:`.chunks`): events go to the index in
batches (a session's old documents are deleted only once the read produced an event
for it, so a source that fails outright keeps what was indexed from it before);
sessions are merged with what was known; the end of the stream is closed by
:meth:`finish`, which returns a :class:`SourceOutcome` for the scan to commit.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING

import msgspec

from voyager_sessions.ingest.adapters.base import Cursor, Notice, Partial, Source, Unchanged
from voyager_sessions.core.model import TITLE_RANK, Event, Session, SessionRecord
from voyager_sessions.search.prepare import PreparedEvent
from voyager_sessions.scan.plan import Why, encode_cursor

if TYPE_CHECKING:
    from voyager_sessions.scan.chunks import Prepared
    from voyager_sessions.search.index import SearchIndex
    from voyager_sessions.store.state import SourceState

#: Events are handed to the index in batches of this many, or of this many bytes of text (an event's text is
#: capped, but 2,048 events of a quarter-million characters each would be gigabytes held at once).
BATCH = 2048
BATCH_BYTES = 8 << 20


class SourceOutcome(msgspec.Struct, kw_only=True):
    """What reading one source amounts to, for the state store (written after the index commits)."""

    why: Why
    failed: bool
    state_row: SourceState  # (never encoded: the store's own module is imported where a row is made)
    sessions: list[SessionRecord] = []
    removed_sessions: list[str] = []
    events_added: int = 0
    events_removed: int = 0


#: How far past its file's modification time a stamp may lie before it is clamped (a file system's coarse clock).
MTIME_SLACK_S = 2
#: How far past the moment it is read a stamp may lie when its source says nothing of its time.
FUTURE_SLACK_S = 86_400


def source_horizon(source: Source, now: float | None = None) -> float:
    """The latest moment ``source`` can prove its content was written by (epoch seconds): its last modification
    (its write-ahead log's too), plus the slack of a coarse clock; never later than a day from ``now``. One rule
    for every adapter: a stamp after it is from a clock gone wrong, or crafted."""
    fp = source.fingerprint
    ceiling = (time.time() if now is None else now) + FUTURE_SLACK_S
    written = max(fp.mtime_ns, fp.wal_mtime_ns) / 1e9
    return min(ceiling, written + MTIME_SLACK_S) if written > 0 else ceiling


def merge_session(old: Session | None, new: Session) -> Session:
    """``new``'s known fields over ``old``'s; a title only replaces one of a weaker or equal source.

    A title and its source travel together: a read that found no title (an appended tail, a
    copy without the rename) leaves the known title *and* who gave it as they were.
    """
    if old is None:
        return (
            new
            if new.title is not None or new.title_source is None
            else msgspec.structs.replace(new, title_source=None)
        )
    fields = {f: v for f in Session.__struct_fields__ if (v := getattr(new, f)) is not None}
    if "title" not in fields:
        fields.pop("title_source", None)
    else:
        if old.title is not None and TITLE_RANK[new.title_source] < TITLE_RANK[old.title_source]:
            del fields["title"]
            fields.pop("title_source", None)
        elif new.title_source is not None or new.title != old.title:
            fields["title_source"] = new.title_source  # a new title brings its own source, even an unknown one
    return msgspec.structs.replace(old, **fields)


def title_from_prompt(text: str, limit: int = 80) -> str:
    """A title made of the first prompt: one line, at most ``limit`` characters."""
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


#: At most this many skipped pieces are remembered with a source (``voyager doctor`` shows them).
NOTES_KEPT = 3


def source_row(
    source: Source,
    *,
    cursor: bytes | None,
    sessions: list[str],
    events: int,
    fatal: Notice | None,
    skipped: Sequence[Notice] = (),
) -> SourceState:
    """The state row for ``source`` as just read: its fingerprint, ok / retry / error by ``fatal``, and
    (for a source read with pieces skipped) what was skipped, for ``voyager doctor``."""
    from voyager_sessions.store.state import SourceState

    fp = source.fingerprint
    if fatal is not None:
        detail: str | None = fatal.reason
    elif skipped:
        named = "; ".join(n.describe().removeprefix(source.path).lstrip(": ") for n in skipped[:NOTES_KEPT])
        more = f" (and {len(skipped) - NOTES_KEPT} more)" if len(skipped) > NOTES_KEPT else ""
        detail = f"{named}{more}"
    else:
        detail = None
    return SourceState(
        path=source.path,
        provider=source.provider,
        size=fp.size,
        mtime_ns=fp.mtime_ns,
        inode=fp.inode,
        wal_size=fp.wal_size,
        wal_mtime_ns=fp.wal_mtime_ns,
        cursor=cursor,
        sessions=sessions,
        events=events,
        status="ok" if fatal is None else ("retry" if fatal.transient else "error"),
        detail=detail,
        indexed_at=time.time(),
    )


class SourceRead:
    """One read of one source, from its first item to the rows that record it.

    ``index`` is the scan's open SearchIndex; ``prior`` the stored records of the sessions
    the source held before; ``notice`` reports a skipped piece; ``elsewhere`` (optional) finds
    what is known of a session this source did not hold before (read from another source,
    in this scan or an earlier one), so a session that moved or stands in two sources keeps
    the strongest title either gave it.

    A session held by two live sources (a conversation in two downloads of a chat export) is
    indexed from one: ``newer_elsewhere(session, known)`` (the scan's) says when the copy the
    index holds, from another source, is the newer; this source's copy is then *shadowed*: not
    indexed, its events skipped, but listed in this source's row as held, so that the scan reads
    it again should the other copy go.
    """

    def __init__(
        self,
        source: Source,
        why: Why,
        old: SourceState | None,
        cursor: Cursor | None,
        index: SearchIndex,
        prior: Mapping[str, SessionRecord],
        notice: Callable[[Notice], None],
        elsewhere: Callable[[str], SessionRecord | None] | None = None,
        newer_elsewhere: Callable[[Session, Session | None], bool] | None = None,
    ) -> None:
        self.source = source
        self.why = why
        self.old = old
        self.cursor = cursor
        self.index = index
        self.prior = prior
        self.notice = notice
        self.elsewhere = elsewhere
        self.newer_elsewhere = newer_elsewhere
        self.appending = why == "grown"
        self.old_sessions: list[str] = list(old.sessions) if old is not None else []
        self.sessions: dict[str, Session] = {}
        self.max_seq: dict[str, int] = {}
        self.first_prompt: dict[str, str] = {}
        self.bounds: dict[str, list[float]] = {}
        self.replaced: set[str] = set()
        self.unchanged: set[str] = set()
        self.shadowed: set[str] = set()  # held here, indexed from another source's newer copy
        self.kept: dict[str, int] = {}  # session -> events kept from before (a Partial re-read)
        self.fatal: Notice | None = None
        self.new_cursor: Cursor | None = None
        self.added = 0
        self.batch: list[PreparedEvent] = []
        self.batch_bytes = 0
        #: Sessions whose old events go before this batch is added: one delete for them all (Tantivy holds each
        #: delete until the commit, ~1.5 KB a delete: one a session cost an export of 160,000 conversations 250 MB).
        self.to_delete: list[str] = []
        #: The latest moment this source can prove (epoch s): a stamp past its file's modification time (a clock
        #: gone wrong, a crafted 9999-12-31) counts as that time for filters, order and ties; it is shown as given.
        self.horizon = source_horizon(source)
        self.substance = 0  # Sessions, Events and Unchanged seen: what makes a read "something"
        self.skipped: list[Notice] = []  # pieces skipped on the way

    # -- the stream ------------------------------------------------------------------

    def take(self, item: Prepared) -> None:
        """Consume one item of the adapter's stream (its events prepared)."""
        if isinstance(item, PreparedEvent):
            self.substance += 1
            self.on_event(item)
        elif isinstance(item, Session):
            self.substance += 1
            known = self._known(item.id)
            if item.id not in self.sessions and (
                item.id in self.shadowed or (self.newer_elsewhere is not None and self.newer_elsewhere(item, known))
            ):
                self.shadowed.add(item.id)
                return
            self.sessions[item.id] = merge_session(known, item)
        elif isinstance(item, Unchanged):
            self.substance += 1
            self.unchanged.add(item.session)
        elif isinstance(item, Partial):
            self.on_partial(item)
        elif isinstance(item, Cursor):
            self.new_cursor = item
        elif isinstance(item, Notice):
            self.notice(item)
            if item.fatal:
                self.fatal = item
            else:
                self.skipped.append(item)

    def _known(self, sid: str) -> Session | None:
        """What is known of session ``sid`` before this item: this read's, the source's before, another source's."""
        if sid in self.sessions:
            return self.sessions[sid]
        prior = self.prior.get(sid)
        if prior is not None:
            return prior.session
        other = self.elsewhere(sid) if self.elsewhere is not None else None
        return other.session if other is not None else None

    def on_event(self, ev: PreparedEvent) -> None:
        sid = ev.session
        if sid in self.shadowed:
            return  # another source's newer copy is the one indexed
        if sid not in self.replaced:
            self.replace(sid)
        self.batch.append(ev)
        self.batch_bytes += len(ev.stored) + len(ev.body)
        if len(self.batch) >= BATCH or self.batch_bytes >= BATCH_BYTES:
            self.flush()
        if ev.seq > self.max_seq.get(sid, -1):
            self.max_seq[sid] = ev.seq
        if ev.ts is not None:
            b = self.bounds.get(sid)
            if b is None:
                self.bounds[sid] = [ev.ts, ev.ts]
            else:
                if ev.ts < b[0]:
                    b[0] = ev.ts
                if ev.ts > b[1]:
                    b[1] = ev.ts
        if ev.prompt is not None and sid not in self.first_prompt:
            self.first_prompt[sid] = ev.prompt

    def replace(self, sid: str) -> None:
        """Delete what ``sid`` had indexed before, now that this read produced an event for it."""
        self.replaced.add(sid)
        if self.appending:
            if self.cursor is not None and sid == self.cursor.session:
                # The old incomplete tail (seq >= next_seq) is read again: replace it. A session that
                # starts after the cursor (a file holding several, like Aider's) is new: nothing to delete.
                self.index.delete_session(sid, from_seq=self.cursor.next_seq)
        else:
            # Deleted with the batch its first events are in, before them (see ``flush``).
            self.to_delete.append(sid)

    def on_partial(self, item: Partial) -> None:
        """Only the end of this session is read again: keep its events before ``from_seq``."""
        self.replaced.add(item.session)
        self.kept[item.session] = item.from_seq
        self.index.delete_session(item.session, from_seq=item.from_seq)
        self.max_seq[item.session] = item.from_seq - 1

    def flush(self) -> None:
        if self.to_delete:
            self.index.delete_sessions(self.to_delete)
            self.to_delete = []
        if self.batch:
            self.added += self.index.add_prepared(self.batch, int(self.horizon * 1000))
            self.batch.clear()
            self.batch_bytes = 0

    def fail(self, reason: str, *, transient: bool = False) -> None:
        """The read broke off (an adapter bug, a worker that died): it must not lose the rest of the scan.
        What was read so far stays; ``transient`` asks for the source to be read again next time."""
        self.fatal = Notice(source=self.source.path, reason=reason, fatal=True, transient=transient)
        self.notice(self.fatal)

    # -- the end ---------------------------------------------------------------------

    def finish(self) -> SourceOutcome:
        """Close the read: drop sessions the source no longer yields, and describe what it holds now."""
        self.flush()
        if self.fatal is None and not self.substance and self.skipped and not self.appending:
            # Every piece was skipped (binary data, garbage, records of no known shape): the
            # source as a whole could not be used. Say so once, and keep what it held before.
            self.fatal = Notice(
                source=self.source.path, fatal=True, reason=f"nothing readable in it ({self.skipped[0].reason})"
            )
        elif (
            self.fatal is None
            and not self.substance
            and not self.appending
            and self.source.fingerprint.size
            and not self.source.empty_ok
        ):
            # Records were read, but none of a shape the adapter knows: never silently empty.
            unknown = Notice(
                source=self.source.path,
                reason=f"no session found in it (empty, or of a shape Voyager's "
                f"{self.source.provider} adapter does not know)",
            )
            self.notice(unknown)
            self.skipped.append(unknown)
        cleared = bool(self.replaced)
        forgotten: set[str] = set()  # no longer held here, and indexed from another source: nothing to delete
        if self.fatal is None and not self.appending:
            # Sessions the source no longer yields events for (emptied or deleted) lose their old events,
            # unless what the index holds of them is another source's copy.
            dropped = [
                sid
                for sid in self.old_sessions
                if sid not in self.replaced and sid not in self.unchanged and sid not in self.shadowed
            ]
            for sid in dropped:
                prior = self.prior.get(sid)
                if prior is not None and prior.session.source not in (None, self.source.path):
                    forgotten.add(sid)
            dropped = [sid for sid in dropped if sid not in forgotten]
            self.index.delete_sessions([sid for sid in dropped if sid in self.sessions])
            self.index.delete_sessions([sid for sid in dropped if sid not in self.sessions], keep_checkpoint=False)
            cleared = cleared or bool(dropped)
        if self.fatal is not None and not cleared:
            return self._failed()
        ids = list(
            dict.fromkeys(
                list(self.sessions)
                + list(self.max_seq)
                + sorted(self.unchanged)
                + sorted(self.shadowed)
                + (self.old_sessions if self.appending else [])
            )
        )
        records = [self._record(sid) for sid in ids if sid not in self.shadowed]
        if not self.appending:
            # A re-read replaced everything this source had indexed before, but what it reported Unchanged.
            removed = sum(
                max(0, r.events - self.kept.get(sid, 0))
                for sid, r in self.prior.items()
                if sid not in self.unchanged and sid not in self.shadowed and sid not in forgotten
            )
            gone = [s for s in self.old_sessions if s not in ids and s not in forgotten]
        else:
            # Only the cursor's session had events at or past the cursor (the tail read again).
            tail = self.prior.get(self.cursor.session) if self.cursor and self.cursor.session else None
            removed = max(0, tail.events - self.cursor.next_seq) if tail is not None and self.cursor else 0
            gone = []
        for rec in records:
            self._sync_title(rec)
        row = source_row(
            self.source,
            cursor=encode_cursor(self.new_cursor) if self.new_cursor is not None else None,
            sessions=ids,
            events=sum(r.events for r in records),
            fatal=self.fatal,
            skipped=self.skipped,
        )
        return SourceOutcome(
            why=self.why,
            failed=False,
            state_row=row,
            sessions=records,
            removed_sessions=gone,
            events_added=self.added,
            events_removed=removed,
        )

    def _failed(self) -> SourceOutcome:
        """Nothing was replaced: keep the old sessions and events, remember the failure (doctor
        reports it) and the fingerprint (an unchanged bad file is not retried). The last good read's
        cursor is kept too: it still describes what the index holds, and a source rewritten in place
        needs it to tell what it held before (mini-swe-agent's overwritten runs, a database's
        unchanged sessions)."""
        row = source_row(
            self.source,
            cursor=self.old.cursor if self.old is not None else None,
            sessions=self.old_sessions,
            events=self.old.events if self.old is not None else 0,
            fatal=self.fatal,
        )
        return SourceOutcome(why=self.why, failed=True, state_row=row)

    def _record(self, sid: str) -> SessionRecord:
        prior = self.prior.get(sid)
        if sid in self.unchanged and sid not in self.sessions and prior is not None:
            return prior
        sess = self.sessions.get(sid) or (prior.session if prior else None)
        if sess is None:  # events without a header: keep what the id says
            provider, _, native = sid.partition(":")
            sess = Session(id=sid, provider=provider, native_id=native)
        if sid in self.max_seq:
            events = self.max_seq[sid] + 1
        else:
            events = prior.events if prior else 0
        done = self._complete(sess, sid)
        last = done.updated or done.started or 0.0
        return SessionRecord(session=done, events=events, active=min(last, self.horizon))

    def _complete(self, sess: Session, sid: str) -> Session:
        """Fill what the events tell when the provider's header did not: times, a title, the source."""
        fields: dict[str, object] = {}
        bounds = self.bounds.get(sid)
        if bounds is not None:
            if sess.started is None or bounds[0] < sess.started:
                fields["started"] = bounds[0]
            if sess.updated is None or bounds[1] > sess.updated:
                fields["updated"] = bounds[1]
        prompt = self.first_prompt.get(sid)
        if prompt:
            if sess.title is None:
                fields["title"] = title_from_prompt(prompt)
                fields["title_source"] = "prompt"
            elif sess.title_source is None and _copies(sess.title, prompt):
                fields["title_source"] = "prompt"
        if sess.source is None:
            fields["source"] = self.source.path
        return msgspec.structs.replace(sess, **fields) if fields else sess

    def _sync_title(self, rec: SessionRecord) -> None:
        """Keep the session's title event (seq -2, kind ``title``) equal to a title the agent or a person gave it.

        A title made of the first prompt is not indexed again: the prompt is.
        """
        s = rec.session
        # What the index holds now: indexed by this source's last read, or by another source's.
        prior = self.prior.get(s.id) or (self.elsewhere(s.id) if self.elsewhere is not None else None)
        before = _indexed_title(prior.session) if prior is not None else None
        now = _indexed_title(s)
        if before == now:
            return
        if before is not None:
            self.index.delete_title(s.id)
        if now is not None:
            self.index.add_events(
                [
                    Event(
                        session=s.id,
                        seq=TITLE_SEQ,
                        kind="title",
                        origin="human" if s.title_source == "user" else "provider",
                        text=now,
                        ts=s.updated or s.started,
                    )
                ]
            )


#: The seq of a session's title event: before its checkpoint (-1) and its events (0…).
TITLE_SEQ = -2


def _indexed_title(s: Session) -> str | None:
    """The title text a session's title event holds, or None when it has none (no title, or the first prompt's)."""
    if not s.title or not s.title.strip() or s.title_source == "prompt":
        return None
    return s.title


def _copies(title: str, prompt: str) -> bool:
    """True when ``title`` is the prompt cut short (what many agents store as a title)."""
    t = " ".join(title.split()).rstrip("…").rstrip(".").strip()
    p = " ".join(prompt.split())
    return bool(t) and p.startswith(t)
