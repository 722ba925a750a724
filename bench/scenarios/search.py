"""search and baseline: a query mix over 10k, 100k and 1M events, against Voyager and the FTS5 design.

The corpora are ``bench.corpus.EventCorpus`` streams fed straight into
``SearchIndex.add_events`` (this measures search, not parsing; ``ingest_5000`` measures
parsing), spooled once so the FTS5 baseline indexes exactly the same events. The query
mix: planted needles (rare words, identifiers with look-alike neighbours, a phrase with
a reordered decoy, 2-character CJK and Hangul pairs, a 4-character CJK run, a CJK pair
planted only apart, text past 600 bytes, a prefix, a word with a provider filter,
sessions mode) whose answers are known and checked, and common queries (frequent words,
a common phrase, prefix and identifier, common CJK, filter-only, sessions mode) for
latency. A subset also runs through the CLI (``voyager search … --no-refresh --json``)
to time what a person waits for, process start included.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path

import msgspec

from bench.baseline import Fts5Baseline
from bench.context import Context, size_label
from bench.corpus import COMMON_QUERIES, EventCorpus, Needle, read_spool
from bench.model import Check, Metric, QueryStat, Reference, ScenarioResult, Target
from bench.util import (
    ProviderHomes,
    Quantiles,
    cli_env,
    dir_bytes,
    install_wheel,
    mb,
    ms,
    repeat,
    voyager_command,
)

#: Queries also timed through the CLI, by name.
CLI_SUBSET = ("rare word", "CJK pair (2 chars)", "common word", "filter only")
#: The size at which the issue sets the in-process latency targets.
TARGET_EVENTS = 1_000_000


@dataclass(frozen=True)
class Query:
    name: str
    query: str
    category: str
    sessions: bool = False
    needle: Needle | None = None


@dataclass
class SearchRun:
    """One corpus size: its spool, Voyager's index and what was measured on it."""

    events: int
    corpus: EventCorpus
    spool: Path
    text_bytes: int
    data_dir: Path
    build_s: float
    index_bytes: int
    stats: list[QueryStat] = field(default_factory=list)
    samples: list[float] = field(default_factory=list)
    checks: list[Check] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)


def query_mix(corpus: EventCorpus) -> list[Query]:
    """Needles first (checked), then common queries (timed only)."""
    out = [Query(n.name, n.query, n.category, needle=n) for n in corpus.needles]
    out += [Query(name, q, cat, sessions=s) for name, q, cat, s in COMMON_QUERIES]
    rare = next(n for n in corpus.needles if n.name == "rare word")
    # Sessions mode on a needle: the sessions holding it, each once.
    out.append(Query("sessions mode, needle", rare.query, "sessions", sessions=True, needle=rare))
    # Words a person remembers, said in different events: sessions that hold each, ranked (issue #22).
    out.append(Query("sessions mode, three common words", "index query planner", "sessions", sessions=True))
    return out


def _keys_voyager(result) -> list[str]:
    return [f"{h.session_id}#{h.seq}" for h in result.hits]


def _sessions_of(keys: list[str]) -> set[str]:
    return {k.rpartition("#")[0] for k in keys}


def _build_voyager(corpus: EventCorpus, spool: Path, data_dir: Path) -> float:
    from voyager_sessions.scan.run import COMMIT_EVERY_EVENTS
    from voyager_sessions.core.model import SessionRecord
    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.search.index import SearchIndex
    from voyager_sessions.store.state import StateStore

    t0 = time.perf_counter()
    index = SearchIndex(DataDir(data_dir).index)
    pending = 0
    for batch in read_spool(spool):
        pending += index.add_events(batch)
        if pending >= COMMIT_EVERY_EVENTS:  # the pipeline's cadence
            index.commit()
            pending = 0
    index.commit()
    index.close()
    store = StateStore(DataDir(data_dir).state_db)
    store.commit_scan(
        sessions=[SessionRecord(session=s, events=n) for s, n in zip(corpus.sessions, corpus.sizes, strict=True)]
    )
    store.close()
    return time.perf_counter() - t0


def _check_needle(searcher, q: Query, stat: QueryStat, label: str) -> Check:
    """Run needle query ``q`` with room for every expected hit; fill ``stat``'s found/wrong; judge it."""
    from voyager_sessions.search.engine import SearchOptions

    assert q.needle is not None
    want = list(q.needle.expected)
    got = searcher.search(q.query, SearchOptions(sessions=q.sessions, limit=max(50, 2 * len(want))))
    keys = _keys_voyager(got)
    if q.sessions:
        want_s, got_s = _sessions_of(want), _sessions_of(keys)
        stat.expected, stat.found, stat.wrong = len(want_s), len(want_s & got_s), len(got_s - want_s)
        hit_count = sum(h.hit_count or 0 for h in got.hits)
        ok = got_s == want_s and hit_count == len(want) and len(keys) == len(got_s)
        detail = f"sessions {stat.found}/{len(want_s)}, wrong {stat.wrong}, hit_count sum {hit_count}/{len(want)}"
    else:
        found, wanted = set(keys), set(want)
        stat.expected, stat.found, stat.wrong = len(wanted), len(found & wanted), len(found - wanted)
        ok = found == wanted and got.total == len(wanted) and len(keys) == len(found)
        detail = f"found {stat.found}/{len(wanted)}, wrong {stat.wrong}, total {got.total}"
    return Check(name=f"{label}: {q.name} ({q.query})", ok=ok, detail=None if ok else detail)


def ensure_search_run(ctx: Context, n: int) -> SearchRun:
    """Build the ``n``-event corpus and Voyager's index, and measure the query mix (once per run)."""
    run = ctx.search_runs.get(n)
    if run is not None:
        return run
    from voyager_sessions.api import Reader
    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.search.engine import SearchOptions
    from voyager_sessions.search.index import SearchIndex

    label = size_label(n)
    root = ctx.dir(f"search-{label}")
    corpus = EventCorpus(n, seed=ctx.seed)
    spool = root / "events.spool"
    t = time.perf_counter()
    text_bytes = corpus.spool(spool)
    gen_s = time.perf_counter() - t
    data_dir = root / "voyager"
    build_s = _build_voyager(corpus, spool, data_dir)
    segments = SearchIndex(DataDir(data_dir).index, create=False).num_segments()
    run = ctx.search_runs[n] = SearchRun(
        events=n,
        corpus=corpus,
        spool=spool,
        text_bytes=text_bytes,
        data_dir=data_dir,
        build_s=build_s,
        index_bytes=dir_bytes(data_dir / "index"),
    )
    t = time.perf_counter()
    searcher = Reader(DataDir(data_dir))
    open_s = time.perf_counter() - t
    run.notes.append(
        f"{label}: generated {len(corpus.sessions):,} sessions, {mb(text_bytes):.0f} MB of text in "
        f"{gen_s:.1f} s; index has {segments} segment(s); Searcher opened in {ms(open_s):.1f} ms"
    )
    try:
        for q in query_mix(corpus):
            opts = SearchOptions(sessions=q.sessions)
            t = time.perf_counter()
            total = searcher.search(q.query, opts).total
            first = time.perf_counter() - t
            samples = repeat(lambda q=q, opts=opts: searcher.search(q.query, opts), reps=ctx.sizes.query_reps, warmup=0)
            run.samples += samples
            qs = Quantiles.of(samples)
            stat = QueryStat(
                engine="voyager",
                events=n,
                name=q.name,
                query=q.query,
                category=q.category,
                sessions=q.sessions,
                reps=len(samples),
                first_ms=ms(first),
                p50_ms=ms(qs.p50),
                p95_ms=ms(qs.p95),
                p99_ms=ms(qs.p99),
                total=total,
            )
            if q.needle is not None:
                run.checks.append(_check_needle(searcher, q, stat, label))
            run.stats.append(stat)
    finally:
        searcher.close()
    return run


def installed_command(ctx: Context) -> list[str] | None:
    """The ``voyager`` of a regular (not editable) install of this checkout, built once per run; None if pip cannot."""
    if "installed_cli" not in ctx.cache:
        t = time.perf_counter()
        try:
            ctx.cache["installed_cli"] = install_wheel(ctx.dir("installed"))
            ctx.cache["installed_note"] = (
                f"installed wheel: built and installed into a fresh venv in {time.perf_counter() - t:.1f} s"
            )
        except (OSError, subprocess.SubprocessError) as exc:
            err = getattr(exc, "stderr", None) or b""
            ctx.cache["installed_cli"] = None
            ctx.cache["installed_note"] = (
                f"installed wheel: not measured ({type(exc).__name__}: "
                f"{err.decode(errors='replace').strip()[-300:] or exc})"
            )
    return ctx.cache["installed_cli"]


def _cli(ctx: Context, run: SearchRun, res: ScenarioResult, command: list[str], label: str) -> list[float]:
    """Wall times of ``voyager search … --no-refresh --json`` for the CLI subset; checks totals agree.

    ``label`` names the install (``dev`` for this interpreter's, editable in a checkout).
    Each query runs once unmeasured first (the page cache, and bytecode: see ``cli_env``).
    """
    env = cli_env(ProviderHomes.under(ctx.dir("search-home")).env(run.data_dir), ctx.dir("pycache"))
    size = size_label(run.events)
    all_walls: list[float] = []
    for stat in run.stats:
        if stat.name not in CLI_SUBSET:
            continue
        cmd = [*command, "search", stat.query, "--no-refresh", "--json"]
        subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)
        walls: list[float] = []
        for _ in range(ctx.sizes.cli_reps):
            t = time.perf_counter()
            proc = subprocess.run(cmd, env=env, capture_output=True, timeout=120, check=False)
            walls.append(time.perf_counter() - t)
            if proc.returncode not in (0, 1):
                raise RuntimeError(
                    f"voyager search {stat.query!r} ({label}) exited {proc.returncode}: "
                    f"{proc.stderr.decode(errors='replace')[-500:]}"
                )
        total = msgspec.json.decode(proc.stdout).get("total")
        expected_exit = 0 if total else 1
        ok = proc.returncode == expected_exit and total == stat.total
        res.checks.append(
            Check(
                name=f"{size}: CLI ({label}) agrees with in-process search for {stat.query!r}",
                ok=ok,
                detail=None if ok else f"exit={proc.returncode} total={total} in-process={stat.total}",
            )
        )
        if label == "dev":
            stat.cli_p50_ms = ms(statistics.median(walls))
        all_walls += walls
    return all_walls


def search(ctx: Context) -> ScenarioResult:
    sizes = ctx.sizes.search_events
    res = ScenarioResult(
        name="search",
        description="query mix at "
        + ", ".join(size_label(n) for n in sizes)
        + " events: in-process p50/p95/p99, CLI wall, build time and index size per size",
    )
    res.notes.append(
        "corpora are Event Structs fed straight into SearchIndex.add_events (search is measured "
        "here, not parsing); build time = read spool + add + commit + state rows"
    )
    for n in sizes:
        run = ensure_search_run(ctx, n)
        res.checks += run.checks
        res.notes += run.notes
        cli = _cli(ctx, run, res, voyager_command(), "dev")
        installed = installed_command(ctx)
        cli_installed = _cli(ctx, run, res, installed, "installed") if installed else []
        g = f"{size_label(n)} events"
        q = Quantiles.of(run.samples)
        at_target = n == TARGET_EVENTS
        firsts = [s.first_ms for s in run.stats]
        res.queries += run.stats
        res.metrics += [
            Metric(name="build", value=round(run.build_s, 2), unit="s", group=g),
            Metric(name="build rate", value=round(n / run.build_s), unit="ev/s", group=g),
            Metric(name="index size", value=mb(run.index_bytes), unit="MB", group=g),
            Metric(name="index bytes per event", value=round(run.index_bytes / n), unit="B", group=g),
            Metric(name="event text", value=mb(run.text_bytes), unit="MB", group=g),
            Metric(
                name="query p50",
                value=ms(q.p50),
                unit="ms",
                group=g,
                target=Target(op="<=", value=5) if at_target else None,
            ),
            Metric(name="query p95", value=ms(q.p95), unit="ms", group=g),
            Metric(
                name="query p99",
                value=ms(q.p99),
                unit="ms",
                group=g,
                target=Target(op="<=", value=25) if at_target else None,
            ),
            Metric(name="first run of a query, median", value=round(statistics.median(firsts), 3), unit="ms", group=g),
            Metric(name="first run of a query, worst", value=round(max(firsts), 3), unit="ms", group=g),
            Metric(
                name="CLI wall p50",
                value=ms(statistics.median(cli)),
                unit="ms",
                group=g,
                target=Target(op="<=", value=80),
            ),
            Metric(name="CLI wall p95", value=ms(Quantiles.of(cli).p95), unit="ms", group=g),
        ]
        if cli_installed:
            res.metrics += [
                Metric(
                    name="CLI wall p50, installed wheel",
                    value=ms(statistics.median(cli_installed)),
                    unit="ms",
                    group=g,
                    target=Target(op="<=", value=80),
                ),
                Metric(
                    name="CLI wall p95, installed wheel", value=ms(Quantiles.of(cli_installed).p95), unit="ms", group=g
                ),
            ]
    res.notes.append(
        "CLI wall: `voyager search … --no-refresh --json` as a child process, process start "
        "included, bytecode cached as in any real install; `dev` is this interpreter's install "
        "(editable in a checkout: setuptools' import finder costs ~10 ms of `site`), `installed "
        "wheel` a regular `pip install .` into a fresh venv"
    )
    if "installed_note" in ctx.cache:
        res.notes.append(ctx.cache["installed_note"])
    return res


def baseline(ctx: Context) -> ScenarioResult:
    sizes = ctx.sizes.search_events
    res = ScenarioResult(
        name="baseline",
        description="SQLite FTS5 trigram, 600-byte body cap, LIKE under 3 chars: "
        "same corpora and queries; ratios are voyager / baseline",
    )
    for n in sizes:
        run = ensure_search_run(ctx, n)
        label = size_label(n)
        db_path = run.data_dir.parent / "baseline.db"
        for p in db_path.parent.glob(db_path.name + "*"):
            p.unlink()
        base = Fts5Baseline(db_path)
        t = time.perf_counter()
        base.build(read_spool(run.spool))
        build_s = time.perf_counter() - t
        size = base.size_bytes()
        samples: list[float] = []
        v_found = v_expected = b_found = b_wrong = v_wrong = 0
        v_by_cat: dict[str, list[float]] = {}
        b_by_cat: dict[str, list[float]] = {}
        for vs in run.stats:  # Voyager's (the only engine ensure_search_run measures)
            t = time.perf_counter()
            base.search(vs.query, sessions=vs.sessions)
            first = time.perf_counter() - t
            reps = repeat(
                lambda base=base, vs=vs: base.search(vs.query, sessions=vs.sessions),
                reps=ctx.sizes.query_reps,
                warmup=0,
                budget=ctx.sizes.baseline_query_budget_s,
            )
            samples += reps
            qs = Quantiles.of(reps)
            bs = QueryStat(
                engine="baseline",
                events=n,
                name=vs.name,
                query=vs.query,
                category=vs.category,
                sessions=vs.sessions,
                reps=len(reps),
                first_ms=ms(first),
                p50_ms=ms(qs.p50),
                p95_ms=ms(qs.p95),
                p99_ms=ms(qs.p99),
            )
            v_by_cat.setdefault(vs.category, []).append(vs.p50_ms)
            b_by_cat.setdefault(vs.category, []).append(bs.p50_ms)
            if vs.expected is not None:
                needle = next(nd for nd in run.corpus.needles if nd.query == vs.query)
                rows = base.search(vs.query, limit=10_000, sessions=vs.sessions)
                keys = [f"{r[0]}#{r[1]}" for r in rows]
                want = list(needle.expected)
                if vs.sessions:
                    got_s, want_s = {r[0] for r in rows}, _sessions_of(want)
                    bs.expected, bs.found, bs.wrong = len(want_s), len(got_s & want_s), len(got_s - want_s)
                else:
                    bs.expected, bs.found, bs.wrong = len(want), len(set(keys) & set(want)), len(set(keys) - set(want))
                v_expected += vs.expected
                v_found += vs.found or 0
                v_wrong += vs.wrong or 0
                b_found += bs.found
                b_wrong += bs.wrong
            res.queries.append(bs)
        base.close()
        res.checks.append(
            Check(
                name=f"{label}: Voyager recall on planted needles is 100% with no wrong hit",
                ok=v_found == v_expected and v_wrong == 0,
                detail=f"found {v_found}/{v_expected}, wrong {v_wrong}",
            )
        )
        g = f"{label} events"
        vq, bq = Quantiles.of(run.samples), Quantiles.of(samples)

        def vs_base(name: str, v: float, b: float, unit: str, *, ratio: bool = True, g: str = g) -> Metric:
            return Metric(
                name=name,
                value=v,
                unit=unit,
                group=g,
                reference=Reference(label="baseline", value=b),
                ratio=round(v / b, 3) if b and ratio else None,
            )

        res.metrics += [
            vs_base("build", round(run.build_s, 2), round(build_s, 2), "s"),
            vs_base("index size", mb(run.index_bytes), mb(size), "MB"),
            vs_base("query p50, all", ms(vq.p50), ms(bq.p50), "ms"),
            vs_base("query p95, all", ms(vq.p95), ms(bq.p95), "ms"),
            vs_base("query p99, all", ms(vq.p99), ms(bq.p99), "ms"),
        ]
        for cat, v_p50s in v_by_cat.items():
            res.metrics.append(
                vs_base(
                    f"p50, {cat} queries",
                    round(statistics.median(v_p50s), 3),
                    round(statistics.median(b_by_cat[cat]), 3),
                    "ms",
                )
            )
        res.metrics += [
            vs_base(
                "recall on planted needles",
                round(100 * v_found / v_expected, 1),
                round(100 * b_found / v_expected, 1),
                "%",
                ratio=False,
            ),
            vs_base("wrong hits on needle queries", v_wrong, b_wrong, "", ratio=False),
        ]
    return res
