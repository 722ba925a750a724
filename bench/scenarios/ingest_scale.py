"""ingest_history and ingest_big: a first index of a whole history, and of one very long session, per worker count.

``ingest_history`` writes a history of many sessions over Claude Code, Codex and OpenCode
(``corpus.write_history``) and times its first index with ``--workers 1`` (everything in
the scan's own process, as before workers existed) and with the default (one worker
per core), in child processes, the two settings alternating run by run so that a
machine drifting in speed favours neither. Both must index the same sessions and
events.

``ingest_big`` writes one very long Claude Code session (blocks of generated turns,
streamed to the file, so the bench never holds it) and indexes it the same two ways,
for throughput and above all memory: writer and workers together must stay under
300 MB however long the session (the issue's 1.2 GB case).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Iterator
from pathlib import Path

import msgspec
import synth

from bench import corpus
from bench.child import IngestRun
from bench.context import Context
from bench.model import Check, Metric, ScenarioResult, Target
from bench.scenarios.ingest import _memory_metrics, cpu_metrics
from bench.util import ProviderHomes, file_bytes, mb, run_child

HISTORY_PROVIDERS = ["claude", "codex", "opencode"]
#: The issue's goals on 2 cores: the default at least 1.7x ``--workers 1``, and 35k events/s.
SPEEDUP_TARGET = 1.7
HISTORY_RATE_TARGET = 35_000
BIG_RSS_TARGET_MIB = 300


#: The settings scans are measured with: a label, ``--workers`` (None: the default), extra environment.
Setting = tuple[str, "int | None", dict]
ONE: Setting = ("--workers 1", 1, {})
DEFAULT: Setting = ("default", None, {})
#: Workers started whatever the plan (``VOYAGER_WORKERS_MIN_BYTES=0``): what a machine with cores to spare does
#: with one long session; on 2 cores the default reads it in-process.
FORCED: Setting = ("workers, forced", None, {"VOYAGER_WORKERS_MIN_BYTES": "0"})


def _paired(
    ctx: Context,
    key: str,
    providers: list[str],
    homes: ProviderHomes,
    runs: int,
    settings: tuple[Setting, ...] = (ONE, DEFAULT),
    timeout: float = 600,
) -> dict[str, list[IngestRun]]:
    """``runs`` full scans per setting, the settings alternating, each into a fresh data dir."""
    out: dict[str, list[IngestRun]] = {label: [] for label, _, _ in settings}
    args = [a for p in providers for a in ("--provider", p)]
    for r in range(runs):
        for label, workers, env in settings:
            data_dir = ctx.dir(f"ingest-{key}") / f"data-{label.replace(' ', '').replace(',', '-')}-{r}"
            extra = ["--workers", str(workers)] if workers is not None else []
            raw = run_child(
                ["ingest", "--data-dir", str(data_dir), *args, *extra], {**homes.env(), **env}, timeout=timeout
            )
            out[label].append(msgspec.json.decode(raw, type=IngestRun))
    return out


def _setting_label(label: str, run: IngestRun) -> str:
    if label == ONE[0]:
        return "--workers 1 (in-process)"
    if not run.worker_processes:
        return f"{label} ({run.workers} cores: read in-process)"
    return f"{label} ({run.worker_processes} worker{'s' if run.worker_processes > 1 else ''})"


def _median(runs: list[IngestRun]) -> IngestRun:
    return sorted(runs, key=lambda x: x.seconds)[len(runs) // 2]


def _rate_metrics(run: IngestRun, runs: list[IngestRun], size: int, g: str, rate_target: float | None) -> list[Metric]:
    metrics = [
        Metric(name="wall", value=round(run.seconds, 3), unit="s", group=g),
        Metric(
            name="events/s",
            value=round(run.events / run.seconds),
            unit="ev/s",
            group=g,
            target=Target(op=">=", value=rate_target) if rate_target else None,
        ),
        Metric(name="source MB/s", value=round(mb(size) / run.seconds, 1), unit="MB/s", group=g),
        Metric(name="events", value=run.events, unit="", group=g),
        Metric(name="index size", value=mb(run.index_bytes), unit="MB", group=g),
        *cpu_metrics(runs, g),
    ]
    if len(runs) > 1:
        rates = [x.events / x.seconds for x in runs]
        metrics += [
            Metric(name="events/s, slowest run", value=round(min(rates)), unit="ev/s", group=g),
            Metric(name="events/s, fastest run", value=round(max(rates)), unit="ev/s", group=g),
        ]
    return metrics


def _speedup(
    res: ScenarioResult, by: dict[str, list[IngestRun]], g: str, target: float | None, other: str = DEFAULT[0]
) -> None:
    """``other``'s events/s over ``--workers 1``'s: of the medians, and the median of run-by-run pairs."""
    one, default = _median(by[ONE[0]]), _median(by[other])
    pairs = [(d.events / d.seconds) / (w.events / w.seconds) for w, d in zip(by[ONE[0]], by[other])]
    res.metrics.append(
        Metric(
            name="speed-up over --workers 1",
            value=round(one.seconds / default.seconds, 2),
            unit="x",
            group=g,
            target=Target(op=">=", value=target) if target else None,
        )
    )
    if len(pairs) > 1:
        res.metrics.append(
            Metric(name="speed-up, median of paired runs", value=round(statistics.median(pairs), 2), unit="x", group=g)
        )


def _same_result(res: ScenarioResult, key: str, by: dict[str, list[IngestRun]]) -> None:
    every = [r for runs in by.values() for r in runs]
    first = every[0]
    ok = all(r.events == first.events and r.sessions == first.sessions and r.failed == 0 for r in every)
    res.checks.append(
        Check(
            name=f"{key}: every run, any worker count, indexed the same sessions and events",
            ok=ok,
            detail=None if ok else str([(r.workers, r.events, r.sessions, r.failed) for r in every]),
        )
    )


def ingest_history(ctx: Context) -> ScenarioResult:
    n = ctx.sizes.history_sessions
    res = ScenarioResult(
        name="ingest_history",
        description=f"first index of a {n}-session history (Claude Code, "
        "Codex, OpenCode), --workers 1 vs the default (child processes; events/s, MB/s, peak RSS)",
    )
    homes = ProviderHomes.under(ctx.dir("ingest-history") / "homes")
    t = time.perf_counter()
    hist = corpus.write_history(homes.claude_projects, Path(homes.codex), Path(homes.opencode_db), sessions=n)
    res.notes.append(
        f"wrote {hist.sessions} sessions in {hist.sources} sources, {mb(hist.bytes):.1f} MB, in "
        f"{time.perf_counter() - t:.1f} s (20-600 messages each, one in five half CJK)"
    )
    by = _paired(ctx, "history", HISTORY_PROVIDERS, homes, ctx.sizes.history_runs)
    label = f"{hist.sessions} sessions, {mb(hist.bytes):.0f} MB"
    for name, runs in by.items():
        run = _median(runs)
        g = f"{label}, {_setting_label(name, run)}"
        res.metrics += _rate_metrics(run, runs, hist.bytes, g, HISTORY_RATE_TARGET if name == DEFAULT[0] else None)
        res.metrics += _memory_metrics(run, g)
    _speedup(res, by, f"{label}, default vs --workers 1", SPEEDUP_TARGET)
    _same_result(res, "history", by)
    sessions_ok = all(r.sessions == hist.sessions for runs in by.values() for r in runs)
    res.checks.append(
        Check(
            name="history: every session indexed",
            ok=sessions_ok,
            detail=None if sessions_ok else f"{by[ONE[0]][0].sessions} of {hist.sessions}",
        )
    )
    return res


def write_big_session(projects: Path, target_bytes: int) -> Path:
    """One Claude Code session of about ``target_bytes``, generated block by block and streamed to its file.

    ``synth.claude_lines`` pulls a turn only after writing the previous one's lines, so the
    bytes written so far decide when the turns stop.
    """
    head = synth.generate(89_999, 0, output_bytes=4000, cwd="/home/dev/big-project")
    path = synth.claude_project_dir(projects, head.cwd) / f"{head.id}.jsonl"
    path.parent.mkdir(parents=True, exist_ok=True)
    written = 0

    def turns() -> Iterator[synth.Turn]:
        block, start = 0, head.started
        while True:
            part = synth.generate(
                90_000 + block, 2000, session_id=head.id, start=start, output_bytes=4000, pools=synth.LATIN_POOLS
            )
            for turn in part.turns:
                if written >= target_bytes:
                    return
                yield turn
            start, block = part.turns[-1].ts + 1, block + 1

    with open(path, "wb") as fh:
        for line in synth.claude_lines(head, turns()):
            fh.write(line)
            written += len(line)
    return path


def ingest_big(ctx: Context) -> ScenarioResult:
    want = ctx.sizes.big_session_mb << 20
    res = ScenarioResult(
        name="ingest_big",
        description=f"first index of one ~{ctx.sizes.big_session_mb} MB Claude "
        "Code session, --workers 1 vs the default: throughput and peak memory of writer + workers",
    )
    homes = ProviderHomes.under(ctx.dir("ingest-big") / "homes")
    t = time.perf_counter()
    path = write_big_session(homes.claude_projects, want)
    size = file_bytes(path)
    res.notes.append(
        f"wrote {mb(size):.0f} MB in {time.perf_counter() - t:.1f} s (English and code, tool outputs "
        "~4 KB; one file, one session)"
    )
    by = _paired(ctx, "big", ["claude"], homes, ctx.sizes.big_runs, settings=(ONE, DEFAULT, FORCED))
    for name, runs in by.items():
        run = _median(runs)
        g = f"one {mb(size):.0f} MB session, {_setting_label(name, run)}"
        res.metrics += _rate_metrics(run, runs, size, g, None)
        memory = _memory_metrics(run, g)
        for m in memory:
            if m.name == ("peak RSS, writer + workers" if run.worker_processes else "peak RSS"):
                m.target = Target(op="<=", value=BIG_RSS_TARGET_MIB)
        res.metrics += memory
    _speedup(res, by, f"one {mb(size):.0f} MB session, workers (forced) vs --workers 1", None, other=FORCED[0])
    _same_result(res, "big", by)
    return res
