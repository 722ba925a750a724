"""hostile_scale: one crafted source of each hostile shape, at 10x, 100x and 1,000x, scanned for time and memory.

Issue #38 (item 4): a 95 KB ChatGPT export zip holding one 96 MB string took 37 s and 436 MB
(the streamed JSON reader read a string that spans two reads again from its start: time grew
with the square of its length), and a 210 MB Cline session peaked at 487 MB. The bound is that
**no scan of one source is super-linear in its size** and none passes **300 MB** of peak RSS.

Shapes (what a crafted file can make large), each in three containers a scan reads differently:

* ``string``: one message holding one huge string;
* ``deep``: one message holding arrays nested as deep as the size allows, between normal messages;
* ``small``: many small records (messages, lines, conversations).

Containers: a Cline session (one JSON document, streamed past 32 MiB), a Claude Code session
(JSONL), a ChatGPT export zip (its ``conversations.json`` inflated while read). Each is written at
``base x 10``, ``x 100`` and ``x 1000`` bytes (``base`` 64 KiB; 16 KiB with ``--quick``) and scanned
once in a child process (``bench.child``), which reports the scan's CPU seconds (its threads and
workers: on a shared machine the work, not the wall) and peak RSS. The three sizes of a shape share one
child (``ingest-each``: on Linux a process can start its peak RSS afresh, so each scan's is its own), as
a process start and its imports cost more than the two smaller scans; elsewhere each has its own.

Checks (correctness, never timing): each scan ends without a failed source, every record around the
hostile one indexed (and each small record); at 1,000x its CPU is at
most :data:`GROWTH_LIMIT` times that at 100x (plus a second of slack for fixed costs): linear growth
gives about 10, quadratic about 100; and no scan passes 300 MB of peak RSS.
"""

from __future__ import annotations

import json
import zipfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, NamedTuple

import msgspec

from bench.child import IngestRun, ScanJob, can_reset_peak_rss
from bench.context import Context
from bench.model import Check, Metric, ScenarioResult, Target
from bench.util import ProviderHomes, child_env, file_bytes, run_child
from voyager_sessions.ingest.limits import MAX_SOURCE_SESSIONS

FACTORS = (10, 100, 1000)
BASE_BYTES = 64 << 10
BASE_BYTES_QUICK = 16 << 10
#: CPU at 1,000x over CPU at 100x may be at most this (linear: ~10; quadratic: ~100).
GROWTH_LIMIT = 25
GROWTH_SLACK_S = 1.0
RSS_LIMIT_MIB = 300

Writer = Callable[[IO[str], int], None]


def _claude_line(i: int, content: object) -> str:
    return (
        json.dumps(
            {
                "type": "user",
                "sessionId": "hostile",
                "uuid": f"u{i}",
                "parentUuid": f"u{i - 1}" if i else None,
                "cwd": "/home/dev/hostile",
                "timestamp": "2026-11-20T10:00:00.000Z",
                "message": {"role": "user", "content": content},
            },
            ensure_ascii=False,
        )
        + "\n"
    )


def _cline_message(i: int, content: object) -> str:
    return json.dumps(
        {"id": f"m{i}", "role": "user", "ts": 1_790_000_000_000 + i, "content": [{"type": "text", "text": content}]},
        ensure_ascii=False,
    )


def _gpt_conversation(i: int, content: object) -> str:
    node = {
        "id": "n1",
        "parent": None,
        "children": [],
        "message": {
            "author": {"role": "user"},
            "create_time": 1_790_000_000.0 + i,
            "content": {"content_type": "text", "parts": [content]},
        },
    }
    return json.dumps(
        {
            "id": f"c{i:08d}",
            "title": f"hostile {i}",
            "create_time": 1_790_000_000.0 + i,
            "update_time": 1_790_000_000.0 + i,
            "mapping": {"n1": node},
            "current_node": "n1",
        },
        ensure_ascii=False,
    )


_SENTENCE = 'the quick 数据库 migration failed again, see ERR_VOYAGER and "quoted" words\n'


def _records(fh: IO[str], size: int, record: Callable[[int, object], str], sep: str) -> int:
    """Short records (a sentence each) until ``size`` bytes; how many (each one event)."""
    written, i = 0, 0
    while written < size:
        text = (sep if i else "") + record(i, f"{i} {_SENTENCE}")
        fh.write(text)
        written += len(text.encode())
        i += 1
    return i


def _huge_string(fh: IO[str], size: int, record: Callable[[int, object], str], sep: str) -> int:
    """One normal record, one whose text is ``size`` bytes of words and escapes, one normal record."""
    head, tail = record(1, "\x00MARK\x00").split(json.dumps("\x00MARK\x00", ensure_ascii=False)[1:-1], 1)
    fh.write(record(0, "before") + sep + head)
    unit = json.dumps(_SENTENCE, ensure_ascii=False)[1:-1]  # escaped once: \" and \n stay escapes
    for _ in range(max(1, size // len(unit.encode()))):
        fh.write(unit)
    fh.write(tail + sep + record(2, "after"))
    return 3  # events: before, the string (cut), after


def _deep(fh: IO[str], size: int, record: Callable[[int, object], str], sep: str) -> int:
    """One normal record, one whose content is arrays nested ``size // 2`` deep, one normal record."""
    head, tail = record(1, "\x00MARK\x00").split(json.dumps("\x00MARK\x00", ensure_ascii=False), 1)
    fh.write(record(0, "before") + sep + head)
    depth = max(1, size // 2)
    for _ in range(0, depth, 1 << 16):
        fh.write("[" * min(1 << 16, depth))
    for _ in range(0, depth, 1 << 16):
        fh.write("]" * min(1 << 16, depth))
    fh.write(tail + sep + record(2, "after"))
    return 2  # events: before and after (the nested arrays hold no text)


SHAPES: dict[str, Callable[[IO[str], int, Callable[[int, object], str], str], int]] = {
    "string": _huge_string,
    "deep": _deep,
    "small": _records,
}


def _write(kind: str, shape: str, size: int, root: Path) -> tuple[str, dict[str, str], Path, int]:
    """The source of ``shape`` in container ``kind`` under ``root``: (provider, env, path, events it holds)."""
    homes = ProviderHomes.under(root / "homes")
    env = homes.env()
    fill = SHAPES[shape]
    if kind == "jsonl":
        path = homes.claude_projects / "-home-dev-hostile" / "hostile.jsonl"
        path.parent.mkdir(parents=True)
        with open(path, "w", encoding="utf-8") as fh:
            # One line stays under the line cap (past it a line is skipped unread, by design): the worst case it allows.
            events = fill(fh, min(size, (64 << 20) - 4096), lambda i, c: _claude_line(i, c).rstrip("\n"), "\n")
            fh.write("\n")
        return "claude", env, path, events
    if kind == "json":
        cline = Path(homes.root) / "cline"
        folder = cline / "sessions" / "1796200000000_hostile"
        folder.mkdir(parents=True)
        path = folder / "1796200000000_hostile.messages.json"
        with open(path, "w", encoding="utf-8") as fh:
            fh.write('{"version": 1, "sessionId": "1796200000000_hostile", "messages": [')
            events = fill(fh, size, _cline_message, ",")
            fh.write("]}")
        return "cline", {**env, "VOYAGER_CLINE_HOME": str(cline)}, path, events
    imports = Path(homes.root) / "imports"
    imports.mkdir(parents=True)
    path = imports / "export.zip"
    with (
        zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as z,
        z.open("conversations.json", "w", force_zip64=True) as raw,
    ):
        import io

        with io.TextIOWrapper(raw, encoding="utf-8") as fh:
            fh.write("[")
            events = fill(fh, size, _gpt_conversation, ",")
            fh.write("]")
    # Each conversation is a session: a read stops at the per-source cap on sessions (by design, with a notice).
    return "chatgpt", {**env, "VOYAGER_IMPORTS": str(imports)}, path, min(events, MAX_SOURCE_SESSIONS)


CONTAINERS = ("json", "jsonl", "zip")


class _Written(NamedTuple):
    """One source written (``_write``): its size factor, the data dir its scan fills, how to scan it."""

    factor: int
    data: Path
    provider: str
    env: dict[str, str]
    path: Path
    expected: int
    size: int


def _scan(w: _Written) -> IngestRun:
    """One scan of ``w`` in a child process of its own."""
    out = run_child(["ingest", "--data-dir", str(w.data), "--provider", w.provider], w.env, timeout=1800)
    return msgspec.json.decode(out, type=IngestRun)


def hostile_scale(ctx: Context) -> ScenarioResult:
    res = ScenarioResult(
        name="hostile_scale",
        description="one crafted source per hostile shape and container at 10x/100x/1,000x: CPU growth, peak RSS",
    )
    base = BASE_BYTES_QUICK if ctx.quick else BASE_BYTES
    together = can_reset_peak_rss()
    if together:
        res.notes.append(
            "the three sizes of a shape scanned in one child process, in turn, each one's peak RSS from its own "
            "start (/proc/self/clear_refs)"
        )
    for kind in CONTAINERS:
        for shape in SHAPES:
            runs: dict[int, IngestRun] = {}
            group = f"{kind} {shape}"
            written: list[_Written] = []
            for factor in FACTORS:
                root = ctx.dir(f"hostile-{kind}-{shape}-{factor}")
                provider, env, path, expected = _write(kind, shape, base * factor, root)
                w = _Written(factor, root / "data", provider, env, path, expected, file_bytes(path))
                written.append(w)
                if not together:
                    runs[factor] = _scan(w)
                    path.unlink()  # the 1,000x inputs are large: one at a time on disk
            if together:
                jobs = [ScanJob(data_dir=str(w.data), provider=w.provider, env=child_env(w.env)) for w in written]
                out = run_child(["ingest-each"], written[0].env, timeout=3600, stdin=msgspec.json.encode(jobs))
                runs = dict(zip(FACTORS, msgspec.json.decode(out, type=list[IngestRun]), strict=True))
                for w in written:
                    w.path.unlink()
            for w in written:
                factor, expected, run = w.factor, w.expected, runs[w.factor]
                label = f"x{factor} ({w.size / (1 << 20):,.1f} MiB)"
                res.metrics += [
                    Metric(name=f"{label} CPU", value=round(run.cpu_seconds, 3), unit="s", group=group),
                    Metric(
                        name=f"{label} peak RSS",
                        value=round(run.peak_rss_kb / 1024, 1),
                        unit="MiB",
                        group=group,
                        target=Target(op="<=", value=RSS_LIMIT_MIB),
                    ),
                ]
                res.checks.append(
                    Check(
                        name=f"{group} x{factor}: every record indexed, no source failed, under {RSS_LIMIT_MIB} MB",
                        ok=run.failed == 0 and run.events == expected and run.peak_rss_kb / 1024 <= RSS_LIMIT_MIB,
                        detail=f"failed {run.failed}, events {run.events} of {expected}, "
                        f"peak {run.peak_rss_kb / 1024:.0f} MiB",
                    )
                )
            small, big = runs[FACTORS[-2]], runs[FACTORS[-1]]
            growth = big.cpu_seconds / max(small.cpu_seconds, 1e-3)
            res.metrics.append(Metric(name="CPU growth x100 -> x1000", value=round(growth, 1), unit="x", group=group))
            res.checks.append(
                Check(
                    name=f"{group}: CPU grows linearly (x1000 within {GROWTH_LIMIT}x of x100, +{GROWTH_SLACK_S:g} s)",
                    ok=big.cpu_seconds <= GROWTH_LIMIT * small.cpu_seconds + GROWTH_SLACK_S,
                    detail=f"{small.cpu_seconds:.2f} s -> {big.cpu_seconds:.2f} s",
                )
            )
    return res
