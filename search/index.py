"""The on-disk Tantivy index: its schema, the one writer, readers, and event round-trips.

One document per event. ``body`` is the analyzed text (not stored); ``text`` keeps
the event's original text (capped) as stored bytes for display; ``session`` is a raw
term so a session's documents can be deleted by term and replaced. Session metadata
(title, cwd, repo) is *not* copied into every event: it lives in the state store and
is joined at render time.

Ranking weight: ``w`` holds a per-kind weight that Tantivy applies as
``score * log2(2 + w)``, which puts what a person typed above tool output.
"""

from __future__ import annotations

import os
import time
import unicodedata
from collections.abc import Callable, Collection, Iterable, Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any, Concatenate, ParamSpec, TypeVar

import tantivy

from voyager_sessions.core.errors import Busy, DiskFull, IndexDamaged, IndexWriteError, no_space
from voyager_sessions.core.paths import LOW_SPACE_BYTES, free_bytes
from voyager_sessions.core.model import Event
from voyager_sessions.search.analyzer import TOKENIZER_NAME, analyzer
from voyager_sessions.search.prepare import (  # noqa: F401 - re-exported: the cap is part of the index's contract
    DEFAULT_MAX_EVENT_CHARS,
    PREPARE_BATCH_CHARS,
    TRUNCATION_MARKER,
    PreparedEvent,
    capped_text,
    max_event_chars,
    prepare_events,
)

#: Bump when the schema or analyzer changes incompatibly; an older index is rebuilt.
INDEX_VERSION = 7  # 3: whitespace tokenizer over ``prepare``d text (search.analyzer rules); 4: title events;
# 5: ``ts`` clamped to a day past the scan, ``tsg`` the stamp as given; 6: ``said`` (a person's words, terms only);
# 7: ``parts`` (identifiers' words), an empty position where whitespace touches a CJK character (analyzer.GAP)
#: What the version file holds: the format, and the Unicode version the analyzer's NFKC
#: and character classes came from (a Python upgrade can change them: rebuild then too).
INDEX_FORMAT = f"{INDEX_VERSION} unicode-{unicodedata.unidata_version}"

#: log2(2 + w) multiplies BM25: user 3x, assistant/checkpoint 2x-3x, tools 1x-1.6x.
KIND_WEIGHTS: dict[str, int] = {
    "user": 6,
    "checkpoint": 6,
    "assistant": 2,
    "reasoning": 1,
    "tool_call": 1,
    "tool_result": 0,
    "meta": 0,
    "title": 6,
}
#: The heaviest kinds (a person's prompts, checkpoints, titles): their text is indexed twice, the second time in
#: ``said`` without frequencies or positions (with its identifiers' parts). A broad query searched a kind at a time (``search.tiers``) starts
#: with these kinds, and ``body``'s postings cannot skip to them: ``インデックス`` at 1M events leapfrogged the
#: 92k prompts against 193k events holding its six characters and checked positions wherever they landed
#: (29 ms). The same query limited to the prompts whose ``said`` holds every character checks only those
#: (12 ms). It costs ~1 % of the index: prompts are short beside tool output.
SAID_KINDS = frozenset(k for k, w in KIND_WEIGHTS.items() if w == max(KIND_WEIGHTS.values()))


def build_schema() -> tantivy.Schema:
    sb = tantivy.SchemaBuilder()
    sb.add_text_field("session", stored=True, fast=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("provider", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("kind", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("origin", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("tool", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_text_field("call_id", stored=True, tokenizer_name="raw", index_option="basic")
    sb.add_integer_field("seq", stored=True, indexed=True, fast=True)
    # Milliseconds; absent when unknown. What filters and sorting use, so a stamp more than a day past
    # the scan that indexed it (a clock gone wrong, a crafted 9999-12-31) counts as that day (FUTURE_SLACK_MS):
    # it would otherwise match ``since:1d`` forever and sort first under ``--sort recent``.
    sb.add_integer_field("ts", stored=True, indexed=True, fast=True)
    sb.add_integer_field("tsg", stored=True)  # the stamp as given, only where ``ts`` was clamped: what is shown
    sb.add_integer_field("exit", stored=True)
    sb.add_boolean_field("err", stored=True)
    sb.add_unsigned_field("w", fast=True)
    sb.add_unsigned_field("sk", fast=True)  # session key: groups hits by session without stored reads
    sb.add_text_field("body", tokenizer_name=TOKENIZER_NAME, index_option="position")
    sb.add_text_field("said", tokenizer_name=TOKENIZER_NAME, index_option="basic")  # SAID_KINDS' body and parts
    # The words of the body's identifiers made of several (analyzer.identifier_parts): ``batch`` of
    # ``invoice_batch_writer``. Terms only: a part matches as a word of its own, never as a phrase.
    sb.add_text_field("parts", tokenizer_name=TOKENIZER_NAME, index_option="basic")
    sb.add_bytes_field("text", stored=True, indexed=False)
    return sb.build()


@lru_cache(maxsize=4096)
def session_key(session_id: str) -> int:
    """A 63-bit key for a session id, stored as a fast field for cheap grouping (cached: one hash a session)."""
    import hashlib  # only writers need it; a search should not pay for importing it

    return int.from_bytes(hashlib.blake2b(session_id.encode(), digest_size=8).digest(), "big") >> 1


class IndexBusy(Busy):
    """Another process holds the index writer."""


def write_failed(path: Path, exc: BaseException) -> DiskFull | IndexWriteError:
    """What a failed index write means: a full disk (one line, nothing lost) or another write error."""
    text = str(exc)
    if no_space(exc) or "No space left" in text or "os error 28" in text or free_bytes(path) < LOW_SPACE_BYTES:
        return DiskFull.at(path)
    detail = " ".join(text.split())
    return IndexWriteError(f"cannot write the search index in {path}: {detail[:200]}")


_P = ParamSpec("_P")
_R = TypeVar("_R")


def _writes(method: Callable[Concatenate[SearchIndex, _P], _R]) -> Callable[Concatenate[SearchIndex, _P], _R]:
    """Index writes report a full disk as ``DiskFull`` and other failures as ``IndexWriteError``, never as a bare
    "ValueError: An error occurred in a thread" (which the scan would blame on the session being read)."""
    import functools

    def wrapper(self: SearchIndex, /, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        try:
            return method(self, *args, **kwargs)
        except (IndexBusy, IndexWriteError, DiskFull):
            raise
        except (ValueError, OSError, RuntimeError) as exc:
            self._broken = True
            raise write_failed(self.path, exc) from None

    functools.update_wrapper(wrapper, method)
    return wrapper


def counted(res: tantivy.SearchResult) -> int:
    """How many documents a search with ``count=True`` matched (tantivy-py's stub leaves the attribute out)."""
    n: int = res.count  # type: ignore[attr-defined]
    return n


def damaged(path: Path, exc: BaseException) -> IndexDamaged:
    """The one-line error for an index Tantivy cannot read (a truncated ``meta.json``, a lost segment)."""
    detail = " ".join(str(exc).split())
    detail = detail if len(detail) <= 160 else detail[:157] + "..."
    return IndexDamaged(
        f"the search index in {path} is damaged ({detail}); `voyager scan --rebuild` "
        "makes it anew from your agents' files (nothing of yours is lost)"
    )


def wipe(path: Path) -> None:
    """Delete the index files in ``path`` (a reset or a rebuild): the index is derived, the sources are the truth."""
    for p in path.iterdir():
        if p.is_file() or p.is_symlink():
            p.unlink()


#: Tantivy's lock around opening a reader and collecting files after a commit (``.tantivy-meta.lock``).
META_LOCK_FILE = ".tantivy-meta.lock"
#: How long to wait for it before saying who holds it: a running holder keeps it for milliseconds.
META_LOCK_WAIT = 5.0


def wait_for_meta_lock(path: Path, wait: float | None = None) -> None:
    """Return once Tantivy's meta lock in index directory ``path`` is free (or absent); :class:`Busy` naming its
    holder when it stays held for ``wait`` seconds (:data:`META_LOCK_WAIT`).

    Tantivy takes that lock blocking, with no timeout, to open or reload a reader and to collect files after a
    commit: a process stopped while it held the lock (Ctrl-Z on ``voyager serve``, a debugger) would hang every
    other Voyager process on the index for as long as it stays stopped. The probe costs an open and two flock
    calls when the lock is free; a holder that takes it in the moment after the probe is waited for as before.
    """
    try:
        import fcntl
    except ImportError:  # no flock here: Tantivy locks another way, and waits as it does
        return
    lock = path / META_LOCK_FILE
    try:
        fd = os.open(lock, os.O_RDONLY | os.O_CLOEXEC)
    except OSError:
        return  # not made yet: nobody holds it
    try:
        deadline = time.monotonic() + (META_LOCK_WAIT if wait is None else wait)
        delay = 0.001
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    raise Busy(meta_lock_held(lock)) from None
                time.sleep(delay)
                delay = min(delay * 2, 0.05)
                continue
            except OSError:
                return  # a file system without flock: Tantivy's own lock is all there is
            fcntl.flock(fd, fcntl.LOCK_UN)
            return
    finally:
        os.close(fd)


def meta_lock_held(lock: Path) -> str:
    """The one line for a meta lock held too long: which process holds it (``/proc/locks``) and if it is stopped."""
    pid = _flock_holder(lock)
    if pid is None:
        return f"the search index in {lock.parent} is locked by another process that does not let go"
    state = _process_state(pid)
    if state in ("T", "t"):
        return f"the search index is locked by process {pid}, which is stopped: `kill -CONT {pid}` lets it go on"
    return f"the search index is locked by process {pid}, which has held it for over {META_LOCK_WAIT:g} s"


def _flock_holder(lock: Path) -> int | None:
    try:
        st = os.stat(lock)
        with open("/proc/locks", encoding="ascii", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError:
        return None
    where = f"{os.major(st.st_dev):02x}:{os.minor(st.st_dev):02x}:{st.st_ino}"
    for line in lines:
        # "1: FLOCK  ADVISORY  WRITE 4242 fd:01:131 0 EOF"; a waiter's line has "->" after the number
        parts = line.split()
        if len(parts) >= 6 and parts[1] == "FLOCK" and parts[5] == where and parts[4].isdigit():
            return int(parts[4]) or None
    return None


def _process_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            stat = f.read()
    except OSError:
        return None
    rest = stat[stat.rfind(b")") + 1 :].split()
    return rest[0].decode("ascii", "replace") if rest else None


class SearchIndex:
    """An opened index: ``searcher()`` for reads, ``writer()`` for the one writer of this process."""

    def __init__(self, path: Path, *, create: bool = True) -> None:
        """Open the index in directory ``path`` (``DataDir.index``), creating it when ``create``."""
        self.path = path
        self.schema = build_schema()
        version_file = self.path / "voyager-index-version"
        if create:
            # Tantivy creates its files with the process umask; index content is as
            # private as the conversations it came from, so make that umask 077.
            os.umask(0o077)
            self.path.mkdir(parents=True, exist_ok=True)
            os.chmod(self.path, 0o700)
        if version_file.exists() and version_file.read_text().strip() != INDEX_FORMAT:
            if not create:
                # A reader cannot rebuild it, and Tantivy would call it damaged: say what it is instead.
                raise IndexDamaged(
                    f"the search index in {self.path} was built by another version of Voyager; `voyager scan` "
                    "rebuilds it from your agents' files (nothing of yours is lost)"
                )
            # An index written by an incompatible Voyager: start over (sources are the truth;
            # the new index gets a new id, so the scan state is dropped too).
            wipe(self.path)
        wait_for_meta_lock(self.path)
        try:
            self.index = tantivy.Index(self.schema, path=str(self.path), reuse=True)
            self.index.register_tokenizer(TOKENIZER_NAME, analyzer())
            self.index.searcher()  # opens every segment: a missing or truncated file shows here
        except ValueError as exc:
            raise damaged(self.path, exc) from None
        id_file = self.path / "voyager-index-id"
        if create and not version_file.exists():
            version_file.write_text(INDEX_FORMAT)
            os.chmod(version_file, 0o600)
            id_file.unlink(missing_ok=True)
        if create and not id_file.exists():
            # A new identity for every new (or reset) index: the scan state records which
            # index it describes, and starts over when that is not this one.
            id_file.write_text(os.urandom(16).hex())
        try:
            #: This index's identity; None for an index directory that was never set up.
            self.index_id: str | None = id_file.read_text().strip()
        except OSError:
            self.index_id = None
        self._writer: tantivy.IndexWriter | None = None
        self._broken = False  # a write failed: closing must not raise again over the first error
        # An index that held nothing when its writer started (a first index, a rebuild) holds, of a session, only
        # what this writer added: deleting one it never added is a no-op, and Tantivy would run each such deletion
        # as a query over the new segment at commit (a first index of 15,000 sessions asks 15,000 of them).
        self._was_empty = False
        self._added: set[str] = set()
        # The head document of each (session, kind, origin) (see ``event_document``), kept across batches.
        self._heads: dict[tuple[str, str, str], tantivy.Document] = {}

    # -- reading ---------------------------------------------------------------

    def searcher(self) -> tantivy.Searcher:
        return self.index.searcher()

    def num_events(self) -> int:
        return self.index.searcher().num_docs

    def count_kind(self, kind: str) -> int:
        """How many events of ``kind`` the index holds."""
        return counted(
            self.index.searcher().search(tantivy.Query.term_query(self.schema, "kind", kind), limit=1, count=True)
        )

    def num_segments(self) -> int:
        return self.index.searcher().num_segments

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.iterdir() if p.is_file())

    # -- writing ---------------------------------------------------------------

    def writer(self) -> tantivy.IndexWriter:
        if self._writer is None:
            try:
                # One indexing thread: Python (parsing, preparing text) is the slower side of
                # every build and one Tantivy thread keeps up with it, while each thread costs a
                # commit its own segment to finish: refresh commits take ~15 ms, not ~27.
                # 64 MB of indexing memory: with 128 MB a 340 MiB export of long prompts (indexed
                # twice, in `body` and `said`) peaked at 233-302 MB of RSS, past the 300 MB a
                # streamed source is held to; with 64 MB 221-228 MB, and it indexed no slower.
                self._writer = self.index.writer(heap_size=64_000_000, num_threads=1)
            except ValueError as exc:
                if "lock" in str(exc).lower():
                    raise IndexBusy(str(exc)) from exc
                raise
            self._was_empty = self.index.searcher().num_docs == 0
            self._added = set()
        return self._writer

    def _holds(self, session_id: str) -> bool:
        """False when the index cannot hold documents of ``session_id`` (see ``_was_empty``)."""
        return not self._was_empty or session_id in self._added

    @_writes
    def add_events(self, events: Iterable[Event]) -> int:
        """Add events as documents (uncommitted), preparing them here. Returns how many were added."""
        cap = max_event_chars()
        n = 0
        chunk: list[Event] = []
        size = 0
        for ev in events:
            chunk.append(ev)
            size += min(len(ev.text), cap)
            if size >= PREPARE_BATCH_CHARS:
                n += self.add_prepared(prepare_events(chunk, cap))
                chunk, size = [], 0
        if chunk:
            n += self.add_prepared(prepare_events(chunk, cap))
        return n

    @_writes
    def add_prepared(self, events: Iterable[PreparedEvent], horizon_ms: int | None = None) -> int:
        """Add events prepared beforehand (``search.prepare``: by a scan worker, say) as documents, uncommitted.
        ``horizon_ms``: the latest stamp they may count as (default: a day from now; a scan passes what their
        source's modification time proves, see ``event_document``)."""
        add = self.writer().add_document
        horizon = future_horizon_ms() if horizon_ms is None else min(horizon_ms, future_horizon_ms())
        heads = self._heads
        if len(heads) > 4096:
            heads.clear()
        n = 0
        session = None
        for ev in events:
            if ev.session != session:
                session = ev.session
                self._added.add(session)
            add(event_document(ev, horizon, heads))
            n += 1
        return n

    @_writes
    def delete_session(self, session_id: str, *, from_seq: int | None = None, keep_checkpoint: bool = True) -> None:
        """Delete a session's events (all, or those with ``seq >= from_seq``), uncommitted.

        Its checkpoint and title events (seq < 0) are kept unless ``keep_checkpoint`` is false (the session is gone).
        """
        w = self.writer()
        if not self._holds(session_id):
            return
        if not keep_checkpoint and (from_seq is None or from_seq <= 0):
            w.delete_documents_by_term("session", session_id)
            return
        # Session events have seq >= 0; the checkpoint mirror (seq -1) survives a re-read.
        q = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "session", session_id)),
                (
                    tantivy.Occur.Must,
                    tantivy.Query.range_query(
                        self.schema, "seq", tantivy.FieldType.Integer, max(0, from_seq or 0), None
                    ),
                ),
            ]
        )
        w.delete_documents_by_query(q)

    @_writes
    def delete_sessions(
        self, session_ids: Collection[str], *, keep_checkpoint: bool = True, titles: bool = False
    ) -> None:
        """``delete_session`` for many sessions at once, uncommitted: one delete operation, not one a session.

        Tantivy holds every delete operation until the commit, ~1.5 KB each: an export of 160,000
        conversations read anew held a quarter of a gigabyte of them. ``titles``: their title events go too.
        """
        self.writer()
        # Into an index that was empty, only sessions added since can have documents: a first index asked
        # to replace 15,000 sessions before adding them spent 3.6 s of its 30 s CPU in deletes of nothing.
        held = [sid for sid in session_ids if self._holds(sid)]
        if not held:
            return
        sessions = tantivy.Query.term_set_query(self.schema, "session", held)
        if not keep_checkpoint:
            self.writer().delete_documents_by_query(sessions)
            return
        events = tantivy.Query.range_query(self.schema, "seq", tantivy.FieldType.Integer, 0, None)
        if titles:
            title = tantivy.Query.term_query(self.schema, "kind", "title")
            events = tantivy.Query.boolean_query([(tantivy.Occur.Should, events), (tantivy.Occur.Should, title)])
        self.writer().delete_documents_by_query(
            tantivy.Query.boolean_query([(tantivy.Occur.Must, sessions), (tantivy.Occur.Must, events)])
        )

    def delete_checkpoint(self, session_id: str) -> None:
        """Delete ``session_id``'s checkpoint event (the one ``delete_session`` keeps), uncommitted."""
        self._delete_kind(session_id, "checkpoint")

    def delete_title(self, session_id: str) -> None:
        """Delete ``session_id``'s title event (kept, like the checkpoint, when its events are replaced), uncommitted."""
        self._delete_kind(session_id, "title")

    @_writes
    def _delete_kind(self, session_id: str, kind: str) -> None:
        w = self.writer()
        if not self._holds(session_id):
            return
        w.delete_documents_by_query(
            tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "session", session_id)),
                    (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "kind", kind)),
                ]
            )
        )

    def reload(self) -> None:
        """See what was committed since this index was opened or last reloaded."""
        wait_for_meta_lock(self.path)
        self.index.reload()

    @_writes
    def commit(self) -> None:
        if self._writer is not None:
            wait_for_meta_lock(self.path)  # the commit collects files under the lock
            self._writer.commit()
            self.index.reload()

    def close(self) -> None:
        """Let the writer finish its merges and release it; uncommitted work is dropped (after a failed
        write there is nothing worth keeping, and the error that matters was already raised)."""
        if self._writer is not None:
            writer, self._writer = self._writer, None
            try:
                if self._broken:
                    writer.rollback()
                writer.wait_merging_threads()
            except (ValueError, OSError, RuntimeError) as exc:
                if not self._broken:
                    raise write_failed(self.path, exc) from None

    # -- events back out -------------------------------------------------------

    def session_events(self, session_id: str, *, lo: int | None = None, hi: int | None = None) -> list[Event]:
        """A session's events in seq order, optionally only ``lo <= seq <= hi``."""
        s = self.index.searcher()
        q = tantivy.Query.term_query(self.schema, "session", session_id)
        if lo is not None or hi is not None:
            q = tantivy.Query.boolean_query(
                [
                    (tantivy.Occur.Must, q),
                    (
                        tantivy.Occur.Must,
                        tantivy.Query.range_query(self.schema, "seq", tantivy.FieldType.Integer, lo, hi),
                    ),
                ]
            )
        res = s.search(q, limit=max(1, s.num_docs), count=False, order_by_field="seq", order=tantivy.Order.Asc)
        return [doc_to_event(s.doc(addr)) for _, addr in res.hits]

    def said_events(self, session_id: str, *, first: int, last: int) -> list[Event]:
        """What the person and the agent wrote in a session (``user`` and ``assistant`` events, no tool output):
        its first ``first`` and last ``last`` such events in seq order, each once. Bounded whatever the
        session's length: what the meaning embedder reads (``search.embed.session_text``)."""
        s = self.index.searcher()
        kinds = tantivy.Query.boolean_query(
            [(tantivy.Occur.Should, tantivy.Query.term_query(self.schema, "kind", k)) for k in ("user", "assistant")]
        )
        q = tantivy.Query.boolean_query(
            [
                (tantivy.Occur.Must, tantivy.Query.term_query(self.schema, "session", session_id)),
                (tantivy.Occur.Must, kinds),
            ]
        )
        seen: dict[int, Event] = {}
        for n, order in ((first, tantivy.Order.Asc), (last, tantivy.Order.Desc)):
            if n <= 0:
                continue
            res = s.search(q, limit=n, count=False, order_by_field="seq", order=order)
            for _, addr in res.hits:
                ev = doc_to_event(s.doc(addr))
                seen.setdefault(ev.seq, ev)
        return [seen[k] for k in sorted(seen)]

    def iter_session_ids(self) -> Iterator[str]:
        """Distinct session ids present in the index (tests compare an index with the sources this way)."""
        s = self.index.searcher()
        agg = s.aggregate(tantivy.Query.all_query(), {"s": {"terms": {"field": "session", "size": 1_000_000}}})
        for bucket in agg.get("s", {}).get("buckets", []):
            yield bucket["key"]


#: How far past the moment it is indexed an event's stamp may lie before filters and sorting clamp it.
FUTURE_SLACK_MS = 86_400_000


def future_horizon_ms(now: float | None = None) -> int:
    """The latest ``ts`` (ms) a document indexed now gets: a day past ``now`` (default: this instant)."""
    return int((time.time() if now is None else now) * 1000) + FUTURE_SLACK_MS


def event_document(
    ev: PreparedEvent, horizon: int | None = None, heads: dict[tuple[str, str, str], tantivy.Document] | None = None
) -> tantivy.Document:
    """The document of a prepared event: ``stored`` is kept for display, ``body`` is what the analyzer indexes.

    ``horizon`` (ms, default a day from now): a later stamp is indexed as ``horizon`` and kept as given in ``tsg``.
    ``heads`` (a dict the caller keeps over a batch) holds, per session, kind and origin, a document of the fields
    those decide; each event's document starts as a copy of it (one call into Tantivy instead of six: building a
    document costs about one call per field, and a batch's events share these fields).
    """
    key = (ev.session, ev.kind, ev.origin)
    head = heads.get(key) if heads is not None else None
    if head is None:
        head = _head(*key)
        if heads is not None:
            heads[key] = head
    doc: tantivy.Document = head.__copy__()  # type: ignore[attr-defined]  # tantivy-py has it; its stubs do not say so
    if ev.tool:
        doc.add_text("tool", ev.tool)
    if ev.call_id:
        doc.add_text("call_id", ev.call_id)
    doc.add_integer("seq", ev.seq)
    if ev.ts is not None:
        ms = int(ev.ts * 1000)
        limit = future_horizon_ms() if horizon is None else horizon
        doc.add_integer("ts", min(ms, limit))
        if limit < ms < 1 << 63:
            doc.add_integer("tsg", ms)
    if ev.exit_code is not None:
        doc.add_integer("exit", ev.exit_code)
    if ev.is_error:
        doc.add_boolean("err", True)
    body = ev.body.decode()
    doc.add_text("body", body)
    parts = ev.parts.decode() if ev.parts else ""
    if parts:
        doc.add_text("parts", parts)
    if ev.kind in SAID_KINDS:
        doc.add_text("said", f"{body} {parts}" if parts else body)
    doc.add_bytes("text", ev.stored)
    return doc


def _head(session: str, kind: str, origin: str) -> tantivy.Document:
    """The fields of an event's document that its session, kind and origin decide."""
    doc = tantivy.Document()
    doc.add_text("session", session)
    doc.add_text("provider", session.split(":", 1)[0])
    doc.add_text("kind", kind)
    doc.add_text("origin", origin)
    doc.add_unsigned("w", KIND_WEIGHTS.get(kind, 0))
    doc.add_unsigned("sk", session_key(session))
    return doc


def _first(d: dict[str, list[Any]], key: str, default: Any = None) -> Any:
    v = d.get(key)
    return v[0] if v else default


def doc_to_event(doc: tantivy.Document) -> Event:
    d = doc.to_dict()
    ts = _first(d, "tsg", _first(d, "ts"))
    return Event(
        session=_first(d, "session"),
        seq=_first(d, "seq"),
        kind=_first(d, "kind"),
        origin=_first(d, "origin"),
        text=bytes(_first(d, "text", b"")).decode("utf-8", "replace"),
        ts=None if ts is None else ts / 1000.0,
        tool=_first(d, "tool"),
        call_id=_first(d, "call_id"),
        exit_code=_first(d, "exit"),
        is_error=bool(_first(d, "err", False)),
    )
