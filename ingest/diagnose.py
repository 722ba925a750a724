"""What ``voyager doctor`` reports about the agents: where each adapter looked, what it found, what it could not use.

Discovery here is the same stat pass a scan makes, so doctor tells the truth about
what the next scan would see. Sources that failed in the last scan are taken from the
state store, with the reason recorded then. Nothing is read beyond what discovery
and (for SQLite sources) a schema probe need.

Format drift is made visible here too: the versions of each agent that wrote the indexed
sessions (where the files say, as the state store recorded them) stand beside the
versions the adapter was tested on, and one newer than all of those is a note, before a
search comes back empty because the agent moved on.
"""

from __future__ import annotations

import importlib
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

from voyager_sessions.ingest import adapters as registry
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters.base import Hints, Notice, Source, discover
from voyager_sessions.core.reports import ProviderReport  # what doctor prints: typed at the bottom floor

_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)(?:[-+.~ ].*)?", re.S)


def version_key(version: str) -> tuple[int, ...] | None:
    """The numeric parts of a release number (``2.1.340``, ``v0.4.3``, ``1.0.0-beta.2``), None if it is none."""
    m = _VERSION.fullmatch(version.strip())
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def sorted_versions(versions: Iterable[str]) -> list[str]:
    """Oldest first by release number; what is not a release number last, by name."""
    return sorted(versions, key=lambda v: (0, version_key(v), v) if version_key(v) is not None else (1, (), v))


def drift_note(seen: Iterable[str], observed: Iterable[str]) -> str | None:
    """ "written by X; observed up to Y" when the newest version seen is newer than every observed one."""
    tested = [(k, v) for v in observed if (k := version_key(v)) is not None]
    found = [(k, v) for v in seen if (k := version_key(v)) is not None]
    if not tested or not found:
        return None
    newest, top = max(found), max(tested)
    return f"written by {newest[1]}; observed up to {top[1]}" if newest[0] > top[0] else None


def diagnose(
    env: Mapping[str, str],
    indexed: dict[str, tuple[int, int]],
    failed: dict[str, list[str]],
    noted: dict[str, list[str]] | None = None,
    hints: Hints | None = None,
    versions: dict[str, dict[str, int]] | None = None,
) -> list[ProviderReport]:
    """One report per agent of the manifest (its label, evidence and versions come from its row). ``indexed``: provider -> (sessions, events); ``failed`` and
    ``noted``: provider -> "<path>: <reason>" for sources that failed, or were read with pieces skipped;
    ``hints``: what the scan would hand adapters that ask for them (see ``base.Hints``); ``versions``:
    provider -> {agent version -> sessions} of the indexed sessions whose files name it."""
    reports = []
    for name in manifest.names():
        agent = manifest.row(name)
        try:
            adapter = registry.get(name)
        except Exception as exc:
            reports.append(
                ProviderReport(
                    provider=name,
                    label=agent.label,
                    evidence=agent.evidence,
                    versions=list(agent.versions),
                    roots=[],
                    roots_found=[],
                    sources=0,
                    bytes=0,
                    problems=[f"adapter unavailable: {type(exc).__name__}: {exc}"],
                )
            )
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
        seen = (versions or {}).get(name, {})
        reports.append(
            ProviderReport(
                provider=name,
                label=agent.label,
                evidence=agent.evidence,
                versions=list(agent.versions),
                roots=roots,
                roots_found=found,
                sources=n,
                bytes=size,
                shapes=shapes,
                problems=problems,
                indexed_sessions=sessions,
                indexed_events=events,
                failed_sources=failed.get(name, []),
                notes=(noted or {}).get(name, []),
                versions_seen={v: seen[v] for v in sorted_versions(seen)},
                drift=drift_note(seen, agent.versions) if agent.evidence == "observed" else None,
            )
        )
    return reports
