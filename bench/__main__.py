"""``python -m bench``: run the scenarios, print a table, write the JSON result.

    python -m bench                  # every scenario, full sizes (1M events; about 5 minutes on 2 cores)
    python -m bench --quick          # every scenario, sized to finish in under 2 minutes on 2 cores
    python -m bench --only search    # one scenario (repeatable)
    python -m bench --out FILE       # where the JSON goes (default: a file in the system temp dir)

Exit status: 0 when every scenario ran and every correctness check passed; 1 when a
scenario raised or a check failed (a planted needle not found, a wrong hit, a pair
planted apart matching…); 2 for a usage error. Timings never fail the run: targets are
reported as met or not, nothing more.

Everything happens under one temporary directory (removed afterwards unless ``--keep``).
Voyager is always given an explicit data dir and environment mapping; as a second line
of defence this process's own ``VOYAGER_HOME``, ``HOME`` and provider variables are
pointed into the sandbox too, so nothing can reach the real data dir or agent history.
"""

from __future__ import annotations

import argparse
import os
import platform
import resource
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
import traceback
from datetime import datetime, timezone
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import msgspec

from bench import REPO_ROOT
from bench.context import Context, size_label
from bench.model import BenchResult, Machine, Metric, QueryStat, ScenarioResult
from bench.scenarios import SCENARIOS
from bench.util import ProviderHomes


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m bench", description="Voyager's benchmark (see docs/bench.md).")
    ap.add_argument("--quick", action="store_true", help="smaller sizes: under 2 minutes on 2 cores (CI)")
    ap.add_argument(
        "--only",
        action="append",
        choices=list(SCENARIOS),
        metavar="NAME",
        help=f"run only this scenario (repeatable): {', '.join(SCENARIOS)}",
    )
    ap.add_argument("--out", type=Path, help="write the JSON result here")
    ap.add_argument("--keep", action="store_true", help="keep the temporary work dir and print its path")
    ap.add_argument("--seed", type=int, default=42, help="corpus seed (default 42; results are deterministic per seed)")
    return ap


def _version(pkg: str) -> str:
    try:
        return version(pkg)
    except PackageNotFoundError:
        return "unknown"


def _commit() -> str | None:
    try:
        out = subprocess.run(
            ["git", "-C", str(REPO_ROOT), "describe", "--always", "--dirty", "--abbrev=12"],
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def machine() -> Machine:
    return Machine(
        python=platform.python_version(),
        platform=platform.platform(),
        cpus=os.cpu_count() or 0,
        tantivy=_version("tantivy"),
        msgspec=_version("msgspec"),
        sqlite=sqlite3.sqlite_version,
        voyager_commit=_commit(),
    )


def _sandbox_environ(work: Path) -> None:
    """Point this process's own defaults into the sandbox (defence in depth; every call passes env anyway)."""
    homes = ProviderHomes.under(work / "default-homes")
    os.environ.update(homes.env(work / "default-data"))


# -- the readable table -------------------------------------------------------------


def _fmt(v: float | None) -> str:
    if v is None:
        return "-"
    if isinstance(v, float) and not v.is_integer():
        return f"{v:,.3f}" if abs(v) < 10 else f"{v:,.1f}" if abs(v) < 1000 else f"{v:,.0f}"
    return f"{int(v):,}"


def _metric_line(m: Metric) -> str:
    value = f"{_fmt(m.value)} {m.unit}".rstrip()
    line = f"    {m.name:<34} {value:>16}"
    if m.target is not None:
        mark = "ok" if m.met else "MISSED"
        line += f"   target {str(m.target) + ' ' + m.unit:<14} {mark:<6}"
    if m.reference is not None:
        ref = f"{m.reference.label} {_fmt(m.reference.value)} {m.unit}".rstrip()
        line += f"   {ref}"
        if m.ratio is not None:
            line += f"  ({m.ratio:.2f}x)" if m.ratio >= 0.1 else f"  ({m.ratio:.3f}x)"
        if m.reference.note:
            line += f" {m.reference.note}"
    return line


def _query_grid(queries: list[QueryStat], out: list[str]) -> None:
    sizes = sorted({q.events for q in queries})
    engines = sorted({q.engine for q in queries}, reverse=True)  # voyager first
    names: dict[str, str] = {}  # name -> the query as first seen (a filter needle's provider varies by size)
    for q in queries:
        names.setdefault(q.name, q.query)
    by = {(q.engine, q.events, q.name): q for q in queries}
    head = f"    {'query':<44}"
    for n in sizes:
        for e in engines:
            head += f" {e[:3] + ' ' + size_label(n) + ' p50':>15}"
        head += f" {'found ' + size_label(n):>12}"
    out.append(head + "   (ms; found = voyager/baseline of planted)")
    for name, query in names.items():
        line = f"    {(name + ': ' + query)[:44]:<44}"
        for n in sizes:
            found = []
            for e in engines:
                q = by.get((e, n, name))
                line += f" {_fmt(q.p50_ms) if q else '-':>15}"
                if q is not None and q.expected is not None:
                    found.append(f"{q.found}" + (f"+{q.wrong}!" if q.wrong else ""))
            exp = next((by[(e, n, name)].expected for e in engines if (e, n, name) in by), None)
            line += f" {('/'.join(found) + f' of {exp}') if exp is not None else '':>12}"
        out.append(line)


def render(result: BenchResult) -> str:
    m = result.machine
    out: list[str] = [
        (
            f"Voyager bench ({result.mode}) on {m.platform}, {m.cpus} CPUs, Python {m.python}, "
            f"tantivy {m.tantivy}, SQLite {m.sqlite}, voyager {m.voyager_commit or '?'}"
        )
    ]
    for s in result.scenarios:
        out.append("")
        out.append(f"== {s.name} ({s.seconds:.1f} s, CPU {s.cpu_seconds:.1f} s): {s.description}")
        if s.error:
            out.append(f"    ERROR: {s.error.strip().splitlines()[-1]}")
        group = object()
        for m in s.metrics:
            if m.group != group:
                group = m.group
                if group:
                    out.append(f"  {group}")
            out.append(_metric_line(m))
        if s.queries:
            _query_grid(s.queries, out)
        for note in s.notes:
            out.append(f"    note: {note}")
        failed = [c for c in s.checks if not c.ok]
        if s.checks:
            out.append(f"    checks: {len(s.checks) - len(failed)}/{len(s.checks)} passed")
        for c in failed:
            out.append(f"    FAILED: {c.name}" + (f" ({c.detail})" if c.detail else ""))
    out.append("")
    out.append(f"{'OK' if result.ok else 'FAILED'}: {len(result.scenarios)} scenario(s) in {result.seconds:.1f} s")
    return "\n".join(out)


# -- running ------------------------------------------------------------------------


def _cpu() -> float:
    """CPU seconds of this process and of the children it has reaped (a child not yet reaped is not counted)."""
    me, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


def run(names: list[str], ctx: Context) -> list[ScenarioResult]:
    results = []
    for i, name in enumerate(names, start=1):
        print(f"[{i}/{len(names)}] {name} …", file=sys.stderr, flush=True)
        t0, cpu0 = time.perf_counter(), _cpu()
        try:
            res = SCENARIOS[name](ctx)
        except Exception:  # noqa: BLE001 - one broken scenario must not hide the others' numbers
            res = ScenarioResult(name=name, description="(raised)", error=traceback.format_exc())
            print(res.error, file=sys.stderr)
        res.seconds = round(time.perf_counter() - t0, 2)
        res.cpu_seconds = round(_cpu() - cpu0, 2)
        for m in res.metrics:
            if m.target is not None and m.value is not None:
                m.met = m.target.met(m.value)
        failed = sum(not c.ok for c in res.checks)
        print(
            f"[{i}/{len(names)}] {name}: {res.seconds:.1f} s (CPU {res.cpu_seconds:.1f} s)"
            + (f", {failed} check(s) FAILED" if failed else "")
            + (", ERROR" if res.error else ""),
            file=sys.stderr,
            flush=True,
        )
        results.append(res)
    return results


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    names = [n for n in SCENARIOS if not args.only or n in args.only]
    started = datetime.now(timezone.utc)
    t0 = time.perf_counter()
    host = machine()  # before the sandbox: git reads the real HOME's config
    work = Path(tempfile.mkdtemp(prefix="voyager-bench-"))
    try:
        _sandbox_environ(work)
        ctx = Context(quick=args.quick, work=work, seed=args.seed)
        scenarios = run(names, ctx)
    finally:
        if args.keep:
            print(f"work dir kept: {work}", file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)
    result = BenchResult(
        mode="quick" if args.quick else "full",
        started=started.isoformat(timespec="seconds"),
        seconds=round(time.perf_counter() - t0, 1),
        ok=all(s.ok for s in scenarios),
        machine=host,
        scenarios=scenarios,
    )
    out = args.out or Path(tempfile.gettempdir()) / f"voyager-bench-{started.strftime('%Y%m%dT%H%M%SZ')}.json"
    out.write_bytes(msgspec.json.format(msgspec.json.encode(result), indent=2) + b"\n")
    print(render(result))
    print(f"JSON result: {out.resolve()}")
    return 0 if result.ok else 1


if __name__ == "__main__":
    sys.exit(main())
