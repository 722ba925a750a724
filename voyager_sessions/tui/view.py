"""How the terminal UI draws sessions and events: Rich ``Text`` built from plain strings, never markup.

Session text is hostile input. Every string from a session goes through
:func:`voyager_sessions.core.textsafe.printable` (control characters and escapes become visible
stand-ins of the same length, so highlight offsets stay valid) and into ``rich.text.Text``
*as text*: ``[bold]`` or ``[link=…]`` in a prompt is shown as typed, never interpreted as
Rich or Textual markup. Styles are Voyager's own, added by span. Wide characters (CJK,
emoji) are measured by Rich, so columns line up.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

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


def when(iso: str | None) -> str:
    """``2026-11-20 10:00`` from an ISO timestamp (empty when unknown)."""
    return iso[:16].replace("T", " ") if iso else ""


def place(cwd: str | None, width: int = 28) -> str:
    """A working directory cut from the left to ``width`` characters (the project's name is at the end)."""
    text = printable(cwd or "")
    return text if len(text) <= width else "…" + text[-(width - 1) :]


def session_row(row, *, width: int = 80) -> Text:  # noqa: ANN001 - backend.SessionHit
    """Two lines for the result list: agent, title, when, hits; then the best snippet with its highlights."""
    title = printable(row.title or "(untitled)")
    head = Text(no_wrap=True, overflow="ellipsis")
    head.append(f"{row.provider:<9} ", style="bold magenta")
    head.append(title, style="bold")
    meta = f"  {when(row.when)}"
    if getattr(row, "match", "all") == "meaning":
        meta += " · by meaning"
    elif row.hits:
        meta += f" · {row.hits} hit{'s' if row.hits != 1 else ''}"
    if row.cwd:
        meta += f" · {place(row.cwd)}"
    if row.terms and len(row.terms) > 1:
        meta += " · " + ", ".join(printable(t) for t in row.terms)
    head.append(meta, style="dim")
    head.truncate(width, overflow="ellipsis")
    if not row.snippet:
        return head
    # One line: newlines in the snippet become stand-ins of the same length, so highlights keep their place.
    snippet = highlighted(printable(row.snippet), row.highlights)
    body = Text("  ")
    body.append_text(snippet)
    body.truncate(width, overflow="ellipsis")
    return Text("\n").join([head, body])


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
    lines = printable(ev.text or "", multiline=True).expandtabs(4).split("\n")
    folded = 0
    if fold and len(lines) > FOLD_LINES:
        keep = _fold(lines, pattern)
        folded = len(lines) - len(keep)
        lines = keep
    body = mark("\n".join(lines), pattern)
    body.stylize(style if ev.kind in ("reasoning", "tool_result", "meta") else "")
    out = Text("\n").join([head, _indent(body)])
    if folded:
        out.append(
            f"\n    … {folded} more line{'s' if folded != 1 else ''} folded (f: the whole session)", style="dim italic"
        )
    return out


def _indent(body: Text) -> Text:
    return Text("\n").join(Text("    ").append_text(line) for line in body.split("\n", allow_blank=True))


def _fold(lines: list[str], pattern: re.Pattern[str] | None) -> list[str]:
    """The first lines of a long text, plus the first line that matches the query when it is further down."""
    keep = lines[: FOLD_LINES - 2]
    if pattern is not None and not any(pattern.search(line) for line in keep):
        for line in lines[FOLD_LINES - 2 :]:
            if pattern.search(line):
                keep = keep + ["…", line]
                break
    return keep


def header(session) -> Text:  # noqa: ANN001 - model.SessionRow
    """The preview's first lines: agent, title, when, where, and the resume command."""
    out = Text()
    out.append(f"{session.provider} ", style="bold magenta")
    out.append(printable(session.title or "(untitled)"), style="bold")
    out.append(f"\n{when(session.updated or session.started)}  {session.events} events", style="dim")
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
