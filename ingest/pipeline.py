"""The scan: discover sources, decide what to (re)read, feed the index, record what was done.

For every source an adapter discovers, a stat ``Fingerprint`` is compared with the
state store and the source is classified:

* ``unchanged``: same fingerprint, nothing is read;
* ``new``: read whole;
* ``grown``: an append-only file that only got longer and whose last consumed line
  is byte-identical: read from the remembered offset, and the documents from the old
  incomplete tail (``seq >= cursor.next_seq``) are replaced;
* ``changed``: anything else (rewritten, truncated, a database): its sessions are
  deleted by term and read again;
* ``removed``: no longer discovered: its sessions leave the index (unless
  ``keep_missing``).

Commit order is the crash-safety contract: Tantivy commits first, then the state rows
that describe it. A crash in between leaves old fingerprints behind, so the next scan
re-reads those sources and replaces (never duplicates) their documents. A source that
fails before producing anything keeps what was indexed from it before.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path

import msgspec

from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Notice, Partial, Source, Unchanged
from voyager_sessions.ingest.jsonl import tail_matches
from voyager_sessions.model import Event, Session
from voyager_sessions.lock import ScanBusy, writer_lock  # noqa: F401  (ScanBusy is part of this API)
from voyager_sessions.paths import ensure_private_dir

#: Commit the index and the state after this many added events, so a long first scan
#: makes progress durable and keeps the writer's memory bounded
#: (``VOYAGER_COMMIT_EVERY_EVENTS`` overrides it).
COMMIT_EVERY_EVENTS = 200_000


def _commit_every() -> int:
    try:
        return max(1, int(os.environ.get("VOYAGER_COMMIT_EVERY_EVENTS", COMMIT_EVERY_EVENTS)))
    except ValueError:
        return COMMIT_EVERY_EVENTS


class Skipped(msgspec.Struct, frozen=True):
    source: str
    reason: str
    where: str | None = None


class ScanSummary(msgspec.Struct, kw_only=True):
    """What one scan did; ``voyager scan --json`` prints it."""

    schema_version: int = 1
    sources: int = 0
    new: int = 0
    grown: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: int = 0
    removed: int = 0
    sessions: int = 0
    events_added: int = 0
    events_removed: int = 0
    skipped: list[Skipped] = []
    seconds: float = 0.0
    providers: dict[str, int] = {}

    @property
    def touched(self) -> int:
        return self.new + self.grown + self.changed + self.removed


ProgressFn = Callable[[int, int, int], None]  # (sources done, sources total, events added)
NoticeFn = Callable[[Notice], None]


def _same(fp: Fingerprint, st) -> bool:
    return (
        fp.size == st.size
        and fp.mtime_ns == st.mtime_ns
        and fp.inode == st.inode
        and fp.wal_size == st.wal_size
        and fp.wal_mtime_ns == st.wal_mtime_ns
    )


_cursor_decode = msgspec.msgpack.Decoder(Cursor).decode
_cursor_encode = msgspec.msgpack.Encoder().encode


def _source_row(source: Source, *, cursor: bytes | None, sessions: list[str], events: int,
                fatal: Notice | None) -> SourceState:
    """The state row for ``source`` as just read: its fingerprint, and ok / retry / error by ``fatal``."""
    from voyager_sessions.store.state import SourceState

    fp = source.fingerprint
    return SourceState(
        path=source.path, provider=source.provider, size=fp.size, mtime_ns=fp.mtime_ns, inode=fp.inode,
        wal_size=fp.wal_size, wal_mtime_ns=fp.wal_mtime_ns, cursor=cursor, sessions=sessions, events=events,
        status="ok" if fatal is None else ("retry" if fatal.transient else "error"),
        detail=fatal.reason if fatal is not None else None, indexed_at=time.time(),
    )


def _merge_session(old: Session | None, new: Session) -> Session:
    if old is None:
        return new
    fields = {f: getattr(new, f) for f in Session.__struct_fields__ if getattr(new, f) is not None}
    return msgspec.structs.replace(old, **fields)


def scan(
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    *,
    providers: list[str] | None = None,
    keep_missing: bool = False,
    wait: float = 0.0,
    progress: ProgressFn | None = None,
    on_notice: NoticeFn | None = None,
) -> ScanSummary:
    """Bring the index up to date with every provider's sources. Raises ScanBusy if another scan runs."""
    env = os.environ if env is None else env
    with writer_lock(data_dir, wait=wait):
        return _Scan(data_dir, env, providers, keep_missing, progress, on_notice).run()


class _Scan:
    def __init__(self, data_dir, env, providers, keep_missing, progress, on_notice) -> None:
        from voyager_sessions.search.index import SearchIndex
        from voyager_sessions.store.state import StateStore

        self.data_dir = ensure_private_dir(data_dir)
        self.env = env
        self.providers = providers or list(registry.PROVIDERS)
        self.keep_missing = keep_missing
        self.progress = progress
        self.on_notice = on_notice
        self.store = StateStore(self.data_dir)
        self.index = SearchIndex(self.data_dir)
        if self.store.index_id() != self.index.index_id:
            # The scan state describes another index (it was reset, rebuilt or deleted):
            # forget it, so every source is read into this one.
            self.store.reset_scan_state(self.index.index_id)
        self.summary = ScanSummary()
        # Sessions some live source still yields: a removed source may only take the others.
        self.live_sessions: set[str] = set()
        # Work done since the last commit, written to the state store right after it.
        self.pending_sources: list = []
        self.pending_sessions: dict[str, object] = {}
        self.pending_removed_sources: list[str] = []
        self.pending_removed_sessions: list[str] = []
        self.uncommitted_events = 0

    def notice(self, n: Notice) -> None:
        self.summary.skipped.append(Skipped(source=n.source, reason=n.reason, where=n.where))
        if self.on_notice:
            self.on_notice(n)

    def run(self) -> ScanSummary:
        t0 = time.time()
        try:
            known = self.store.sources()
            plan: list[tuple[Source, str]] = []
            seen: set[str] = set()
            scanned_providers: set[str] = set()
            for name in self.providers:
                try:
                    adapter = registry.get(name)
                except Exception as exc:  # one broken adapter must not stop the others
                    self.notice(Notice(source=name, reason=f"adapter unavailable: {type(exc).__name__}: {exc}", fatal=True))
                    continue
                scanned_providers.add(name)
                for item in adapter.discover(self.env):
                    if isinstance(item, Notice):
                        self.notice(item)
                        continue
                    seen.add(item.path)
                    old = known.get(item.path)
                    if old is None:
                        plan.append((item, "new"))
                    elif _same(item.fingerprint, old) and old.status != "retry":
                        # Unchanged, including a source whose content failed before: it would fail the same way.
                        self.summary.unchanged += 1
                        self.live_sessions.update(old.sessions)
                    elif old.status == "ok" and self._can_append(item, old):
                        plan.append((item, "grown"))
                    else:
                        plan.append((item, "changed"))
            self.summary.sources = len(seen)
            gone = [] if self.keep_missing else [
                old for path, old in known.items() if old.provider in scanned_providers and path not in seen
            ]
            total = len(plan)
            commit_every = _commit_every()
            for done, (source, why) in enumerate(plan, start=1):
                self._read_source(source, why, known.get(source.path))
                if self.uncommitted_events >= commit_every:
                    self._commit()
                if self.progress:
                    self.progress(done, total, self.summary.events_added)
            # Removals last: a session that moved (an archived rollout) is claimed by its new source.
            for old in gone:
                self._remove_source(old)
            self._commit()
        finally:
            self.index.close()
        self.summary.seconds = round(time.time() - t0, 3)
        self.summary.providers = {p: s for p, s, _ in self.store.counts()}
        self.summary.sessions = sum(self.summary.providers.values())
        if self.summary.touched or self.summary.failed:
            # A no-op scan (every search starts with one) writes nothing at all.
            self.store.record_scan(t0, msgspec.json.encode(self.summary))
        self.store.close()
        return self.summary

    def _can_append(self, source: Source, old) -> bool:
        if not source.append_only or old.cursor is None:
            return False
        if source.fingerprint.inode != old.inode or source.fingerprint.size < old.size:
            return False
        cur = _cursor_decode(old.cursor)
        if cur.offset == 0:
            return True
        return tail_matches(source.path, cur.tail_start, cur.offset, cur.tail_hash)

    def _remove_source(self, old) -> None:
        orphans = [sid for sid in old.sessions if sid not in self.live_sessions]
        prior = self.store.sessions_by_id(orphans)
        for sid in orphans:
            # The checkpoint mirror stays: checkpoints.db still holds it, and it is searchable state.
            self.index.delete_session(sid)
        self.summary.events_removed += sum(r.events for r in prior.values())
        self.summary.removed += 1
        self.pending_removed_sources.append(old.path)
        self.pending_removed_sessions.extend(orphans)

    def _read_source(self, source: Source, why: str, old) -> None:
        from voyager_sessions.store.state import SessionRecord

        adapter = registry.get(source.provider)
        cursor: Cursor | None = None
        if why == "grown" or (why == "changed" and not source.append_only and old is not None
                              and old.status == "ok" and old.cursor is not None):
            # Grown JSONL: resume at the byte offset. A multi-session database: the cursor
            # tells the adapter which sessions it can report as Unchanged.
            cursor = _cursor_decode(old.cursor)
        appending = why == "grown"
        old_sessions: list[str] = list(old.sessions) if old is not None else []
        prior = self.store.sessions_by_id(old_sessions) if old_sessions else {}
        sessions: dict[str, Session] = {}
        max_seq: dict[str, int] = {}
        first_prompt: dict[str, str] = {}
        bounds: dict[str, list[float]] = {}
        replaced: set[str] = set()
        unchanged: set[str] = set()
        kept: dict[str, int] = {}  # session -> events kept from before (a Partial re-read)
        fatal: Notice | None = None
        new_cursor: Cursor | None = None
        added = 0

        def replace(sid: str) -> None:
            # Deferred until the read produced an event for the session: a source that
            # fails outright keeps what was indexed from it before.
            replaced.add(sid)
            if appending and cursor is not None and cursor.session:
                self.index.delete_session(cursor.session, from_seq=cursor.next_seq)
            elif not appending:
                self.index.delete_session(sid)

        batch: list[Event] = []
        try:
            for item in adapter.read(source, cursor):
                if isinstance(item, Event):
                    sid = item.session
                    if sid not in replaced:
                        replace(sid)
                    batch.append(item)
                    if len(batch) >= 2048:
                        added += self.index.add_events(batch)
                        batch.clear()
                    if item.seq > max_seq.get(sid, -1):
                        max_seq[sid] = item.seq
                    if item.ts is not None:
                        b = bounds.get(sid)
                        if b is None:
                            bounds[sid] = [item.ts, item.ts]
                        else:
                            b[0] = min(b[0], item.ts)
                            b[1] = max(b[1], item.ts)
                    if item.kind == "user" and item.origin == "human" and sid not in first_prompt:
                        first_prompt[sid] = item.text
                elif isinstance(item, Session):
                    sessions[item.id] = _merge_session(sessions.get(item.id) or (prior[item.id].session if item.id in prior else None), item)
                elif isinstance(item, Unchanged):
                    unchanged.add(item.session)
                elif isinstance(item, Partial):
                    # Only the end of this session is read again: keep its events before from_seq.
                    replaced.add(item.session)
                    kept[item.session] = item.from_seq
                    self.index.delete_session(item.session, from_seq=item.from_seq)
                    max_seq[item.session] = item.from_seq - 1
                elif isinstance(item, Cursor):
                    new_cursor = item
                elif isinstance(item, Notice):
                    self.notice(item)
                    if item.fatal:
                        fatal = item
            if batch:
                added += self.index.add_events(batch)
        except Exception as exc:  # an adapter bug must not lose the rest of the scan
            fatal = Notice(source=source.path, reason=f"adapter error: {type(exc).__name__}: {exc}", fatal=True)
            self.notice(fatal)
            if batch:
                added += self.index.add_events(batch)
        cleared = bool(replaced)
        if fatal is None and not appending:
            # Sessions the source no longer yields events for (emptied or deleted) lose their old events.
            for sid in old_sessions:
                if sid not in replaced and sid not in unchanged:
                    self.index.delete_session(sid, keep_checkpoint=sid in sessions)
                    cleared = True

        if fatal is not None and not cleared:
            # Nothing was replaced: keep the old sessions and events, remember the failure
            # (doctor reports it) and the fingerprint (an unchanged bad file is not retried).
            self.summary.failed += 1
            self.pending_sources.append(_source_row(source, cursor=None, sessions=old_sessions,
                                                    events=old.events if old is not None else 0, fatal=fatal))
            self.live_sessions.update(old_sessions)
            return
        self.summary.events_added += added
        self.uncommitted_events += added
        if why == "new":
            self.summary.new += 1
        elif why == "grown":
            self.summary.grown += 1
        else:
            self.summary.changed += 1

        ids = list(dict.fromkeys(list(sessions) + list(max_seq) + sorted(unchanged) + (old_sessions if appending else [])))
        records = []
        for sid in ids:
            if sid in unchanged and sid not in sessions and sid in prior:
                records.append(prior[sid])
                continue
            sess = sessions.get(sid) or (prior[sid].session if sid in prior else None)
            if sess is None:  # events without a header: keep what the id says
                provider, _, native = sid.partition(":")
                sess = Session(id=sid, provider=provider, native_id=native)
            records.append(SessionRecord(session=self._finish_session(sess, source, bounds.get(sid), first_prompt.get(sid)),
                                         events=max_seq[sid] + 1 if sid in max_seq else (prior[sid].events if sid in prior else 0)))
        if not appending:
            # A re-read replaced everything this source had indexed before, but what it reported Unchanged.
            self.summary.events_removed += sum(
                max(0, r.events - kept.get(sid, 0)) for sid, r in prior.items() if sid not in unchanged
            )
            self.pending_removed_sessions.extend(s for s in old_sessions if s not in ids)
        else:
            self.summary.events_removed += max(0, (old.events if old else 0) - cursor.next_seq)
        self.pending_sources.append(_source_row(
            source, cursor=_cursor_encode(new_cursor) if new_cursor is not None else None, sessions=ids,
            events=sum(r.events for r in records), fatal=fatal))
        for r in records:
            self.pending_sessions[r.session.id] = r
        self.live_sessions.update(ids)

    @staticmethod
    def _finish_session(sess: Session, source: Source, bounds: list[float] | None, first_prompt: str | None) -> Session:
        """Fill what the events tell when the provider's header did not: times, a title, the source."""
        fields: dict[str, object] = {}
        if bounds is not None:
            if sess.started is None or bounds[0] < sess.started:
                fields["started"] = bounds[0]
            if sess.updated is None or bounds[1] > sess.updated:
                fields["updated"] = bounds[1]
        if sess.title is None and first_prompt:
            fields["title"] = _title_from_prompt(first_prompt)
        if sess.source is None:
            fields["source"] = source.path
        return msgspec.structs.replace(sess, **fields) if fields else sess

    def _commit(self) -> None:
        if not (self.pending_sources or self.pending_removed_sources or self.pending_sessions):
            return
        self.index.commit()  # first the index...
        self.store.commit_scan(  # ...then the rows that describe it
            sources=self.pending_sources,
            removed_sources=self.pending_removed_sources,
            sessions=self.pending_sessions.values(),  # type: ignore[arg-type]
            removed_sessions=self.pending_removed_sessions,
        )
        self.pending_sources = []
        self.pending_sessions = {}
        self.pending_removed_sources = []
        self.pending_removed_sessions = []
        self.uncommitted_events = 0


def _title_from_prompt(text: str, limit: int = 80) -> str:
    line = " ".join(text.split())
    return line if len(line) <= limit else line[: limit - 1] + "…"
