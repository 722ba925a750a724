"""Running a scan: discover, plan, read every source that changed, commit in the crash-safe order.

Sources are read here, or, when the plan holds enough to read (``POOL_MIN_BYTES``), by
worker processes that parse and prepare in parallel (:mod:`.workers`); either way this
process is the one writer and takes the sources in plan order, so what a scan leaves
behind does not depend on how many workers read for it.

Commit order is the crash-safety contract: Tantivy commits first, then the state rows
that describe it. A crash in between leaves old fingerprints behind, so the next scan
re-reads those sources and replaces (never duplicates) their documents. A source that
fails before producing anything keeps what was indexed from it before. A source no
longer discovered takes its sessions out of the index (unless ``keep_missing``).

A long scan is searchable while it runs, in the order people search: sources are read
newest first, and the index is committed soon after reading starts and then at growing
intervals (``FIRST_COMMIT_S`` … ``COMMIT_MAX_S``), each commit recording how far the scan
has got (:mod:`.progress`) for any process that searches meanwhile. A plan big enough
(``PHASE_MIN_BYTES``) runs in two phases over one read of each source: first every
source's prompts, replies and reasoning, with its tool calls and outputs held in a spool
(:mod:`.spool`), then the tool output. While a source's tool output waits, its state row
is the one it had before this scan (a new source gets a row that matches no file), naming
the sessions it holds now as well: a crash then re-reads it as changed or grown, exactly
as if the scan had not read it. A ``budget`` (the refresh before a search) stops reading
once it is spent and a large part of the plan is left (``HANDOVER_*``): what was read is
committed, and the summary says how many sources remain for a scan to continue with.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from voyager_sessions.core.errors import VoyagerError
from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest.adapters.base import Cursor, Hints, Notice, Source, discover, uses_hints
from voyager_sessions.ingest.limits import bounded
from voyager_sessions.core.lock import writer_lock
from voyager_sessions.core.model import Session, SessionRecord
from voyager_sessions.core.paths import DataDir, ensure_private_dir
from voyager_sessions.scan import absent
from voyager_sessions.ingest.files import Focus, FolderMemory, remembered_folders
from voyager_sessions.scan.changes import Changes
from voyager_sessions.scan.plan import Why, classify, resume_cursor
from voyager_sessions.scan.progress import META_KEY, ScanProgress, Tally
from voyager_sessions.scan.progress import encode as progress_encode
from voyager_sessions.scan.settled import META_KEY as SETTLED_KEY
from voyager_sessions.scan.settled import Settled, full_walk_due
from voyager_sessions.scan.summary import ScanSummary, Skipped
from voyager_sessions.store.db import StoreDamaged, quick_check, set_aside

if TYPE_CHECKING:
    from voyager_sessions.scan.chunks import Prepared
    from voyager_sessions.scan.source_read import SourceOutcome
    from voyager_sessions.scan.spool import Spool
    from voyager_sessions.scan.workers import Pool
    from voyager_sessions.search.index import SearchIndex
    from voyager_sessions.store.state import KnownSources, SourceState

#: Commit the index and the state after this many added events, so a long first scan
#: makes progress durable and keeps the writer's memory bounded
#: (``VOYAGER_COMMIT_EVERY_EVENTS`` overrides it).
COMMIT_EVERY_EVENTS = 200_000

#: A long scan's first commit comes this soon after it starts reading (seconds), and each next one
#: twice as long after the last, up to ``COMMIT_MAX_S``: the newest sessions are searchable within a
#: second, and a long scan does not make a segment (Tantivy's unit of a commit) every few moments.
FIRST_COMMIT_S = 0.3
COMMIT_MAX_S = 8.0

#: A plan with at least this many bytes to read, read by workers, is read in two phases, what people and
#: agents wrote first, the tool output after (``VOYAGER_PHASE_MIN_BYTES`` overrides it, workers or not; 0 always).
PHASE_MIN_BYTES = 32 << 20

#: A budgeted scan (the refresh before a search) stops reading once its budget is spent, unless what is
#: left is small: fewer bytes than this and fewer sources than ``HANDOVER_MIN_SOURCES`` are read anyway.
HANDOVER_MIN_BYTES = 8 << 20
HANDOVER_MIN_SOURCES = 400
#: However long discovery took, a budgeted scan reads this long at least (the newest sessions make the answer).
BUDGET_MIN_READ_S = 0.25

#: Worker processes are started only when a plan holds at least this many bytes to read
#: (``VOYAGER_WORKERS_MIN_BYTES`` overrides it; 0 always starts them). Measured on 2 idle
#: cores, first index in a fresh process, 2 workers against in-process (median of 5
#: paired runs): 20 sources of 6.4 / 12.9 / 25.7 MB 1.03x / 1.09x / 1.13x, a
#: 300-session history (85 MB) 1.13x. The refresh before a search (a few appended lines)
#: never comes near it. Spawned workers (macOS, Windows) start an interpreter each
#: (~100 ms against ~5 ms forked), so they wait for four times as much.
POOL_MIN_BYTES = 8 << 20
POOL_MIN_BYTES_SPAWNED = 32 << 20
#: With fewer cores than this, a plan whose work is mostly one source is read in-process:
#: on 2 cores Tantivy's indexing thread already has the second core, and a worker only
#: adds its overhead (one session, 2 idle cores, median of 5 pairs: 5,000 messages 0.93x
#: CJK-dense / 0.94x English; 48 MiB 0.94x / 0.99x). With a core each for the worker, the
#: writer and Tantivy, reading one long session becomes a pipeline of the three (not
#: measured here: this machine has 2).
POOL_ONE_SOURCE_CORES = 3

ProgressFn = Callable[[ScanProgress], None]
NoticeFn = Callable[[Notice], None]


def _spool_max() -> int:
    from voyager_sessions.scan.spool import spool_max_bytes

    return spool_max_bytes()


def _commit_every() -> int:
    try:
        return max(1, int(os.environ.get("VOYAGER_COMMIT_EVERY_EVENTS", COMMIT_EVERY_EVENTS)))
    except ValueError:
        return COMMIT_EVERY_EVENTS


def _env_int(name: str, default: int) -> int:
    try:
        return max(0, int(os.environ.get(name, default)))
    except ValueError:
        return default


def _pool_min_bytes() -> int:
    from voyager_sessions.scan.workers import start_method

    default = POOL_MIN_BYTES if start_method() == "fork" else POOL_MIN_BYTES_SPAWNED
    try:
        return max(0, int(os.environ.get("VOYAGER_WORKERS_MIN_BYTES", default)))
    except ValueError:
        return default


def default_workers() -> int:
    """One worker per core this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def scan(
    data_dir: Path,
    env: Mapping[str, str] | None = None,
    *,
    providers: list[str] | None = None,
    keep_missing: bool = False,
    wait: float = 0.0,
    progress: ProgressFn | None = None,
    on_notice: NoticeFn | None = None,
    rebuild: bool = False,
    workers: int | None = None,
    changes: Changes | None = None,
    budget: float | None = None,
) -> ScanSummary:
    """Bring the index in ``data_dir`` up to date with every provider's sources.

    ``rebuild`` starts from an empty index (every source is read again); an index that
    cannot be read is rebuilt the same way, with a notice. ``workers`` is how many
    processes may read sources (default: one per core); 1 reads everything in this one.
    ``changes`` (from a :class:`~voyager_sessions.scan.changes.ChangeWatcher`) limits the
    stat pass to what changed; None stats every source. ``budget`` (seconds from the
    start): stop reading once it is spent if much is left (the summary's ``remaining``
    says how many sources were not read; a next scan reads them).
    Raises :class:`~voyager_sessions.core.lock.ScanBusy` if another scan holds the writer for
    longer than ``wait`` seconds.
    """
    env = os.environ if env is None else env
    ddir = DataDir(data_dir)
    with writer_lock(data_dir, wait=wait):
        if rebuild and (damage := quick_check(ddir.state_db)) is not None:
            _set_state_aside(ddir, damage, on_notice)  # a damaged page no query of this scan would meet
        try:
            return Scan(
                ddir,
                env,
                providers,
                keep_missing,
                progress,
                on_notice,
                rebuild=rebuild,
                workers=workers,
                changes=changes,
                budget=budget,
            ).run()
        except StoreDamaged as exc:
            if exc.path != ddir.state_db:
                raise  # checkpoints.db: never set aside, it is the only copy of what it holds
            _set_state_aside(ddir, exc.detail, on_notice)
            return Scan(ddir, env, None, False, progress, on_notice, rebuild=True, workers=workers).run()


def _set_state_aside(ddir: DataDir, damage: str, on_notice: NoticeFn | None) -> None:
    """state.db is derived data: set it aside (private, beside it) for a scan to make it anew from the sources,
    rebuilding the index too, so that it equals what the sources hold (sessions only the lost state knew of)."""
    aside = set_aside(ddir.state_db)
    if on_notice is not None:
        on_notice(
            Notice(
                source=str(ddir.state_db),
                reason=f"was damaged ({damage}): set aside as {aside.name}; "
                "rebuilding it and the index from your agents' sessions",
                repair=True,
            )
        )


class Scan:
    """One scan of one data dir, holding the writer lock (its caller took it)."""

    def __init__(
        self,
        ddir: DataDir,
        env: Mapping[str, str],
        providers: list[str] | None,
        keep_missing: bool,
        progress: ProgressFn | None,
        on_notice: NoticeFn | None,
        *,
        rebuild: bool = False,
        workers: int | None = None,
        changes: Changes | None = None,
        budget: float | None = None,
    ) -> None:
        from voyager_sessions.store.state import StateStore

        ensure_private_dir(ddir.root)
        self.ddir = ddir
        self.env = env
        self.providers = providers or list(registry.PROVIDERS)
        self.keep_missing = keep_missing
        self.progress = progress
        self.on_notice = on_notice
        self.summary = ScanSummary()
        self.noticed: set[str] = set()  # the sources named so far (a second discovery names nothing twice)
        # Adapters that asked for hints, the cwds they were given, and the cwds of sessions read since.
        self.hinted: list[str] = []
        self.hint_cwds: frozenset[str] | None = None
        self.hint_imports: frozenset[str] = frozenset()
        self.read_cwds: set[str] = set()
        self.changes = changes
        self.unknown = 0  # sources discovered that have no state row yet
        self.focused: dict[str, Focus] = {}  # agents discovered only where the watcher saw changes
        self.store = StateStore(ddir.state_db)
        self.known: KnownSources = self.store.known_sources(lazy=True)  # replaced when the scan starts
        self.index = self._open_index(rebuild)
        self.reset = self.store.index_id() != self.index.index_id
        if self.reset:
            # The scan state describes another index (it was reset, rebuilt or deleted):
            # forget it, so every source is read into this one. Every source: what a watcher
            # saw change is no guide to an empty index (a served refresh told "nothing changed"
            # read nothing into an index deleted under it, and answered "No matches" until the
            # periodic full pass five minutes later).
            self.store.reset_scan_state(self.index.index_id)
            self.changes = None
        # Sessions some live source still yields: a removed source may only take the others.
        self.live_sessions: set[str] = set()
        # Sessions whose indexed copy came from a source that no longer holds them, while another may (a newer
        # export deleted, an older one still holding its conversations): read again from their holders.
        self.rederive: set[str] = set()
        self.gone_paths: set[str] = set()  # sources this scan removes
        self.fresh_reads: set[str] = set()  # sources read again whole, without their cursor
        self.read_mtimes: dict[str, int] = {}  # the sources read by this scan (not in the state yet): their mtime
        # Work done since the last commit, written to the state store right after it.
        self.pending_sources: list[SourceState] = []
        self.pending_sessions: dict[str, SessionRecord] = {}
        self.pending_removed_sources: list[str] = []
        self.pending_removed_sessions: list[str] = []
        self.uncommitted_events = 0
        self._force_commit = False
        self.workers = default_workers() if workers is None else max(1, workers)
        self.pool: Pool | None = None  # started by the first plan big enough to need it
        self.may_fork = True  # until the first plan is read: Tantivy's indexing threads start with the first write
        self.t0 = time.monotonic()
        self.budget = budget
        self.remaining = 0  # sources of the plan a spent budget left unread
        self.commit_every = _commit_every()
        self.commit_interval = FIRST_COMMIT_S
        self.next_commit = float("inf")  # set when reading starts
        self.reading_since = self.t0
        self.tally = Tally()
        # How far a long scan has got is committed with the index (meta ``indexing``); a full scan that reads its
        # whole plan deletes the record, whoever wrote it.
        # A first index (the sessions table empty): no session is known but those this scan reads.
        self.first_index = self.store.conn.execute("SELECT 1 FROM sessions LIMIT 1").fetchone() is None
        self.read_ids: set[str] = set()  # the sessions this scan read (a first index only)
        #: Another scan's record of a plan it left unfinished, as this scan found it (see ``_commit``).
        self.inherited = self.store.get_meta(META_KEY)
        self.recorded = self.inherited is not None
        self.wrote_record = False
        self.whole = providers is None and changes is None
        # The two phases (words first, tool output after): the index a source's read writes through, the spool,
        # and the final state rows of the sources whose tool output waits there (by source number).
        self.writes: Any = self.index
        self.spool: Spool | None = None
        self.source_no = 0
        self.awaiting: dict[int, tuple[Any, int]] = {}
        self.drained: dict[int, int] = {}  # frames read back from the spool, per source number

    def _open_index(self, rebuild: bool) -> SearchIndex:
        """The index, writable; made anew when asked, or when the one on disk cannot be read (it is derived data)."""
        from voyager_sessions.core.errors import IndexDamaged
        from voyager_sessions.search.index import SearchIndex, wipe

        if rebuild and self.ddir.index.is_dir():
            wipe(self.ddir.index)
        try:
            return SearchIndex(self.ddir.index)
        except IndexDamaged as exc:
            self.notice(Notice(source=str(self.ddir.index), reason=f"{exc}: rebuilding it from the sources now"))
            wipe(self.ddir.index)
            return SearchIndex(self.ddir.index)

    def notice(self, n: Notice) -> None:
        self.noticed.add(n.source)
        self.summary.skipped.append(Skipped(source=n.source, reason=n.reason, where=n.where))
        if self.on_notice:
            self.on_notice(n)

    # -- the whole scan --------------------------------------------------------------

    def run(self) -> ScanSummary:
        try:
            return self._run()
        finally:
            self.store.close()

    def _run(self) -> ScanSummary:
        t0 = time.time()
        try:
            lazy = self.changes is not None
            stored = self.store.count_sources() if lazy else 0
            known = self.store.known_sources(lazy=lazy)
            # The folder listings the last scans remembered: a folder that did not change is not listed again,
            # and one whose canary is quiet is not walked (scan.settled), but at a full walk now and then, and
            # while a scan that left its plan unfinished may have read a session and not its folder (its record).
            full_walk = self.changes is None and full_walk_due(self.store.get_meta(SETTLED_KEY))
            settled = Settled(known) if not full_walk and not lazy and not self.recorded else None
            # Quiet folders are not walked: their listings are read as the walk asks for them, not all at once.
            memory = (
                FolderMemory({}, load=self.store.folder, load_all=self.store.folders)
                if settled is not None
                else FolderMemory(self.store.folders())
            )
            memory.quiet = settled
            # A walk that can asks here whether a file is unchanged, and yields no Source for one that is.
            memory.known, found_unchanged = self._unchanged_test(known)
            token = remembered_folders.set(memory)
            try:
                plan, seen, scanned = self._plan(known)
            finally:
                remembered_folders.reset(token)
                memory.known = None
            seen.update(found_unchanged)
            self.summary.unchanged += len(found_unchanged)
            if settled is not None and settled.seen:
                # Sources in folders not walked: as the last scan read them (seen, unchanged).
                seen.update(settled.seen)
                self.summary.unchanged += len(settled.seen)
            if full_walk:
                self.store.set_meta(SETTLED_KEY, str(time.time_ns()))
            plan = newest_first(plan)
            self._start_reading(plan)
            self._read_all(plan)
            more: list[tuple[Source, Why]] = []
            if not self.remaining:
                # Sessions read just now may name working directories that lead an adapter which asked
                # for hints (Aider) to histories not found before: one more discovery for those only.
                token = remembered_folders.set(memory)
                try:
                    more = newest_first(self._plan_hinted(seen))
                finally:
                    remembered_folders.reset(token)
            if memory.changed:
                # A write only when some folder changed (a no-op scan still writes nothing): what the
                # file system holds, true whatever the index commits below (they need no order).
                try:
                    self.store.save_folders(memory.learned.values(), memory.forgotten)
                except VoyagerError:  # a full disk, a busy database: those folders are listed again next time
                    pass
            if more:
                self._plan_sizes(more)
                self._read_all(more)
            self.summary.sources = len(seen)
            gone = [] if self.keep_missing else known.gone(scanned, seen, self._kept)
            read = {source.path for source, _ in plan} | {source.path for source, _ in more}
            if gone:
                # What the sources not read still hold stays: their rows are decoded only now, when it matters.
                self.live_sessions |= self.store.sessions_of_sources_except(read | {old.path for old in gone})
            if lazy:
                # Sources not looked at (nothing changed where they are) are unchanged sources too.
                self.summary.sources = stored + self.unknown - len(gone)
                self.summary.unchanged = self.summary.sources - len(read)
            # Removals last: a session that moved (an archived rollout) is claimed by its new source.
            self.gone_paths = {old.path for old in gone}
            for old in gone:
                self._remove_source(old)
            if self.rederive:
                self._rederive()
            if self.reset:
                self._mirror_checkpoints()
            if self.spool is not None:
                self._commit()  # every source's words are searchable now
                self._drain()
            self._commit(last=True)
        finally:
            if self.pool is not None:
                self.pool.close()
            if self.spool is not None:
                self.spool.close()
            self.index.close()
        self.summary.remaining = self.remaining
        self.summary.seconds = round(time.time() - t0, 3)
        self.summary.providers = {p: s for p, s, _ in self.store.counts()}
        self.summary.sessions = sum(self.summary.providers.values())
        if self.summary.touched or self.summary.failed:
            # A no-op scan (every search starts with one) writes nothing at all.
            self.store.record_scan(t0, msgspec.json.encode(self.summary))
        return self.summary

    def _start_reading(self, plan: list[tuple[Source, Why]]) -> None:
        """Size the plan, choose its phases, and start the clock of the commits."""
        self.work: dict[str, tuple[int, int, bool]] = {}  # path -> (bytes to read, sessions it stands for, new)
        total = self._plan_sizes(plan)
        if (
            plan
            and self.budget is None
            and total >= _env_int("VOYAGER_PHASE_MIN_BYTES", PHASE_MIN_BYTES)
            and ("VOYAGER_PHASE_MIN_BYTES" in os.environ or self._will_pool(plan))
        ):
            from voyager_sessions.scan import spool

            spool.clear(self.ddir.root)
            self.spool = spool.Spool(self.ddir.spool)
            self.writes = spool.PhasedIndex(self.index, self.spool)
            self.tally.phase = "words"
            self.spool_max = _spool_max()
        self.reading_since = time.monotonic()
        self.next_commit = self.reading_since + FIRST_COMMIT_S

    def _plan_sizes(self, plan: list[tuple[Source, Why]]) -> int:
        """Record what reading ``plan`` amounts to (bytes, sessions) for progress and budget; its bytes."""
        total = sessions = new = 0
        for source, why in plan:
            old = self.known.get(source.path)
            nbytes = _bytes_to_read(source, why, old, resume_cursor(source, why, old))
            expected = len(old.sessions) if old is not None and old.sessions else 1
            self.work[source.path] = (nbytes, expected, old is None)
            total += nbytes
            sessions += expected
            new += old is None
        self.tally.planned(len(plan), total, sessions, new)
        return total

    def _read_all(self, plan: list[tuple[Source, Why]]) -> None:
        """Read ``plan``'s sources in order, committing as the clock says; stop early when a budget is spent."""
        left_bytes = sum(self.work[source.path][0] for source, _ in plan)
        left = len(plan)
        for source, why, cursor, items in self._reads(plan):
            if self._budget_spent(left, left_bytes):
                self.remaining = left
                break
            nbytes, expected, new = self.work[source.path]
            self.source_no += 1
            if self.spool is not None:
                self.writes.source = self.source_no
            sessions = self._read(source, why, self.known.get(source.path), cursor, items)
            left -= 1
            left_bytes -= nbytes
            self.tally.read_one(nbytes, expected, sessions, new)
            if self.spool is not None and self.spool.bytes >= self.spool_max:
                self._commit()
                self._drain()  # the spool is full: the tool output of what was read so far, then on with the words
                self.spool.reset()
                self.tally.phase = "words"
            elif self._due():
                self._commit()
            if self.progress:
                self.progress(self.tally.now(self.summary.events_added))

    def _budget_spent(self, left: int, left_bytes: int) -> bool:
        """True when the budget is spent and what is left is worth handing to a scan of its own.

        However long discovery took, the budget leaves reading ``BUDGET_MIN_READ_S`` at least: a search
        that waited for the stat pass gets the newest sessions in its answer.
        """
        if self.budget is None:
            return False
        now = time.monotonic()
        if now - self.t0 < self.budget or now - self.reading_since < min(self.budget, BUDGET_MIN_READ_S):
            return False
        return left_bytes >= _env_int("VOYAGER_HANDOVER_MIN_BYTES", HANDOVER_MIN_BYTES) or left >= HANDOVER_MIN_SOURCES

    def _due(self) -> bool:
        """True when the index should be committed now: enough events, or the clock."""
        if self.uncommitted_events >= self.commit_every:
            return True
        return time.monotonic() >= self.next_commit

    def _drain(self) -> None:
        """The tools phase: the spool's tool output into the index, each source's final row once all of it is in."""
        assert self.spool is not None
        self.tally.phase = "tools"
        while self._drain_one():
            if self._due():
                self._commit()

    def _drain_one(self) -> bool:
        """One frame of the spool into the index (False when none is waiting); a source whose read is over and
        whose every frame is in goes to its final row."""
        spool = self.spool
        frame = spool.next_frame() if spool is not None else None
        if frame is None:
            return False
        no, events = frame
        if events:
            self.uncommitted_events += self.index.add_prepared(events, self.writes.horizons.get(no))
        drained = self.drained[no] = self.drained.get(no, 0) + 1
        if no in self.awaiting and drained >= self.writes.frames.get(no, 0):
            self._tools_done(no)
        return True

    def _idle(self) -> bool:
        """While the writer waits for a worker: tool output that waits in the spool goes into the index meanwhile
        (words still come first; no core idles). False when there is none."""
        if not self._drain_one():
            return False
        if self._due():
            self._commit()
        return True

    def _tools_done(self, no: int) -> None:
        """Source number ``no``'s tool output is all in the index: its final state row goes with the next commit."""
        row, sessions = self.awaiting.pop(no)
        self.pending_sources.append(row)
        self.tally.waiting_tools = max(0, self.tally.waiting_tools - sessions)
        self.tally.tools_done += sessions
        if self._due():
            self._commit()
        if self.progress:
            self.progress(self.tally.now(self.summary.events_added))

    def _reads(self, plan: list[tuple[Source, Why]]) -> Iterator[tuple[Source, Why, Cursor | None, Iterator[Prepared]]]:
        """Each planned source, in plan order, with its cursor and its stream of prepared items."""
        cursors = [
            None if source.path in self.fresh_reads else resume_cursor(source, why, self.known.get(source.path))
            for source, why in plan
        ]
        pool = self._pool(plan, cursors)
        if pool is None:
            for (source, why), cursor in zip(plan, cursors):
                yield source, why, cursor, _read_here(source, cursor)
            return
        from voyager_sessions.scan.chunks import Job

        jobs = (Job(id=i, source=source, cursor=cursor) for i, ((source, _), cursor) in enumerate(zip(plan, cursors)))
        for job, items in pool.run(jobs):
            source, why = plan[job.id]
            yield source, why, job.cursor, items

    def _will_pool(self, plan: list[tuple[Source, Why]]) -> bool:
        """True when ``plan`` (this scan's first) will be read by workers.

        Only then does a long plan run in two phases: with one process, the Python thread and Tantivy's take
        turns, the words phase giving Tantivy little and the tools phase Python little (the 300-session history:
        +53 % wall, +9 % CPU); with workers, the writer reads tool output back whenever it waits for them (+11 %
        wall). ``VOYAGER_PHASE_MIN_BYTES`` set forces the phases either way (the tests).
        """
        if self.workers <= 1 or not plan or self.budget is not None or not self.may_fork:
            return False
        work = [self.work[source.path][0] for source, _ in plan]
        return _worth_workers(work, default_workers())

    def _pool(self, plan: list[tuple[Source, Why]], cursors: list[Cursor | None]) -> Pool | None:
        """The worker pool for ``plan``, or None to read it here: one worker, or too little to read to be worth it.

        Workers are started once, for the first plan that needs them: by the next, this
        process runs Tantivy's threads, and forking it then would copy their state too.
        """
        first, self.may_fork = self.may_fork, False
        if self.pool is not None or not first or self.workers <= 1 or not plan:
            return self.pool
        if self.budget is not None:
            # A refresh with a budget reads here: a worker's start and its batches would hold back the first
            # sources it reads (the newest, the answer), and what the budget leaves goes to a scan of its own.
            return None
        work = [
            _bytes_to_read(source, why, self.known.get(source.path), cursor)
            for (source, why), cursor in zip(plan, cursors)
        ]
        if not _worth_workers(work, default_workers()):
            return None
        from voyager_sessions.scan.workers import Pool

        pool = self.pool = Pool(min(self.workers, len(plan)))
        if self.spool is not None:
            pool.idle = self._idle
        return pool

    def _hints(self) -> Hints:
        """What adapters that asked for hints get: the working directories of every indexed session, and the
        exports ``voyager import`` recorded."""
        if self.hint_cwds is None:
            self.hint_cwds = frozenset(self.store.known_cwds())
            self.hint_imports = frozenset(self.store.imports())
        return Hints(cwds=self.hint_cwds, imports=self.hint_imports)

    def _plan(self, known: KnownSources) -> tuple[list[tuple[Source, Why]], set[str], set[str]]:
        """Discover every provider's sources and classify them against ``known`` (the state rows)."""
        self.known = known
        plan: list[tuple[Source, Why]] = []
        seen: set[str] = set()
        scanned: set[str] = set()
        raw = self.store.get_meta(absent.META_KEY)
        memory = absent.load(raw, self.env)
        for name in self.providers:
            touched = self.changes.touching(name) if self.changes is not None else None
            if touched is not None and not touched:
                # Watched, and nothing changed under it: its sources are as they were (not "scanned": none goes).
                continue
            places = memory.agents.get(name)
            if places is not None and absent.still_absent(places):
                # Nothing can be there: no adapter import, no discovery (and its old sources, if any, go).
                scanned.add(name)
                continue
            try:
                adapter = registry.get(name)
            except Exception as exc:  # one broken adapter must not stop the others
                self.notice(Notice(source=name, reason=f"adapter unavailable: {type(exc).__name__}: {exc}", fatal=True))
                continue
            scanned.add(name)
            hinted = uses_hints(adapter)
            if hinted:
                self.hinted.append(name)
            focused = getattr(adapter, "discover_changed", None) if touched else None
            try:
                if focused is not None and touched:
                    focus = self.focused[name] = Focus(touched)
                    for path in touched:
                        known.load_under(path)  # the sources that may have gone with it
                    items = focused(self.env, focus)
                else:
                    known.load_provider(name)
                    items = discover(adapter, self.env, self._hints() if hinted else None)
                self._take(items, plan, seen)
            except Exception as exc:  # an adapter bug in discovery must cost that agent, not the scan
                # Not "scanned": what this agent had indexed stays (its sources were not all seen).
                scanned.discard(name)
                self._discovery_failed(name, exc)
                continue
            absent.remember(memory, name, adapter, self.env)
        if (kept := absent.dump(memory)) != raw:
            self.store.set_meta(absent.META_KEY, kept)
        return plan, seen, scanned

    def _kept(self, provider: str, path: str) -> bool:
        """True for a source a focused discovery did not look at (nothing changed where it is): it stays."""
        focus = self.focused.get(provider)
        return focus is not None and not focus.hit(path)

    def _plan_hinted(self, seen: set[str]) -> list[tuple[Source, Why]]:
        """Sources that the cwds of sessions read in this scan lead hint-using adapters to, not seen before."""
        new_cwds = self.read_cwds - (self.hint_cwds or frozenset())
        plan: list[tuple[Source, Why]] = []
        if not new_cwds:
            return plan
        for name in self.hinted:
            try:
                for item in discover(registry.get(name), self.env, Hints(cwds=frozenset(new_cwds))):
                    if isinstance(item, Notice) and item.source in self.noticed:
                        continue  # the first discovery named it already
                    if isinstance(item, Source) and item.path in seen:
                        continue
                    self._consider(item, plan, seen)
            except Exception as exc:  # as in _plan: an adapter bug costs that agent only
                self._discovery_failed(name, exc)
        return plan

    def _discovery_failed(self, name: str, exc: Exception) -> None:
        self.notice(
            Notice(
                source=name, reason=f"adapter error while looking for sessions: {type(exc).__name__}: {exc}", fatal=True
            )
        )

    @staticmethod
    def _unchanged_test(known: KnownSources) -> tuple[Callable[[str, int, int, int, int, int], bool], list[str]]:
        """``FolderMemory.known`` for this scan, and the list of the paths it found unchanged (what :meth:`_take` does
        for a Source, without one: at 10,000 sources, ~10 % of a no-op refresh's CPU went to making, handing on
        and taking them)."""
        fresh_get = known.fresh.get  # rows to retry are not there: one comparison says "need not be read again"
        found: list[str] = []
        add = found.append

        def unchanged(path: str, size: int, mtime_ns: int, inode: int, wal_size: int, wal_mtime_ns: int) -> bool:
            if fresh_get(path) == (path, size, mtime_ns, inode, wal_size, wal_mtime_ns):
                add(path)
                return True
            return False

        return unchanged, found

    def _take(self, items: Iterable[Source | Notice], plan: list[tuple[Source, Why]], seen: set[str]) -> None:
        """Plan what one discovery found: :meth:`_consider` for each item but the unchanged sources.

        Nearly every source is unchanged, and this loop is the rest of the stat pass (10,000
        sources: ~10 % of a no-op scan's CPU): a source whose stat equals its state row's
        tuple (``known.fresh``, which holds no row to retry) is counted here, with no call.
        Its path came from the state store, so it is valid UTF-8 text.
        """
        fresh_get = self.known.fresh.get
        see = seen.add
        unchanged = 0
        try:
            for item in items:
                if type(item) is Source:
                    path, fp = item.path, item.fingerprint
                    if fresh_get(path) == (path, fp.size, fp.mtime_ns, fp.inode, fp.wal_size, fp.wal_mtime_ns):
                        see(path)
                        unchanged += 1
                        continue
                self._consider(item, plan, seen)
        finally:
            self.summary.unchanged += unchanged

    def _consider(self, item: Source | Notice, plan: list[tuple[Source, Why]], seen: set[str]) -> None:
        """Plan the read of one discovered source (or report a place discovery could not look into)."""
        if isinstance(item, Notice):
            self.notice(item)
            return
        try:
            item.path.encode("utf-8")
        except UnicodeEncodeError:  # the state store keys sources by path, as text
            self.notice(
                Notice(
                    source=item.path.encode("utf-8", "replace").decode(),
                    fatal=True,
                    reason="a path that is not valid UTF-8; skipped (rename it to index it)",
                )
            )
            return
        path = item.path
        seen.add(path)
        fp = item.fingerprint
        # Nearly every source is unchanged: compared with its raw row, no state decoded.
        same = self.known.unchanged(path, fp.size, fp.mtime_ns, fp.inode, fp.wal_size, fp.wal_mtime_ns)
        if same:
            self.summary.unchanged += 1
            return
        if same is None:
            self.unknown += 1
        old = self.known.get(path) if same is not None else None
        why = classify(item, old)
        if why is None:
            self.summary.unchanged += 1
        else:
            plan.append((item, why))

    # -- one source ------------------------------------------------------------------

    def _read(
        self, source: Source, why: Why, old: SourceState | None, cursor: Cursor | None, items: Iterator[Prepared]
    ) -> int:
        """Read one source and queue what it amounts to for the next commit; how many sessions it holds."""
        # Here, not at the top: a refresh that finds nothing changed reads nothing (~1 ms of imports).
        from voyager_sessions.scan.chunks import AdapterFailed, WorkerLost, failure_reason
        from voyager_sessions.scan.source_read import SourceRead

        old_sessions = list(old.sessions) if old is not None else []
        prior = self.store.sessions_by_id(old_sessions) if old_sessions else {}
        read = SourceRead(
            source,
            why,
            old,
            cursor,
            self.writes,
            prior,
            self.notice,
            elsewhere=self._session_elsewhere,
            newer_elsewhere=lambda sess, known: self._newer_elsewhere(source, sess, known),
        )
        try:
            for item in items:
                read.take(item)
        except VoyagerError:  # the index or the disk failed, not the source: stop the scan, lose nothing
            raise
        except AdapterFailed as exc:  # an adapter bug must not lose the rest of the scan
            read.fail(exc.reason)
        except WorkerLost as exc:  # killed, out of memory: it may well pass, read the source again next time
            read.fail(exc.reason, transient=True)
        except Exception as exc:
            read.fail(failure_reason(exc))
        out = read.finish()
        self._apply(out, old)
        no = self.source_no
        if no in self.awaiting and self.drained.get(no, 0) >= self.writes.frames.get(no, 0):
            self._tools_done(no)  # its tool output went in while it was read (the writer waited for a worker)
        return len(out.sessions) if not out.failed else len(old_sessions)

    def _session_elsewhere(self, sid: str) -> SessionRecord | None:
        """A session as another source left it: queued by this scan, else as stored (None when new)."""
        pending = self.pending_sessions.get(sid)
        if pending is not None or (self.first_index and sid not in self.read_ids):
            return pending  # a first index: the table holds only what this scan read (no query a session)
        return self.store.sessions_by_id([sid]).get(sid)

    def _newer_elsewhere(self, source: Source, sess: Session, known: Session | None) -> bool:
        """True when the copy of ``sess`` the index holds (``known``) came from another live source and is newer than
        the one ``source`` holds: last active later, or as late but written by a source file modified since. A copy
        that holds no events never hides another."""
        other = known.source if known is not None else None
        if known is None or not other or other == source.path or other in self.gone_paths:
            return False
        held = self._session_elsewhere(sess.id)
        if held is not None and held.events == 0:
            return (
                False  # a copy that holds nothing never hides one that may (it costs only itself, read first or last)
            )
        theirs, mine = known.updated or known.started, sess.updated or sess.started
        if theirs is None or mine is None or theirs < mine:
            return False
        mtime = self.read_mtimes.get(other)
        if mtime is None:
            row = self.known.get(other)
            if row is None:
                return False  # not a source any more
            mtime = row.mtime_ns
        return theirs > mine or mtime > source.fingerprint.mtime_ns

    def _apply(self, out: SourceOutcome, old: SourceState | None = None) -> None:
        """Count what one read did and queue its rows for the next commit.

        In the words phase a source whose tool output waits in the spool is committed with the row it
        had before (see :func:`waiting_row`); its own row waits until that output is in the index.
        """
        row = out.state_row
        no = self.source_no
        held = self.spool is not None and self.writes.held.get(no, 0) > 0
        if held:
            self.awaiting[no] = (row, len(out.sessions) if not out.failed else 0)
            self.tally.waiting_tools += len(out.sessions) if not out.failed else 0
            self.tally.tools_total += len(out.sessions) if not out.failed else 0
            self.pending_sources.append(waiting_row(row, old, [r.session.id for r in out.sessions]))
        else:
            self.pending_sources.append(row)
        self.read_mtimes[row.path] = row.mtime_ns
        if out.failed:
            self.summary.failed += 1
            self.summary.retrying += row.status == "retry"
            self.live_sessions.update(row.sessions)
            return
        self.summary.events_added += out.events_added
        self.summary.events_removed += out.events_removed
        self.uncommitted_events += out.events_added
        if out.why == "new":
            self.summary.new += 1
        elif out.why == "grown":
            self.summary.grown += 1
        else:
            self.summary.changed += 1
        self.pending_removed_sessions.extend(out.removed_sessions)
        self.rederive.update(out.removed_sessions)  # another source may hold them still
        if self.first_index:
            self.read_ids.update(r.session.id for r in out.sessions)
        for r in out.sessions:
            self.pending_sessions[r.session.id] = r
            if r.session.cwd:
                self.read_cwds.add(r.session.cwd)
        self.live_sessions.update(row.sessions)

    def _remove_source(self, old: SourceState) -> None:
        orphans = [sid for sid in old.sessions if sid not in self.live_sessions]
        held = [sid for sid in old.sessions if sid in self.live_sessions]
        # A session another source holds too keeps its documents, unless they were this source's copy.
        for sid, rec in self.store.sessions_by_id(held).items():
            pending = self.pending_sessions.get(sid)
            if (pending or rec).session.source == old.path:
                self.rederive.add(sid)
        prior = self.store.sessions_by_id(orphans)
        # The checkpoint mirror stays: checkpoints.db still holds it, and it is searchable state.
        self.writes.delete_sessions(orphans, titles=True)
        self.summary.events_removed += sum(r.events for r in prior.values())
        self.summary.removed += 1
        self.pending_removed_sources.append(old.path)
        self.pending_removed_sessions.extend(orphans)

    def _rederive(self) -> None:
        """Read again, whole, the live sources that hold a session whose indexed copy came from a source that no
        longer holds it, so that the index holds what the sources hold now."""
        self._commit()  # the rows of this scan's reads, so that the holders are found among them
        sids, self.rederive = self.rederive, set()
        holders = self.store.sources_holding(sids)
        # A source whose tool output waits in the spool keeps a row naming what it held before as well (waiting_row):
        # what it holds now is its final row's list.
        final = {row.path: set(row.sessions) for row, _ in self.awaiting.values()}
        wanted = {
            path: provider
            for path, provider in holders.items()
            if path not in self.gone_paths and (path not in final or final[path] & sids)
        }
        plan: list[tuple[Source, Why]] = []
        for provider in sorted(set(wanted.values())):
            try:
                adapter = registry.get(provider)
                hints = self._hints() if uses_hints(adapter) else None
                for item in discover(adapter, self.env, hints):
                    if isinstance(item, Source) and wanted.get(item.path) == provider:
                        plan.append((item, "changed"))
            except Exception as exc:  # an adapter bug costs its agent, as in discovery
                self._discovery_failed(provider, exc)
        self.fresh_reads.update(source.path for source, _ in plan)
        self._plan_sizes(plan)
        # Read whole, budget or not: until they are, the index holds the removed source's copy of those sessions.
        budget, self.budget = self.budget, None
        try:
            self._read_all(plan)
        finally:
            self.budget = budget
        self._commit()

    def _mirror_checkpoints(self) -> None:
        """A new index has no checkpoint events: mirror every saved checkpoint into it again (checkpoints.db is the truth)."""
        if not self.ddir.checkpoints_db.exists():
            return
        from voyager_sessions.core.model import Event
        from voyager_sessions.search.checkpoints import CHECKPOINT_SEQ
        from voyager_sessions.store.checkpoints import CheckpointStore, checkpoint_text

        try:
            store = CheckpointStore.open(self.ddir.checkpoints_db, readonly=True)
        except Exception as exc:  # checkpoints stay safe in their database; search just lacks them for now
            self.notice(
                Notice(
                    source=str(self.ddir.checkpoints_db), reason=f"checkpoints not mirrored into the new index: {exc}"
                )
            )
            return
        try:
            events = []
            for summary in store.list():
                cp = store.load(summary.session_id)
                if cp is not None and (text := checkpoint_text(cp)):
                    events.append(
                        Event(
                            session=cp.session_id,
                            seq=CHECKPOINT_SEQ,
                            kind="checkpoint",
                            origin="voyager",
                            text=text,
                            ts=summary.updated_at,
                        )
                    )
            if events:
                self.index.add_events(events)
                self._force_commit = True
        finally:
            store.close()

    # -- commits ---------------------------------------------------------------------

    def _commit(self, *, last: bool = False) -> None:
        """Commit the index, then the state rows that describe it (and how far a long scan has got).

        ``last``: the scan's final commit. A scan that leaves its plan unfinished (a spent budget)
        records how far it got; a full one that read its plan deletes any record of an unfinished scan. A
        partial one (some agents, a watcher's change set) that recorded its own progress over another scan's
        record puts that record back at the end: the other's plan is no more finished than it was, and while
        the record is there no folder counts as quiet (``scan.settled``).
        """
        record: Callable[[int], dict[str, str | None]] | None = None
        if not last or self.remaining:
            self.recorded = self.wrote_record = True

            def record(sessions: int) -> dict[str, str | None]:
                return {META_KEY: progress_encode(self.tally.record(sessions)).decode()}

        elif self.recorded and (self.whole or self.wrote_record):
            kept = None if self.whole else self.inherited
            self.recorded = kept is not None

            def record(sessions: int) -> dict[str, str | None]:
                return {META_KEY: kept}

        nothing = not (
            self.pending_sources or self.pending_removed_sources or self.pending_sessions or self._force_commit
        )
        if nothing and (record is None or not last):
            if not last:
                self._schedule()
            return
        self._force_commit = False
        # Here, not at the top: a refresh that finds nothing changed never commits, and starts ~5 ms sooner without it.
        from voyager_sessions.scan.meaning import forget as forget_vectors

        # The workers go on reading meanwhile: their answers are taken off their pipes aside (workers.Pool.aside).
        with self.pool.aside() if self.pool is not None else contextlib.nullcontext():
            self.index.commit()  # first the index...
            # ...then no vector of a session rewritten here (its text changed; the stamps guard the rest)...
            forget_vectors(self.ddir, [*self.pending_sessions, *self.pending_removed_sessions])
            self.store.commit_scan(  # ...then the rows that describe it
                sources=self.pending_sources,
                removed_sources=self.pending_removed_sources,
                sessions=self.pending_sessions.values(),
                removed_sessions=self.pending_removed_sessions,
                meta=record,
            )
        self.pending_sources = []
        self.pending_sessions = {}
        self.pending_removed_sources = []
        self.pending_removed_sessions = []
        self.uncommitted_events = 0
        self._schedule()

    def _schedule(self) -> None:
        """The next commit by the clock: twice as long after this one as the last wait, up to ``COMMIT_MAX_S``."""
        self.commit_interval = min(self.commit_interval * 2, COMMIT_MAX_S)
        self.next_commit = time.monotonic() + self.commit_interval


def newest_first(plan: list[tuple[Source, Why]]) -> list[tuple[Source, Why]]:
    """``plan`` in the order people search: the source written last first (ties by path, so scans are deterministic).

    A first index is searchable while it is built; the sessions someone looks for first are the ones they
    were just working in.
    """
    return sorted(plan, key=lambda p: (-max(p[0].fingerprint.mtime_ns, p[0].fingerprint.wal_mtime_ns), p[0].path))


def waiting_row(row: Any, old: Any, sessions: list[str]) -> Any:
    """The state row a source keeps while its tool output waits in the spool: a crash then re-reads it.

    It is the row of the last read before this scan (its fingerprint and cursor: the next scan reads it again
    as changed or grown from there, replacing what this one indexed), or for a new source one whose fingerprint
    no file has; either way naming the sessions it holds now as well as before, so that a source gone by then
    takes them all out of the index.
    """
    if old is not None:
        named = list(dict.fromkeys([*old.sessions, *sessions]))
        return msgspec.structs.replace(old, sessions=named, indexed_at=row.indexed_at)
    return msgspec.structs.replace(
        row, size=0, mtime_ns=0, inode=0, wal_size=0, wal_mtime_ns=0, cursor=None, status="ok", detail=None
    )


def _read_here(source: Source, cursor: Cursor | None) -> Iterator[Prepared]:
    """``source``'s items, read in this process, its events prepared (what a worker would send)."""
    from voyager_sessions.scan.chunks import prepared_chunks

    adapter = registry.get(source.provider)
    for chunk in prepared_chunks(bounded(source, adapter.read(source, cursor))):
        yield from chunk


def _worth_workers(work: list[int], cores: int) -> bool:
    """True when reading sources of ``work`` bytes each on workers beats reading them here (see ``POOL_MIN_BYTES``)."""
    least = _pool_min_bytes()
    if least == 0:
        return True
    total = sum(work)
    if total < least:
        return False
    return cores >= POOL_ONE_SOURCE_CORES or max(work) <= total // 2


def _bytes_to_read(source: Source, why: Why, old: SourceState | None, cursor: Cursor | None) -> int:
    """About how many bytes reading ``source`` costs: what it grew by, or all of it.

    A database read from a cursor re-reads only the sessions that changed, which show
    as the file's growth and its write-ahead log, not as its size.
    """
    fp = source.fingerprint
    if cursor is not None and why == "grown":
        return max(0, fp.size - cursor.offset)
    if cursor is not None and old is not None:
        return max(0, fp.size - old.size) + fp.wal_size
    return fp.size + fp.wal_size
