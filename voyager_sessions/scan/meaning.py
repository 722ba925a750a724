"""The meaning embedder: vectors for the sessions that have none for their current text, newest first.

The writer side of meaning search (``search.embed`` is the model, ``store.vectors`` the
vectors, ``search.fusion`` the ranking). It runs in the background of ``voyager serve``
and ``voyager watch`` after each refresh, and in the foreground for ``voyager scan
--meaning``, which returns when every session has a vector (scripts and tests wait
that way). It never holds the scan's writer lock: it reads what the index has committed
and writes only ``meaning.db``.

Crash safety: a session's stamp (event count, last activity) is read from ``state.db``
*before* its text is read from the index, and the index commits before the state rows
that describe it; so the text a vector is made of is never older than the stamp it is
stored with, and a vector counts only while that stamp is its session's
(``store.vectors``). A killed embedder leaves sessions without a vector, never one
that describes other text. The scan forgets the vectors of the sessions it rewrites
(:func:`forget`) between its index commit and its state commit.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import msgspec

from voyager_sessions.core.paths import DataDir

#: Sessions embedded per model call and per transaction of meaning.db.
BATCH = 8

ProgressFn = Callable[[int, int], None]


class EmbedSummary(msgspec.Struct, kw_only=True):
    embedded: int = 0
    #: Sessions with a usable vector, of those with events, when the run ended.
    ready: int = 0
    total: int = 0
    seconds: float = 0.0


def forget(ddir: DataDir, session_ids: Iterable[str]) -> None:
    """Drop the vectors of sessions the scan is about to describe anew (nothing to do before any vector exists)."""
    from voyager_sessions.store.vectors import VectorStore

    ids = list(session_ids)
    if not ids:
        return
    store = VectorStore.open_if_exists(ddir.meaning_db, ddir.state_db)
    if store is None:
        return
    try:
        store.forget(ids)
    finally:
        store.close()


def embed_pending(
    ddir: DataDir | Path,
    *,
    progress: ProgressFn | None = None,
    stop: threading.Event | None = None,
    threads: int = 1,
    batch: int = BATCH,
) -> EmbedSummary:
    """Embed every session that has no vector for its current text, newest first, until none is missing
    (sessions a scan commits meanwhile included) or ``stop`` is set. ``progress(done, total)`` after each batch.

    Raises ``search.embed.ModelMissing`` when the model is not installed.
    """
    from voyager_sessions.search.embed import FIRST_MESSAGES, LAST_MESSAGES, MODEL_ID, encode, model, session_text
    from voyager_sessions.search.index import SearchIndex
    from voyager_sessions.store.state import StateStore
    from voyager_sessions.store.vectors import VectorStore

    ddir = ddir if isinstance(ddir, DataDir) else DataDir(ddir)
    started = time.perf_counter()
    m = model(threads)
    store = VectorStore(ddir.meaning_db, ddir.state_db)
    state = StateStore(ddir.state_db, readonly=True)
    index = SearchIndex(ddir.index, create=False)
    summary = EmbedSummary()
    try:
        store.prune(MODEL_ID)
        done = 0
        while not (stop is not None and stop.is_set()):
            todo = store.pending(MODEL_ID)  # stamps first...
            if not todo:
                break
            total = done + len(todo)
            index.index.reload()  # ...then the text, never older than them
            for i in range(0, len(todo), batch):
                if stop is not None and stop.is_set():
                    break
                chunk = todo[i : i + batch]
                records = state.sessions_by_id(sid for sid, _ in chunk)
                texts = []
                for sid, _ in chunk:
                    rec = records.get(sid)
                    said = index.said_events(sid, first=FIRST_MESSAGES, last=LAST_MESSAGES)
                    texts.append(session_text(rec.session.title if rec else None, [(e.seq, e.text) for e in said]))
                vecs = _embed(m, texts)
                store.put(MODEL_ID, [(sid, stamp, vec) for (sid, stamp), vec in zip(chunk, encode(vecs))])
                done += len(chunk)
                summary.embedded = done
                if progress is not None:
                    progress(done, total)
        summary.ready, summary.total = store.counts(MODEL_ID)
    finally:
        store.close()
        state.close()
    summary.seconds = round(time.perf_counter() - started, 3)
    return summary


def _embed(m, texts: list[str]):
    """Vectors for ``texts``; an empty text (a session of tool output only) gets a zero vector, never ranked."""
    import numpy as np

    from voyager_sessions.search.embed import DIM

    out = np.zeros((len(texts), DIM), dtype=np.float32)
    said = [i for i, t in enumerate(texts) if t.strip()]
    if said:
        out[said] = m.passages([texts[i] for i in said]).reshape(len(said), DIM)
    return out


def status(ddir: DataDir) -> dict[str, object]:
    """Whether the model is installed and how many sessions meaning can rank: ``{"model", "sessions_ready",
    "sessions_total"}`` (``model``: the model's id, or None when it is not installed)."""
    from voyager_sessions.search.embed import MODEL_ID, available
    from voyager_sessions.store.vectors import VectorStore

    ready = total = 0
    if ddir.state_db.exists():
        store = VectorStore.open_if_exists(ddir.meaning_db, ddir.state_db, readonly=True)
        if store is not None:
            try:
                ready, total = store.counts(MODEL_ID)
            finally:
                store.close()
        else:
            total = _sessions_with_events(ddir)
    return {"model": MODEL_ID if available() else None, "sessions_ready": ready, "sessions_total": total}


def _sessions_with_events(ddir: DataDir) -> int:
    from voyager_sessions.store.state import StateStore

    state = StateStore(ddir.state_db, readonly=True)
    try:
        return state.count_sessions_with_events()
    finally:
        state.close()


class Background:
    """The embedder as a daemon thread of a long-running process (``serve``, ``watch``): :meth:`wake` after
    each refresh; it embeds what is missing and sleeps again. Without the model it does nothing at all."""

    def __init__(self, ddir: DataDir, *, log: Callable[[str], None] = lambda message: None) -> None:
        from voyager_sessions.search.embed import available

        self.ddir = ddir
        self.log = log
        self.enabled = available()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.running = False
        self.last: EmbedSummary | None = None

    def start(self) -> None:
        if self.enabled and self._thread is None:
            self._thread = threading.Thread(target=self._loop, name="voyager-meaning", daemon=True)
            self._thread.start()
            self._wake.set()

    def wake(self) -> None:
        self._wake.set()

    def status(self) -> dict[str, object]:
        """What ``serve status`` and ``doctor`` say of meaning here (see :func:`status`)."""
        return {**status(self.ddir), "embedding": self.running}

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _loop(self) -> None:
        from voyager_sessions.core.errors import VoyagerError

        while not self._stop.is_set():
            self._wake.wait()
            self._wake.clear()
            if self._stop.is_set():
                break
            if not self.ddir.has_index():
                continue
            self.running = True
            try:
                self.last = embed_pending(self.ddir, stop=self._stop)
            except VoyagerError as exc:  # the model will not load, a database is busy: said once, tried next wake
                self.log(f"meaning: {exc}")
            finally:
                self.running = False
