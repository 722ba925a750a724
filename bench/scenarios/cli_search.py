"""cli_search: what a person waits for at the command line, with and without ``voyager serve``.

``voyager search … --json`` as a child process, process start included, on three data
dirs: the ingest corpus (``ingest_5000``'s 5,000-message Claude Code session), many small
sources (``rescan_noop``'s corpus: what a refresh's stat pass costs grows with it) and
the largest event corpus of ``search`` (the index size). Each query runs four ways: with
its refresh and with ``--no-refresh``, each in its own process (``VOYAGER_NO_SERVER=1``)
and through a running server. Then append-then-found: one message appended to the
ingest session the way the agent writes it, then ``voyager search TOKEN`` through the
server, timed until the answer that holds it. Beside them, fast-resume's ``fr --json``
with and without its refresh on the same provider files, when its binary is installed
(``pip install fast-resume``); the column is left out when it is not.

Checks (correctness only): the server's output is byte for byte the in-process output;
the appended message is found exactly once; fr finds it too when present. Timings never
fail the run; the CLI runs the server left to their client (a fallback) are counted.
"""

from __future__ import annotations

import os
import shutil
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import msgspec

from bench import corpus
from bench.context import Context, size_label
from bench.model import Check, Metric, Reference, ScenarioResult, Target
from bench.util import ProviderHomes, Quantiles, cli_env, ms, voyager_command

#: The issue's targets with a server running.
TARGET_SEARCH_P50_MS = 35.0
TARGET_APPEND_P50_MS = 60.0


@dataclass
class DataSet:
    label: str
    data_dir: Path
    homes: ProviderHomes
    queries: list[str]
    #: provider files exist (fr can read them); the event corpus has none
    files: bool


def _ingest_set(ctx: Context) -> DataSet:
    from bench.scenarios.ingest import ensure_ingested

    ing = ensure_ingested(ctx, "claude")
    tokens = [token for token, _ in corpus.INGEST_NEEDLES][:2]
    return DataSet(
        label=f"ingest corpus ({ctx.sizes.ingest_messages:,}-message session)",
        data_dir=ing.data_dir,
        homes=ing.homes,
        queries=[*tokens, "数据", "error"],
        files=True,
    )


def _sources_set(ctx: Context) -> DataSet:
    from bench.scenarios.rescan import ensure_sources

    homes, data_dir = ensure_sources(ctx)
    return DataSet(
        label=f"{ctx.sizes.rescan_sources:,} sources",
        data_dir=data_dir,
        homes=homes,
        queries=["the", "zzqqxxnothing"],
        files=True,
    )


def _events_set(ctx: Context) -> DataSet:
    from bench.scenarios.search import CLI_SUBSET, ensure_search_run

    n = max(ctx.sizes.search_events)
    run = ensure_search_run(ctx, n)
    queries = [s.query for s in run.stats if s.name in CLI_SUBSET]
    return DataSet(
        label=f"{size_label(n)} events",
        data_dir=run.data_dir,
        homes=ProviderHomes.under(ctx.dir("cli-search-empty-homes")),
        queries=queries,
        files=False,
    )


class Server:
    """``voyager serve`` on a data set's data dir, as a child process."""

    def __init__(self, env: dict[str, str], data_dir: Path, command: list[str] | None = None) -> None:
        from voyager_sessions.core.paths import DataDir
        from voyager_sessions.serve import control

        self.ddir = DataDir(data_dir)
        self.proc = subprocess.Popen(
            [*(command or voyager_command()), "serve", "-q", "--interval", "5"],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"voyager serve exited: {self.proc.stderr.read().decode(errors='replace')}")
            doc = control.status(self.ddir, timeout=1.0)
            if doc and doc.get("pid") == self.proc.pid:
                return
            time.sleep(0.05)
        raise RuntimeError("voyager serve did not answer within 60 s")

    def status(self) -> dict:
        from voyager_sessions.serve import control

        return control.status(self.ddir, timeout=5.0) or {}

    def stop(self) -> None:
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(30)


def _timed(cmd: list[str], env: dict[str, str]) -> tuple[float, subprocess.CompletedProcess]:
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, timeout=300, check=False)
    return time.perf_counter() - t, proc


def fr_command() -> str | None:
    """fast-resume's ``fr`` (beside this interpreter, else on PATH), or None."""
    beside = Path(sys.executable).with_name("fr")
    return str(beside) if beside.exists() else shutil.which("fr")


def fr_env(ds: DataSet, base: dict[str, str], root: Path) -> dict[str, str]:
    """An environment in which fr reads the data set's provider files (its HOME links to them) and caches in ``root``."""
    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    for name, target in ((".claude", ds.homes.claude), (".codex", ds.homes.codex)):
        link = home / name
        if not os.path.lexists(link):
            link.symlink_to(target)
    env = {k: v for k, v in base.items() if not k.startswith("VOYAGER_")}
    env.update(
        HOME=str(home),
        XDG_CACHE_HOME=str(root / "cache"),
        XDG_CONFIG_HOME=str(root / "config"),
        XDG_DATA_HOME=str(root / "data"),
    )
    return env


def _measure_set(ctx: Context, ds: DataSet, res: ScenarioResult, fr: str | None) -> None:
    from bench.scenarios.search import installed_command

    reps = ctx.sizes.cli_search_reps
    env = cli_env({**ds.homes.env(ds.data_dir)}, ctx.dir("pycache"))
    local_env = {**env, "VOYAGER_NO_SERVER": "1"}
    voyager = voyager_command()
    installed = installed_command(ctx)
    g = ds.label
    walls: dict[str, list[float]] = {
        "in-process": [],
        "in-process, --no-refresh": [],
        "server": [],
        "server, --no-refresh": [],
    }
    if installed:
        walls["server, installed wheel"] = []
    expected: dict[tuple[str, bool], bytes] = {}
    appending = ds.files and ds.label.startswith("ingest")
    rounds = ctx.sizes.cli_append_rounds
    if appending:  # first, and before the server runs (its scans would take the lock from these refreshes)
        local_append, local_ok = _append_and_search(
            ctx, [*voyager, "search", "--json"], local_env, rounds, _voyager_found_once
        )
    for q in ds.queries:
        for no_refresh in (False, True):
            cmd = [*voyager, "search", q, "--json", *(["--no-refresh"] if no_refresh else [])]
            _timed(cmd, local_env)  # unmeasured: bytecode and page cache
            name = "in-process" + (", --no-refresh" if no_refresh else "")
            for _ in range(reps):
                wall, proc = _timed(cmd, local_env)
                if proc.returncode not in (0, 1):
                    raise RuntimeError(f"voyager search {q!r} exited {proc.returncode}: {proc.stderr[-500:]!r}")
                walls[name].append(wall)
            expected[(q, no_refresh)] = proc.stdout
    if installed:
        # What `pip install` gives: no editable-install finder in `site`. Its own server: a server answers
        # only clients of its own build.
        server = Server(env, ds.data_dir, installed)
        try:
            before = server.status().get("answered", 0)
            runs = 0
            wheel_same = True
            for q in ds.queries:
                cmd = [*installed, "search", q, "--json"]
                _timed(cmd, env)
                runs += 1
                for _ in range(reps):
                    wall, proc = _timed(cmd, env)
                    walls["server, installed wheel"].append(wall)
                    runs += 1
                    wheel_same = wheel_same and proc.stdout == expected[(q, False)]
            left = runs - (server.status().get("answered", 0) - before)
            res.metrics.append(
                Metric(name="CLI runs left to their own process, installed wheel", value=left, unit="", group=g)
            )
            res.checks.append(Check(name=f"{g}: installed wheel through its server, the same bytes", ok=wheel_same))
        finally:
            server.stop()
    server = Server(env, ds.data_dir)
    try:
        first = server.status()
        before = first.get("answered", 0)
        runs = 0
        same = True
        for q in ds.queries:
            for no_refresh in (False, True):
                cmd = [*voyager, "search", q, "--json", *(["--no-refresh"] if no_refresh else [])]
                _timed(cmd, env)
                runs += 1
                name = "server" + (", --no-refresh" if no_refresh else "")
                for _ in range(reps):
                    wall, proc = _timed(cmd, env)
                    walls[name].append(wall)
                    runs += 1
                    same = same and proc.stdout == expected[(q, no_refresh)]
        last = server.status()
        answered = last.get("answered", 0) - before
        res.checks.append(Check(name=f"{g}: through the server, the same bytes as in-process", ok=same))
        res.metrics.append(Metric(name="CLI runs left to their own process", value=runs - answered, unit="", group=g))
        if answered and last.get("mean_answer_ms") is not None:
            # The server's own time per command (refresh included): the rest of a wall time is the client's.
            spent = last["mean_answer_ms"] * last["answered"] - (first.get("mean_answer_ms") or 0) * before
            res.metrics.append(
                Metric(name="server time per command, mean", value=round(spent / answered, 3), unit="ms", group=g)
            )
        if appending:
            before_append = server.status()
            served_append, served_ok = _append_and_search(
                ctx, [*voyager, "search", "--json"], env, rounds, _voyager_found_once
            )
            after_append = server.status()
            n = after_append.get("answered", 0) - before_append.get("answered", 0)
            if n and after_append.get("mean_answer_ms") is not None:
                spent = after_append["mean_answer_ms"] * after_append["answered"] - (
                    before_append.get("mean_answer_ms") or 0
                ) * before_append.get("answered", 0)
                res.metrics.append(
                    Metric(
                        name="append-then-found: server time (scan + search), mean",
                        value=round(spent / n, 3),
                        unit="ms",
                        group=g,
                    )
                )
    finally:
        server.stop()
    if appending:
        res.checks.append(
            Check(
                name=f"{g}: each appended message found exactly once by the next search",
                ok=local_ok and served_ok,
                detail=None if local_ok and served_ok else f"in-process {local_ok}, server {served_ok}",
            )
        )
        ref = None
        if fr:
            fenv = fr_env(ds, env, ctx.dir("fr-" + ds.data_dir.parent.name))
            fr_append, fr_ok = _append_and_search(
                ctx, [fr, "--json", "--limit", "5"], fenv, rounds, lambda out, token: _fr_hits(out) > 0
            )
            ref = Reference(
                label="fr",
                value=ms(statistics.median(fr_append)),
                note=None if fr_ok else "(fr did not find every appended message)",
            )
        p50 = statistics.median(served_append)
        res.metrics += [
            Metric(
                name="append-then-found p50, server",
                value=ms(p50),
                unit="ms",
                group=g,
                target=Target(op="<=", value=TARGET_APPEND_P50_MS),
                reference=ref,
                ratio=round(p50 * 1000 / ref.value, 2) if ref and ref.value else None,
            ),
            Metric(name="append-then-found worst, server", value=ms(max(served_append)), unit="ms", group=g),
            Metric(
                name="append-then-found p50, in-process", value=ms(statistics.median(local_append)), unit="ms", group=g
            ),
        ]
    fr_walls: dict[str, list[float]] = {}
    if fr and ds.files:
        fenv = fr_env(ds, env, ctx.dir("fr-" + ds.data_dir.parent.name))
        subprocess.run(
            [fr, "--rebuild", "--json", "--limit", "1", "x"], env=fenv, capture_output=True, timeout=600, check=False
        )
        for no_refresh in (False, True):
            name = "fr" + (", --no-refresh" if no_refresh else "")
            fr_walls[name] = []
            for q in ds.queries:
                cmd = [fr, "--json", "--limit", "20", q, *(["--no-refresh"] if no_refresh else [])]
                _timed(cmd, fenv)
                for _ in range(reps):
                    fr_walls[name].append(_timed(cmd, fenv)[0])
    for name, samples in walls.items():
        qs = Quantiles.of(samples)
        ref_name = "fr" + (", --no-refresh" if "no-refresh" in name else "")  # fr's own refresh, or not
        ref = None
        if ref_name in fr_walls and name.startswith("server"):
            ref = Reference(label="fr", value=ms(statistics.median(fr_walls[ref_name])))
        target = (
            Target(op="<=", value=TARGET_SEARCH_P50_MS)
            if name.startswith("server") and "no-refresh" not in name
            else None
        )
        res.metrics.append(
            Metric(
                name=f"CLI search p50, {name}",
                value=ms(qs.p50),
                unit="ms",
                group=g,
                target=target,
                reference=ref,
                ratio=round(qs.p50 * 1000 / ref.value, 2) if ref and ref.value else None,
            )
        )
        res.metrics.append(Metric(name=f"CLI search p95, {name}", value=ms(qs.p95), unit="ms", group=g))


def _append_and_search(
    ctx: Context, command: list[str], env: dict[str, str], rounds: int, found: Callable[[bytes, str], bool]
) -> tuple[list[float], bool]:
    """Append one message to the ingest session, then time ``COMMAND TOKEN`` once; ``rounds`` times."""
    from bench.scenarios.ingest import ensure_ingested

    ing = ensure_ingested(ctx, "claude")
    walls: list[float] = []
    ok = True
    for _ in range(rounds):
        ing.appended += 1
        ing.appender.append(ing.appended)
        token = f"{corpus.APPEND_TOKEN}{ing.appended}"
        wall, proc = _timed([*command, token], env)
        walls.append(wall)
        ok = ok and found(proc.stdout, token)
    return walls, ok


def _voyager_found_once(stdout: bytes, token: str) -> bool:
    try:
        return msgspec.json.decode(stdout).get("total") == 1
    except msgspec.DecodeError:
        return False


def _fr_hits(stdout: bytes) -> int:
    """How many sessions fr's ``--json`` output lists (0 when it is not the shape expected)."""
    try:
        doc = msgspec.json.decode(stdout)
    except msgspec.DecodeError:
        return 0
    if isinstance(doc, dict):
        doc = doc.get("sessions", doc.get("results", []))
    return len(doc) if isinstance(doc, list) else 0


def _floors(ctx: Context, res: ScenarioResult) -> None:
    """What no client can go below: starting this Python, bare and with its site (the install's import hooks)."""
    from bench.scenarios.search import installed_command

    reps = ctx.sizes.cli_search_reps
    env = cli_env({}, ctx.dir("pycache"))
    floors = [
        ("python -c pass (dev, with site)", [sys.executable, "-c", "pass"]),
        ("python -I -S -c pass (bare)", [sys.executable, "-I", "-S", "-c", "pass"]),
    ]
    installed = installed_command(ctx)
    if installed:
        floors.append(
            ("python -c pass (installed wheel's venv)", [str(Path(installed[0]).with_name("python")), "-c", "pass"])
        )
    for name, cmd in floors:
        _timed(cmd, env)
        res.metrics.append(
            Metric(
                name=f"floor: {name}",
                value=ms(statistics.median(_timed(cmd, env)[0] for _ in range(reps))),
                unit="ms",
                group="process start",
            )
        )


def cli_search(ctx: Context) -> ScenarioResult:
    fr = fr_command()
    res = ScenarioResult(
        name="cli_search",
        description="CLI wall time of `voyager search --json`, in its own "
        "process and through `voyager serve`; append-then-found through the server"
        + ("; fast-resume `fr` beside" if fr else ""),
    )
    try:
        load = os.getloadavg()[0]
        res.notes.append(f"load average at start: {load:.2f} on {os.cpu_count()} CPUs")
    except OSError:
        pass
    if fr is None:
        res.notes.append("fast-resume's `fr` is not installed: its column is left out (pip install fast-resume)")
    _floors(ctx, res)
    for make in (_ingest_set, _sources_set, _events_set):
        _measure_set(ctx, make(ctx), res, fr)
    res.notes.append(
        "each wall time is a child process from start to exit (bytecode cached, see docs/bench.md); "
        "`server` runs with `voyager serve` on the data dir, `in-process` with VOYAGER_NO_SERVER=1"
    )
    return res
