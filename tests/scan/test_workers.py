"""Scans whose sources are read by worker processes: the same index and state as one process, crash-safe, bounded.

Every test here forces the pool on small corpora (``VOYAGER_WORKERS_MIN_BYTES=0``) and
checks that it really ran (``_pools``), so a silent fallback to in-process reading
cannot pass for parallel reading.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import msgspec
import pytest

import synth
from tests.support.mixed import Corpus, index_contents, scan_each
from tests.support.run import sha256_tree
from voyager_sessions.core.model import Event
from voyager_sessions.core.paths import DataDir
from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest import manifest
from voyager_sessions.scan import scan
from voyager_sessions.scan import workers as workers_mod
from voyager_sessions.search.index import SearchIndex


@pytest.fixture
def pools(monkeypatch) -> list[int]:
    """Force the pool for any plan, and record the size of every pool a scan starts."""
    monkeypatch.setenv("VOYAGER_WORKERS_MIN_BYTES", "0")
    started: list[int] = []
    real = workers_mod.Pool.__init__

    def init(self, size: int) -> None:
        started.append(size)
        real(self, size)

    monkeypatch.setattr(workers_mod.Pool, "__init__", init)
    return started


@pytest.mark.slow
def test_any_worker_count_leaves_the_same_index_andstate_rows(home, monkeypatch, pools):
    corpus = Corpus(home, monkeypatch)
    counts = (1, 2, 3)
    first = scan_each(home, counts, "first")
    assert pools == [2, 3]  # workers=1 reads in-process; the others really ran a pool
    summary = first[1][0]
    assert summary["events_added"] > 500 and summary["providers"] == {"claude": 6, "codex": 4, "opencode": 6}
    assert [k["where"] for k in summary["skipped"] if "line skipped" in k["reason"]] == ["line 20", "line 21"]
    for n in counts[1:]:
        assert first[n] == first[1], f"workers={n} differs from workers=1 on the first scan"
    corpus.change()
    from voyager_sessions.scan.source_read import SourceRead

    seen: list[str] = []
    take = SourceRead.take
    monkeypatch.setattr(SourceRead, "take", lambda self, item: (seen.append(type(item).__name__), take(self, item))[1])
    second = scan_each(home, counts, "second")
    # What the writer took covers every kind of item: a session's tail re-read (Partial), untouched sessions of
    # a database (Unchanged), cursors, notices.
    assert {"Partial", "Unchanged", "Cursor", "Notice", "Session", "PreparedEvent"} <= set(seen)
    summary = second[1][0]
    assert summary["grown"] >= 1 and summary["changed"] >= 2 and summary["removed"] == 1 and summary["new"] == 1
    for n in counts[1:]:
        assert second[n] == second[1], f"workers={n} differs from workers=1 after the sources changed"


def test_spawned_workers_read_the_same(home, monkeypatch, pools):
    """Where fork is not used (macOS, Windows), workers start from a fresh interpreter: same results."""
    Corpus(home, monkeypatch)
    monkeypatch.setenv("VOYAGER_WORKER_START", "spawn")
    spawned = scan_each(home, (2,), "spawn")
    monkeypatch.delenv("VOYAGER_WORKER_START")
    here = scan_each(home, (1,), "here")
    assert pools == [2]
    assert spawned[2] == here[1]


def test_provider_files_are_only_read_by_workers(home, monkeypatch, pools):
    corpus = Corpus(home, monkeypatch)
    roots = (home / ".claude", home / ".codex", corpus.db.parent)

    def listing() -> list[str]:
        return sorted(str(p) for root in roots for p in root.rglob("*"))

    def hashes() -> dict[str, str]:
        return {k: v for root in roots for k, v in sha256_tree(root).items()}

    before, names = hashes(), listing()
    summary = scan(home / "data", workers=2)
    assert pools == [2] and summary.events_added > 0 and summary.providers["opencode"] == 6
    after = hashes()
    assert after == before
    assert listing() == names  # nothing created beside them (no -wal, no -shm, no journal)


# -- a worker that dies -------------------------------------------------------------


def _die_on(monkeypatch, victim: Path, after: int = 0) -> None:
    dying = manifest.row("claude")._replace(module="tests.scan._dying_adapter")
    monkeypatch.setitem(manifest.ROWS, "claude", dying)
    monkeypatch.setenv("VOYAGER_TEST_DIE_ON", victim.name)
    monkeypatch.setenv("VOYAGER_TEST_DIE_AFTER", str(after))
    monkeypatch.setenv("VOYAGER_TEST_WRITER_PID", str(os.getpid()))


@pytest.mark.slow
@pytest.mark.parametrize("after", [0, 20_000], ids=["at-once", "midway"])
def test_a_killed_worker_costs_its_source_only(home, monkeypatch, pools, after):
    convs = [synth.generate(seed=800 + i, messages=40) for i in range(6)]
    paths = [synth.write_claude(c, home / ".claude" / "projects") for c in convs]
    big = synth.generate(seed=899, messages=12_000 if after else 40, output_bytes=100)
    victim = synth.write_claude(big, home / ".claude" / "projects")
    _die_on(monkeypatch, victim, after)
    summary = scan(home / "data", workers=2)
    assert pools == [2]
    # At once: nothing was read, the source failed. Midway: what arrived stays (as when an adapter raises).
    assert summary.failed == (0 if after else 1)
    named = [k for k in summary.skipped if k.source == str(victim)]
    assert len(named) == 1 and "killed (SIGKILL)" in named[0].reason, summary.skipped
    ix = SearchIndex(DataDir(home / "data").index, create=False)
    ids = set(ix.iter_session_ids())
    assert {f"claude:{p.stem}" for p in paths} <= ids  # every other source was read
    for c in convs:
        assert len(ix.session_events(f"claude:{c.id}")) > 0
    row = (
        sqlite3.connect(DataDir(home / "data").state_db)
        .execute("SELECT status FROM sources WHERE path = ?", (str(victim),))
        .fetchone()
    )
    assert row == ("retry",)  # read again next time, even unchanged

    # The next scan (the worker does not die now) reads the victim again: the index is as if nothing happened.
    monkeypatch.delenv("VOYAGER_TEST_DIE_ON")
    again = scan(home / "data", workers=2)
    assert again.failed == 0 and again.changed == 1 and again.new == 0
    monkeypatch.setenv("VOYAGER_HOME", str(home / "reference"))
    scan(home / "reference", workers=1)
    assert index_contents(home / "data") == index_contents(home / "reference")


@pytest.mark.parametrize("replacements", [0, 8], ids=["none-left", "replaced"])
def test_workers_that_keep_dying_cost_only_their_sources(home, monkeypatch, pools, replacements):
    """Every forked worker dies on its first source. Spawned replacements (which load the real adapter) read
    the rest; with no replacement allowed, the rest is named as not read. Nothing hangs, nothing is lost."""
    convs = [synth.generate(seed=1500 + i, messages=20) for i in range(12)]
    for c in convs:
        synth.write_claude(c, home / ".claude" / "projects")
    _die_on(monkeypatch, Path(".jsonl"))
    monkeypatch.setattr(workers_mod, "MAX_REPLACEMENTS", replacements)
    monkeypatch.setattr(
        workers_mod, "BATCH_JOBS", 2
    )  # batches of two, two a worker: some sources are never handed over
    monkeypatch.setattr(workers_mod, "IN_FLIGHT", 2)
    summary = scan(home / "data", workers=2)
    lost = [k for k in summary.skipped if "worker process" in k.reason]
    assert pools == [2]
    if replacements:
        assert len(lost) == 2 and summary.new == 10  # the two forked workers' first sources
    else:
        assert len(lost) == 12 and summary.failed == 12
        # The sources handed to the two workers before they died (in batches), then the ones no worker was left for.
        assert 0 < sum("no worker process was left" in k.reason for k in lost) < 12
    monkeypatch.delenv("VOYAGER_TEST_DIE_ON")
    again = scan(home / "data", workers=2)
    assert again.failed == 0 and again.changed + again.new == len(lost)
    ix = SearchIndex(DataDir(home / "data").index, create=False)
    assert set(ix.iter_session_ids()) == {f"claude:{c.id}" for c in convs}


def _children(pid: int) -> list[int]:
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                out.append(int(entry))
    return out


def _expected_counts(env) -> dict[str, int]:
    counts: dict[str, int] = {}
    for name in ("claude", "codex"):
        adapter = registry.get(name)
        for src in adapter.discover(env):
            if hasattr(src, "path"):
                for item in adapter.read(src):
                    if isinstance(item, Event):
                        counts[item.session] = counts.get(item.session, 0) + 1
    return counts


def _indexed_counts(data: Path) -> tuple[dict[str, int], int]:
    ix = SearchIndex(DataDir(data).index, create=False)
    seen, dup = {}, 0
    for sid in ix.iter_session_ids():
        seqs = [e.seq for e in ix.session_events(sid) if e.seq >= 0]
        dup += len(seqs) - len(set(seqs))
        seen[sid] = len(seqs)
    return seen, dup


def _wait_for_workers(proc: subprocess.Popen, n: int, timeout: float = 20) -> list[int]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        kids = _children(proc.pid)
        if len(kids) >= n:
            return kids
        if proc.poll() is not None:
            return []
        time.sleep(0.002)
    return []


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds worker processes through /proc")
def test_sigkill_of_the_writer_or_a_worker_mid_scan(home):
    """From outside, as the OOM killer or a person would: kill the scan's process, then a worker of the next."""
    for i in range(16):
        conv = synth.generate(seed=1100 + i, messages=300, output_bytes=1500)
        (synth.write_claude if i % 2 == 0 else synth.write_codex)(
            conv, home / (".claude/projects" if i % 2 == 0 else ".codex")
        )
    env = dict(os.environ, VOYAGER_WORKERS_MIN_BYTES="0", VOYAGER_COMMIT_EVERY_EVENTS="500")
    exe = [sys.executable, "-m", "voyager_sessions", "scan", "-q", "--workers", "2"]
    data = Path(env["VOYAGER_HOME"])
    expected = _expected_counts(env)

    # The writer dies: its workers must not outlive it (they would hold the scan lock), and the next scan repairs.
    proc = subprocess.Popen(exe, env=env)
    kids = _wait_for_workers(proc, 2)
    time.sleep(0.3)
    proc.send_signal(signal.SIGKILL)
    proc.wait(timeout=30)
    deadline = time.monotonic() + 5
    while any(os.path.exists(f"/proc/{k}") and _zombie_or_alive(k) for k in kids) and time.monotonic() < deadline:
        time.sleep(0.01)
    assert kids and not any(_zombie_or_alive(k) for k in kids), "a worker outlived its writer"
    repaired = scan(data, env, workers=2)  # wait=0: a lock still held would raise ScanBusy
    seen, dup = _indexed_counts(data)
    assert dup == 0 and seen == expected, repaired

    # A worker dies mid-scan (a rebuild reads every source again): the scan goes on, names what it lost if the
    # worker was reading something, and the next scan reads that again.
    proc = subprocess.Popen(
        exe + ["--json", "--rebuild"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    kids = _wait_for_workers(proc, 2)
    time.sleep(0.05)
    try:
        os.kill(kids[0], signal.SIGKILL)
    except (IndexError, ProcessLookupError):
        pass  # the scan was quicker: nothing to lose
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    summary = json.loads(out)
    lost = [k for k in summary["skipped"] if "worker process" in k["reason"]]
    assert len(lost) <= 1
    again = scan(data, env, workers=2)
    assert again.changed == len(lost) and again.new == 0
    seen, dup = _indexed_counts(data)
    assert dup == 0 and seen == expected


def _zombie_or_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


# -- bounds -------------------------------------------------------------------------


def test_chunks_stay_small_however_big_the_session(tmp_path):
    from voyager_sessions.scan.chunks import CHUNK_EVENTS, prepared_chunks
    from voyager_sessions.search.prepare import PREPARE_BATCH_CHARS, PreparedEvent

    def stream():
        for i in range(30_000):
            yield Event(session="claude:x", seq=i, kind="assistant", origin="agent", text="word " * (i % 200))

    biggest = 0
    total = 0
    for chunk in prepared_chunks(stream()):
        assert all(type(x) is PreparedEvent for x in chunk)
        text = sum(len(x.stored) for x in chunk)
        assert len(chunk) <= CHUNK_EVENTS and text < PREPARE_BATCH_CHARS + 1000
        biggest = max(biggest, text)
        total += len(chunk)
    assert total == 30_000 and biggest > PREPARE_BATCH_CHARS // 2


def test_a_worker_holds_a_few_sources_at_most(home, monkeypatch, pools):
    """The writer hands a worker ``IN_FLIGHT`` batches at most before it took the first one's results, each batch
    consecutive sources of ``BATCH_BYTES`` to read at most (or one larger source)."""
    sizes = []
    for i in range(40):
        path = synth.write_claude(
            synth.generate(seed=1200 + i, messages=6 if i % 10 else 200, output_bytes=2000),
            home / ".claude" / "projects",
        )
        sizes.append(path.stat().st_size)
    monkeypatch.setattr(workers_mod, "BATCH_BYTES", 3 * min(sizes))
    most_batches = 0
    batches: list[list[int]] = []
    real_send = workers_mod._Worker.send

    def send(self, jobs):
        nonlocal most_batches
        sent = real_send(self, jobs)
        most_batches = max(most_batches, len(self.batches))
        batches.append([workers_mod.job_cost(j) for j in jobs])
        return sent

    monkeypatch.setattr(workers_mod._Worker, "send", send)
    summary = scan(home / "data", workers=2)
    assert pools == [2] and summary.new == 40
    assert most_batches == workers_mod.IN_FLIGHT
    assert max(len(b) for b in batches) > 1  # small sources travel together
    assert all(len(b) == 1 or sum(b) <= workers_mod.BATCH_BYTES for b in batches)
    assert sum(len(b) for b in batches) == 40


def test_a_small_refresh_reads_in_process(home, monkeypatch):
    """The refresh before a search (a few appended lines) starts no worker; a first index of enough bytes does."""
    started: list[int] = []
    real = workers_mod.Pool.__init__
    monkeypatch.setattr(workers_mod.Pool, "__init__", lambda self, size: (started.append(size), real(self, size))[1])
    monkeypatch.setenv("VOYAGER_WORKERS_MIN_BYTES", str(200_000))
    convs = [synth.generate(seed=1300 + i, messages=60, output_bytes=2000) for i in range(4)]
    for c in convs:
        synth.write_claude(c, home / ".claude" / "projects")
    scan(home / "data", workers=2)
    assert started == [2]
    more = synth.generate(seed=1399, messages=4, session_id=convs[0].id)
    synth.write_claude(
        msgspec.structs.replace(convs[0], turns=convs[0].turns + more.turns), home / ".claude" / "projects"
    )
    summary = scan(home / "data", workers=2)
    assert summary.grown == 1 and started == [2]  # no second pool


def test_scan_workers_option(home, run, monkeypatch, pools):
    Corpus(home, monkeypatch)
    res = run("scan", "--workers", "2", "--json")
    assert res.exit_code == 0 and json.loads(res.stdout)["events_added"] > 0
    assert pools == [2]
    bad = run("scan", "--workers", "0")
    assert bad.exit_code == 2 and "--workers" in bad.stderr


@pytest.mark.slow
@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads workers' peak memory from /proc")
def test_a_workers_memory_does_not_grow_with_the_session(home, monkeypatch):
    """A session six times longer costs its worker no more memory: it streams through in chunks, never whole.

    Each scan runs in a fresh process (the bench's child), so both workers are forked from writers alike."""
    from bench.child import IngestRun
    from bench.scenarios.ingest_scale import write_big_session
    from bench.util import run_child

    peaks = {}
    for mib in (4, 24):
        projects = home / f"p{mib}" / "projects"
        write_big_session(projects, mib << 20)
        env = {"HOME": str(home), "VOYAGER_CLAUDE_HOME": str(projects.parent), "VOYAGER_WORKERS_MIN_BYTES": "0"}
        out = run_child(
            ["ingest", "--data-dir", str(home / f"data-{mib}"), "--provider", "claude", "--workers", "2"], env
        )
        run = msgspec.json.decode(out, type=IngestRun)
        assert run.events > 0 and run.worker_processes == 1  # one source: one worker
        peaks[mib] = run.workers_peak_rss_kb
    assert peaks[24] - peaks[4] < 4 << 10, peaks  # KiB: noise, not 20 MB of session


def test_spawned_workers_wait_for_more_to_read(monkeypatch):
    from voyager_sessions.scan import run as scan_run

    monkeypatch.delenv("VOYAGER_WORKERS_MIN_BYTES", raising=False)
    monkeypatch.setenv("VOYAGER_WORKER_START", "spawn")
    assert scan_run._pool_min_bytes() == scan_run.POOL_MIN_BYTES_SPAWNED
    monkeypatch.setenv("VOYAGER_WORKER_START", "fork")
    assert scan_run._pool_min_bytes() == scan_run.POOL_MIN_BYTES < scan_run.POOL_MIN_BYTES_SPAWNED


def test_a_large_job_never_waits_on_a_busy_worker(home, monkeypatch):
    """A worker busy sending a long source's chunks (its pipe full, the writer not reading yet) still takes a
    job whose cursor is bigger than any pipe holds: the writer never waits on it (they would wait for each other)."""
    import threading

    from bench.scenarios.ingest_scale import write_big_session
    from voyager_sessions.ingest.adapters.base import Cursor, Source, fingerprint
    from voyager_sessions.scan.chunks import Job

    long = write_big_session(home / "projects", 8 << 20)  # several MB of chunks: more than a pipe holds
    source = Source(provider="claude", path=str(long), fingerprint=fingerprint(long), append_only=True)
    missing = Source(provider="claude", path=str(home / "gone.jsonl"), fingerprint=fingerprint(long), append_only=True)
    big_cursor = Cursor(offset=0, next_seq=0, tail_hash="", state={"pad": "x" * (3 << 20)})
    got: list[int] = []

    def run() -> None:
        with workers_mod.Pool(1) as pool:
            for _job, items in pool.run([Job(id=0, source=source), Job(id=1, source=missing, cursor=big_cursor)]):
                got.append(sum(1 for _ in _swallow(items)))

    t = threading.Thread(target=run, daemon=True)
    t.start()
    t.join(timeout=60)
    assert not t.is_alive(), "the writer and its worker waited for each other"
    assert len(got) == 2 and got[0] > 1000


def _swallow(items):
    try:
        yield from items
    except Exception:  # the missing file's failure is not this test's subject
        return


def test_when_workers_are_worth_starting(monkeypatch):
    from voyager_sessions.scan.run import POOL_MIN_BYTES, _worth_workers

    monkeypatch.delenv("VOYAGER_WORKERS_MIN_BYTES", raising=False)
    monkeypatch.setenv("VOYAGER_WORKER_START", "fork")
    mb = 1 << 20
    assert not _worth_workers([mb] * 3, cores=2)  # too little to read
    assert _worth_workers([POOL_MIN_BYTES // 4] * 4, cores=2)  # enough, spread over sources
    assert not _worth_workers([POOL_MIN_BYTES * 2, mb], cores=2)  # mostly one session: Tantivy has the other core
    assert _worth_workers([POOL_MIN_BYTES * 2, mb], cores=4)  # with cores to spare, one session is piped through
    monkeypatch.setenv("VOYAGER_WORKERS_MIN_BYTES", "0")
    assert _worth_workers([1], cores=2)  # forced


def test_a_worker_reads_on_while_the_writer_commits(home, monkeypatch):
    """While the writer commits it takes nothing; a thread takes the worker's answers aside meanwhile, so the worker
    goes on reading past what its pipe holds, ``ASIDE_BYTES`` at most (and one message); the writer then takes
    them in order, the same items as a read in-process."""
    from bench.scenarios.ingest_scale import write_big_session
    from voyager_sessions.ingest.adapters.base import Source, fingerprint
    from voyager_sessions.scan.chunks import Job, prepared_chunks

    monkeypatch.setattr(workers_mod, "ASIDE_BYTES", 3 * workers_mod.PIPE_BYTES)
    long = write_big_session(home / "projects", 8 << 20)  # more chunks than the pipe and the aside hold together
    source = Source(provider="claude", path=str(long), fingerprint=fingerprint(long), append_only=True)
    expected = [
        (type(x).__name__, getattr(x, "seq", None))
        for c in prepared_chunks(registry.get("claude").read(source))
        for x in c
    ]
    got: list[tuple[str, int | None]] = []
    with workers_mod.Pool(1) as pool:
        worker = pool.workers[0]
        for _job, items in pool.run([Job(id=0, source=source)]):
            first = next(items)
            got.append((type(first).__name__, getattr(first, "seq", None)))
            with pool.aside():  # the writer commits: it takes nothing for a while
                deadline = time.monotonic() + 60
                while worker.aside_bytes < 2 * workers_mod.PIPE_BYTES and time.monotonic() < deadline:
                    time.sleep(0.01)
                time.sleep(0.3)  # the worker blocks again once the aside is full
                held = worker.aside_bytes
            assert 2 * workers_mod.PIPE_BYTES <= held, "the worker stopped reading while the writer committed"
            assert held <= workers_mod.ASIDE_BYTES + workers_mod.OUT_BYTES + 2 * PREPARE_MESSAGE
            got.extend((type(x).__name__, getattr(x, "seq", None)) for x in items)
    assert worker.aside_bytes == 0 and not worker.aside
    assert got == expected and len(got) > 1000


#: A message's most: a chunk of ``PREPARE_BATCH_CHARS`` characters (stored and prepared) past ``OUT_BYTES``.
PREPARE_MESSAGE = 4 * 128 * 1024 * 4


def test_commits_while_workers_read_leave_the_same_index(home, monkeypatch, pools):
    """Commits every few events while the workers read (their answers taken aside meanwhile): the index and the
    state rows are those of one process reading everything itself."""
    Corpus(home, monkeypatch)
    monkeypatch.setenv("VOYAGER_COMMIT_EVERY_EVENTS", "60")
    took: list[int] = []
    real = workers_mod._take_aside

    def take_aside(workers, stop):
        real(workers, stop)
        took.append(sum(len(w.aside) for w in workers))

    monkeypatch.setattr(workers_mod, "_take_aside", take_aside)
    out = scan_each(home, (1, 2), "commits")
    assert pools == [2] and len(took) >= 3  # the writer committed while its workers held sources
    assert out[2] == out[1]
