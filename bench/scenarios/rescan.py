"""rescan_noop: many unchanged sources, and what a scan that has nothing to do costs.

Half the sources are Claude Code transcripts, half Codex rollouts (4 messages each,
written by the shared writers from one template). After a first full scan, every
further scan must find every source unchanged and read nothing: that is checked, and
its time measured in-process and through the CLI (``voyager scan --json``, which is what
``voyager search`` pays before searching unless ``--no-refresh``).
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

import msgspec

from bench import corpus
from bench.context import Context
from bench.model import Check, Metric, ScenarioResult, Target
from bench.util import ProviderHomes, cli_env, mb, ms, voyager_command

#: The issue's target: a no-op scan of 10,000 sources in 300 ms, i.e. 30 µs a source.
TARGET_MS_AT_10K = 300.0


def rescan_noop(ctx: Context) -> ScenarioResult:
    from voyager_sessions.scan import scan

    n = ctx.sizes.rescan_sources
    res = ScenarioResult(
        name="rescan_noop", description=f"no-op scan of {n:,} unchanged sources (Claude Code + Codex files)"
    )
    homes, data_dir = _write_sources(ctx)
    env = homes.env()
    res.notes.append(ctx.cache["rescan_written"])
    t = time.perf_counter()
    first = scan(data_dir, env, providers=["claude", "codex"])
    first_s = time.perf_counter() - t
    ctx.cache["rescan_sources"] = (homes, data_dir)
    res.checks.append(
        Check(
            name=f"first scan indexed all {n:,} sources",
            ok=first.new == n and first.failed == 0,
            detail=f"new={first.new} failed={first.failed}",
        )
    )
    runs: list[float] = []
    untouched = True
    for _ in range(ctx.sizes.rescan_runs):
        t = time.perf_counter()
        again = scan(data_dir, env, providers=["claude", "codex"])
        runs.append(time.perf_counter() - t)
        untouched = untouched and again.touched == 0 and again.unchanged == n and again.events_added == 0
    res.checks.append(Check(name="no-op scans read nothing", ok=untouched))
    watched_cpu, status = _watched_noop(data_dir, env, reps=ctx.sizes.rescan_runs)
    res.notes.append(f"file-system watcher: {status}")
    cli = _cli_noop(data_dir, env, reps=ctx.sizes.rescan_runs, pycache=ctx.dir("pycache"))
    p50 = statistics.median(runs)
    res.metrics += [
        Metric(
            name="no-op scan",
            value=ms(p50),
            unit="ms",
            group=f"{n:,} sources",
            target=Target(op="<=", value=TARGET_MS_AT_10K) if n == 10_000 else None,
        ),
        Metric(
            name="no-op scan per source",
            value=round(p50 / n * 1e6, 2),
            unit="µs",
            group=f"{n:,} sources",
            target=Target(op="<=", value=TARGET_MS_AT_10K * 1000 / 10_000),
        ),
        Metric(name="no-op scan, best", value=ms(min(runs)), unit="ms", group=f"{n:,} sources"),
        Metric(
            name="no-op refresh told by the watcher, CPU",
            value=ms(statistics.median(watched_cpu)),
            unit="ms",
            group=f"{n:,} sources",
        ),
        Metric(
            name="CLI `voyager scan` wall, no-op", value=ms(statistics.median(cli)), unit="ms", group=f"{n:,} sources"
        ),
        Metric(name="first full scan", value=round(first_s, 2), unit="s", group=f"{n:,} sources"),
        Metric(name="first scan, per source", value=round(first_s / n * 1000, 3), unit="ms", group=f"{n:,} sources"),
    ]
    return res


def _watched_noop(data_dir: Path, env: dict[str, str], *, reps: int) -> tuple[list[float], str]:
    """CPU times of refreshes told by a file-system watcher that nothing changed (``scan.refresh.refresh``)."""
    from voyager_sessions.scan.changes import ChangeWatcher
    from voyager_sessions.scan.refresh import refresh

    watcher = ChangeWatcher(env, ["claude", "codex"]).start()
    try:
        refresh(data_dir, env, watcher, providers=["claude", "codex"])  # the first take is the full pass
        out: list[float] = []
        for _ in range(reps):
            c = time.process_time()
            summary = refresh(data_dir, env, watcher, providers=["claude", "codex"])
            out.append(time.process_time() - c)
            if summary.touched:
                raise RuntimeError(f"a watched no-op refresh read {summary.touched} sources")
        return out, watcher.status
    finally:
        watcher.stop()


def _write_sources(ctx: Context) -> tuple[ProviderHomes, Path]:
    n = ctx.sizes.rescan_sources
    homes = ProviderHomes.under(ctx.dir("rescan") / "homes")
    t = time.perf_counter()
    written = corpus.write_tiny_sources(n, homes.claude_projects, Path(homes.codex))
    ctx.cache["rescan_written"] = f"wrote {n:,} sources ({mb(written):.1f} MB) in {time.perf_counter() - t:.2f} s"
    return homes, ctx.dir("rescan") / "data"


def ensure_sources(ctx: Context) -> tuple[ProviderHomes, Path]:
    """The many-sources corpus and its scanned data dir (``rescan_noop``'s, or built here if it did not run)."""
    got = ctx.cache.get("rescan_sources")
    if got is None:
        from voyager_sessions.scan import scan

        homes, data_dir = _write_sources(ctx)
        scan(data_dir, homes.env(), providers=["claude", "codex"])
        got = ctx.cache["rescan_sources"] = (homes, data_dir)
    return got


def _cli_noop(data_dir: Path, env: dict[str, str], *, reps: int, pycache: Path) -> list[float]:
    """Wall times of ``voyager scan --json -q`` with nothing to do, after one unmeasured run (see ``cli_env``)."""
    cmd = [*voyager_command(), "scan", "--json", "-q"]
    full_env = cli_env({**env, "VOYAGER_HOME": str(data_dir)}, pycache)
    out: list[float] = []
    for i in range(reps + 1):
        t = time.perf_counter()
        proc = subprocess.run(cmd, env=full_env, capture_output=True, timeout=300, check=False)
        if i:
            out.append(time.perf_counter() - t)
        if proc.returncode != 0:
            err = proc.stderr.decode(errors="replace")[-500:]
            raise RuntimeError(f"voyager scan failed ({proc.returncode}): {err}")
        summary = msgspec.json.decode(proc.stdout)
        if summary.get("events_added"):
            raise RuntimeError(f"CLI no-op scan indexed {summary['events_added']} events")
    return out
