"""web_search: what `voyager web`'s search-as-you-type costs on the server, at each corpus size of ``search``.

The page asks two things per (debounced) keystroke: its rows (``/api/search?…&facets=0``:
the grouped search of one page of 50 sessions) and the facets (``…&limit=0``: every
matching session counted by agent, project and week, from aggregations, no row read;
``search/facets.py``). Both are timed here in process through
``voyager_sessions.web.data.Library`` (what the handlers call), without HTTP, for the query
mix of ``search`` (its corpora are reused: 1M events in the full run, 50k at most with
``--quick``). The issue's target: ≤ 100 ms p95 at 1M events, for each of the two; the
keystroke (rows, then facets, on one core) is reported beside them.
"""

from __future__ import annotations

import time

from bench.context import Context, size_label
from bench.model import Check, Metric, ScenarioResult, Target
from bench.util import Quantiles, ms

TARGET_EVENTS = 1_000_000
TARGET_P95_MS = 100.0


def web_search(ctx: Context) -> ScenarioResult:
    from bench.scenarios.search import ensure_search_run
    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.api import SearchRequest, meaning_available
    from voyager_sessions.web.data import Library

    meaning = meaning_available()  # the web page searches with meaning where the model is installed

    sizes = ctx.sizes.search_events
    res = ScenarioResult(
        name="web_search",
        description="voyager web's search requests (rows, facets), server-side, "
        "at " + ", ".join(size_label(n) for n in sizes) + " events",
    )
    for n in sizes:
        run = ensure_search_run(ctx, n)
        queries = [s.query for s in run.stats if s.query.strip()]
        lib = Library(DataDir(run.data_dir), readers=1)
        rows: list[float] = []
        facet_times: list[float] = []
        both: list[float] = []
        cpu_rows: list[float] = []
        cpu_facets: list[float] = []
        ok = True
        try:
            for q in queries:
                lib.search(
                    SearchRequest(query=q, sessions=True, refresh=False, limit=50), with_facets=False
                )  # warm: the first run of a query is not typing
                for _ in range(max(3, ctx.sizes.query_reps // 3)):
                    t, c = time.perf_counter(), time.process_time()
                    doc = lib.search(SearchRequest(query=q, sessions=True, refresh=False, limit=50), with_facets=False)
                    rows.append(time.perf_counter() - t)
                    cpu_rows.append(time.process_time() - c)
                    t, c = time.perf_counter(), time.process_time()
                    full = lib.search(SearchRequest(query=q, sessions=True, refresh=False), rows=False)
                    facet_times.append(time.perf_counter() - t)
                    cpu_facets.append(time.process_time() - c)
                    both.append(rows[-1] + facet_times[-1])
                    # The rows' total is a lower bound for a common word (total_exact false); the facets count all.
                    rows_total, exact = doc["result"].total, doc["result"].total_exact
                    facets_total = full["facets"].total
                    ok = ok and doc["facets"] is None and sum(c for _, c in full["facets"].agent) == facets_total
                    if meaning:
                        # With the model the page's second request says the rows' total (meaning's rows in it, a
                        # lower bound where the rows' is), and the facets count the sessions the words match.
                        ok = ok and full["result"].total == rows_total and (exact or rows_total <= facets_total)
                    else:
                        ok = ok and (facets_total == rows_total if exact else rows_total <= facets_total)
                        ok = ok and full["result"].total == facets_total
        finally:
            lib.close()
        g = f"{size_label(n)} events"
        qr, qf, qb = Quantiles.of(rows), Quantiles.of(facet_times), Quantiles.of(both)
        target = Target(op="<=", value=TARGET_P95_MS) if n == TARGET_EVENTS else None
        res.metrics += [
            Metric(name="rows p50", value=ms(qr.p50), unit="ms", group=g),
            Metric(name="rows p95", value=ms(qr.p95), unit="ms", group=g, target=target),
            Metric(name="facets p50", value=ms(qf.p50), unit="ms", group=g),
            Metric(name="facets p95", value=ms(qf.p95), unit="ms", group=g, target=target),
            Metric(name="keystroke (rows + facets) p95", value=ms(qb.p95), unit="ms", group=g),
            # CPU time: what a request costs whatever else the machine runs (the wall times above grow with load).
            Metric(name="rows p95, CPU time", value=ms(Quantiles.of(cpu_rows).p95), unit="ms", group=g),
            Metric(name="facets p95, CPU time", value=ms(Quantiles.of(cpu_facets).p95), unit="ms", group=g),
        ]
        res.checks.append(
            Check(
                name=f"{g}: rows and facets agree on the total (or the rows' is a lower bound of it); every session counted",
                ok=ok,
            )
        )
    res.notes.append(
        "in process through web.data.Library (the handlers' one caller of the API), HTTP not included; "
        "rows: one page of 50 grouped sessions; facets: every matching session, counted from aggregations; "
        "keystroke: the two in turn (the page sends them together: with two cores free it waits for the slower); "
        "CPU time: the process's, per request (on a shared machine the wall times grow with its load, CPU time less)"
    )
    return res
