"""meaning: what meaning search costs and whether it keeps needles exact (issue #34).

* **The model** (``bench.meaning_child``, a process of its own): load time, the memory
  it adds, one query's embedding (CPU and wall), bytes per stored vector.
* **Embedding throughput**: the judged corpus's session texts (as the embedder bounds
  them) embedded with one OpenMP thread and with two, sessions a second and CPU time a
  session. CPU time is the number to compare on a shared machine; wall time shows what
  the load left.
* **A fresh history searchable by meaning**: ``write_history`` sessions (quick
  10, full 1,000; in ``--quick`` after ``judged``, the judged corpus it just did this to), ``voyager scan`` then ``voyager scan --meaning``: the seconds until
  every session has a vector.
* **A served search with meaning**: ``write_scaled_history`` sessions (quick 500, full
  10,000) scanned, a vector stored for every session, ``voyager serve`` running, then
  ``voyager search -m QUERY --sessions --no-refresh`` timed through the CLI (process
  start included), plain ``voyager search`` beside it. In full runs the CLI timed against
  the targets is a wheel of this checkout installed as a user installs it
  (``bench.util.install_wheel``: no editable-install finder at start-up, modules compiled),
  the checkout's editable install beside it (each with a server of its own on a copy of
  the data dir, their searches alternating); quick runs time the checkout's alone. Beside
  the wall times: the client process's CPU and the server's mean answer time (from
  ``voyager serve status``), which say where a search's time goes. The stored vectors are random
  unit vectors, not the model's: embedding 10,000 sessions would take the bench an
  hour, and what a search costs (the query's embedding, the matrix scored, the rows
  read) does not depend on their values.
* **Memory at 100,000 sessions**: the in-memory matrix of 100,000 vectors and one
  ranking over it, and meaning.db's size for them.
* **Exactness** (a check): on the judged corpus with its real vectors, needles
  (identifiers, CJK pairs) searched with ``--sessions --meaning``: the rows matched by
  words are exactly the sessions that hold the needle, every one of them, before any row
  meaning brought in.

Without the model the scenario says so in a note and measures nothing.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import REPO_ROOT
from bench.context import Context
from bench.model import Check, Metric, ScenarioResult, Target
from bench.util import Quantiles, child_env, cli_env, dir_bytes, mb, ms, voyager_command

#: The issue's targets for a served search with meaning at 10,000 sessions.
TARGET_P50_MS = 60.0
TARGET_P95_MS = 150.0

DESCRIPTIONS = (
    "the one where the nightly export kept timing out after we moved the bucket",
    "flaky login test that only failed on ci",
    "数据库迁移的时候锁表太久",
    "インデックスの再構築が遅い",
    "retry with backoff for the flaky http client",
)
#: Needles of the judged corpus: identifiers and CJK words one or a few sessions hold.
NEEDLES = ("payments_event_id_key", "GOMEMLIMIT", "pg_sleep", "premailer", "幂等", "游标", "猶予期間")


def _child(what: str, payload: object, env: dict[str, str]) -> dict:
    proc = subprocess.run(
        [sys.executable, "-m", "bench.meaning_child", what],
        input=json.dumps(payload).encode(),
        capture_output=True,
        env=child_env(env),
        cwd=str(REPO_ROOT),
        timeout=1800,
        check=False,
    )
    if proc.returncode != 0:
        raise RuntimeError(f"meaning child {what}: {proc.stderr.decode(errors='replace')[-1500:]}")
    return json.loads(proc.stdout)


def _texts(n: int) -> list[str]:
    from bench.judged import corpus
    from voyager_sessions.search.embed import session_text

    out = []
    for s in corpus.sessions()[:n]:
        said = [(i, t.text) for i, t in enumerate(s.conv.turns) if t.text]
        out.append(session_text(s.conv.title, said))
    return out


def meaning(ctx: Context) -> ScenarioResult:
    res = ScenarioResult(
        name="meaning",
        description="meaning search (issue #34): the model's load, memory and query time; sessions embedded a "
        "second; a fresh history searchable by meaning; served searches with meaning; memory at 100,000 sessions; "
        "needles still exact",
    )
    from voyager_sessions.search.embed import INSTALL_HINT, MODEL_ID, available

    if not available():
        res.notes.append(f"not measured: the model is not installed ({INSTALL_HINT})")
        return res
    res.notes.append(f"model {MODEL_ID}; load average at start {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    _model(ctx, res)
    _throughput(ctx, res)
    _fresh_history(ctx, res)
    _served(ctx, res)
    _memory(ctx, res)
    _exactness(ctx, res)
    res.notes.append(f"load average at end {os.getloadavg()[0]:.2f}")
    return res


def _model(ctx: Context, res: ScenarioResult) -> None:
    from bench.judged.queries import load

    queries = [q.query for q in load()][:30]
    got = _child("load", queries, {"OMP_NUM_THREADS": "1"})
    g = "the model"
    res.metrics += [
        Metric(name="load, first query included", value=ms(got["load_s"]), unit="ms", group=g),
        Metric(name="RSS it adds", value=round(got["model_rss_kb"] / 1024, 1), unit="MB", group=g),
        Metric(name="query embedding, CPU p50", value=ms(statistics.median(got["query_cpu_s"])), unit="ms", group=g),
        Metric(name="query embedding, wall p50", value=ms(statistics.median(got["query_wall_s"])), unit="ms", group=g),
        Metric(
            name="query embedding, wall p95",
            value=ms(Quantiles.of(got["query_wall_s"]).p95),
            unit="ms",
            group=g,
        ),
        Metric(name="bytes per stored vector", value=got["vector_bytes"], unit="B", group=g),
    ]


def _throughput(ctx: Context, res: ScenarioResult) -> None:
    texts = _texts(8 if ctx.quick else 150)
    g = f"embedding {len(texts)} judged sessions (~{sum(map(len, texts)) // len(texts)} characters each)"
    for threads in (1, 2):
        got = _child("throughput", texts, {"OMP_NUM_THREADS": str(threads), "OMP_WAIT_POLICY": "passive"})
        res.metrics += [
            Metric(
                name=f"sessions/s, {threads} thread(s)",
                value=round(got["sessions"] / got["wall_s"], 2),
                unit="/s",
                group=g,
            ),
            Metric(
                name=f"CPU per session, {threads} thread(s)",
                value=ms(got["cpu_s"] / got["sessions"]),
                unit="ms",
                group=g,
            ),
        ]


def _fresh_history(ctx: Context, res: ScenarioResult) -> None:
    from bench.corpus import write_history
    from bench.scenarios.judged import Fresh
    from bench.util import ProviderHomes

    fresh = ctx.cache.get("judged-fresh")
    if ctx.quick and isinstance(fresh, Fresh):
        # The judged scenario just did this very thing to its corpus (an empty data dir, `voyager scan`, then
        # `voyager scan --meaning`): in --quick its times and its check serve here rather than a second history.
        n = fresh.sessions
        res.checks.append(
            Check(
                name=f"a fresh {n}-session history: every session searchable by meaning",
                ok=fresh.check.ok,
                detail=fresh.check.detail,
            )
        )
        g = f"a fresh history of {n:,} sessions (the judged corpus)"
        res.metrics += [
            Metric(name="voyager scan", value=fresh.scan_s, unit="s", group=g),
            Metric(
                name="until every session is searchable by meaning",
                value=round(fresh.scan_s + fresh.meaning_s, 2),
                unit="s",
                group=g,
            ),
        ]
        return
    n = 10 if ctx.quick else 1000
    root = ctx.dir("meaning-fresh")
    homes = ProviderHomes.under(root / "homes")
    write_history(homes.claude_projects, Path(homes.codex), Path(homes.opencode_db), sessions=n)
    data = root / "data"
    env = child_env(homes.env(data))
    t = time.perf_counter()
    scan = subprocess.run([*voyager_command(), "scan", "-q"], env=env, capture_output=True, timeout=3600)
    scanned = time.perf_counter() - t
    embed = subprocess.run([*voyager_command(), "scan", "--meaning", "-q"], env=env, capture_output=True, timeout=7200)
    total = time.perf_counter() - t
    ok = scan.returncode == 0 and embed.returncode == 0 and f"{n} of {n} sessions" in embed.stdout.decode()
    res.checks.append(
        Check(
            name=f"a fresh {n}-session history: every session searchable by meaning",
            ok=ok,
            detail=None if ok else (embed.stdout + embed.stderr).decode(errors="replace")[-400:],
        )
    )
    g = f"a fresh history of {n:,} sessions"
    res.metrics += [
        Metric(name="voyager scan", value=round(scanned, 2), unit="s", group=g),
        Metric(name="until every session is searchable by meaning", value=round(total, 2), unit="s", group=g),
    ]


def _synthetic_vectors(data: Path) -> int:
    """A random unit vector for every session, stored with its current stamp (see the module's docstring)."""
    import numpy as np

    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.search.embed import DIM, MODEL_ID, encode
    from voyager_sessions.store.vectors import VectorStore

    ddir = DataDir(data)
    store = VectorStore(ddir.meaning_db, ddir.state_db)
    try:
        todo = store.pending(MODEL_ID)
        rng = np.random.default_rng(34)
        for i in range(0, len(todo), 5000):
            chunk = todo[i : i + 5000]
            v = rng.standard_normal((len(chunk), DIM)).astype(np.float32)
            v /= np.linalg.norm(v, axis=1, keepdims=True)
            store.put(MODEL_ID, [(sid, stamp, vec) for (sid, stamp), vec in zip(chunk, encode(v))])
        return store.counts(MODEL_ID)[0]
    finally:
        store.close()


def _served(ctx: Context, res: ScenarioResult) -> None:
    import shutil

    from bench.corpus import write_scaled_history
    from bench.scenarios.cli_search import Server
    from bench.util import ProviderHomes, install_wheel

    n = 500 if ctx.quick else 10_000
    reps = 3 if ctx.quick else 15
    root = ctx.dir("meaning-served")
    homes = ProviderHomes.under(root / "homes")
    # Generated templates, each written as many sessions (400 in the full run; the quick run's 500 sessions from
    # 100: what a served search costs does not depend on how many of them are alike).
    write_scaled_history(n, homes.claude_projects, Path(homes.codex), templates=min(400, n // 5))
    data = root / "data"
    scan = subprocess.run(
        [*voyager_command(), "scan", "-q"], env=child_env(homes.env(data)), capture_output=True, timeout=3600
    )
    if scan.returncode != 0:
        res.checks.append(
            Check(name=f"{n} sessions scanned", ok=False, detail=scan.stderr.decode(errors="replace")[-300:])
        )
        return
    ready = _synthetic_vectors(data)
    # The CLI as a user's install runs it (a wheel: no editable-install finder at start-up, ~7 ms of CPU a process), and
    # in full runs the checkout's editable one beside it; each has a server of its own (a server answers its own
    # build only), on a copy of the same data dir, and their searches alternate.
    builds: dict[str, tuple[list[str], Path]] = {"checkout": (voyager_command(), data)}
    if not ctx.quick:
        try:
            installed = install_wheel(ctx.dir("meaning-served-wheel"))
        except (subprocess.CalledProcessError, OSError) as exc:
            res.notes.append(f"served search: no wheel could be built ({exc}); the checkout's CLI alone is timed")
        else:
            copy = root / "data-installed"
            shutil.rmtree(copy, ignore_errors=True)
            shutil.copytree(data, copy, ignore=shutil.ignore_patterns("*.sock", "*.lock"))
            builds = {"installed": (installed, copy), **builds}
    timed = next(iter(builds))  # what the targets are held to: the installed CLI where there is one
    queries = (
        [*DESCRIPTIONS[:3], "hist42", "retry backoff cache"]
        if ctx.quick
        else [*DESCRIPTIONS, "hist42", "retry backoff cache"]
    )
    g = f"served search, {n:,} sessions ({ready:,} with a vector)"
    labels: tuple[tuple[str, list[str]], ...] = (("with meaning", ["-m"]), ("words only", []))
    envs = {name: cli_env(homes.env(d), ctx.dir(f"pycache-{name}")) for name, (_, d) in builds.items()}
    servers: dict[str, Server] = {}
    walls: dict[tuple[str, str], list[float]] = {(b, label): [] for b in builds for label, _ in labels}
    cpus: dict[tuple[str, str], list[float]] = {k: [] for k in walls}
    answered: dict[tuple[str, str], list[float]] = {k: [0.0, 0.0] for k in walls}  # server seconds, answers
    same = True
    try:
        for name, (cmd, d) in builds.items():
            servers[name] = Server(envs[name], d, command=cmd)
        for q in queries:
            for label, extra in labels:
                firsts = {}
                for name, (cmd, _) in builds.items():  # warm (the model loads once)
                    firsts[name] = _timed(
                        [*cmd, "search", q, "--sessions", "--no-refresh", "--json", *extra], envs[name]
                    )[2]
                same = same and len(set(firsts.values())) == 1
                before = {name: servers[name].status() for name in builds}
                for _ in range(reps):
                    for name, (cmd, _) in builds.items():
                        wall, cpu, out = _timed(
                            [*cmd, "search", q, "--sessions", "--no-refresh", "--json", *extra], envs[name]
                        )
                        walls[(name, label)].append(wall)
                        cpus[(name, label)].append(cpu)
                        same = same and out == firsts[name]
                for name in builds:
                    after = servers[name].status()
                    answered[(name, label)][0] += _answer_seconds(after) - _answer_seconds(before[name])
                    answered[(name, label)][1] += after.get("answered", 0) - before[name].get("answered", 0)
        statuses = {name: s.status() for name, s in servers.items()}
    finally:
        for s in servers.values():
            s.stop()
    res.checks.append(Check(name=f"{g}: repeated searches answer the same bytes, every build alike", ok=same))
    asked = len(queries) * len(labels) * (reps + 1)
    res.metrics.append(  # a search the server was too busy for runs in its client (same bytes, checked above)
        Metric(
            name="searches left to their client",
            value=sum(asked - st.get("answered", 0) for st in statuses.values()),
            unit="",
            group=g,
        )
    )
    for (name, label), samples in walls.items():
        qs = Quantiles.of(samples)
        target = name == timed and label == "with meaning" and n >= 10_000
        how = f"{label}, {'installed' if name == 'installed' else 'checkout (editable install)'} CLI"
        seconds, count = answered[(name, label)]
        res.metrics += [
            Metric(
                name=f"{how}, wall p50",
                value=ms(qs.p50),
                unit="ms",
                group=g,
                target=Target(op="<=", value=TARGET_P50_MS) if target else None,
                met=(ms(qs.p50) <= TARGET_P50_MS) if target else None,
            ),
            Metric(
                name=f"{how}, wall p95",
                value=ms(qs.p95),
                unit="ms",
                group=g,
                target=Target(op="<=", value=TARGET_P95_MS) if target else None,
                met=(ms(qs.p95) <= TARGET_P95_MS) if target else None,
            ),
            Metric(
                name=f"{how}, the client's CPU p50",
                value=ms(statistics.median(cpus[(name, label)])),
                unit="ms",
                group=g,
            ),
            Metric(
                name=f"{how}, the server's answer (wall, mean)",
                value=ms(seconds / count) if count else None,
                unit="ms",
                group=g,
            ),
        ]


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes]:
    """Wall seconds, CPU seconds (the process's own) and stdout of one command."""
    import resource

    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, timeout=300)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime), proc.stdout


def _answer_seconds(status: dict) -> float:
    """The seconds a server spent answering (``voyager serve status``: mean answer times answers)."""
    return (status.get("mean_answer_ms") or 0.0) * status.get("answered", 0) / 1000.0


def _memory(ctx: Context, res: ScenarioResult) -> None:
    import numpy as np

    from voyager_sessions.search.embed import DIM, MODEL_ID, Matrix, encode
    from voyager_sessions.store.state import StateStore
    from voyager_sessions.store.vectors import VectorStore

    n = 100_000
    rng = np.random.default_rng(7)
    v = rng.standard_normal((n, DIM)).astype(np.float32)
    v /= np.linalg.norm(v, axis=1, keepdims=True)
    blobs = encode(v)
    ids = [f"claude:{i:08d}" for i in range(n)]
    matrix = Matrix(ids, blobs)
    q = v[12345]
    times = []
    for _ in range(5):
        t = time.perf_counter()
        top = matrix.rank(q, 50)
        times.append(time.perf_counter() - t)
    root = ctx.dir("meaning-100k")
    StateStore(root / "state.db").close()
    store = VectorStore(root / "meaning.db", root / "state.db")
    try:
        store.put(MODEL_ID, [(sid, (1, None), b) for sid, b in zip(ids, blobs)])
    finally:
        store.close()
    g = "100,000 sessions"
    res.metrics += [
        Metric(name="vectors in memory", value=mb(matrix.nbytes()), unit="MB", group=g),
        Metric(name="meaning.db", value=mb(dir_bytes(root) - (root / "state.db").stat().st_size), unit="MB", group=g),
        Metric(name="one ranking over all of them, p50", value=ms(statistics.median(times)), unit="ms", group=g),
    ]
    res.checks.append(Check(name="100,000 vectors: a vector ranks itself first", ok=top[0][0] == ids[12345]))


def _exactness(ctx: Context, res: ScenarioResult) -> None:
    from bench.judged import corpus

    judged = ctx.cache.get("judged-meaning")
    if judged is None:
        root = ctx.dir("meaning-judged")
        written = corpus.write(root / "home")
        data = root / "data"
        env = child_env({**written.env(), "VOYAGER_HOME": str(data)})
        proc = subprocess.run(
            [*voyager_command(), "scan", "--meaning", "-q"], env=env, capture_output=True, timeout=3600
        )
        if proc.returncode != 0:
            res.checks.append(Check(name="the judged corpus embedded", ok=False, detail=proc.stderr.decode()[-300:]))
            return
        judged = (data, written)
    data, written = judged
    from voyager_sessions.api import parse_query, reader
    from voyager_sessions.search.engine import SearchOptions

    by_id = {s.conv.id: s.key for s in written.sessions}
    wrong: list[str] = []
    for needle in NEEDLES:
        holds = {s.key for s in written.sessions if _holds(s.text(), needle)}
        with reader(data) as r:
            result = r.search_meaning(needle, SearchOptions(limit=50, sessions=True), parse_query(needle))
        keys = [(by_id.get(h.session_id.partition(":")[2], h.session_id), h.match) for h in result.hits]
        words = [k for k, m in keys if m == "all"]
        first = [k for k, _ in keys[: len(words)]]
        if set(words) != holds or first != words or not holds:
            wrong.append(f"{needle}: holds {sorted(holds)}, word rows {words}")
    res.checks.append(
        Check(
            name=f"needles with --meaning: the word rows are exactly the {len(NEEDLES)} needles' sessions, first",
            ok=not wrong,
            detail="; ".join(wrong) or None,
        )
    )


def _holds(text: str, needle: str) -> bool:
    from bench.judged import corpus

    if corpus.is_cjk(needle):
        return needle in text
    return corpus.words_of(needle) <= corpus.words_of(text)
