"""startup: ``voyager search --no-refresh`` as a process, beside the previous release's, both installed as wheels.

Half of a plain search is starting Python and importing what it needs, so a module that joins
the start-up path is felt by every search. This scenario builds a wheel of this checkout and
one of the previous release (``PREVIOUS``, or ``VOYAGER_BENCH_PREVIOUS``: a commit of this
repository, archived with ``git archive``), installs each in a venv of its own under the work
dir (as ``pip install`` gives a user: no editable finder, bytecode compiled on a first run),
lets each index the same small history into a data dir of its own, and runs ``voyager search
WORD --no-refresh --json`` with one and the other in turn (``VOYAGER_NO_SERVER=1``): wall and
CPU (user + system) per run, medians, and the ratio the issue sets (≤ 1.05 the previous
release's). Each answer must list the same sessions.
"""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import time
from pathlib import Path

from bench import corpus
from bench.context import Context
from bench.model import Check, Metric, Reference, ScenarioResult, Target
from bench.scenarios.search import installed_command
from bench.util import ProviderHomes, cli_env, install_wheel

#: The release before issue 37's work: main as it stood when it began.
PREVIOUS = "4c4e36709bddf5928e02afd5b108080d45262515"
TARGET_RATIO = 1.05
WORD = corpus.FRESH_WORD


def _run(cmd: list[str], env: dict[str, str]) -> tuple[float, float, bytes, int]:
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    proc = subprocess.run(cmd, env=env, capture_output=True, timeout=300, check=False)
    wall = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, r1.ru_utime + r1.ru_stime - r0.ru_utime - r0.ru_stime, proc.stdout, proc.returncode


def startup(ctx: Context) -> ScenarioResult:
    res = ScenarioResult(
        name="startup",
        description="voyager search --no-refresh as a process, this checkout's wheel beside the previous release's",
    )
    previous = os.environ.get("VOYAGER_BENCH_PREVIOUS", PREVIOUS)
    homes = ProviderHomes.under(ctx.dir("startup") / "homes")
    layout = corpus.write_layout_history(300, homes.claude_projects, Path(homes.codex))
    builds: dict[str, list[str]] = {}
    # This checkout's wheel is the one `search` and `cli_search` time (built once a run, here when run alone).
    this = installed_command(ctx)
    if this is None:
        res.notes.append(f"not measured: {ctx.cache.get('installed_note', 'no wheel of this checkout')}")
        return res
    builds["this"] = this
    try:
        builds["previous"] = install_wheel(ctx.dir("startup-previous"), previous)
    except (subprocess.CalledProcessError, OSError) as exc:
        res.notes.append(f"not measured: a wheel could not be built ({exc})")
        return res
    envs: dict[str, dict[str, str]] = {}
    for name, cmd in builds.items():
        data = ctx.dir(f"startup-data-{name}")
        env = cli_env(homes.env(data), ctx.dir(f"startup-pyc-{name}"))
        env["VOYAGER_NO_SERVER"] = "1"
        subprocess.run([*cmd, "scan", "-q"], env=env, capture_output=True, timeout=600, check=True)
        _run([*cmd, "search", WORD, "--no-refresh", "--json"], env)  # bytecode written once, as a user's first run
        envs[name] = env
    reps = 10 if ctx.quick else 30
    walls: dict[str, list[float]] = {name: [] for name in builds}
    cpus: dict[str, list[float]] = {name: [] for name in builds}
    found: dict[str, set[str]] = {}
    for r in range(reps):
        for name in ("this", "previous") if r % 2 == 0 else ("previous", "this"):
            wall, cpu, out, code = _run([*builds[name], "search", WORD, "--no-refresh", "--json"], envs[name])
            walls[name].append(wall)
            cpus[name].append(cpu)
            if code == 0:
                found[name] = {h["session_id"] for h in json.loads(out)["hits"]}
    res.checks.append(
        Check(
            name="both answer the same sessions",
            ok=found.get("this") == found.get("previous") == set(layout.fresh),
            detail=f"{len(found.get('this', ()))} and {len(found.get('previous', ()))} of {len(layout.fresh)}",
        )
    )
    g = f"previous release {previous[:12]}"
    for what, values in (("wall", walls), ("CPU", cpus)):
        mine, theirs = statistics.median(values["this"]), statistics.median(values["previous"])
        res.metrics.append(
            Metric(
                name=f"search --no-refresh, {what} p50",
                value=round(mine * 1000, 1),
                unit="ms",
                group=g,
                reference=Reference(label="previous", value=round(theirs * 1000, 1)),
                ratio=round(mine / theirs, 3),
            )
        )
        res.metrics.append(
            Metric(
                name=f"search --no-refresh, {what} p50: ÷ previous",
                value=round(mine / theirs, 3),
                unit="x",
                group=g,
                target=Target(op="<=", value=TARGET_RATIO),
            )
        )
    return res
