"""Asking the real CLI what a test's scan indexed: its summary, the sessions, the hits for a query.

For adapters tested end to end (a fake HOME scanned through ``voyager scan``), where what
counts is what a person would find: ``search`` passes a query as typed, ``hits`` looks for a
text as one phrase, ``one`` insists on exactly one hit of a kind.
"""

from __future__ import annotations

import json
from typing import Any

from tests.support.run import Run


def scan(run: Run) -> dict[str, Any]:
    """``voyager scan --json``'s summary (and its stderr, under ``"stderr"``); the scan must succeed."""
    res = run("scan", "--json")
    assert res.exit_code == 0, res.stderr
    doc = json.loads(res.stdout)
    doc["stderr"] = res.stderr
    return doc


def search(run: Run, query: str, *, limit: int = 50) -> list[dict[str, Any]]:
    """The hits of ``voyager search <query>`` (words, phrases and filters as typed), from the index as it is."""
    res = run("search", query, "--json", "--no-refresh", "--limit", str(limit))
    assert res.exit_code in (0, 1), res.stderr
    return json.loads(res.stdout)["hits"]


def hits(run: Run, text: str) -> list[dict[str, Any]]:
    """The hits for ``text`` searched as one phrase."""
    return search(run, json.dumps(text, ensure_ascii=False), limit=100)


def one(run: Run, text: str, kind: str, origin: str | None = None) -> dict[str, Any]:
    """The one hit for ``text`` of ``kind`` (and ``origin``); fails when there are none or several."""
    found = [h for h in hits(run, text) if h["kind"] == kind and (origin is None or h["origin"] == origin)]
    assert len(found) == 1, (text, kind, hits(run, text))
    return found[0]


def kinds(run: Run, query: str) -> list[tuple[str, str]]:
    """(kind, origin) of every hit of ``query``, in rank order."""
    return [(h["kind"], h["origin"]) for h in search(run, query)]


def sessions(run: Run) -> dict[str, dict[str, Any]]:
    """Every indexed session by id, as ``voyager list --json`` gives it."""
    return {s["session_id"]: s for s in run.json("list", "--json", "--limit", "1000")["sessions"]}
