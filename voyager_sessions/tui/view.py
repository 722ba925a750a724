"""How the terminal UI draws sessions and events: Rich ``Text`` built from plain strings, never markup.

Session text is hostile input. Every string from a session goes through
:func:`voyager_sessions.core.textsafe.printable` (control characters and escapes become visible
stand-ins of the same length, so highlight offsets stay valid) and into ``rich.text.Text``
*as text*: ``[bold]`` or ``[link=…]`` in a prompt is shown as typed, never interpreted as
Rich or Textual markup. Styles are Voyager's own, added by span. Wide characters (CJK,
emoji) are measured in cells, so columns line up and a row is cut where the screen ends.

A result row says why the session matched at any width: its excerpt is cut *around* the first
marked match (:func:`around`), and its first line keeps the agent, the title, the age and the
project, giving up the hit count first and the title's tail last (:func:`session_row`). A tool
call is drawn as people read it (:mod:`voyager_sessions.core.toolview`: an edit as a diff, a
written file as code, a shell call as its command).
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from voyager_sessions.core.textsafe import printable

#: Per-kind label and style in the preview (what a person typed stands out most).
KIND_STYLE: dict[str, tuple[str, str]] = {
    "user": ("you", "bold cyan"),
    "assistant": ("agent", "green"),
    "reasoning": ("thinking", "italic dim"),
    "tool_call": ("tool call", "yellow"),
    "tool_result": ("output", "dim"),
    "meta": ("meta", "dim"),
    "checkpoint": ("checkpoint", "magenta"),
    "title": ("title", "bold"),
}

#: The style of a match of the query.
MATCH = "reverse bold"

#: A tool output or any event longer than this many lines is folded in the preview.
FOLD_LINES = 12

#: The styles of a tool call's lines (``toolview.styled``'s kinds).
TOOL_STYLE = {
    "add": "green",
    "del": "red",
    "hunk": "cyan",
    "file": "bold",
    "command": "bold",
    "label": "",
    "code": "",
    "note": "dim italic",
}

#: The widest an agent's column gets (``open-interpreter``); longer names are cut.
AGENT_WIDTH = 16


def when(iso: str | None) -> str:
    """``2026-11-20 10:00`` from an ISO timestamp (empty when unknown)."""
    return iso[:16].replace("T", " ") if iso else ""


def age(iso: str | None, now: float | None = None) -> str:
    """How long ago, in at most four cells: ``now``, ``5m``, ``3h``, ``2d``, ``6w``, ``4mo``, ``2y``."""
    if not iso:
        return ""
    try:
        then = datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return ""
    seconds = max(0.0, (time.time() if now is None else now) - then)
    for unit, size in (("y", 365 * 86400), ("mo", 30 * 86400), ("w", 7 * 86400), ("d", 86400), ("h", 3600)):
        if seconds >= size * (2 if unit in ("y", "mo") else 1):
            return f"{int(seconds // size)}{unit}"
    return f"{int(seconds // 60)}m" if seconds >= 60 else "now"


def place(cwd: str | None, width: int = 28) -> str:
    """A working directory cut from the left to ``width`` characters (the project's name is at the end)."""
    text = printable(cwd or "")
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def project(cwd: str | None) -> str:
    """The project a working directory is: its last folder's name (printable)."""
    text = printable((cwd or "").rstrip("/\\"))
    return re.split(r"[\\/]", text)[-1] if text else ""


def clip(text: str, cells: int, *, left: bool = False) -> str:
    """``text`` cut to ``cells`` terminal cells with ``…`` (from the left with ``left``: a path's end matters)."""
    if cell_len(text) <= cells:
        return text
    if cells <= 1:
        return "…"[:cells]
    out, used = [], 1
    for ch in reversed(text) if left else text:
        w = cell_len(ch)
        if used + w > cells:
            break
        out.append(ch)
        used += w
    return "…" + "".join(reversed(out)) if left else "".join(out) + "…"


def around(text: str, spans: Sequence[Sequence[int]], cells: int) -> tuple[str, list[tuple[int, int]]]:
    """The part of ``text`` (one line, printable) that fits in ``cells`` cells and shows its first match: the
    match a quarter of the way in (the words before it tell what it is about), ``…`` where text is cut.
    ``spans`` move with the cut; those outside it are dropped."""
    kept = [(int(a), int(b)) for a, b in spans if 0 <= a < b <= len(text)]
    if cell_len(text) <= cells:
        return text, kept
    first = kept[0][0] if kept else 0
    start = first
    lead = cells // 4 if first else 0
    used = 0
    while start > 0 and used + cell_len(text[start - 1]) <= lead:
        start -= 1
        used += cell_len(text[start])
    if start <= 1:
        start = 0
    prefix = "…" if start > 0 and not text[start:].startswith("…") else ""
    budget = cells - cell_len(prefix)
    end, used = start, 0
    while end < len(text) and used + cell_len(text[end]) <= budget:
        used += cell_len(text[end])
        end += 1
    if end < len(text):  # room for the closing ellipsis
        while end > start and used + 1 > budget:
            end -= 1
            used -= cell_len(text[end])
    shift = len(prefix) - start
    moved = [(a + shift, min(b, end) + shift) for a, b in kept if start <= a < end]
    return prefix + text[start:end] + ("…" if end < len(text) else ""), moved


def session_row(row, *, width: int = 80, agent_width: int = 9, now: float | None = None) -> Text:  # noqa: ANN001
    """Two lines for the result list, fitted to ``width`` cells: the agent, the title, the age, the project (and
    the hit count when there is room); then the best excerpt cut around its first match, the match marked."""
    width = max(width, 20)
    agent = clip(printable(row.provider), agent_width)
    title = printable(row.title or "(untitled)")
    when_ = age(row.when, now)
    where = project(getattr(row, "project", None) or row.cwd)
    meaning = getattr(row, "match", "all") == "meaning"  # found by what it means, no word of the query in it
    hits = "by meaning" if meaning else f"{row.hits} hit{'s' if row.hits != 1 else ''}" if row.hits else ""
    cells = max(8, min(24, width // 4))  # the project's share

    def meta_of(hits: str, cells: int) -> str:
        return " · ".join(x for x in (when_, clip(where, cells, left=True) if where else "", hits) if x)

    def room_for(meta: str) -> int:
        return width - agent_width - 1 - 2 - cell_len(meta)

    meta = meta_of(hits, cells)
    if room_for(meta) < 28 and hits and not meaning:  # the count gives way first: the title says more
        hits = ""
        meta = meta_of(hits, cells)
    if room_for(meta) < 16 and where:  # then the project shrinks, never below a few cells
        cells = max(6, cells - (16 - room_for(meta)))
        meta = meta_of(hits, cells)
    room = room_for(meta)
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(agent + " " * (agent_width - cell_len(agent) + 1), style="bold magenta")
    head.append(clip(title, max(room, 4)), style="bold")
    head.append(" " * max(2, width - cell_len(head.plain) - cell_len(meta)))
    head.append(meta, style="dim")
    head.truncate(width)
    if not row.snippet:
        return head
    snippet, spans = row.snippet, row.highlights
    if row.kind == "tool_call":  # a call's arguments as they read, not as JSON
        from voyager_sessions.core.toolview import readable_snippet

        snippet, spans = readable_snippet(row.kind, row.tool, snippet, spans)
    # One line: newlines in the snippet become stand-ins of the same length, so highlights keep their place.
    text, spans = around(printable(snippet), spans, width - 2)
    body = Text("  ")
    body.append_text(highlighted(text, spans))
    body.truncate(width)
    return Text("\n").join([head, body])


def agent_width(providers: Iterable[str]) -> int:
    """The agent column's width for these rows: the longest name, at least 6, at most :data:`AGENT_WIDTH`."""
    return max([6, *(min(cell_len(p), AGENT_WIDTH) for p in providers)])


def highlighted(text: str, spans: Iterable[Sequence[int]]) -> Text:
    """``text`` (already printable) with the character ranges in ``spans`` styled as matches."""
    out = Text(text)
    for start, end in spans:
        if 0 <= start < end <= len(text):
            out.stylize(MATCH, start, end)
    return out


def terms_pattern(words: Sequence[str]) -> re.Pattern[str] | None:
    """One case-insensitive pattern for the query's words (longest first), or None without words."""
    words = sorted({w for w in words if w.strip()}, key=len, reverse=True)
    if not words:
        return None
    return re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE)


def mark(text: str, pattern: re.Pattern[str] | None) -> Text:
    """``text`` (already printable) with every match of ``pattern`` styled as a match."""
    out = Text(text)
    if pattern is not None:
        for m in pattern.finditer(text):
            if m.end() > m.start():
                out.stylize(MATCH, m.start(), m.end())
    return out


def tool_call(tool: str | None, text: str, pattern: re.Pattern[str] | None) -> list[Text]:
    """A tool call's lines as people read them (``toolview``), styled, matches marked."""
    from voyager_sessions.core import toolview

    out = []
    for kind, line in toolview.styled(toolview.parts(tool, text)):
        shown = mark(printable(line, multiline=True).expandtabs(4).replace("\n", " "), pattern)
        if TOOL_STYLE.get(kind):
            shown.stylize(TOOL_STYLE[kind])
        out.append(shown)
    return out or [Text(printable(tool or ""), style="dim")]


def event_block(ev, pattern: re.Pattern[str] | None, *, fold: bool = True, current: bool = False) -> Text:  # noqa: ANN001
    """One event of the timeline: a labelled header line, then its text (long ones folded unless ``fold`` is off)."""
    label, style = KIND_STYLE.get(ev.kind, (ev.kind, ""))
    head = Text()
    head.append("▶ " if current else "  ", style="bold yellow")
    head.append(f"#{ev.seq} ", style="dim")
    head.append(label, style=f"{style} underline" if current else style)
    if ev.tool:
        head.append(f" {printable(ev.tool)}", style="yellow")
    if ev.exit_code not in (None, 0):
        head.append(f" exit {ev.exit_code}", style="bold red")
    if ev.kind == "tool_call":
        lines = tool_call(ev.tool, ev.text or "", pattern)
    else:
        lines = [mark(line, pattern) for line in printable(ev.text or "", multiline=True).expandtabs(4).split("\n")]
        if ev.kind in ("reasoning", "tool_result", "meta"):
            for line in lines:
                line.stylize(style)
    folded = 0
    if fold and len(lines) > FOLD_LINES:
        keep = _fold(lines, pattern)
        folded = len(lines) - sum(1 for line in keep if line.plain != "…")
        lines = keep
    out = Text("\n").join([head, *(Text("    ").append_text(line) for line in lines)])
    if folded:
        out.append(
            f"\n    … {folded} more line{'s' if folded != 1 else ''} folded (f: the whole session)", style="dim italic"
        )
    return out


def _fold(lines: list[Text], pattern: re.Pattern[str] | None) -> list[Text]:
    """The first lines of a long text, plus the first line that matches the query when it is further down."""
    keep = lines[: FOLD_LINES - 2]
    if pattern is not None and not any(pattern.search(line.plain) for line in keep):
        for line in lines[FOLD_LINES - 2 :]:
            if pattern.search(line.plain):
                keep = keep + [Text("…", style="dim"), line]
                break
    return keep


def header(session) -> Text:  # noqa: ANN001 - model.SessionRow
    """The preview's first lines: agent, title, when, where, and the resume command."""
    out = Text()
    out.append(f"{printable(session.provider)} ", style="bold magenta")
    out.append(printable(session.title or "(untitled)"), style="bold")
    out.append(
        f"\n{when(session.updated or session.started)}  {session.events} event{'' if session.events == 1 else 's'}",
        style="dim",
    )
    if session.cwd:
        out.append(f"  {printable(session.cwd)}", style="dim")
    if session.resume:
        out.append("\n$ ", style="dim")
        out.append(printable(session.resume), style="cyan")
    return out


def indexing(ix: Any) -> str:
    """The status line's part saying the index is still being built (``SearchResult.indexing``), or ""."""
    if ix is None:
        return ""
    said = f", what was said in {ix.sessions_words:,}" if ix.sessions_words > ix.sessions_done else ""
    if ix.running:
        return f" · indexing: {ix.sessions_done:,} of {ix.sessions_total:,} sessions searched{said}"
    return f" · index incomplete: {ix.sessions_done:,} of {ix.sessions_total:,} sessions (voyager scan goes on)"


def rows(text: str, width: int) -> int:
    """How many screen rows ``text`` takes wrapped to ``width`` cells: each line's cells over the width, rounded
    up (Textual wraps at spaces, which can take a row more on a long line: where a match is put on screen this
    is close enough, and it costs no layout)."""
    width = max(width, 1)
    total = 0
    for line in text.split("\n"):
        cells = len(line) if line.isascii() else cell_len(line)
        total += max(1, -(-cells // width))
    return total


def first_match_row(text: Text, start: int, width: int) -> int:
    """The screen row (0-based, within ``text``) on which the first match at or after character ``start`` is
    drawn when ``text`` is wrapped to ``width`` cells (``start``'s own row when nothing after it is marked)."""
    plain = text.plain
    at = start
    for span in sorted(text.spans, key=lambda s: s.start):
        if span.start >= start and MATCH in str(span.style):
            at = span.start
            break
    line_start = plain.rfind("\n", 0, at) + 1
    before = rows(plain[: line_start - 1], width) if line_start else 0
    inside = plain[line_start:at]
    return before + (rows(inside, width) - 1 if inside else 0)
