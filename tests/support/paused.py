"""A scan held still part-way through a first index, so a test can look at what a search sees meanwhile.

:func:`paused_scan` runs ``scan`` on a thread, committing after every source, and blocks it
after ``sources`` of them (in ``phase``: ``all``, ``words`` or ``tools``) until the ``with``
block ends; the index then holds exactly what those commits hold, and the scan's record of
how far it got says so.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import msgspec

import synth
from voyager_sessions.scan import run as run_mod
from voyager_sessions.scan import scan


@contextmanager
def paused_scan(monkeypatch, data: Path, sources: int, *, phase: str = "all") -> Iterator[None]:
    monkeypatch.setattr(run_mod, "FIRST_COMMIT_S", 0.0)
    monkeypatch.setattr(run_mod, "COMMIT_MAX_S", 0.0)
    reached, release = threading.Event(), threading.Event()
    seen = {"n": 0}

    def progress(p) -> None:
        if p.phase != phase:
            return
        seen["n"] += 1
        if seen["n"] == sources:
            reached.set()
            assert release.wait(60)

    t = threading.Thread(target=lambda: scan(data, workers=1, progress=progress))
    t.start()
    try:
        assert reached.wait(60), "the scan never got that far"
        yield
    finally:
        release.set()
        t.join(60)


def marked_history(home: Path, n: int) -> list[synth.Conversation]:
    """``n`` Claude Code sessions a minute apart (the last the newest), session i's first prompt saying ``marker<i>``."""
    projects = home / ".claude" / "projects"
    convs = []
    for i in range(n):
        conv = synth.generate(seed=90 + i, messages=8, output_bytes=200)
        first = conv.turns[0]
        conv = msgspec.structs.replace(
            conv, turns=[msgspec.structs.replace(first, text=f"marker{i} {first.text}"), *conv.turns[1:]]
        )
        path = synth.write_claude(conv, projects)
        os.utime(path, (1_700_000_000 + i * 60, 1_700_000_000 + i * 60))
        convs.append(conv)
    return convs
