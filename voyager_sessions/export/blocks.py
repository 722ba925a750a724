"""What the Markdown and HTML exports share: the session's facts and its timeline cut into blocks.

A timeline is a run of events; a reader wants turns. :func:`blocks` pairs each tool call
with its results (by ``call_id``: parallel calls answer out of order), so a call and its
output fold together, and marks what is folded (reasoning, injected context, tools).
Tool text is capped (:data:`TOOL_LINES` lines, :data:`TOOL_CHARS` characters) with a line
saying how much was left out and how to read all of it. Every string from the session is
made printable (control characters become visible stand-ins, see ``textsafe``) before a
renderer escapes it for its format. Times are UTC, so an export reads the same anywhere.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from typing import Literal

import msgspec

from voyager_sessions.core.model import Event, SessionRow, Timeline, iso
from voyager_sessions.core.textsafe import printable

#: A tool call's text or output shows at most this many lines, and this many characters.
TOOL_LINES = 200
TOOL_CHARS = 20_000

#: Seqs below 0 are Voyager's own events (the title, -2, and the checkpoint mirror, -1): the
#: title heads the export and the checkpoint has a section of its own.
OWN_SEQ_BELOW = 0


class Checkpoint(msgspec.Struct, frozen=True, kw_only=True):
    """A saved checkpoint as an export shows it: its set fields in their order, and when it changed.

    Each field is ``(label, shape, value)``, shape as in ``store.checkpoints.render.LABELS``:
    ``line`` (a short value), ``text`` (prose) or ``list`` (items, each with its checkbox).
    """

    fields: list[tuple[str, str, str | list[str]]]
    updated: str | None = None


class ExportDoc(msgspec.Struct, frozen=True, kw_only=True):
    """Everything an export holds: the ``show`` document, the agent's name, the checkpoint, when."""

    timeline: Timeline
    agent: str
    checkpoint: Checkpoint | None = None
    #: When the export was made (ISO UTC): ``SOURCE_DATE_EPOCH`` when set, for reproducible files.
    exported: str | None = None


BlockKind = Literal["user", "assistant", "reasoning", "meta", "tool", "other"]


class Block(msgspec.Struct, kw_only=True):
    """One unit of the rendered timeline: a turn, a fold, or a tool call with its results."""

    kind: BlockKind
    events: list[Event]  # a tool block: the call (if any) first, then its results

    @property
    def first(self) -> Event:
        return self.events[0]

    @property
    def call(self) -> Event | None:
        return self.events[0] if self.kind == "tool" and self.events[0].kind == "tool_call" else None

    @property
    def results(self) -> list[Event]:
        return [e for e in self.events if e.kind == "tool_result"]


def blocks(events: Iterable[Event]) -> list[Block]:
    """The session's own events (seq >= 0) as blocks, in order; a tool result joins its call's block."""
    out: list[Block] = []
    open_calls: dict[str, Block] = {}
    for ev in events:
        if ev.seq < OWN_SEQ_BELOW:
            continue
        if ev.kind == "tool_call":
            block = Block(kind="tool", events=[ev])
            if ev.call_id:
                open_calls[ev.call_id] = block
            out.append(block)
        elif ev.kind == "tool_result":
            opened = open_calls.get(ev.call_id) if ev.call_id else None
            if opened is not None:
                opened.events.append(ev)
            else:
                out.append(Block(kind="tool", events=[ev]))
        elif ev.kind in ("user", "assistant", "reasoning", "meta"):
            out.append(Block(kind=ev.kind, events=[ev]))
        else:
            out.append(Block(kind="other", events=[ev]))
    return out


def who(ev: Event, agent: str) -> str:
    """Who a turn is from, in words: a person, the agent, or the agent software speaking for someone."""
    if ev.kind == "user":
        return "User" if ev.origin == "human" else f"Prompt from {agent}"
    if ev.kind == "assistant":
        return agent
    if ev.kind == "reasoning":
        return "Thinking"
    if ev.kind == "meta":
        return f"Context added by {agent}"
    return ev.kind.replace("_", " ").capitalize()


def utc_text(stamp: str) -> str:
    """An ISO UTC stamp (``2025-01-02T03:04:05Z``) as people read it: ``2025-01-02 03:04:05 UTC``."""
    return stamp.replace("T", " ").replace("Z", " UTC")


def when(ts: float | None) -> str:
    """An event's time as ``YYYY-MM-DD HH:MM:SS UTC`` (empty when unknown)."""
    stamp = iso(ts)
    return utc_text(stamp) if stamp else ""


def capped(text: str, *, lines: int = TOOL_LINES, chars: int = TOOL_CHARS) -> tuple[str, str | None]:
    """``text`` cut to ``lines`` lines and ``chars`` characters, and a note of what was left out (None if nothing)."""
    cut = text
    if len(cut) > chars:
        cut = cut[:chars]
    parts = cut.split("\n")
    if len(parts) > lines:
        cut = "\n".join(parts[:lines])
    if cut == text:
        return text, None
    rest = text[len(cut) :]
    more_lines = rest.count("\n")
    return cut, f"{len(rest):,} more characters ({more_lines:,} more lines) not shown"


def tool_summary(block: Block, width: int = 100) -> str:
    """A tool block's one-line summary: the tool, the call's first line, and how it ended."""
    call = block.call
    name = next((e.tool for e in block.events if e.tool), None) or "tool"
    line = ""
    if call is not None:
        line = next((ln.strip() for ln in call.text.splitlines() if ln.strip()), "")
        if len(line) > width:
            line = line[: width - 1] + "…"
    return printable(f"{name}: {line}" if line else name)


def outcome(block: Block) -> str:
    """How a tool block ended, in words: ``exit 0``, ``exit 2``, ``error``, ``done`` or ``no result``."""
    results = block.results
    if not results:
        return "no result"
    codes = [r.exit_code for r in results if r.exit_code is not None]
    if codes:
        return f"exit {codes[-1]}"
    return "error" if any(r.is_error for r in results) else "done"


def failed(block: Block) -> bool:
    return any(r.is_error or (r.exit_code not in (None, 0)) for r in block.results)


#: The facts whose values are ids, paths or a command: both renderers set them as code.
CODE_FACTS = frozenset({"Session", "Directory", "Resume", "Parent session"})


def facts(row: SessionRow, agent: str) -> list[tuple[str, str]]:
    """The session's facts, labelled, in reading order; only those the agent recorded."""
    by = {"user": "named by the user", "agent": f"named by {agent}", "prompt": "from the first prompt"}
    out: list[tuple[str, str]] = [("Agent", f"{agent} ({row.provider})"), ("Session", row.session_id)]
    if row.title:
        out.append(("Title", f"{row.title} ({by.get(row.title_source or 'agent', 'named by ' + agent)})"))
    for label, value in (
        ("Directory", row.cwd),
        ("Repository", row.git_repo),
        ("Branch", row.git_branch),
        ("Model", row.model),
        ("Parent session", row.parent),
    ):
        if value:
            out.append((label, value))
    for label, stamp in (("Started", row.started), ("Updated", row.updated)):
        if stamp:
            out.append((label, utc_text(stamp)))
    out.append(("Events", str(row.events)))
    if row.resume:
        out.append(("Resume", row.resume))
    return [(label, printable(value)) for label, value in out]


def heading(row: SessionRow) -> str:
    """The export's title: the session's title, else its id."""
    return printable(" ".join((row.title or "").split())) or f"{row.provider} session {printable(row.native_id)}"


def export_time() -> str | None:
    """Now, or ``SOURCE_DATE_EPOCH`` when it is set (reproducible output), as ISO UTC."""
    raw = os.environ.get("SOURCE_DATE_EPOCH")
    if raw is not None:
        try:
            return iso(float(int(raw)))
        except ValueError:
            pass
    return iso(time.time())
