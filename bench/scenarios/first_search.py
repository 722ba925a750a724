"""first_search: a new user's first minute on a big history, beside fast-resume, on the Claude Code 2.1 layout.

The corpus (``corpus.write_layout_history``): 10,000 short sessions (quick: 500), half Claude
Code sessions each with a subagent folder (``<id>/subagents/agent-*.jsonl`` and its
``.meta.json``), half Codex rollouts: 20,000 files. Written once and cached like
``history_100k``'s (``VOYAGER_BENCH_CACHE``); the quick run writes its own.

Measured, Voyager and fast-resume's ``fr`` in turn, the order alternating round by round (on a
shared machine load comes and goes; pairs see the same):

* **time to the first useful search** from an empty data dir: a search for a word the newest
  sessions' first prompts say, run as a person runs it (``voyager search WORD --sessions
  --json``, which refreshes first); timed until a search lists every one of those sessions
  (the first answer, or a ``--no-refresh`` search repeated every 50 ms after it, while the scan
  the first search left in the background goes on). fr: ``fr --json WORD`` on an empty cache
  (it indexes everything, then answers). Checked: while the index is built, a search for an
  old session's word either finds it or says the index is incomplete (never "No matches"
  alone); the background scan finishes and the index then holds every session.
* **full first index**: ``voyager scan`` (its default workers) and ``fr --rebuild``: wall and
  CPU (user + system of the process and its children).
* **a refreshing search** in a process of its own (no server), nothing changed: ``voyager
  search WORD --json`` and ``fr --json WORD``.
* **CPU per event by stage** of Voyager's first index (``bench.child stages``, one process).
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

import msgspec

from bench import corpus
from bench.child import Stages
from bench.context import Context
from bench.model import Check, Metric, Reference, ScenarioResult, Target
from bench.scenarios.history_scale import _cache_root
from bench.util import ProviderHomes, child_env, cli_env, mb, run_child, voyager_command

FULL_SESSIONS = 10_000
QUICK_SESSIONS = 500
#: The issue's targets, as ratios to fast-resume's time (lower is better).
FIRST_SEARCH_TARGET = 1.5
FIRST_INDEX_TARGET = 4.0
REFRESHING_TARGET = 1.0
CPU_PER_EVENT_TARGET_US = 15
PROVIDERS = ("claude", "codex")


def _corpus(ctx: Context, res: ScenarioResult) -> tuple[ProviderHomes, corpus.Layout]:
    n = int(os.environ.get("VOYAGER_BENCH_LAYOUT_SESSIONS", QUICK_SESSIONS if ctx.quick else FULL_SESSIONS))
    root = ctx.dir("layout") if ctx.quick else _cache_root() / f"layout-{n}"
    homes = ProviderHomes.under(root / "homes")
    info = root / "written.json"
    if not info.exists():
        layout = corpus.write_layout_history(n, homes.claude_projects, Path(homes.codex))
        info.write_bytes(msgspec.json.encode(layout))
    layout = msgspec.json.decode(info.read_bytes(), type=corpus.Layout)
    res.notes.append(
        f"corpus: {layout.sessions:,} sessions ({layout.files:,} files, {mb(layout.bytes):.0f} MB) in {root}"
        + ("" if ctx.quick else ", cached")
    )
    return homes, layout


def _fr() -> str | None:
    beside = Path(sys.executable).with_name("fr")
    return str(beside) if beside.exists() else shutil.which("fr")


def _fr_env(homes: ProviderHomes, root: Path) -> dict[str, str]:
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    for name, target in ((".claude", homes.claude), (".codex", homes.codex)):
        link = home / name
        if not os.path.lexists(link):
            link.symlink_to(target)
    env = child_env({"HOME": str(home), "XDG_CACHE_HOME": str(root / "cache"), "XDG_CONFIG_HOME": str(root / "cfg")})
    env.pop("PYTHONPATH", None)
    return env


def _timed(argv: list[str], env: dict[str, str], *, timeout: float = 900) -> tuple[float, float, bytes, bytes, int]:
    """(wall s, CPU s of the process and its children, stdout, stderr, exit code)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(argv, env=env, capture_output=True, timeout=timeout, check=False)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime
    return wall, cpu, proc.stdout, proc.stderr, proc.returncode


def _ids(out: bytes) -> set[str]:
    try:
        return {h["session_id"] for h in json.loads(out)["hits"]}
    except (ValueError, KeyError, TypeError):
        return set()


def _fr_ids(out: bytes) -> set[str]:
    try:
        return {s["id"] for s in json.loads(out)["sessions"]}
    except (ValueError, KeyError, TypeError):
        return set()


def _wait_background(data: Path, timeout: float = 900) -> bool:
    """Wait until no scan holds the data dir's lock and no unfinished index is recorded; True when so."""
    from voyager_sessions.core.paths import DataDir
    from voyager_sessions.scan import progress
    from voyager_sessions.store.state import StateStore

    ddir = DataDir(data)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        pid = progress.holder(ddir.lock)
        record = None
        if ddir.state_db.exists():
            store = StateStore(ddir.state_db, readonly=True)
            try:
                record = store.get_meta(progress.META_KEY)
            finally:
                store.close()
        if record is None and not (pid and progress.alive(pid)):
            return True
        time.sleep(0.1)
    return False


def _first_useful(
    cmd: list[str], env: dict[str, str], data: Path, layout: corpus.Layout, probe_word: str
) -> tuple[float, dict]:
    """Seconds from an empty data dir to a search listing every fresh session; what the first answer said."""
    shutil.rmtree(data, ignore_errors=True)
    want = set(layout.fresh)
    search = [*cmd, "search", layout.fresh_word, "--sessions", "--json", "--limit", "50"]
    t = time.perf_counter()
    first = subprocess.run(search, env=env, capture_output=True, timeout=900, check=False)
    got = _ids(first.stdout)
    while not want <= got and time.perf_counter() - t < 900:
        time.sleep(0.05)
        again = subprocess.run([*search, "--no-refresh"], env=env, capture_output=True, timeout=900, check=False)
        got = _ids(again.stdout)
    seconds = time.perf_counter() - t
    doc = json.loads(first.stdout) if first.stdout else {}
    # A word of an old session, asked while the rest is indexed behind: found, or "not yet", never "no match".
    probe = subprocess.run(
        [*cmd, "search", probe_word, "--json", "--no-refresh"], env=env, capture_output=True, timeout=300, check=False
    )
    pdoc = json.loads(probe.stdout) if probe.stdout else {}
    honest = probe.returncode == 0 or (probe.returncode == 3 and pdoc.get("indexing") is not None)
    finished = _wait_background(data)
    return seconds, {
        "first_found": len(want & _ids(first.stdout)),
        "first_indexing": doc.get("indexing"),
        "first_exit": first.returncode,
        "probe_honest": honest,
        "probe_exit": probe.returncode,
        "finished": finished,
    }


def _compare(
    res: ScenarioResult, name: str, mine: list[float], other: list[float], unit: str, g: str, target: float | None
) -> None:
    """The median of ``mine`` beside fr's, and (with fr) their ratio against ``target``."""
    value = statistics.median(mine)
    ref = statistics.median(other) if other else None
    scale = 1000.0 if unit == "ms" else 1.0
    res.metrics.append(
        Metric(
            name=name,
            value=round(value * scale, 1),
            unit=unit,
            group=g,
            reference=Reference(label="fr", value=round(ref * scale, 1)) if ref else None,
            ratio=round(value / ref, 2) if ref else None,
        )
    )
    if ref and target is not None:
        res.metrics.append(
            Metric(
                name=f"{name}: ÷ fr",
                value=round(value / ref, 2),
                unit="x",
                group=g,
                target=Target(op="<=", value=target),
            )
        )


def first_search(ctx: Context) -> ScenarioResult:
    res = ScenarioResult(
        name="first_search",
        description="a first search, a first index and a refreshing search on the Claude Code 2.1 layout "
        "(subagent folders) beside fast-resume",
    )
    homes, layout = _corpus(ctx, res)
    g = f"{layout.sessions:,} sessions (layout)"
    work = ctx.dir("first-search")
    data = work / "data"
    env = cli_env(homes.env(data), work / "pycache")
    env["VOYAGER_NO_SERVER"] = "1"
    cmd = voyager_command()
    fr = _fr()
    if fr is None:
        res.notes.append("fast-resume's `fr` is not installed: its column is left out (pip install fast-resume)")
    fenv = _fr_env(homes, work / "fr") if fr else {}
    # Rounds alternate the order of the two tools (load comes and goes; pairs see the same): without fr the
    # quick run has nothing to alternate, and one round measures what two would.
    rounds = (2 if fr else 1) if ctx.quick else 3
    probe_word = "lay10"  # session 10's own token: among the oldest, read last
    subprocess.run([*cmd, "--version"], env=env, capture_output=True, timeout=120, check=False)  # compile once

    # -- the first useful search ----------------------------------------------------------------------------------
    ours: list[float] = []
    theirs: list[float] = []
    facts: list[dict] = []
    for r in range(rounds):
        for who in ("voyager", "fr") if r % 2 == 0 else ("fr", "voyager"):
            if who == "voyager":
                seconds, said = _first_useful(cmd, env, data, layout, probe_word)
                ours.append(seconds)
                facts.append(said)
            elif fr:
                shutil.rmtree(work / "fr" / "cache", ignore_errors=True)
                wall, _, out, _, _ = _timed([fr, "--json", "--limit", "20", layout.fresh_word], fenv)
                found = {i.split(":")[-1] for i in layout.fresh} <= _fr_ids(out)
                theirs.append(wall if found else float("nan"))
    theirs = [t for t in theirs if t == t]  # nan: fr did not list them
    _compare(res, "first useful search, empty data dir (wall p50)", ours, theirs, "ms", g, FIRST_SEARCH_TARGET)
    res.metrics.append(
        Metric(
            name="first answer: fresh sessions it listed",
            value=statistics.median(f["first_found"] for f in facts),
            unit=f"of {len(layout.fresh)}",
            group=g,
        )
    )
    done = [f["first_indexing"]["sessions_done"] for f in facts if f["first_indexing"]]
    if done:
        res.metrics.append(
            Metric(name="first answer: sessions searched", value=statistics.median(done), unit="sessions", group=g)
        )
    res.checks.append(
        Check(
            name="a search during indexing finds or says the index is incomplete",
            ok=all(f["probe_honest"] for f in facts),
            detail=", ".join(f"exit {f['probe_exit']}" for f in facts),
        )
    )
    res.checks.append(Check(name="the background scan finished", ok=all(f["finished"] for f in facts)))
    whole = subprocess.run([*cmd, "stats", "--json"], env=env, capture_output=True, timeout=300, check=False)
    sessions = sum(p["sessions"] for p in json.loads(whole.stdout)["providers"].values()) if whole.stdout else 0
    res.checks.append(
        Check(
            name="the index then holds every session (subagents too)",
            ok=sessions == layout.sessions + layout.sessions // 2,
            detail=f"{sessions} sessions",
        )
    )

    # -- the full first index ---------------------------------------------------------------------------------------
    walls: list[float] = []
    cpus: list[float] = []
    fr_walls: list[float] = []
    fr_cpus: list[float] = []
    scan = [*cmd, "scan", "-q", *[a for p in PROVIDERS for a in ("--provider", p)]]
    for r in range(rounds):
        for who in ("voyager", "fr") if r % 2 == 0 else ("fr", "voyager"):
            if who == "voyager":
                shutil.rmtree(data, ignore_errors=True)
                wall, cpu, _, err, code = _timed(scan, env)
                if code != 0:
                    raise RuntimeError(f"voyager scan failed: {err.decode(errors='replace')[-500:]}")
                walls.append(wall)
                cpus.append(cpu)
            elif fr:
                wall, cpu, _, _, _ = _timed([fr, "--rebuild", "--json", "--limit", "1", "x"], fenv)
                fr_walls.append(wall)
                fr_cpus.append(cpu)
    _compare(res, "full first index (wall p50)", walls, fr_walls, "s", g, FIRST_INDEX_TARGET)
    _compare(res, "full first index (CPU p50)", cpus, fr_cpus, "s", g, None)

    # -- a refreshing search, nothing changed ----------------------------------------------------------------------
    reps = 8 if ctx.quick else 20
    word = layout.fresh_word
    mine_s: list[float] = []
    other_s: list[float] = []
    for r in range(reps):
        for who in ("voyager", "fr") if r % 2 == 0 else ("fr", "voyager"):
            if who == "voyager":
                mine_s.append(_timed([*cmd, "search", word, "--json"], env)[0])
            elif fr:
                other_s.append(_timed([fr, "--json", "--limit", "20", word], fenv)[0])
    _compare(res, "refreshing search, no server (wall p50)", mine_s, other_s, "ms", g, REFRESHING_TARGET)

    # -- CPU per event, stage by stage -------------------------------------------------------------------------------
    stage_dir = work / "stages"
    shutil.rmtree(stage_dir, ignore_errors=True)
    shutil.rmtree(work / "stages-plan", ignore_errors=True)
    raw = run_child(
        ["stages", "--data-dir", str(stage_dir), *[a for p in PROVIDERS for a in ("--provider", p)]],
        homes.env(),
        timeout=3600,
    )
    st = msgspec.json.decode(raw, type=Stages)
    total = 0.0
    for stage in ("discover", "read", "prepare", "documents", "writer", "tantivy"):
        seconds = getattr(st, stage)
        total += seconds
        res.metrics.append(
            Metric(name=f"CPU per event: {stage}", value=round(1e6 * seconds / st.events, 1), unit="µs", group=g)
        )
    res.metrics.append(
        Metric(
            name="CPU per event: all (one process)",
            value=round(1e6 * total / st.events, 1),
            unit="µs",
            group=g,
            target=Target(op="<=", value=CPU_PER_EVENT_TARGET_US),
        )
    )
    res.notes.append(f"stages: {st.events:,} events from {st.sources:,} sources, --workers 1")
    return res
