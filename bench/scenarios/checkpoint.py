"""checkpoint: the checkpoint store's save, load, open and close latencies, beside the seed design's.

Saves go to 50 sessions in turn, alternating a patch that changes the payload (a new
status and next step: a row update plus a snapshot) with a repeat of the previous
patch (which must write nothing). Loads pick sessions at random. Opens are timed on
new files (create + migrate) and on existing ones; close after a save workload.
"""

from __future__ import annotations

import random
import time

from bench.context import Context
from bench.model import Check, Metric, Reference, ScenarioResult, Target
from bench.util import Quantiles, file_bytes, ms, us

#: The old design's numbers, as the issue quotes them.
SEED = {"save_ms": 80.0, "load_us": 50.0, "first_open_ms": 2700.0, "close_ms": 1000.0}
SESSIONS = 50


def checkpoint(ctx: Context) -> ScenarioResult:
    from voyager_sessions.store.checkpoints import CheckpointPatch, CheckpointStore

    sz = ctx.sizes
    res = ScenarioResult(
        name="checkpoint",
        description=f"{sz.checkpoint_saves:,} saves (half changed, half "
        f"unchanged) over {SESSIONS} sessions, {sz.checkpoint_loads:,} loads, opens and closes",
    )
    root = ctx.dir("checkpoint")

    first_open: list[float] = []
    first_close: list[float] = []
    for i in range(sz.checkpoint_opens):
        path = root / f"new-{i}" / "checkpoints.db"
        t0 = time.perf_counter()
        store = CheckpointStore(path)
        t1 = time.perf_counter()
        store.close()
        first_open.append(t1 - t0)
        first_close.append(time.perf_counter() - t1)

    path = root / "work" / "checkpoints.db"
    store = CheckpointStore(path)
    sids = [f"claude:bench-checkpoint-{i:03d}" for i in range(SESSIONS)]
    changed: list[float] = []
    unchanged: list[float] = []
    last: dict[str, CheckpointPatch] = {}
    wrote_when_unchanged = 0
    missed_change = 0
    for i in range(sz.checkpoint_saves):
        sid = sids[(i // 2) % SESSIONS]
        if i % 2 == 0:
            patch = CheckpointPatch(
                status=f"step {i}: running the suite",
                add_next=(f"look at failure {i}",),
                add_files=(f"src/module_{i % 13}.py",),
            )
            t0 = time.perf_counter()
            r = store.save(sid, "bench-project", patch)
            changed.append(time.perf_counter() - t0)
            missed_change += not r.changed
            last[sid] = patch
        else:
            t0 = time.perf_counter()
            r = store.save(sid, "bench-project", last[sid])
            unchanged.append(time.perf_counter() - t0)
            wrote_when_unchanged += r.changed
    res.checks.append(
        Check(
            name="a changed save writes, a repeated one does not",
            ok=missed_change == 0 and wrote_when_unchanged == 0,
            detail=f"missed={missed_change} spurious={wrote_when_unchanged}",
        )
    )

    rng = random.Random(ctx.seed)
    loads: list[float] = []
    empty = 0
    for _ in range(sz.checkpoint_loads):
        sid = sids[rng.randrange(SESSIONS)]
        t0 = time.perf_counter()
        cp = store.load(sid)
        loads.append(time.perf_counter() - t0)
        empty += cp is None
    res.checks.append(Check(name="every saved session loads", ok=empty == 0, detail=f"missing={empty}"))

    t0 = time.perf_counter()
    store.close()
    close_after_work = time.perf_counter() - t0

    reopen: list[float] = []
    reclose: list[float] = []
    for _ in range(sz.checkpoint_opens):
        t0 = time.perf_counter()
        s = CheckpointStore(path)
        t1 = time.perf_counter()
        s.load(sids[0])
        t2 = time.perf_counter()
        s.close()
        reopen.append(t1 - t0)
        reclose.append(time.perf_counter() - t2)

    saves = Quantiles.of(changed + unchanged)
    ch, un, ld = Quantiles.of(changed), Quantiles.of(unchanged), Quantiles.of(loads)
    fo = Quantiles.of(first_open)

    def seed(key: str, note: str | None = None) -> Reference:
        return Reference(label="seed", value=SEED[key], note=note)

    res.metrics += [
        Metric(
            name="save p50",
            value=ms(saves.p50),
            unit="ms",
            group="save",
            target=Target(op="<=", value=1),
            reference=seed("save_ms", "per save"),
        ),
        Metric(name="save p95", value=ms(saves.p95), unit="ms", group="save"),
        Metric(
            name="save p99",
            value=ms(saves.p99),
            unit="ms",
            group="save",
            target=Target(op="<=", value=10),
            reference=seed("save_ms", "per save"),
        ),
        Metric(name="changed save p50", value=ms(ch.p50), unit="ms", group="save"),
        Metric(name="changed save p99", value=ms(ch.p99), unit="ms", group="save"),
        Metric(name="unchanged save p50", value=ms(un.p50), unit="ms", group="save"),
        Metric(name="unchanged save p99", value=ms(un.p99), unit="ms", group="save"),
        Metric(
            name="load p50",
            value=us(ld.p50),
            unit="µs",
            group="load",
            target=Target(op="<=", value=30),
            reference=seed("load_us"),
        ),
        Metric(name="load p95", value=us(ld.p95), unit="µs", group="load"),
        Metric(name="load p99", value=us(ld.p99), unit="µs", group="load"),
        Metric(
            name="first open (new database)",
            value=ms(fo.p50),
            unit="ms",
            group="open/close",
            target=Target(op="<=", value=20),
            reference=seed("first_open_ms"),
        ),
        Metric(name="first open, worst", value=ms(fo.max), unit="ms", group="open/close"),
        Metric(name="reopen", value=ms(Quantiles.of(reopen).p50), unit="ms", group="open/close"),
        Metric(
            name="close after the save workload",
            value=ms(close_after_work),
            unit="ms",
            group="open/close",
            target=Target(op="<=", value=5),
            reference=seed("close_ms"),
        ),
        Metric(
            name="close p50",
            value=ms(Quantiles.of(reclose + first_close).p50),
            unit="ms",
            group="open/close",
            target=Target(op="<=", value=5),
            reference=seed("close_ms"),
        ),
    ]
    res.notes.append(f"database after the run: {file_bytes(path) / 1e6:.2f} MB (with -wal)")
    return res
