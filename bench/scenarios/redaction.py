"""redaction: what ``voyager export --redact`` finds, measured on sets built for it; the floor that gates CI.

Three sets (``bench/redaction/``): the development set (``catalogue.py``: the credential shapes of
gitleaks' and detect-secrets' rules that appear in coding sessions, each in the contexts sessions hold
them, and look-alikes), the held-out set (``heldout.jsonl``, written before the rules and never tuned
against) and every string of the real agents' captures (``tests/fixtures/agents``: ordinary session text,
ids, hashes, paths, with no secret in it). For each: recall (a credential counts as found when none of its
secret parts survives) and the share of look-alikes changed at all. Plus the CPU time redaction takes per
MiB of session text.

Quality does not depend on the machine's load, so it is enforced: a number past its floor in
``bench/redaction/floor.json`` is a failed check (``--quick`` too). The misses and false positives are
named in the notes.
"""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path
from typing import Any

import msgspec

from bench import REPO_ROOT
from bench.context import Context
from bench.model import Check, Metric, ScenarioResult
from bench.redaction import catalogue
from bench.redaction.catalogue import Example

FLOOR_PATH = REPO_ROOT / "bench" / "redaction" / "floor.json"
CAPTURES = REPO_ROOT / "tests" / "fixtures" / "agents"


class Floor(msgspec.Struct, kw_only=True):
    about: str
    #: set -> {"recall": lowest that passes, "false_positive_rate": highest that passes}
    sets: dict[str, dict[str, float]]


def load_floor(path: Path = FLOOR_PATH) -> Floor:
    return msgspec.json.decode(path.read_bytes(), type=Floor)


def capture_strings(root: Path = CAPTURES) -> list[str]:
    """Every string value (6 characters or more) in the captures' JSON, JSONL and SQLite files, once each."""
    seen: set[str] = set()

    def walk(v: Any) -> None:
        if isinstance(v, str):
            if len(v) >= 6:
                seen.add(v)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)

    for p in sorted(root.rglob("*")):
        if not p.is_file() or p.name in ("truth.json", "PROVENANCE.md"):
            continue
        data = p.read_bytes()
        if data[:16] == b"SQLite format 3\x00":
            conn = sqlite3.connect(f"file:{p}?mode=ro&immutable=1", uri=True)  # a copy in the repository
            try:
                for (table,) in conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall():
                    for row in conn.execute(f'SELECT * FROM "{table}"'):
                        for cell in row:
                            if isinstance(cell, str):
                                try:
                                    walk(json.loads(cell))
                                except ValueError:
                                    walk(cell)
            except sqlite3.Error:
                pass
            finally:
                conn.close()
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError:
            continue
        try:
            walk(json.loads(text))
            continue
        except ValueError:
            pass
        lines = 0
        for line in text.splitlines():
            try:
                walk(json.loads(line))
                lines += 1
            except ValueError:
                pass
        if not lines:
            walk(text)
    return sorted(seen)


def score(positives: list[Example], negatives: list[Example]) -> tuple[list[Example], list[Example]]:
    """(credentials with a part left, look-alikes changed)."""
    from voyager_sessions.export.redact import redact

    missed = [e for e in positives if any(s in redact(e.text) for s in e.secrets)]
    touched = [e for e in negatives if redact(e.text) != e.text]
    return missed, touched


def _short(text: str, n: int = 90) -> str:
    text = text.replace("\n", "⏎")
    return text if len(text) <= n else text[: n - 1] + "…"


def redaction(ctx: Context) -> ScenarioResult:
    from voyager_sessions.export.redact import KEYS, NAMES, redact

    res = ScenarioResult(
        name="redaction",
        description="`export --redact`: recall on secret scanners' credential shapes in session contexts, false "
        "positives on look-alikes and on real captures' text; a held-out set written before the rules",
    )
    floor = load_floor()
    held_pos, held_neg = catalogue.heldout()
    sets = {
        "development": (catalogue.positives(), catalogue.negatives()),
        "held-out": (held_pos, held_neg),
        "captures": ([], [Example("capture", s, (), "captures") for s in capture_strings()]),
    }
    res.notes.append(
        f"{len(KEYS)} provider key formats and {len(NAMES)} mark names; development set: "
        f"{len(sets['development'][0])} credentials ({len({e.source for e in sets['development'][0]})} rules) and "
        f"{len(sets['development'][1])} look-alikes; held-out: {len(held_pos)} and {len(held_neg)}; "
        f"captures: {len(sets['captures'][1])} strings"
    )
    for name, (pos, neg) in sets.items():
        missed, touched = score(pos, neg)
        limits = floor.sets.get(name, {})
        if pos:
            recall = 1 - len(missed) / len(pos)
            res.metrics.append(Metric(name="recall", value=round(recall, 4), unit="share", group=name))
            if "recall" in limits:
                ok = recall >= limits["recall"] - 1e-9
                res.checks.append(
                    Check(name=f"{name}: recall >= {limits['recall']}", ok=ok, detail=None if ok else f"{recall:.4f}")
                )
            for e in missed:
                res.notes.append(f"{name}: missed {e.shape}: {_short(e.text)}")
        if neg:
            rate = len(touched) / len(neg)
            res.metrics.append(Metric(name="false positives", value=round(rate, 4), unit="share", group=name))
            if "false_positive_rate" in limits:
                ok = rate <= limits["false_positive_rate"] + 1e-9
                res.checks.append(
                    Check(
                        name=f"{name}: false positives <= {limits['false_positive_rate']}",
                        ok=ok,
                        detail=None if ok else f"{rate:.4f}",
                    )
                )
            for e in touched:
                res.notes.append(f"{name}: changed look-alike: {_short(e.text)} -> {_short(redact(e.text))}")
    # Speed: the captures' text, and the development set, as one session's worth of text.
    text = "\n".join([*(e.text for e in sets["captures"][1]), *(e.text for e in sets["development"][0])])
    reps = 1 if ctx.quick else 3
    best = min(_cpu(redact, text) for _ in range(reps))
    mib = len(text.encode()) / 2**20
    res.metrics.append(Metric(name="CPU time per MiB", value=round(best / mib, 4), unit="s", group="speed"))
    return res


def _cpu(fn: Any, text: str) -> float:
    t = time.process_time()
    fn(text)
    return time.process_time() - t
