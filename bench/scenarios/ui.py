"""ui: what a person waits for in ``voyager ui`` — the first frame, and results while typing.

The picker runs in a real terminal (a tmux server of the bench's own, in its sandbox) on the
largest event corpus of ``search``, with ``$VOYAGER_UI_PROBE`` naming a file the app appends
timing events to (``frame`` when the first screen is drawn, ``search`` when a debounced query
starts, ``answer`` when its results are on the screen). First frame = ``frame`` minus the
process's start time (``/proc/<pid>/stat``); typed-query latency = ``answer`` minus ``search``
for the same text, i.e. after the debounce, as the issue measures it. Queries are typed one
after another with ``send-keys``; each waits for its answer.

Checks (correctness only): every query typed gets its answer, with rows where the CLI finds
hits. Skipped, with the reason, without tmux or outside Linux (``/proc``).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time
import uuid
from pathlib import Path

from bench.context import Context, size_label
from bench.model import Check, Metric, ScenarioResult, Target
from bench.util import Quantiles, cli_env, voyager_command

#: The issue's targets (first frame after start; results after the debounce, p95, without a server).
TARGET_FRAME_MS = 400.0
TARGET_TYPED_P95_MS = 250.0

#: What is typed: words, a phrase, CJK, a filter, a query with few hits.
QUERIES = [
    "error",
    "database migration",
    '"connection refused"',
    "数据",
    "provider:claude tokenizer",
    "zzqqxxnothing",
    "retry",
    "index",
]


def _start_time(pid: int) -> float | None:
    """When process ``pid`` started (seconds since the epoch), from ``/proc`` (clock ticks since boot)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = int(fields[19])
        btime = next(
            int(line.split()[1]) for line in Path("/proc/stat").read_text().splitlines() if line.startswith("btime")
        )
    except (OSError, ValueError, IndexError, StopIteration):
        return None
    return btime + ticks / os.sysconf("SC_CLK_TCK")


def _events(path: Path) -> list[dict]:
    try:
        return [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    except OSError:
        return []


def _wait(path: Path, pred, timeout: float = 60.0) -> dict | None:  # noqa: ANN001
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for ev in _events(path):
            if pred(ev):
                return ev
        time.sleep(0.02)
    return None


def ui(ctx: Context) -> ScenarioResult:
    res = ScenarioResult(
        name="ui", description="voyager ui in a real terminal: first frame after start, results after each typed query"
    )
    if shutil.which("tmux") is None or not Path("/proc/self/stat").exists():
        res.notes.append("skipped: needs tmux and /proc")
        return res
    from bench.scenarios.search import ensure_search_run

    n = max(ctx.sizes.search_events)
    run = ensure_search_run(ctx, n)
    group = f"{size_label(n)} events, no server"
    probe = ctx.dir("ui-probe") / "events.jsonl"
    probe.unlink(missing_ok=True)
    env = cli_env(
        {
            "VOYAGER_HOME": str(run.data_dir),
            "VOYAGER_UI_PROBE": str(probe),
            "VOYAGER_NO_SERVER": "1",
            "TERM": "xterm-256color",
            "LANG": "C.UTF-8",
        },
        ctx.dir("ui-pycache"),
    )
    sock = str(ctx.dir("ui-tmux") / "tmux.sock")
    name = f"b{uuid.uuid4().hex[:8]}"
    pid_file = ctx.dir("ui-probe") / "pid"
    command = f"echo $$ > {shlex.quote(str(pid_file))}; exec " + " ".join(
        shlex.quote(a) for a in [*voyager_command(), "ui"]
    )

    def tmux(*args: str) -> None:
        subprocess.run(["tmux", "-S", sock, *args], env=env, check=False, capture_output=True, timeout=30)

    tmux("new-session", "-d", "-s", name, "-x", "120", "-y", "34", command)
    try:
        frame = _wait(probe, lambda ev: ev["event"] == "frame")
        first = _wait(probe, lambda ev: ev["event"] == "answer")
        started = _start_time(int(pid_file.read_text().strip())) if pid_file.exists() else None
        if frame and started:
            res.metrics.append(
                Metric(
                    name="first frame after start",
                    value=round((frame["t"] - started) * 1000, 1),
                    unit="ms",
                    group=group,
                    target=Target(op="<=", value=TARGET_FRAME_MS),
                )
            )
        if first and started:
            res.metrics.append(
                Metric(
                    name="recent sessions shown after start",
                    value=round((first["t"] - started) * 1000, 1),
                    unit="ms",
                    group=group,
                )
            )
        latencies: list[float] = []
        answered = 0
        for _ in range(2 if ctx.quick else 5):
            for q in QUERIES:
                tmux("send-keys", "-t", name, "C-u")
                tmux("send-keys", "-t", name, "-l", q)
                ans = _wait(probe, lambda ev, q=q: ev["event"] == "answer" and ev["query"] == q)
                start = _wait(probe, lambda ev, q=q: ev["event"] == "search" and ev["query"] == q, timeout=1)
                if ans and start:
                    answered += 1
                    latencies.append((ans["t"] - start["t"]) * 1000)
                probe.write_text("")  # the next query's events only
        res.checks.append(
            Check(
                name="every typed query got its answer", ok=answered == len(latencies) > 0, detail=f"{answered} answers"
            )
        )
        if latencies:
            q = Quantiles.of(latencies)
            res.metrics.append(
                Metric(
                    name="typed query → results (after debounce), p50", value=round(q.p50, 1), unit="ms", group=group
                )
            )
            res.metrics.append(
                Metric(
                    name="typed query → results (after debounce), p95",
                    value=round(q.p95, 1),
                    unit="ms",
                    group=group,
                    target=Target(op="<=", value=TARGET_TYPED_P95_MS),
                )
            )
    finally:
        tmux("kill-server")
    return res
