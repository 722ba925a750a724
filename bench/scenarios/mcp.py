"""mcp_start: how soon ``voyager mcp`` answers an agent, as the agent starts it (a fresh process each time).

* time-to-initialize: from spawning ``voyager mcp`` to its ``initialize`` answer. Codex
  gives an optional MCP server about a second and then goes on without its tools, so
  this is the number that decides whether an agent sees Voyager at all (issue #23: the
  SDK-based server took ~0.6 s idle, ~1.9 s on a busy 2-core machine);
* time-to-first-search: from spawning to the first ``tools/call search`` answer (the
  handshake, the search's refresh scan of every source, the search), on a small corpus.

Beside them, what importing the MCP Python SDK alone costs when it is installed: the
floor of the old server's handshake.
"""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench import corpus
from bench.context import Context
from bench.model import Check, Metric, Reference, ScenarioResult, Target
from bench.util import ProviderHomes, cli_env, ms, percentile, voyager_command

#: The issue's target for the handshake, median.
TARGET_INIT_MS = 300.0
#: The figure issue #23 measured for the SDK-based server on an idle 2-core machine.
OLD_INIT_MS = 600.0

SOURCES = 200
_INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "1"}},
}


def mcp_start(ctx: Context) -> ScenarioResult:
    from voyager_sessions.scan import scan

    reps = 10 if ctx.quick else 30
    res = ScenarioResult(
        name="mcp_start",
        description=f"`voyager mcp` started as an agent starts it, {reps} times: "
        f"time to answer initialize, and to answer a first search ({SOURCES} sources)",
    )
    homes = ProviderHomes.under(ctx.dir("mcp") / "homes")
    corpus.write_tiny_sources(SOURCES, homes.claude_projects, Path(homes.codex))
    data_dir = ctx.dir("mcp") / "data"
    scan(data_dir, homes.env(), providers=["claude", "codex"])
    env = cli_env({**homes.env(data_dir), "VOYAGER_NO_SERVER": "1"}, ctx.dir("pycache"))
    cmd = [*voyager_command(), "mcp"]
    needle = "00000000-0000-4000-a000-000000000006"

    inits: list[float] = []
    firsts: list[float] = []
    init_ok = search_ok = True
    for i in range(reps + 1):  # the first run is unmeasured: it writes the bytecode cache
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        assert proc.stdin is not None and proc.stdout is not None
        try:
            _send(proc, _INIT)
            answer = json.loads(proc.stdout.readline())
            t_init = time.perf_counter() - t0
            init_ok = init_ok and answer.get("result", {}).get("serverInfo", {}).get("name") == "voyager"
            _send(proc, {"jsonrpc": "2.0", "method": "notifications/initialized"})
            _send(
                proc,
                {
                    "jsonrpc": "2.0",
                    "id": 2,
                    "method": "tools/call",
                    "params": {"name": "search", "arguments": {"query": f"session:{needle}", "limit": 5}},
                },
            )
            found = json.loads(proc.stdout.readline())
            t_first = time.perf_counter() - t0
            hits = found.get("result", {}).get("structuredContent", {}).get("hits", [])
            search_ok = search_ok and bool(hits) and all(needle in h["session_id"] for h in hits)
        finally:
            proc.stdin.close()
            proc.wait(60)
            proc.stdout.close()
        if i:
            inits.append(t_init)
            firsts.append(t_first)

    res.checks += [
        Check(name="initialize answered by voyager", ok=init_ok),
        Check(name="first search found the named session, and only it", ok=search_ok),
    ]
    p50 = statistics.median(inits)
    res.metrics += [
        Metric(
            name="time to initialize, p50",
            value=ms(p50),
            unit="ms",
            target=Target(op="<=", value=TARGET_INIT_MS),
            reference=Reference(
                label="before", value=OLD_INIT_MS, note="issue #23: the MCP-SDK server, idle 2-core machine"
            ),
            ratio=round(ms(p50) / OLD_INIT_MS, 3),
        ),
        Metric(name="time to initialize, p95", value=ms(percentile(inits, 95)), unit="ms"),
        Metric(
            name="time to first search, p50", value=ms(statistics.median(firsts)), unit="ms", group=f"{SOURCES} sources"
        ),
        Metric(
            name="time to first search, p95", value=ms(percentile(firsts, 95)), unit="ms", group=f"{SOURCES} sources"
        ),
    ]
    sdk = None if ctx.quick else _sdk_import(env, reps=5)  # seconds a run: not for --quick
    if sdk is not None:
        res.metrics.append(
            Metric(name="importing the MCP SDK alone (the old server's floor), p50", value=ms(sdk), unit="ms")
        )
    else:
        res.notes.append("the MCP SDK's import time is measured in full runs, when the SDK is installed")
    return res


def _send(proc: subprocess.Popen, msg: dict) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(msg).encode() + b"\n")
    proc.stdin.flush()


def _sdk_import(env: dict[str, str], *, reps: int) -> float | None:
    """Median wall time of ``python -c 'import mcp.server'`` (process start included), None without the SDK."""
    probe = subprocess.run([sys.executable, "-c", "import mcp.server"], env=env, capture_output=True, check=False)
    if probe.returncode != 0:
        return None
    runs = []
    for _ in range(reps):
        t = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mcp.server"], env=env, capture_output=True, check=False)
        runs.append(time.perf_counter() - t)
    return statistics.median(runs)
