"""What ``voyager doctor`` reports about the agents: where each adapter looked, what it found, what it could not use.

Discovery here is the same stat pass a scan makes, so doctor tells the truth about
what the next scan would see. Sources that failed in the last scan are taken from the
state store, with the reason recorded then. Nothing is read beyond what discovery
and (for SQLite sources) a schema probe need.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from pathlib import Path

import msgspec

from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters.base import Hints, Notice, Source, discover


class ProviderReport(msgspec.Struct, kw_only=True):
    provider: str
    label: str
    #: ``observed`` (tested on files the real CLI wrote) or ``documented`` (from public descriptions).
    evidence: str = "documented"
    #: The agent versions whose real files the adapter was tested on.
    versions: list[str] = []
    roots: list[str]
    roots_found: list[str]
    sources: int
    bytes: int
    shapes: dict[str, int] = {}
    problems: list[str] = []
    indexed_sessions: int = 0
    indexed_events: int = 0
    failed_sources: list[str] = []
    #: Sources read with some pieces skipped (unknown records, malformed lines): what was skipped.
    notes: list[str] = []


def diagnose(env: Mapping[str, str], indexed: dict[str, tuple[int, int]], failed: dict[str, list[str]],
             noted: dict[str, list[str]] | None = None, hints: Hints | None = None) -> list[ProviderReport]:
    """One report per agent of the manifest (its label, evidence and versions come from its row). ``indexed``: provider -> (sessions, events); ``failed`` and
    ``noted``: provider -> "<path>: <reason>" for sources that failed, or were read with pieces skipped;
    ``hints``: what the scan would hand adapters that ask for them (see ``base.Hints``)."""
    reports = []
    for name in manifest.names():
        agent = manifest.row(name)
        try:
            adapter = registry.get(name)
        except Exception as exc:
            reports.append(ProviderReport(provider=name, label=agent.label, evidence=agent.evidence,
                                          versions=list(agent.versions), roots=[], roots_found=[], sources=0, bytes=0,
                                          problems=[f"adapter unavailable: {type(exc).__name__}: {exc}"]))
            continue
        roots = [str(r) for r in adapter.roots(env)]
        found = [r for r in roots if Path(r).exists()]
        n = size = 0
        shapes: dict[str, int] = {}
        problems: list[str] = []
        # A capability the row declares, not one looked for: a row that says ``probe`` and a module without it fails here.
        probe = importlib.import_module(agent.module).probe if agent.probe else None
        for item in discover(adapter, env, hints):
            if isinstance(item, Notice):
                problems.append(item.describe())
                continue
            assert isinstance(item, Source)
            n += 1
            size += item.fingerprint.size
            if probe is not None:
                shape = probe(item.path)
                shapes[shape] = shapes.get(shape, 0) + 1
                # "unreadable (why)" names a store that is there but cannot be read (Windsurf's Cascade).
                already = any(f.startswith(f"{item.path}: ") for f in failed.get(name, ()))
                if (shape == "unknown-schema" or shape.startswith("unreadable")) and not already:
                    problems.append(f"{item.path}: {shape}")
        sessions, events = indexed.get(name, (0, 0))
        reports.append(ProviderReport(provider=name, label=agent.label, evidence=agent.evidence,
                                      versions=list(agent.versions), roots=roots, roots_found=found, sources=n,
                                      bytes=size, shapes=shapes, problems=problems, indexed_sessions=sessions,
                                      indexed_events=events, failed_sources=failed.get(name, []),
                                      notes=(noted or {}).get(name, [])))
    return reports
