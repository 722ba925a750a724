"""Every adapter against mutated copies of real captures and peers' samples: hostile input never costs more than itself.

Each HOME of ``_fuzz.fixture_homes()`` (the captures in ``shared/fixtures/agents``, the
peers' samples in ``shared/fixtures/peers/*/home``, a synthetic Windsurf HOME) is copied,
and each of its session files is broken by the mutants of ``tests/support/mutations.py`` (cut at
several offsets, garbage, NULs, a BOM, CRLF, wrong types, nesting 1,000 deep, lone
surrogates, terminal escapes in text and ids, a 10 MB string; for SQLite a cut or corrupt
file, a table or column gone, wrong-typed and invalid-UTF-8 cells, broken JSON cells).
After each, every adapter that finds anything in the HOME reads it as a scan would, and
``fuzz.judge`` holds the outcome to the bar: done within the deadline, nothing raised (the
scan's "adapter error"), every item well-typed, the records the mutant left alone still
found, no provider file changed.

Sizes: the default run picks one mutant of each kind per file (seeded by HOME and file,
so a run is reproducible); ``slow`` runs every mutant; ``VOYAGER_FUZZ_FULL=1`` runs the
full matrix (every shape path with every wrong type, every record), minutes long. A
second test scans each HOME with terminal escapes in its text and ids through the real
scan and the CLI: no adapter error, and ``search``, ``show`` and ``list`` print no
control character from the files.
"""

from __future__ import annotations

import hashlib
import os
import random
import re
import sqlite3
import time
from collections import defaultdict
from collections.abc import Iterator
from fnmatch import fnmatch
from pathlib import Path

import pytest

from tests.support import mutations as mut
from tests.support.deadline import deadline
from tests.support.fuzz import FuzzHome, drive, fixture_homes, judge, tree
from tests.support.run import Run
from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.manifest import agent_variables

HOMES = dict(fixture_homes())
FULL = os.environ.get("VOYAGER_FUZZ_FULL") == "1"
#: One read of a mutated HOME may take this long (a 10 MB string included) before it counts as a hang.
DEADLINE = 20.0
SLOW_READ = 5.0

#: Breaking one file may cost another where the format makes one depend on the other; each such
#: dependency, by HOME and file patterns, with the reason. Nothing else may be lost.
DEPENDS: list[tuple[str, str, str, str]] = [
    # (HOME, broken file, file whose words may be lost, why)
    (
        "peer-crush",
        "*/crush/projects.json",
        "*",
        "projects.json is the only place naming the projects' data dirs: without it they cannot be found",
    ),
    (
        "peer-cline-cli",
        "*.messages.json",
        "*/session_synthetic_01.json",
        "the manifest only describes the transcript: with the transcript unreadable there is no session",
    ),
    (
        "peer-grok",
        "*/registry-grok/updates.jsonl",
        "*/registry-grok/summary.json",
        "summary.json only describes the transcript: with the transcript unreadable there is no session",
    ),
    (
        "gptme-0.35.1",
        "*/conversation.jsonl",
        "*/config.toml",
        "config.toml only names the conversation (title, workspace): with no message left there is no session",
    ),
    (
        "synthetic-junie",
        ".junie/sessions/index.jsonl",
        ".junie/sessions/index.jsonl",
        "Junie's index gives a session its title by the session's folder name: a garbled sessionId names none",
    ),
    (
        "synthetic-junie",
        "*/events.jsonl",
        ".junie/sessions/index.jsonl",
        "index.jsonl only titles a session: with its events unreadable there is no session to title",
    ),
    (
        "reasonix-1.38.11",
        "*/events.frames",
        "*/.recovery-cache/*",
        "the recovery cache is a plain copy of the log's recent messages and is never read: its words are the"
        " log's (the harness cannot see them inside the log's zstd frames, so it credits them to the cache)",
    ),
    (
        "synthetic-turn4",
        "*/chat-messages.json",
        "*/chat-meta.json",
        "Codebuff's chat-meta.json only counts and quotes the chat: with the messages unreadable there is no session",
    ),
    (
        "synthetic-turn4",
        "*/local_*/.claude/projects/*.jsonl",
        "*/local-agent-mode-sessions/*/*/local_*.json",
        "a Cowork session's card only titles its transcript: with the transcript empty there is no session to title",
    ),
]
#: Records that are indexed only as what describes the rest (a title): with every other record of the
#: file lost there is no session for them to describe. By HOME, file pattern and record, and why.
DESCRIBES: list[tuple[str, str, int, str]] = [
    (
        "peer-goose",
        "*/goose/sessions/*.jsonl",
        0,
        "a legacy Goose session's first line is its description: the title of the messages after it",
    ),
]
#: Records whose loss may cost the records after them in the same file, by HOME and file pattern, and why.
HEADERS: list[tuple[str, str, int, str]] = [
    (
        "peer-copilot-vscode",
        "*.jsonl",
        0,
        "a VS Code chat mutation log replays from its first line (the snapshot): the changes after it patch that state",
    ),
    (
        "aider-0.86.2",
        "*.aider.chat.history.md",
        0,
        "an Aider run starts at a line beginning '# aider chat started at': with those words garbled there is no run",
    ),
]


#: HOMEs whose session text the escapes mutants cannot reach (kept outside JSON), with the reason.
NO_PROSE: dict[str, str] = {
    "deepagents-0.1.88": "its text is inside msgpack blobs, which the SQLite mutants do not rewrite",
    "reasonix-1.38.11": "its text is in zstd frames of base64 payloads; the mutants only cut and garble that log "
    "(tests/ingest/test_reasonix.py puts escapes inside its records)",
}


@pytest.fixture(autouse=True)
def _clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in (*agent_variables(), "XDG_CONFIG_HOME", "NO_COLOR"):
        monkeypatch.delenv(var, raising=False)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    cache: dict[str, FuzzHome] = {}

    def get(name: str) -> FuzzHome:
        if name not in cache:
            cache[name] = FuzzHome(name, HOMES[name], tmp_path_factory.mktemp(name))
        return cache[name]

    yield get


def _seed(*parts: str) -> int:
    return int.from_bytes(hashlib.sha256("/".join(parts).encode()).digest()[:4], "big")


def _one_of_each_kind(mutants: list[mut.Mutant], rng: random.Random) -> list[list[mut.Mutant]]:
    """The mutants of each kind in a seeded order: the first that applies to the file is the kind's."""
    by_kind: dict[str, list[mut.Mutant]] = defaultdict(list)
    for m in mutants:
        by_kind[m.kind].append(m)
    return [rng.sample(ms, len(ms)) for _, ms in sorted(by_kind.items())]


def _allowed(h: FuzzHome, rel: str, m: mut.Mutant, expected: dict[str, str]) -> dict[str, str]:
    """``expected`` without the words a documented format dependency lets this mutant cost."""
    out = dict(expected)
    for home, broken, other, _why in DEPENDS:
        if h.name == home and fnmatch(rel, broken):
            out = {w: where for w, where in out.items() if not fnmatch(where.rsplit(" record ", 1)[0], other)}
    for home, pattern, header, _why in DESCRIBES:
        if h.name == home and fnmatch(rel, pattern) and m.keeps is not None and m.keeps <= {header}:
            out = {w: where for w, where in out.items() if where != f"{rel} record {header}"}
    for home, pattern, header, _why in HEADERS:
        if h.name == home and fnmatch(rel, pattern) and m.record == header:
            out = {w: where for w, where in out.items() if not where.startswith(f"{rel} record ")}
    return out


def _apply_first(h: FuzzHome, rel: str, group: list[mut.Mutant]) -> mut.Mutant | None:
    """Apply the first mutant of ``group`` that this file allows (a NOT NULL column, a trigger or a
    primary key refuses some SQL edits); None when none does."""
    for m in group:
        h.restore(rel)
        try:
            m.apply(h.home / rel)
        except sqlite3.Error:
            continue
        return m
    h.restore(rel)
    return None


def run_mutants(h: FuzzHome, *, every: bool) -> tuple[int, list[str]]:
    """Every file of ``h`` broken by its mutants (all, or one of each kind), each read and judged."""
    problems: list[str] = []
    count = 0
    for rel in h.files:
        seed = _seed(h.name, rel)
        mutants = h.mutants(rel, seed, full=FULL)
        groups = [[m] for m in mutants] if every else _one_of_each_kind(mutants, random.Random(seed))
        for group in groups:
            m = _apply_first(h, rel, group)
            if m is None:
                continue
            before = tree(h.home)
            expected = _allowed(h, rel, m, h.expected(rel, m, random.Random(seed)))
            started = time.monotonic()
            out = drive(h.env, h.providers, timeout=DEADLINE)
            seconds = time.monotonic() - started
            problems += [
                f"{rel} [{m.name}]: {p[-1500:]}"
                for p in judge(h, rel, m, out, expected, before, seconds=seconds, limit=SLOW_READ)
            ]
            count += 1
        h.restore(rel)
    return count, problems


needs_homes = pytest.mark.skipif(len(HOMES) <= 1, reason="shared/fixtures not found beside the checkout")


@needs_homes
@pytest.mark.slow  # ~35 s over every HOME on 2 cores: with test_every_mutant in CI's slow run
@pytest.mark.parametrize("name", sorted(HOMES))
def test_one_mutant_of_each_kind(built, name: str) -> None:
    count, problems = run_mutants(built(name), every=False)
    assert count, f"{name}: no mutant ran"
    assert not problems, f"{len(problems)} of {count} mutants broke the bar:\n" + "\n".join(problems[:20])


@needs_homes
@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(HOMES))
def test_every_mutant(built, name: str) -> None:
    count, problems = run_mutants(built(name), every=True)
    assert not problems, f"{len(problems)} of {count} mutants broke the bar:\n" + "\n".join(problems[:20])


# -- the real scan and what the CLI prints -------------------------------------------------------------

#: Control characters that must never reach the terminal from session data: C0 but tab and newline, DEL, C1.
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def _escape_everything(h: FuzzHome, rng: random.Random) -> str | None:
    """Terminal escapes around the prose of every session file; in one of them, in ids, cwds and names too
    (applied on top: each mutant rewrites its file from what it was when the mutants were made)."""
    # Markdown logs: Aider's ``.md``, and cecli's ``chat.history`` (the same log without the suffix; its JSON
    # sessions' longest list is a tool list, so escapes there reach no prose).
    files = [rel for rel, kind in h.files.items() if kind != "text" or rel.endswith((".md", "/chat.history"))]
    for rel in files:
        for m in h.mutants(rel, _seed(h.name, rel), full=False):
            if m.kind == "escapes":
                m.apply(h.home / rel)
    ids_in = rng.choice(files) if files else None
    if ids_in is not None and h.files[ids_in] != "text":
        kind = mut.classify(h.home / ids_in) or h.files[ids_in]
        for m in mut.file_mutants(h.home / ids_in, kind, rng, full=False):
            if m.kind == "escapes-ids":
                m.apply(h.home / ids_in)
    return ids_in


@needs_homes
@pytest.mark.parametrize("name", sorted(HOMES))
def test_scan_and_cli_output_of_a_home_full_of_escapes(
    built, name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from voyager_sessions.scan import scan

    h: FuzzHome = built(name)
    h.fresh()
    ids_in = _escape_everything(h, random.Random(_seed("scan", name)))
    before = tree(h.home)
    monkeypatch.setenv("HOME", str(h.home))
    data = tmp_path / "voyager-data"
    monkeypatch.setenv("VOYAGER_HOME", str(data))
    notices: list[Notice] = []
    with deadline(120):
        summary = scan(data, {"HOME": str(h.home)}, on_notice=notices.append)
    errors = [n.describe() for n in notices if "adapter error" in n.reason]
    assert not errors, errors
    run = Run()
    listed = run("list", "--limit", "50")
    doc = run.json("list", "--json", "--limit", "50")
    shown = [run("show", s["session_id"]) for s in doc["sessions"][:3]]
    words = sorted(h.found)
    searched = [run("search", w, "--no-refresh", "--limit", "5") for w in words[:: max(1, len(words) // 3)][:3]]
    searched.append(run("search", words[0] if words else "x", "--no-refresh", "-C", "2"))
    escaped = run("search", "OVERWRITE", "--no-refresh", "--limit", "20")  # the text right after a \r in ESCAPES
    searched.append(escaped)
    for res in [listed, *shown, *searched]:
        assert res.exit_code in (0, 1), (res.exit_code, res.stderr)
        for stream in (res.stdout, res.stderr):
            bad = CONTROLS.search(stream)
            assert bad is None, f"{bad.group()!r} printed: {stream[max(0, bad.start() - 80) : bad.end() + 80]!r}"
    assert tree(h.home) == before, "the scan changed a provider file"
    index_broken = any(h.name == home and fnmatch(ids_in or "", broken) for home, broken, _, _ in DEPENDS)
    assert summary.sources >= 1 or index_broken, "nothing was scanned: the output checks above saw nothing"
    assert escaped.exit_code == 0 or index_broken or name in NO_PROSE, (
        "no escaped text was indexed: the checks saw none"
    )
    h.fresh()
