"""ingest_formats: one session as JSONL, as SQLite rows and as one JSON document rewritten whole.

Agents keep a session in one of three shapes, and each costs a reader differently when
the session grows: lines appended to a file (Claude Code), rows added to a database
(OpenCode), or one JSON document the agent rewrites whole after every message (the Cline
CLI's ``<id>.messages.json``, written by ``synth.cline``). This scenario writes the same
CJK-dense conversation (``corpus.ingest_conversation``: 5,000 messages, ~4 KB tool
outputs, half the words Chinese, Japanese or Korean) in all three and measures, for each:

* a full index in a child process (``bench.child``): wall, events/s, source MB/s, peak RSS;
* then, ``append_rounds`` times, one message more added the way the agent adds it (a line
  appended; ``message``/``part`` rows inserted; for Cline the whole document written again
  with one more message, and its manifest), and the incremental scan plus the search that
  follows, in-process, as ``voyager search`` does them.

Claude Code JSONL is the reference: the other two formats' times carry their ratio to it.
Correctness checks: the planted needles found once each, as the right kind; the scan's
event count equal to what the neutral conversation holds (counted from its turns, so a
format that drops or doubles anything fails); after every append, the appended message
found exactly once as the right kind and the index grown by exactly that message's
events (no fewer, no stale copy left beside a session read whole again); after the
last, the needles still found once.

Kept apart from ``ingest_5000``/``append_one`` on purpose: it measures what the storage
shape costs, on one conversation, under the same conditions for all three.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

import msgspec
import synth
from synth import cline as synth_cline

from bench import corpus
from bench.child import IngestRun
from bench.context import Context
from bench.model import Check, Metric, Reference, ScenarioResult
from bench.scenarios.ingest import full_scan_metrics, needle_checks, refresh_metrics
from bench.util import ProviderHomes, file_bytes, mb, run_child

#: key -> (provider, table label). The first is the reference the others are compared with.
FORMATS: dict[str, tuple[str, str]] = {
    "jsonl": ("claude", "Claude Code JSONL (reference)"),
    "sqlite": ("opencode", "OpenCode SQLite (v1)"),
    "json": ("cline", "Cline CLI whole-file JSON"),
}
REFERENCE = "jsonl"
REFERENCE_LABEL = "JSONL"


def conversation_events(turns: Iterable[synth.Turn]) -> int:
    """How many events ``turns`` hold: a prompt; an answer's text, reasoning, each tool call and finished result."""
    n = 0
    for t in turns:
        if t.role == "user":
            n += 1
            continue
        n += bool(t.text) + bool(t.reasoning) + sum(1 + (c.output is not None) for c in t.tool_calls)
    return n


@dataclass
class Written:
    """One format's copy of the session: where it is, how to add a message, what the scans need."""

    key: str
    provider: str
    label: str
    env: dict[str, str]
    sources: list[Path]
    #: Adds the ``n``-th extra message (1-based) as the agent would; returns the bytes it wrote to the
    #: session's files (None where that is not a file's length: a database's pages).
    append: Callable[[int], int | None]


def _write(ctx: Context, key: str, conv: synth.Conversation, messages: int) -> Written:
    provider, label = FORMATS[key]
    root = ctx.dir(f"formats-{key}")
    homes = ProviderHomes.under(root / "homes")
    cline_data = Path(homes.root) / "cline"
    env = {**homes.env(), "VOYAGER_CLINE_HOME": str(cline_data)}
    if key == "jsonl":
        split = corpus.write_claude_split(conv, homes.claude_projects, messages)

        def append_line(n: int) -> int:
            with open(split.path, "ab") as fh:
                fh.write(split.appends[n - 1])
            return len(split.appends[n - 1])

        return Written(key, provider, label, env, [Path(split.path)], append_line)
    if key == "sqlite":
        head = msgspec.structs.replace(conv, turns=conv.turns[:messages])
        db = corpus.write_opencode_v1(Path(homes.opencode_db), [head])
        rows = corpus.OpenCodeAppender(db, conv, messages, root / "full.db")

        def append_rows(n: int) -> int | None:
            rows.append(n)
            return None

        return Written(key, provider, label, env, [db], append_rows)
    path = synth_cline.write_cline(conv, cline_data, turns=conv.turns[:messages])
    manifest = path.with_name(f"{path.parent.name}.json")

    def rewrite(n: int) -> int:
        synth_cline.write_cline(conv, cline_data, turns=conv.turns[: messages + n])
        return path.stat().st_size + manifest.stat().st_size

    return Written(key, provider, label, env, [path, manifest], rewrite)


def _index_events(data_dir: Path) -> int:
    from voyager_sessions.api import reader

    with reader(data_dir) as r:
        return int(r.stats().index_events)


def _full_index(ctx: Context, res: ScenarioResult, w: Written, expected: int) -> Path:
    """Full scans in child processes; adds the metrics and checks; returns the last data dir."""
    size = sum(file_bytes(p) for p in w.sources)
    runs: list[IngestRun] = []
    dirs = [ctx.dir(f"formats-{w.key}") / f"data-{r}" for r in range(ctx.sizes.ingest_runs)]
    for data_dir in dirs:
        out = run_child(["ingest", "--data-dir", str(data_dir), "--provider", w.provider], w.env)
        runs.append(msgspec.json.decode(out, type=IngestRun))
    run = sorted(runs, key=lambda x: x.seconds)[len(runs) // 2]
    g = w.label
    # The writer's own memory, named alike whether or not the scan started workers: `_compare` matches "peak RSS".
    res.metrics += full_scan_metrics(
        run,
        runs,
        size,
        g,
        [
            Metric(name="peak RSS", value=round(run.peak_rss_kb / 1024, 1), unit="MiB", group=g),
            Metric(name="RSS before scan", value=round(run.rss_start_kb / 1024, 1), unit="MiB", group=g),
        ],
    )
    ok = run.failed == 0 and not run.skipped and run.sessions == 1 and all(r.events == expected for r in runs)
    res.checks.append(
        Check(
            name=f"{w.key}: the full scan indexed the conversation's {expected:,} events",
            ok=ok,
            detail=None
            if ok
            else f"events={[r.events for r in runs]} sessions={run.sessions} failed={run.failed} skipped={run.skipped}",
        )
    )
    res.checks += needle_checks(w.key, dirs[-1])
    return dirs[-1]


def _appends(
    ctx: Context, res: ScenarioResult, w: Written, data_dir: Path, conv: synth.Conversation, messages: int
) -> None:
    """``append_rounds`` appends, each followed by the timed refresh and search; adds the metrics and checks."""
    from voyager_sessions.api import SearchRequest, search
    from voyager_sessions.ingest import adapters
    from voyager_sessions.scan import scan

    adapters.get(w.provider)  # imported before the clock starts, as a running `voyager watch` would have it
    refresh: list[float] = []
    query: list[float] = []
    added: list[int] = []
    removed: list[int] = []
    written: list[int] = []
    how: set[str] = set()
    # What the index held before (a session's title event included, where the agent named it).
    base = _index_events(data_dir) - conversation_events(conv.turns[:messages])
    for n in range(1, ctx.sizes.append_rounds + 1):
        wrote = w.append(n)
        if wrote is not None:
            written.append(wrote)
        t0 = time.perf_counter()
        summary = scan(data_dir, w.env, providers=[w.provider])
        t1 = time.perf_counter()
        found = search(SearchRequest(query=f"{corpus.APPEND_TOKEN}{n}", limit=5, refresh=False), data_dir=data_dir)
        t2 = time.perf_counter()
        refresh.append(t1 - t0)
        query.append(t2 - t1)
        added.append(summary.events_added)
        removed.append(summary.events_removed)
        how.add("grown" if summary.grown else "changed" if summary.changed else "unchanged")
        want = conv.turns[messages + n - 1].role  # the appended message's token is in its text: user or assistant
        kinds = [h.kind for h in found.hits]
        expected = base + conversation_events(conv.turns[: messages + n])
        held = _index_events(data_dir)
        ok = found.total == 1 and kinds == [want] and held == expected
        res.checks.append(
            Check(
                name=f"{w.key}: appended message {n} found once as {want}; the index grew by its events only",
                ok=ok,
                detail=None
                if ok
                else f"total={found.total} kinds={kinds} index={held} "
                f"expected={expected} added={summary.events_added} "
                f"removed={summary.events_removed}",
            )
        )
    res.checks += needle_checks(w.key, data_dir, when=f" after {ctx.sizes.append_rounds} appends")
    g = w.label
    res.metrics += [
        *refresh_metrics(refresh, query, g, prefix="append: "),
        Metric(name="append: events indexed", value=statistics.median(added), unit="", group=g),
        Metric(name="append: events removed", value=statistics.median(removed), unit="", group=g),
    ]
    if written:
        res.metrics.append(
            Metric(
                name="append: bytes the agent writes",
                unit="KB",
                group=g,
                value=round(statistics.median(written) / 1000, 1),
            )
        )
    res.notes.append(f"{w.key}: each append classified as {', '.join(sorted(how))}")


#: The metrics that carry the reference format's number beside them.
COMPARED = ("wall", "peak RSS", "append: refresh + search")


def _compare(res: ScenarioResult) -> None:
    """Put the reference format's value (and this one's ratio to it) beside the ``COMPARED`` metrics."""
    ref_label = FORMATS[REFERENCE][1]
    ref = {m.name: m.value for m in res.metrics if m.group == ref_label and m.name in COMPARED}
    for m in res.metrics:
        if m.group != ref_label and m.name in ref and m.value is not None:
            base = ref[m.name]
            m.reference = Reference(label=REFERENCE_LABEL, value=base)
            m.ratio = round(m.value / base, 2) if base else None


def ingest_formats(ctx: Context) -> ScenarioResult:
    messages = ctx.sizes.ingest_messages
    res = ScenarioResult(
        name="ingest_formats",
        description=f"one {messages:,}-message CJK-dense session as JSONL, "
        "SQLite and whole-file JSON: full index (child process) and one message appended "
        "(refresh + search, in-process)",
    )
    t = time.perf_counter()
    conv = corpus.ingest_conversation(messages, extra=ctx.sizes.append_rounds)
    expected = conversation_events(conv.turns[:messages])
    res.notes.append(
        f"corpus generated in {time.perf_counter() - t:.2f} s; {expected:,} events in the first {messages:,} messages"
    )
    for key in FORMATS:
        t = time.perf_counter()
        w = _write(ctx, key, conv, messages)
        res.notes.append(
            f"{key}: wrote {mb(sum(file_bytes(p) for p in w.sources)):.1f} MB in "
            f"{time.perf_counter() - t:.2f} s ({', '.join(p.name for p in w.sources)})"
        )
        data_dir = _full_index(ctx, res, w, expected)
        _appends(ctx, res, w, data_dir, conv, messages)
    _compare(res)
    return res
