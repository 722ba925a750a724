"""Reading sources on worker processes: parse and prepare on every core, write in one place.

A :class:`Pool` runs ``size`` worker processes. Each gets jobs (one source to read, with
its cursor) on a pipe of its own and answers on another with the source's stream in
prepared chunks (:mod:`.chunks`): the adapter's decoding and mapping and the analyzer's
``prepare`` run there, in parallel. The scan's process stays the one writer: it applies
the chunks, builds documents, deletes and replaces, commits and writes state, exactly
as when it reads a source itself.

Order and memory: the writer takes sources in plan order, so results, notices and
commit points do not depend on how many workers ran. Sources are handed over in batches
of consecutive sources of the plan (``BATCH_BYTES`` to read at most, or one source larger
than that), and a worker sends what it read of small sources together (``OUT_BYTES`` a
message): a first index of 15,000 small sessions is then not 30,000 pipe messages, each a
wake-up of the other side (on a loaded machine most of the writer's time went there). A
worker holds at most ``IN_FLIGHT`` batches handed to it and not yet taken by the writer;
what it has read ahead waits in its pipe (grown to 1 MiB where Linux allows; a worker that
filled it blocks), so a worker's memory is its adapter's plus a message, a huge session
included. While the writer commits (a tenth of a second to most of a second, in which it takes
nothing), a thread of the writer's takes the workers' messages off their pipes into memory,
``ASIDE_BYTES`` a worker at most (:meth:`Pool.aside`): a pipe holds ~40 ms of a worker's answers
on small sessions, so without it the workers stopped at every commit.

Workers read and never write: they are forked where the platform forks cheaply (Linux),
and drop every inherited descriptor but their two pipes first (the writer lock, the
index, the state database are the writer's alone); elsewhere they are spawned, which
inherits nothing (and, as ``multiprocessing`` does, imports the program's main module
again: Voyager's entry points guard theirs; a program calling ``scan`` must too). A worker that dies (killed, out of memory, a crash in C code) costs
the source it was reading: the writer gets end-of-file on its pipe, names that source in
a notice (retried next scan), starts a replacement and hands it the worker's other
sources. A worker whose writer died gets a broken pipe, end-of-file, or (Linux) the
kernel's parent-death signal, and exits.
"""

from __future__ import annotations

import contextlib
import functools
import gc
import itertools
import os
import signal
import struct
import sys
import warnings
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any

from voyager_sessions.core.errors import VoyagerError
from voyager_sessions.ingest.limits import bounded
from voyager_sessions.scan.chunks import (
    AdapterFailed,
    Chunk,
    Job,
    Prepared,
    WorkerLost,
    chunk_of,
    decode_chunk,
    decode_jobs,
    encode,
    encode_jobs,
    failure_reason,
    prepared_chunks,
)

if TYPE_CHECKING:  # multiprocessing is imported when a pool starts, not by every scan that imports this
    from multiprocessing.connection import Connection

#: Batches a worker may hold at once (being read, or read and waiting for the writer). Eight: a batch of small
#: sessions is ~20 ms of a worker's work, and with two a worker ran out of sources during a commit (the writer
#: hands out more only as it takes results). What a worker has read waits in its pipe or ``ASIDE_BYTES``.
IN_FLIGHT = 8
#: A batch: consecutive sources of the plan with at most this many bytes to read together (a larger source goes
#: alone), and at most ``BATCH_JOBS`` of them.
BATCH_BYTES = 1 << 20
BATCH_JOBS = 64
#: A worker's chunks of small sources travel together, in messages of about this many bytes.
OUT_BYTES = 256 << 10
#: Workers a scan may start in place of ones that died, beyond its first: past that, the
#: sources left are named as not read (and read again by the next scan), never lost.
MAX_REPLACEMENTS = 8
_LENGTH = struct.Struct("<I")

#: While the writer commits (it takes no chunk then), a thread of its own takes the workers' answers off their
#: pipes into memory, at most this many bytes a worker, so they go on reading (see :meth:`Pool.aside`).
ASIDE_BYTES = 16 << 20

#: Bytes a worker's answer pipe holds (Linux lets a pipe grow to 1 MiB unprivileged): a few
#: chunks, so a worker goes on reading while the writer applies what it sent before.
PIPE_BYTES = 1 << 20


def start_method() -> str:
    """``fork`` on Linux (cheap, and safe for what workers do), ``spawn`` elsewhere; ``VOYAGER_WORKER_START`` overrides."""
    wanted = os.environ.get("VOYAGER_WORKER_START")
    if wanted in ("fork", "spawn", "forkserver"):
        return wanted
    return "fork" if sys.platform.startswith("linux") else "spawn"


# -- the worker side ----------------------------------------------------------------


def worker_main(jobs: Connection, out: Connection, parent: int, forked: bool) -> None:
    """A worker's life: read each job's source and send its chunks, until the writer closes the job pipe."""
    _detach(jobs, out, parent, forked)
    from voyager_sessions.ingest import adapters as registry

    for data in _job_inbox(jobs):
        outbox = _Outbox(out)
        try:
            for job in decode_jobs(data):
                _run(job, outbox, registry)
                outbox.job_done()
            outbox.flush()
        except OSError:
            return  # the pipe broke: the writer stopped listening


class _Outbox:
    """A worker's answer pipe, its small messages sent together: length-prefixed chunks, ``OUT_BYTES`` a message."""

    def __init__(self, out: Connection) -> None:
        self.out = out
        self.parts: list[bytes] = []
        self.size = 0

    def send_bytes(self, data: bytes) -> None:
        self.parts.append(_LENGTH.pack(len(data)))
        self.parts.append(data)
        self.size += len(data)
        if self.size >= OUT_BYTES:
            self.flush()

    def job_done(self) -> None:
        """A job's last chunk is in: sent once enough has gathered (the batch's end sends the rest)."""
        if self.size >= OUT_BYTES:
            self.flush()

    def flush(self) -> None:
        if self.parts:
            self.out.send_bytes(b"".join(self.parts))
            self.parts, self.size = [], 0


def _job_inbox(jobs: Connection) -> Iterator[bytes]:
    """The jobs the writer sends, taken off their pipe by a thread as they come.

    The writer must never wait on a worker to take a job (a cursor can be large: an
    OpenCode database's names every session) while that worker waits on the writer to
    take its chunks: the two would wait for each other for ever.
    """
    import queue
    import threading

    inbox: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()

    def receive() -> None:
        try:
            while True:
                inbox.put(jobs.recv_bytes())
        except (EOFError, OSError):
            inbox.put(None)  # the writer is done (or gone)

    threading.Thread(target=receive, name="voyager-scan-jobs", daemon=True).start()
    while (data := inbox.get()) is not None:
        yield data


def _run(job: Job, out: _Outbox, registry: Any) -> None:
    """Read one job's source and send its chunks, the last with ``end``; a failed pipe propagates (the writer is gone)."""
    send = out.send_bytes
    try:
        adapter = registry.get(job.source.provider)
        chunks = prepared_chunks(bounded(job.source, adapter.read(job.source, job.cursor)))
    except VoyagerError as exc:
        send(encode(chunk_of(job.id, [], end=True, abort=_aborted(exc))))
        return
    except Exception as exc:  # the adapter failed before its first item: this source's problem
        send(encode(chunk_of(job.id, [], end=True, error=failure_reason(exc))))
        return
    # The last chunk carries ``end`` itself (one message for a small source, not two): each
    # chunk is sent once the next one is known to exist.
    held: list[Any] | None = None
    while True:
        try:
            items = next(chunks, None)
        except AdapterFailed as exc:
            send(encode(chunk_of(job.id, held or [], end=True, error=exc.reason)))
            return
        except VoyagerError as exc:
            send(encode(chunk_of(job.id, held or [], end=True, abort=_aborted(exc))))
            return
        except Exception as exc:  # preparing the text failed: this source's problem too
            send(encode(chunk_of(job.id, held or [], end=True, error=failure_reason(exc))))
            return
        if items is None:
            break
        if held is not None:
            send(encode(chunk_of(job.id, held)))
        held = items
    send(encode(chunk_of(job.id, held or [], end=True)))


def _aborted(exc: VoyagerError) -> str:
    return str(exc) or type(exc).__name__


def _detach(jobs: Connection, out: Connection, parent: int, forked: bool) -> None:
    """Make a fresh worker harmless: no Ctrl-C traceback, no stdout, none of the writer's descriptors."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the writer handles Ctrl-C and stops the workers
    if sys.platform.startswith("linux"):
        _die_with_parent(parent)
    devnull = os.open(os.devnull, os.O_RDWR)
    os.dup2(devnull, 1)  # stdout is data: a worker never writes there
    if forked:
        # Fork shares the writer's memory until a page is written. What the writer had allocated
        # is the collector's to walk no more (freezing splices lists, it touches no object), so
        # those pages stay shared instead of being copied by the first full collection.
        gc.freeze()
        # A forked worker inherited the writer's descriptors: the scan lock above all, which
        # must die with the writer, not live on in its workers. Point them at /dev/null
        # rather than closing them, so no stale object of the parent's can ever close a
        # descriptor this worker opens later under the same number.
        keep = {0, 1, 2, devnull, jobs.fileno(), out.fileno()}
        try:
            fds = [int(name) for name in os.listdir("/proc/self/fd")]
        except OSError:
            fds = list(range(3, 256))
        for fd in fds:
            if fd not in keep:
                try:
                    os.dup2(devnull, fd)
                except OSError:
                    pass


def _die_with_parent(parent: int) -> None:
    """Ask Linux to kill this worker when the writer dies (PR_SET_PDEATHSIG), however it dies."""
    prctl = _prctl()
    if prctl is not None:
        prctl(1, signal.SIGKILL, 0, 0, 0)  # 1 = PR_SET_PDEATHSIG
    if os.getppid() != parent:  # the writer died before the request took effect
        os._exit(0)


@functools.lru_cache(maxsize=1)
def _prctl() -> Any:
    """libc's ``prctl`` (Linux), loaded once: by the writer before it forks, so no worker pays for ctypes."""
    try:
        import ctypes

        return ctypes.CDLL(None, use_errno=True).prctl
    except (OSError, AttributeError, ImportError):
        return None


# -- the writer side ----------------------------------------------------------------


class _Worker:
    """One worker process and the writer's ends of its pipes."""

    def __init__(self, ctx: Any, method: str) -> None:
        import multiprocessing as mp

        jobs_r, jobs_w = mp.Pipe(duplex=False)
        out_r, out_w = mp.Pipe(duplex=False)
        _grow(out_w)
        self.proc = ctx.Process(
            target=worker_main,
            args=(jobs_r, out_w, os.getpid(), method == "fork"),
            name="voyager-scan-worker",
            daemon=True,
        )
        with warnings.catch_warnings():
            # Python 3.12+ warns that forking a process with threads (Tantivy's reader has one) may
            # deadlock the child. A worker touches nothing those threads own: it reads files with
            # its adapter and writes its own pipe (see _detach).
            warnings.filterwarnings("ignore", message=r".*multi-threaded.*fork", category=DeprecationWarning)
            self.proc.start()
        # The writer keeps only its own ends: the worker's end-of-file then means the worker is gone.
        jobs_r.close()
        out_w.close()
        self.jobs = jobs_w
        self.out = out_r
        self.load = 0  # sources handed over and not yet taken
        self.batches: deque[int] = deque()  # sources of each batch handed over not yet taken, oldest first
        self.inbox: deque[bytes] = deque()  # chunks received and not yet taken
        self.aside: deque[bytes] = deque()  # messages taken off the pipe while the writer committed, not yet split
        self.aside_bytes = 0
        self.dead = False  # known dead: its pipe ended
        self.broken = False  # its job pipe broke: dead, or dying, and not yet known so

    def send(self, jobs: list[Job]) -> bool:
        """Hand ``jobs`` over as one batch; False when the worker is gone (its pipe is broken): it gets no more."""
        try:
            self.jobs.send_bytes(encode_jobs(jobs))
        except OSError:
            self.broken = True
            return False
        self.load += len(jobs)
        self.batches.append(len(jobs))
        return True

    def took(self) -> None:
        """The writer took one source's results."""
        self.load -= 1
        if self.batches:
            self.batches[0] -= 1
            if self.batches[0] <= 0:
                self.batches.popleft()

    def receive(self) -> bytes:
        """The next chunk's bytes from this worker (EOFError/OSError when it is gone)."""
        if not self.inbox:
            if self.aside:
                message = self.aside.popleft()
                self.aside_bytes -= len(message)
            else:
                message = self.out.recv_bytes()
            data = memoryview(message)
            at, end, unpack, size = 0, len(data), _LENGTH.unpack_from, _LENGTH.size
            while at < end:
                (n,) = unpack(data, at)
                at += size
                self.inbox.append(bytes(data[at : at + n]))
                at += n
        return self.inbox.popleft()

    def waiting(self) -> bool:
        """True when chunks of this worker's are here, received and not yet taken."""
        return bool(self.inbox or self.aside)

    def died(self) -> str:
        """Mark the worker dead and say how it ended, for the notice."""
        self.dead = True
        self.proc.join(timeout=5)
        code = self.proc.exitcode
        if code is None:
            self.proc.kill()
            self.proc.join(timeout=5)
            return "the worker process reading it stopped answering"
        if code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            return f"the worker process reading it was killed ({name})"
        return f"the worker process reading it exited (status {code})"

    def stop(self, *, kill: bool) -> None:
        self.hang_up(kill=kill)
        self.reap()

    def hang_up(self, *, kill: bool) -> None:
        """Close the writer's ends (an idle worker then exits), or kill a busy one."""
        for conn in (self.jobs, self.out):
            try:
                conn.close()
            except OSError:
                pass
        if kill and self.proc.is_alive():
            self.proc.kill()

    def reap(self) -> None:
        self.proc.join(timeout=5)
        if self.proc.is_alive():
            self.proc.kill()
            self.proc.join(timeout=5)


def _grow(conn: Connection) -> None:
    """Make ``conn``'s pipe hold ``PIPE_BYTES`` where the system allows (Linux ``F_SETPIPE_SZ``); else keep its size."""
    try:
        import fcntl

        fcntl.fcntl(conn.fileno(), getattr(fcntl, "F_SETPIPE_SZ", 1031), PIPE_BYTES)
    except (ImportError, OSError):
        pass


class Pool:
    """``size`` worker processes reading sources for one writer, which takes their results in job order."""

    def __init__(self, size: int) -> None:
        import multiprocessing as mp

        self.method = start_method()
        self.ctx = mp.get_context(self.method)
        self.workers: list[_Worker] = []
        self.replacements = 0
        #: Work the writer does while it waits for a worker (True: it did some, and may do more); None: wait.
        self.idle: Callable[[], bool] | None = None
        if self.method == "fork" and sys.platform.startswith("linux"):
            _prctl()
        try:
            for _ in range(max(1, size)):
                self.workers.append(_Worker(self.ctx, self.method))
        except BaseException:
            self.close()
            raise

    def run(self, jobs: Iterable[Job]) -> Iterator[tuple[Job, Iterator[Prepared]]]:
        """Each job in order with the stream of its chunks' items; consume a stream whole before asking for the next.

        A stream raises :class:`AdapterFailed` when the adapter raised (after the items it
        yielded before) and :class:`WorkerLost` when the worker died.
        """
        pending = iter(jobs)
        queue: deque[tuple[Job, _Worker]] = deque()
        more = True
        ahead: list[Job] = []  # a job taken from ``pending`` that did not fit the last batch

        def next_batch() -> list[Job]:
            nonlocal more
            batch: list[Job] = []
            cost = 0
            while len(batch) < BATCH_JOBS:
                job = ahead.pop() if ahead else next(pending, None)
                if job is None:
                    more = False
                    break
                c = job_cost(job)
                if batch and cost + c > BATCH_BYTES:
                    ahead.append(job)
                    break
                batch.append(job)
                cost += c
                if cost >= BATCH_BYTES:
                    break
            return batch

        def fill() -> None:
            nonlocal more, pending
            while more or ahead:
                for i, w in enumerate(self.workers):
                    if w.broken and w.load == 0 and self.replacements < MAX_REPLACEMENTS:
                        self.workers[i] = self._fresh(w)  # gone with nothing of ours: replace it now
                ready = [w for w in self.workers if not w.dead and not w.broken and len(w.batches) < IN_FLIGHT]
                if not ready:
                    return
                batch = next_batch()
                if not batch:
                    return
                for worker in sorted(ready, key=lambda w: w.load):
                    if worker.send(batch):
                        queue.extend((job, worker) for job in batch)
                        break
                else:  # every ready worker broke on the way: start over with their replacements
                    pending = itertools.chain(batch, pending)
                    more = True

        fill()
        while queue:
            job, worker = queue.popleft()
            stream = _Stream(job, worker, self.idle)
            yield job, iter(stream)
            stream.drain()
            worker.took()
            if (worker.dead or (worker.broken and worker.load == 0)) and self.replacements < MAX_REPLACEMENTS:
                self._replace(worker, queue)
            fill()
        for job in itertools.chain(ahead, pending):  # no worker is left to read them: say so for each, lose none
            yield job, _unread()

    @contextlib.contextmanager
    def aside(self) -> Iterator[None]:
        """While the writer does something else for a while (a commit: Tantivy's and SQLite's writes let go of
        the interpreter), a thread takes the workers' answers off their pipes, so a worker does not stop reading
        once its pipe is full (1 MiB: ~100 of the small sessions of a first index, ~40 ms of a worker's work;
        a commit takes 0.1-0.7 s). At most ``ASIDE_BYTES`` a worker; the writer takes them in order as before.
        """
        live = [w for w in self.workers if not w.dead and not w.broken and w.load > 0]
        if not live:
            yield
            return
        import threading

        stop = threading.Event()
        thread = threading.Thread(target=_take_aside, args=(live, stop), name="voyager-scan-aside", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join()

    def _replace(self, dead: _Worker, queue: deque[tuple[Job, _Worker]]) -> None:
        """Start a worker in place of ``dead`` and hand it the sources it held (none was taken yet)."""
        fresh = self._fresh(dead)
        self.workers[self.workers.index(dead)] = fresh
        held = [job for job, worker in queue if worker is dead]
        if held and not fresh.send(held):  # the new one died at once: let its streams say so
            fresh.load += len(held)
            fresh.batches.append(len(held))
        for i, (job, worker) in enumerate(queue):
            if worker is dead:
                queue[i] = (job, fresh)

    def _fresh(self, dead: _Worker) -> _Worker:
        """A new worker for one that is gone. Spawned, not forked: by now the writer runs Tantivy's
        threads, and a fresh interpreter inherits none of them (this is rare; its start-up cost is not)."""
        import multiprocessing as mp

        dead.stop(kill=True)
        self.replacements += 1
        return _Worker(mp.get_context("spawn") if self.method == "fork" else self.ctx, "spawn")

    def close(self) -> None:
        """Stop every worker: idle ones exit at end-of-file, busy ones (the scan failed midway) are killed."""
        for w in self.workers:  # all at once: they exit side by side
            w.hang_up(kill=w.load > 0)
        for w in self.workers:
            w.reap()
        self.workers = []

    def __enter__(self) -> Pool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _take_aside(workers: list[_Worker], stop: Any) -> None:
    """Take whole messages off ``workers``' pipes into their ``aside`` queues until ``stop`` is set.

    A pipe that ends (the worker died) is left alone here: the writer finds its end when it gets there,
    as it would have without this thread. Only whole messages are taken (``recv_bytes`` reads one whole).
    """
    from multiprocessing.connection import wait

    open_: dict[Any, _Worker] = {w.out: w for w in workers}
    while open_ and not stop.is_set():
        room = [conn for conn, w in open_.items() if w.aside_bytes < ASIDE_BYTES]
        if not room:
            stop.wait(0.01)
            continue
        for conn in wait(room, timeout=0.01):
            worker = open_[conn]
            try:
                message = worker.out.recv_bytes()
            except (EOFError, OSError):
                del open_[conn]
                continue
            worker.aside.append(message)
            worker.aside_bytes += len(message)


def job_cost(job: Job) -> int:
    """About how many bytes reading ``job`` costs (what ``BATCH_BYTES`` counts), a few KiB at least a source."""
    fp = job.source.fingerprint
    offset = job.cursor.offset if job.cursor is not None else 0
    return max(4096, fp.size - offset + fp.wal_size)


def _unread() -> Iterator[Prepared]:
    raise WorkerLost("no worker process was left to read it (they kept dying)")
    yield  # a generator: the error comes when the writer starts reading


class _Stream:
    """The chunks of one job, read from its worker's pipe, as items."""

    def __init__(self, job: Job, worker: _Worker, idle: Callable[[], bool] | None = None) -> None:
        self.job = job
        self.worker = worker
        self.done = False
        self.idle = idle

    def __iter__(self) -> Iterator[Prepared]:
        while not self.done:
            chunk = self._next()
            if chunk.end:
                self.done = True
            yield from chunk.items()
            if chunk.abort is not None:
                raise VoyagerError(chunk.abort)
            if chunk.error is not None:
                raise AdapterFailed(chunk.error)

    def _next(self) -> Chunk:
        if self.worker.dead:
            self.done = True
            raise WorkerLost("the worker process reading it had died")
        try:
            if self.idle is not None and not self.worker.waiting():
                # Nothing from the worker yet: do what is waiting here rather than wait (as long as there is some).
                out = self.worker.out
                while not out.poll(0) and self.idle():
                    pass
            data = self.worker.receive()
        except (EOFError, OSError):
            self.done = True
            raise WorkerLost(self.worker.died()) from None
        chunk = decode_chunk(data)
        if chunk.job != self.job.id:  # cannot happen: a worker answers its jobs in order
            self.done = True
            self.worker.dead = True
            raise WorkerLost(f"the worker process answered job {chunk.job} for job {self.job.id}")
        return chunk

    def drain(self) -> None:
        """Read what is left of this job (the writer stopped early), so the next job's chunks come next."""
        while not self.done:
            try:
                if self._next().end:
                    self.done = True
            except WorkerLost:
                return
