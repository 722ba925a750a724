"""ingest_5000 and append_one: one long session in each real format, indexed whole, then grown by a message.

``ingest_5000`` writes a 5,000-message session (English and CJK prose, code, tool calls
with ~4 KB outputs, reasoning) as a Claude Code transcript, a Codex rollout and an
OpenCode 1.x database, and times a full scan of each in a child process (so peak RSS
is the scan's). Planted tokens must then be found exactly once, as the right kind.

``append_one`` continues from those data dirs: it appends one message the way the agent
would (lines at the end of the JSONL file; new rows in the database), then times the
incremental scan and the search that follows, in-process, as ``voyager search`` does
them (``api.search`` opens the index afresh, so it sees the new commit).
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import msgspec
import synth

from bench import corpus
from bench.child import IngestRun
from bench.context import Context
from bench.model import Check, Metric, ScenarioResult, Target
from bench.util import ProviderHomes, file_bytes, mb, ms, run_child

FORMATS: tuple[str, ...] = ("claude", "codex", "opencode")
FORMAT_LABEL = {"claude": "Claude Code JSONL", "codex": "Codex rollout JSONL", "opencode": "OpenCode SQLite (v1)"}
LATIN_LABEL = "Claude Code JSONL, English and code"


class Appender(Protocol):
    def append(self, n: int) -> None:
        """Add the ``n``-th extra message (1-based) to the source, as the agent would."""


@dataclass
class Ingested:
    """A provider home holding the long session, and the data dir a full scan built from it."""

    provider: str
    homes: ProviderHomes
    source: Path
    data_dir: Path
    appender: Appender
    appended: int = 0


class _JsonlAppender:
    def __init__(self, split: corpus.SplitWrite) -> None:
        self.split = split

    def append(self, n: int) -> None:
        with open(self.split.path, "ab") as fh:
            fh.write(self.split.appends[n - 1])


def _conversation(ctx: Context) -> synth.Conversation:
    conv = ctx.cache.get("ingest_conversation")
    if conv is None:
        # Extra messages to append: append_one's rounds, then cli_search's (through the server, in-process, fr).
        extra = ctx.sizes.append_rounds + 3 * ctx.sizes.cli_append_rounds
        conv = ctx.cache["ingest_conversation"] = corpus.ingest_conversation(ctx.sizes.ingest_messages, extra=extra)
    return conv


def _write_source(ctx: Context, provider: str) -> tuple[ProviderHomes, Path, Appender]:
    conv = _conversation(ctx)
    n = ctx.sizes.ingest_messages
    homes = ProviderHomes.under(ctx.dir(f"ingest-{provider}") / "homes")
    if provider == "claude":
        split = corpus.write_claude_split(conv, homes.claude_projects, n)
        return homes, Path(split.path), _JsonlAppender(split)
    if provider == "codex":
        split = corpus.write_codex_split(conv, Path(homes.codex), n)
        return homes, Path(split.path), _JsonlAppender(split)
    db = corpus.write_opencode_v1(Path(homes.opencode_db), [msgspec.structs.replace(conv, turns=conv.turns[:n])])
    appender = corpus.OpenCodeAppender(db, conv, n, ctx.dir(f"ingest-{provider}") / "full.db")
    return homes, db, appender


def needle_checks(key: str, data_dir: Path, when: str = "") -> list[Check]:
    """One check per planted needle (``corpus.INGEST_NEEDLES``): found exactly once in ``data_dir``, as its kind.

    ``when`` ends each check's name (" after 3 appends"), for a scenario that checks them again later.
    """
    from voyager_sessions.api import SearchRequest, search

    checks = []
    for token, kind in corpus.INGEST_NEEDLES:
        res = search(SearchRequest(query=token, limit=10, refresh=False), data_dir=data_dir)
        kinds = [h.kind for h in res.hits]
        ok = res.total == 1 and kinds == [kind]
        checks.append(
            Check(
                name=f"{key}: '{token}' found once as {kind}{when}",
                ok=ok,
                detail=None if ok else f"total={res.total} kinds={kinds}",
            )
        )
    return checks


def ensure_ingested(ctx: Context, provider: str) -> Ingested:
    """The ingested long session for ``provider``; built in-process if ingest_5000 did not run."""
    got = ctx.ingested.get(provider)
    if got is None:
        from voyager_sessions.scan import scan

        homes, source, appender = _write_source(ctx, provider)
        data_dir = ctx.dir(f"ingest-{provider}") / "data"
        scan(data_dir, homes.env(), providers=[provider])
        got = ctx.ingested[provider] = Ingested(
            provider=provider, homes=homes, source=source, data_dir=data_dir, appender=appender
        )
    return got


def _scans(
    ctx: Context, key: str, providers: list[str], homes: ProviderHomes, workers: int | None, runs: int
) -> tuple[IngestRun, list[IngestRun], list[Path]]:
    """``runs`` full scans into fresh data dirs, each in a child process; the median run, all runs, their dirs."""
    tag = "default" if workers is None else f"w{workers}"
    dirs = [ctx.dir(f"ingest-{key}") / f"data-{tag}-{r}" for r in range(runs)]
    out: list[IngestRun] = []
    args = [a for p in providers for a in ("--provider", p)]
    if workers is not None:
        args += ["--workers", str(workers)]
    for data_dir in dirs:
        out.append(
            msgspec.json.decode(run_child(["ingest", "--data-dir", str(data_dir), *args], homes.env()), type=IngestRun)
        )
    return sorted(out, key=lambda x: x.seconds)[len(out) // 2], out, dirs


def _workers_label(run: IngestRun, workers: int | None) -> str:
    if workers == 1:
        return "--workers 1 (in-process)"
    if not run.worker_processes:
        return f"default ({run.workers} cores: read in-process)"
    return f"default ({run.worker_processes} worker{'s' if run.worker_processes > 1 else ''})"


def _memory_metrics(run: IngestRun, g: str) -> list[Metric]:
    metrics = [
        Metric(
            name="peak RSS" + (", writer" if run.worker_processes else ""),
            value=round(run.peak_rss_kb / 1024, 1),
            unit="MiB",
            group=g,
        )
    ]
    if run.worker_processes:
        metrics += [
            Metric(
                name=f"peak RSS, {run.worker_processes} workers (sum)",
                value=round(run.workers_peak_rss_kb / 1024, 1),
                unit="MiB",
                group=g,
            ),
            Metric(
                name="peak RSS, writer + workers",
                value=round((run.peak_rss_kb + run.workers_peak_rss_kb) / 1024, 1),
                unit="MiB",
                group=g,
            ),
            Metric(name="peak PSS, writer + workers", value=round(run.peak_pss_kb / 1024, 1), unit="MiB", group=g),
        ]
    metrics.append(Metric(name="RSS before scan", value=round(run.rss_start_kb / 1024, 1), unit="MiB", group=g))
    return metrics


#: The issue's goal for a first index: CPU time (writer, its Tantivy threads and its workers) per event indexed.
CPU_PER_EVENT_TARGET_US = 15


def cpu_metrics(runs: list[IngestRun], g: str) -> list[Metric]:
    """CPU microseconds per event of full scans: the least of ``runs`` (on a shared machine, contention only ever
    adds CPU time: the least is the nearest to the work itself) and their median."""
    per = sorted(1e6 * r.cpu_seconds / r.events for r in runs if r.events and r.cpu_seconds)
    if not per:
        return []
    metrics = [
        Metric(
            name="CPU per event",
            value=round(per[0], 1),
            unit="µs",
            group=g,
            target=Target(op="<=", value=CPU_PER_EVENT_TARGET_US),
        )
    ]
    if len(per) > 1:
        metrics.append(Metric(name="CPU per event, median run", value=round(per[len(per) // 2], 1), unit="µs", group=g))
    return metrics


def full_scan_metrics(run: IngestRun, runs: list[IngestRun], size: int, g: str, memory: list[Metric]) -> list[Metric]:
    """The rows of a full scan of ``size`` source bytes: the median ``run``'s, its ``memory`` rows, the best of ``runs``."""
    metrics = [
        Metric(name="wall", value=round(run.seconds, 3), unit="s", group=g, target=Target(op="<=", value=0.5)),
        Metric(
            name="events/s",
            value=round(run.events / run.seconds),
            unit="ev/s",
            group=g,
            target=Target(op=">=", value=20_000),
        ),
        Metric(name="source MB/s", value=round(mb(size) / run.seconds, 1), unit="MB/s", group=g),
        Metric(name="events", value=run.events, unit="", group=g),
        Metric(name="source size", value=mb(size), unit="MB", group=g),
        Metric(name="index size", value=mb(run.index_bytes), unit="MB", group=g),
        *cpu_metrics(runs, g),
        *memory,
    ]
    if len(runs) > 1:
        metrics.append(
            Metric(name="wall, best of runs", value=round(min(x.seconds for x in runs), 3), unit="s", group=g)
        )
    return metrics


def _measure(
    ctx: Context,
    res: ScenarioResult,
    key: str,
    provider: str,
    homes: ProviderHomes,
    source: Path,
    label: str,
    workers: int | None = None,
) -> Path:
    """Full scans of ``source`` in child processes; adds the metrics and checks; returns the last data dir."""
    size = file_bytes(source)
    run, runs, dirs = _scans(ctx, key, [provider], homes, workers, ctx.sizes.ingest_runs)
    g = f"{label}, {_workers_label(run, workers)}"
    res.metrics += full_scan_metrics(run, runs, size, g, _memory_metrics(run, g))
    ok = run.failed == 0 and run.events > 0
    res.checks.append(
        Check(
            name=f"{key} ({_workers_label(run, workers)}): scan read the session",
            ok=ok,
            detail=None if ok else f"events={run.events} failed={run.failed}",
        )
    )
    if run.skipped:
        res.notes.append(f"{key}: the scan reported {run.skipped} skipped piece(s)")
    res.checks += needle_checks(key, dirs[-1])
    return dirs[-1]


def refresh_metrics(refresh: list[float], query: list[float], g: str, prefix: str = "") -> list[Metric]:
    """The rows of rounds of an append's refresh (scan) then search, seconds each: medians and the worst round."""
    total = [a + b for a, b in zip(refresh, query, strict=True)]
    return [
        Metric(
            name=f"{prefix}refresh + search",
            value=ms(statistics.median(total)),
            unit="ms",
            group=g,
            target=Target(op="<=", value=60),
        ),
        Metric(name=f"{prefix}refresh (scan)", value=ms(statistics.median(refresh)), unit="ms", group=g),
        Metric(name=f"{prefix}search after refresh", value=ms(statistics.median(query)), unit="ms", group=g),
        Metric(name=f"{prefix}refresh + search, worst", value=ms(max(total)), unit="ms", group=g),
    ]


def ingest_5000(ctx: Context) -> ScenarioResult:
    res = ScenarioResult(
        name="ingest_5000",
        description=f"full index of one {ctx.sizes.ingest_messages:,}-message "
        "session per format (child process; wall, events/s, MB/s, peak RSS, index size)",
    )
    t = time.perf_counter()
    _conversation(ctx)
    res.notes.append(
        f"corpus generated in {time.perf_counter() - t:.2f} s (synth.generate, output_bytes=4000; "
        "half the words Chinese, Japanese or Korean)"
    )
    for provider in FORMATS:
        t = time.perf_counter()
        homes, source, appender = _write_source(ctx, provider)
        res.notes.append(
            f"{provider}: wrote {mb(file_bytes(source)):.1f} MB in {time.perf_counter() - t:.2f} s ({source.name})"
        )
        _measure(ctx, res, provider, provider, homes, source, FORMAT_LABEL[provider], workers=1)
        data_dir = _measure(ctx, res, provider, provider, homes, source, FORMAT_LABEL[provider])
        ctx.ingested[provider] = Ingested(
            provider=provider, homes=homes, source=source, data_dir=data_dir, appender=appender
        )
    # The same session shape in English and code (one word in twenty Chinese): every CJK
    # character is a token of its own, so the CJK-dense corpus above is the costly case.
    conv = corpus.ingest_conversation(ctx.sizes.ingest_messages, pools=synth.LATIN_POOLS)
    homes = ProviderHomes.under(ctx.dir("ingest-claude-latin") / "homes")
    source = Path(corpus.write_claude_split(conv, homes.claude_projects, ctx.sizes.ingest_messages).path)
    _measure(ctx, res, "claude-latin", "claude", homes, source, LATIN_LABEL, workers=1)
    _measure(ctx, res, "claude-latin", "claude", homes, source, LATIN_LABEL)
    return res


def append_one(ctx: Context) -> ScenarioResult:
    from voyager_sessions.scan import scan
    from voyager_sessions.api import SearchRequest, search

    res = ScenarioResult(
        name="append_one",
        description="append one message to the ingested session, then "
        "incremental scan + the next search, in-process (median of rounds)",
    )
    for provider in FORMATS:
        ing = ensure_ingested(ctx, provider)
        env = ing.homes.env()
        refresh: list[float] = []
        query: list[float] = []
        reread: list[int] = []
        how: list[str] = []
        for _ in range(ctx.sizes.append_rounds):
            ing.appended += 1
            ing.appender.append(ing.appended)
            t0 = time.perf_counter()
            summary = scan(ing.data_dir, env, providers=[provider])
            t1 = time.perf_counter()
            token = f"{corpus.APPEND_TOKEN}{ing.appended}"
            found = search(SearchRequest(query=token, limit=5, refresh=False), data_dir=ing.data_dir)
            t2 = time.perf_counter()
            refresh.append(t1 - t0)
            query.append(t2 - t1)
            reread.append(summary.events_added)
            how.append("grown" if summary.grown else "changed" if summary.changed else "unchanged")
            kinds = [h.kind for h in found.hits]
            want = _conversation(ctx).turns[ctx.sizes.ingest_messages + ing.appended - 1].role  # user or assistant
            ok = found.total == 1 and kinds == [want]
            res.checks.append(
                Check(
                    name=f"{provider}: appended message {ing.appended} found once, as {want}",
                    ok=ok,
                    detail=None if ok else f"total={found.total} kinds={kinds} scan={how[-1]}",
                )
            )
        g = FORMAT_LABEL[provider]
        res.metrics += [
            *refresh_metrics(refresh, query, g),
            Metric(name="events (re)indexed per append", value=statistics.median(reread), unit="", group=g),
        ]
        res.notes.append(
            f"{provider}: source classified as {', '.join(sorted(set(how)))}; "
            f"{ing.appended} message(s) appended in total"
        )
    return res
