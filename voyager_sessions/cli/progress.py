"""The progress bar of a scan on the terminal: this process's scan, or another process's it waits for.

``voyager scan`` (and the refresh before a search, when it takes long enough to notice) draws
one line on stderr, redrawn in place: the phase, a bar, sessions and bytes read of the plan,
the rate and the time left. Only on a terminal and without ``-q``; nothing is drawn in the
first ``QUIET_S`` (a quick refresh stays silent), and the line is wiped when the scan ends,
so what follows prints where it began.

A scan started while another process builds the index (a scan a search left running in the
background) follows that scan's progress instead, from what it commits (``scan.progress``),
until it is done; then it scans, with nothing left to read.
"""

from __future__ import annotations

import sys
import time
from typing import Any, TextIO

#: Nothing is drawn before the scan has run this long (seconds), and then at most every ``REDRAW_S``.
QUIET_S = 0.25
REDRAW_S = 0.1

_PHASES = {
    "all": "indexing",
    "words": "indexing what was said",
    "tools": "indexing tool output",
}


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit in ("B", "KB") else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:,.1f} GB"


def _left(seconds: float) -> str:
    if seconds < 60:
        return f"{seconds:.0f}s left"
    if seconds < 3600:
        return f"{seconds // 60:.0f}m{seconds % 60:02.0f}s left"
    return f"{seconds // 3600:.0f}h{seconds % 3600 // 60:02.0f}m left"


def line(p: Any, width: int) -> str:
    """The bar for ``p`` (``scan.progress.ScanProgress``), at most ``width`` characters."""
    label = _PHASES.get(p.phase, "indexing")
    if p.phase == "tools":
        done, total = p.tools_done, p.tools_total
        part = done / total if total else 1.0
        left = p.phase_seconds * (total - done) / done if done and p.phase_seconds else None
        facts = [f"{done:,}/{total:,} sessions"]
    else:
        done, total = p.sessions_done, max(p.sessions_total, p.sessions_done)
        part = p.bytes_done / p.bytes_total if p.bytes_total else (done / total if total else 1.0)
        rate = p.bytes_done / p.seconds if p.seconds else 0.0
        left = (p.bytes_total - p.bytes_done) / rate if rate else None
        facts = [f"{done:,}/{total:,} sessions", f"{_size(p.bytes_done)}/{_size(p.bytes_total)}"]
        if p.seconds >= 1:
            facts.append(f"{done / p.seconds:,.0f} sessions/s")
    if left is not None:
        facts.append(_left(left))
    tail = "  ".join(facts)
    bar_width = max(10, min(30, width - len(label) - len(tail) - 6))
    fill = min(bar_width, int(bar_width * part))
    text = f"{label} [{'#' * fill}{'.' * (bar_width - fill)}] {tail}"
    return text[: max(0, width - 1)]


def _width() -> int:
    """The terminal's width (``COLUMNS`` first); shutil is imported only here, when a bar is drawn: it brings
    bz2, lzma and zlib, ~2 ms of every refreshing search that draws nothing."""
    import shutil

    return shutil.get_terminal_size((80, 24)).columns


class Bar:
    """Draws :func:`line` for each progress report, in place on ``stream`` (a terminal), and wipes it at the end."""

    def __init__(self, stream: TextIO | None = None) -> None:
        self.stream = stream or sys.stderr
        self.t0 = time.monotonic()
        self.last = 0.0
        self.drawn = False

    def __call__(self, p: Any) -> None:
        now = time.monotonic()
        if now - self.t0 < QUIET_S or now - self.last < REDRAW_S:
            return
        self.last = now
        width = _width()
        self.stream.write("\r" + line(p, width).ljust(width - 1))
        self.stream.flush()
        self.drawn = True

    def close(self) -> None:
        """Wipe the line (the summary or the results print where it was)."""
        if self.drawn:
            width = _width()
            self.stream.write("\r" + " " * (width - 1) + "\r")
            self.stream.flush()
            self.drawn = False


def follow(ddir: Any, bar: Bar | None, *, poll: float = 0.5, until: float | None = None) -> bool:
    """Wait while another process builds the index of ``ddir`` (a ``DataDir``), drawing its progress on ``bar``.

    Returns True when that scan is done (or none runs), False when ``until`` (a monotonic time) came first.
    """
    from voyager_sessions.api.freshness import progress_elsewhere

    while until is None or time.monotonic() < until:
        now = progress_elsewhere(ddir)
        if now is None:
            return True
        if bar is not None:
            bar(now)
        time.sleep(poll)
    return False
