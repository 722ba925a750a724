"""What the bench runs in a child process, so peak memory is the work's own: ``python -m bench.child ingest …``.

The parent passes an explicit environment (fake provider homes, see ``bench.util``);
the child prints one JSON document on stdout. Import time is excluded from the
measured seconds; peak RSS (VmHWM) is the whole child's, and ``rss_start_kb`` says
how much of it the interpreter and imports already held before the scan began.

A scan with workers runs them as this child's children: a thread samples their peak
RSS (each one's VmHWM, summed: an upper bound, since a forked worker shares pages with
the writer) and the proportional set size of writer and workers together (PSS, which
counts a shared page once; its peak is sampled every 100 ms, so it may miss a spike).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import msgspec


class IngestRun(msgspec.Struct, kw_only=True):
    """One full scan of one provider into an empty data dir."""

    seconds: float
    events: int
    sessions: int
    sources: int
    failed: int
    skipped: int
    rss_start_kb: int
    peak_rss_kb: int
    index_bytes: int
    state_bytes: int
    workers: int = 1
    #: Worker processes seen, and the sum of their peak RSS (0 when the scan read in-process).
    worker_processes: int = 0
    workers_peak_rss_kb: int = 0
    #: Peak of writer + workers' summed PSS, sampled (0 where /proc has no smaps_rollup).
    peak_pss_kb: int = 0
    #: The writer's peak anonymous RSS, sampled: its own memory, without the index files Tantivy maps
    #: (file-backed pages, which its merges touch and the kernel reclaims first).
    peak_anon_kb: int = 0
    #: CPU seconds (user + system) the scan cost: this process's threads (Tantivy's included) and its worker
    #: processes, reaped by the scan's end. On a shared machine the wall time is noise; this is the work.
    cpu_seconds: float = 0.0


class ChildMemory:
    """Samples, on a thread, the peak RSS of each child process and the peak PSS of this process and its children."""

    def __init__(self, interval: float = 0.1) -> None:
        import threading

        self.interval = interval
        self.peaks: dict[int, int] = {}
        self.peak_pss = 0
        self.peak_anon = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> ChildMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while True:
            self.sample()
            if self._stop.wait(self.interval):
                return

    def sample(self) -> None:
        self.peak_anon = max(self.peak_anon, _status_kb(os.getpid(), "RssAnon:"))
        pids = _children(os.getpid())
        for pid in pids:
            hwm = _status_kb(pid, "VmHWM:")
            if hwm:
                self.peaks[pid] = max(self.peaks.get(pid, 0), hwm)
        if pids:  # reading smaps_rollup walks page tables: only worth it when there are workers
            self.peak_pss = max(self.peak_pss, sum(_pss_kb(pid) for pid in [os.getpid(), *pids]))


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as fh:
                out += [int(x) for x in fh.read().split()]
    except OSError:
        pass
    return out


def _status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status") as fh:
            for line in fh:
                if line.startswith(key):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup") as fh:
            for line in fh:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def ingest(
    data_dir: Path, providers: list[str], workers: int | None = None, env: dict[str, str] | None = None
) -> IngestRun:
    from voyager_sessions.ingest import adapters
    from voyager_sessions.scan import scan
    from voyager_sessions.scan import workers as _workers  # noqa: F401 - import cost stays out of the timing
    from voyager_sessions.scan.run import default_workers
    from voyager_sessions.search.index import SearchIndex  # noqa: F401
    from voyager_sessions.store.state import StateStore  # noqa: F401

    # Import (and, in a fresh checkout run with PYTHONDONTWRITEBYTECODE, compile) the
    # adapters before the clock starts: an installed copy has its bytecode already.
    for provider in providers:
        adapters.get(provider)

    from bench.util import current_rss_kb, dir_bytes, peak_rss_kb

    rss_start = current_rss_kb()
    with ChildMemory() as memory:
        cpu0 = cpu_seconds()
        t0 = time.perf_counter()
        summary = scan(data_dir, dict(os.environ) if env is None else env, providers=providers, workers=workers)
        seconds = time.perf_counter() - t0
        cpu = cpu_seconds() - cpu0
    return IngestRun(
        seconds=seconds,
        events=summary.events_added,
        sessions=summary.sessions,
        sources=summary.sources,
        failed=summary.failed,
        skipped=len(summary.skipped),
        rss_start_kb=rss_start,
        peak_rss_kb=peak_rss_kb(),
        index_bytes=dir_bytes(data_dir / "index"),
        state_bytes=dir_bytes(data_dir / "state.db"),
        workers=workers or default_workers(),
        worker_processes=len(memory.peaks),
        workers_peak_rss_kb=sum(memory.peaks.values()),
        peak_pss_kb=memory.peak_pss,
        peak_anon_kb=memory.peak_anon,
        cpu_seconds=cpu,
    )


class ScanJob(msgspec.Struct, kw_only=True):
    """One scan of ``ingest-each``: a provider's sources, found through ``env``, into an empty ``data_dir``."""

    data_dir: str
    provider: str
    env: dict[str, str]


def can_reset_peak_rss() -> bool:
    """Whether a process can start its peak RSS (VmHWM) afresh: Linux's ``/proc/self/clear_refs``."""
    return os.access("/proc/self/clear_refs", os.W_OK)


def _reset_peak_rss() -> None:
    """Free what the previous scan left (collected, returned to the system), then start VmHWM afresh."""
    import ctypes
    import ctypes.util
    import gc

    gc.collect()
    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
    with open("/proc/self/clear_refs", "w") as fh:  # "5": reset the peak resident set to the current one
        fh.write("5")


def ingest_each(jobs: list[ScanJob]) -> list[IngestRun]:
    """``ingest`` of each job in turn, in this one process: each one's peak RSS measured from its own start
    (:func:`_reset_peak_rss`), its CPU and wall its own. For many small scans whose process start and imports
    would cost more than the scans (``hostile_scale``); Linux only (:func:`can_reset_peak_rss`)."""
    out = []
    for job in jobs:
        _reset_peak_rss()
        out.append(ingest(Path(job.data_dir), [job.provider], env=job.env))
    return out


class Stages(msgspec.Struct, kw_only=True):
    """CPU seconds of a first index, stage by stage (each measured by running the stages before it again).

    ``discover``: the stat pass and plan; ``read``: the adapters' reading and mapping, records to
    Events; ``prepare``: the analyzer's input made (``search.prepare``); ``documents``: the Tantivy
    documents built; ``writer``: the rest of the scan's own thread (reads' bookkeeping, deletions,
    adding documents, state rows, commits); ``tantivy``: Tantivy's threads (indexing, merging). The
    first four run on the main thread alone (``time.thread_time``); the scan is ``--workers 1``.
    """

    events: int
    sources: int
    discover: float
    read: float
    prepare: float
    documents: float
    writer: float
    tantivy: float


def stages(data_dir: Path, providers: list[str]) -> Stages:
    """Measure a first index of ``providers`` stage by stage (see :class:`Stages`); ``data_dir`` must not exist."""
    import threading

    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.ingest import adapters
    from voyager_sessions.ingest.files import FolderMemory, remembered_folders
    from voyager_sessions.ingest.limits import bounded
    from voyager_sessions.scan import run as run_mod
    from voyager_sessions.scan.chunks import prepared_chunks
    from voyager_sessions.search.index import event_document, future_horizon_ms
    from voyager_sessions.search.prepare import PreparedEvent

    for provider in providers:
        adapters.get(provider)
    env = dict(os.environ)
    scratch = data_dir.with_name(data_dir.name + "-plan")
    probe = run_mod.Scan(DataDir(scratch), env, providers, False, None, None, workers=1)
    memory = FolderMemory({})
    token = remembered_folders.set(memory)
    t = time.thread_time()
    plan, _, _ = probe._plan(probe.store.known_sources())
    discover = time.thread_time() - t
    remembered_folders.reset(token)
    probe.index.close()
    probe.store.close()
    plan = run_mod.newest_first(plan)
    sources = [source for source, _ in plan]

    def items(source):
        return bounded(source, adapters.get(source.provider).read(source, None))

    t = time.thread_time()
    for source in sources:
        for _ in items(source):
            pass
    read = time.thread_time() - t
    t = time.thread_time()
    events = 0
    for source in sources:
        for chunk in prepared_chunks(items(source)):
            events += sum(type(i) is PreparedEvent for i in chunk)
    prepare = time.thread_time() - t
    horizon = future_horizon_ms()
    t = time.thread_time()
    for source in sources:
        heads: dict = {}
        for chunk in prepared_chunks(items(source)):
            for i in chunk:
                if type(i) is PreparedEvent:
                    event_document(i, horizon, heads)
    documents = time.thread_time() - t
    main = threading.get_ident()
    whole0 = cpu_seconds()
    t = time.thread_time()
    scanned = run_mod.scan(data_dir, env, providers=providers, workers=1)
    scan_main = time.thread_time() - t
    whole = cpu_seconds() - whole0
    assert threading.get_ident() == main
    return Stages(
        events=scanned.events_added or events,
        sources=len(sources),
        discover=discover,
        read=read,
        prepare=prepare - read,
        documents=documents - prepare,
        writer=max(0.0, scan_main - documents - discover),
        tantivy=max(0.0, whole - scan_main),
    )


def cpu_seconds() -> float:
    """User + system CPU seconds of this process (all its threads) and of its children that have been reaped."""
    import resource

    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m bench.child")
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("ingest", help="full scan of one provider into an empty data dir")
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--provider", action="append", required=True, help="repeatable")
    p.add_argument("--workers", type=int, default=None, help="as voyager scan --workers (default: one per core)")
    sub.add_parser("ingest-each", help="full scans of the ScanJobs given as JSON on stdin, one after another")
    p = sub.add_parser("stages", help="a first index of providers, CPU stage by stage (--workers 1)")
    p.add_argument("--data-dir", type=Path, required=True)
    p.add_argument("--provider", action="append", required=True, help="repeatable")
    args = ap.parse_args(argv)
    if args.cmd == "ingest":
        result = ingest(args.data_dir, args.provider, args.workers)
        sys.stdout.buffer.write(msgspec.json.encode(result) + b"\n")
    elif args.cmd == "ingest-each":
        jobs = msgspec.json.decode(sys.stdin.buffer.read(), type=list[ScanJob])
        sys.stdout.buffer.write(msgspec.json.encode(ingest_each(jobs)) + b"\n")
    elif args.cmd == "stages":
        sys.stdout.buffer.write(msgspec.json.encode(stages(args.data_dir, args.provider)) + b"\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
