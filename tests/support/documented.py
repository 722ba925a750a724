"""The contract a documented agent's sample holds to, checked the same way for every one of them.

The agents of the turn-4 survey that could not be run here (AGENTS-next.md, "documented") are
tested on samples their test modules write from the record shapes AGENTS-next.md and peers'
readers give. Each module builds its store in the test's fake HOME and names its markers; then
:func:`check_sample` scans through the real CLI and holds them to what every agent owes:

* every ``prompt`` marker is exactly one ``user`` event, a person's (``human``);
* ``reply`` is the agent's ``assistant`` text, ``thinking`` its ``reasoning``, ``call`` a
  ``tool_call`` and ``result`` a ``tool_result``; ``meta`` (injected context) is found but is
  never a person's prompt, ``absent`` (a copy, a cache, an abandoned branch) is never found;
* every tool result whose call is in the session answers it (:func:`check_paired`: same
  ``call_id``, the call first);
* the agent's files are byte-identical afterwards and nothing was created beside them;
* every source lies below a place the adapter's ``roots`` names (what lets a refresh skip an agent whose
  places are all absent without importing it: ``voyager_sessions/scan/absent.py``);
* a second scan of the unchanged store reads nothing again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

from tests.support.peers import tree
from tests.support.run import Run
from tests.support.scanning import hits, one, scan
from voyager_sessions.ingest import adapters
from voyager_sessions.ingest.adapters.base import Notice, Source, discover, uses_hints
from voyager_sessions.core.model import Event

#: Marker kind -> the (kind, origin) its one hit must have.
WANTED = {
    "prompt": ("user", "human"),
    "reply": ("assistant", "agent"),
    "thinking": ("reasoning", "agent"),
    "call": ("tool_call", "agent"),
    "result": ("tool_result", "tool"),
}

Markers = Mapping[str, Sequence[str]]


def check_markers(run: Run, provider: str, markers: Markers) -> None:
    """Each marker found as its kind says (see the module's docstring), in ``provider``'s sessions."""
    for what, found in markers.items():
        for marker in found:
            if what in WANTED:
                kind, origin = WANTED[what]
                assert one(run, marker, kind, origin)["provider"] == provider, (what, marker)
            elif what == "meta":
                seen = hits(run, marker)
                assert seen, f"{marker!r} (meta) not found"
                assert not [h for h in seen if h["kind"] == "user" and h["origin"] == "human"], (marker, seen)
            elif what == "absent":
                assert not hits(run, marker), f"{marker!r} must not be indexed"
            else:
                raise AssertionError(f"unknown marker kind {what!r}")


def read_events(provider: str, env: Mapping[str, str]) -> tuple[list[Event], list[Notice]]:
    """Every event (and notice) the adapter reads from every source it finds with ``env``."""
    adapter = adapters.get(provider)
    events: list[Event] = []
    notices: list[Notice] = []
    for found in discover(adapter, env):
        if isinstance(found, Notice):
            notices.append(found)
            continue
        assert isinstance(found, Source)
        for item in adapter.read(found):
            if isinstance(item, Event):
                events.append(item)
            elif isinstance(item, Notice):
                notices.append(item)
    return events, notices


def check_paired(provider: str, env: Mapping[str, str], *, calls: int = 1) -> None:
    """Every tool result with a ``call_id`` answers a call of the same session made before it, and at least
    ``calls`` results do (the sample's tool calls are paired with their results)."""
    events, _ = read_events(provider, env)
    made: dict[tuple[str, str], int] = {}
    paired = 0
    for ev in events:
        if ev.kind == "tool_call" and ev.call_id:
            made[(ev.session, ev.call_id)] = ev.seq
        elif ev.kind == "tool_result" and ev.call_id:
            seq = made.get((ev.session, ev.call_id))
            assert seq is not None and seq < ev.seq, f"{provider}: result {ev.call_id!r} answers no earlier call"
            paired += 1
    assert paired >= calls, f"{provider}: {paired} paired results, want {calls}"


def check_roots(provider: str, env: Mapping[str, str]) -> None:
    """Every source the adapter finds lies at or below one of its ``roots`` (hint-led adapters aside)."""
    adapter = adapters.get(provider)
    if uses_hints(adapter):
        return
    roots = [Path(r) for r in adapter.roots(env)]
    for found in discover(adapter, env):
        if isinstance(found, Source):
            path = Path(found.path)
            assert any(path == r or r in path.parents for r in roots), (provider, str(path), [str(r) for r in roots])


def check_sample(run: Run, home: Path, provider: str, markers: Markers, *, calls: int = 1) -> dict:
    """Scan ``home`` through the CLI and hold its sample to the contract; returns the first scan's summary."""
    before = tree(home)
    out = scan(run)
    assert out["failed"] == 0, out
    check_markers(run, provider, markers)
    check_paired(provider, {"HOME": str(home)}, calls=calls)
    check_roots(provider, {"HOME": str(home)})
    assert tree(home) == before, f"{provider}: the scan changed or created files in the agent's store"
    again = scan(run)
    assert (again["new"], again["changed"], again["grown"]) == (0, 0, 0), again
    return out
