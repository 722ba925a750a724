"""Text rendering for people: hits, session timelines. JSON goes through msgspec instead.

Every string that came from a session (text, title, cwd, tool name, ids, the resume
command) passes :func:`~voyager_sessions.core.textsafe.printable` before Voyager adds its own
colours, so the only escape sequences in the output are Voyager's. Highlights come as
``[start, end)`` offsets from the search engine (``printable`` keeps lengths, so they stay
valid); here they become ANSI bold-yellow in a terminal, or stay plain when piped or
``NO_COLOR`` is set.

Standard library only (the model's types are for type checkers): the client of ``voyager
serve`` renders the documents it receives with these functions, from decoded JSON whose
fields read as attributes (``voyager_sessions.cli.present.Doc``), exactly as the CLI renders
the model's Structs in its own process.
"""

from __future__ import annotations

import os

from voyager_sessions.core import plural
from voyager_sessions.core.textsafe import printable as _p

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a server's client renders with this module
if TYPE_CHECKING:
    from voyager_sessions.core.model import Event, Hit, SessionRow, TermHit

_KIND_LABEL = {"tool_call": "tool call", "tool_result": "tool out", "reasoning": "thinking"}
_HL, _DIM, _BOLD, _RESET = "\x1b[1;33m", "\x1b[2m", "\x1b[1m", "\x1b[0m"


def highlight(text: str, spans: list[tuple[int, int]], color: bool) -> str:
    """``text`` made printable, with ``spans`` in bold yellow when ``color``."""
    text = _p(text)
    if not color or not spans:
        return text
    out, pos = [], 0
    for s, e in spans:
        out.append(text[pos:s])
        out.append(_HL + text[s:e] + _RESET)
        pos = e
    out.append(text[pos:])
    return "".join(out)


def _snippet(h: Hit | TermHit, kind: str | None, tool: str | None, color: bool) -> str:
    """A hit's excerpt as it reads: a tool call's JSON punctuation and escapes undone (``toolview``)."""
    if kind != "tool_call":
        return highlight(h.snippet, h.highlights, color)
    from voyager_sessions.core.toolview import readable_snippet

    text, spans = readable_snippet(kind, tool, h.snippet, h.highlights)
    return highlight(text, spans, color)


#: How ``voyager show`` colours the lines of a tool call (``toolview.styled``'s kinds; the rest stay plain).
_TOOL_STYLE = {"add": "\x1b[32m", "del": "\x1b[31m", "hunk": "\x1b[36m", "file": _BOLD, "command": _BOLD, "note": _DIM}


def tool_call_text(tool: str | None, text: str, *, color: bool) -> str:
    """A tool call as people read it (``ingest/toolview.py``): an edit as a diff (added lines green, removed
    red when ``color``), a written file as its content, a shell call as its command, fields labelled."""
    from voyager_sessions.core import toolview

    out = []
    for style, line in toolview.styled(toolview.parts(tool, text)):
        line = _p(line, multiline=True).replace("\n", " ")
        on = _TOOL_STYLE.get(style) if color else None
        out.append(on + line + _RESET if on else line)
    return "\n".join(out)


def _short_id(session_id: str) -> str:
    """The first 12 characters of a session's native id, printable: how a line names its session."""
    return _p(session_id.partition(":")[2][:12])


def _minute(timestamp: str | None) -> str:
    """An ISO-8601 time to the minute, with a space for the ``T``."""
    return (timestamp or "")[:16].replace("T", " ")


def _home_short(path: str | None) -> str:
    if not path:
        return ""
    home = os.path.expanduser("~")
    return "~" + path[len(home) :] if home != "/" and path.startswith(home + "/") else path


def render_hit(h: Hit, *, color: bool, by_session: bool = False) -> str:
    """Two lines a hit: who/when/what, then the snippet; context events indented below."""
    when = _minute(h.timestamp)
    kind = _KIND_LABEL.get(h.kind, h.kind)
    if h.tool:
        kind = f"{kind}:{_p(h.tool)}"
    if h.exit_code is not None:
        kind += f" exit={h.exit_code}"
    where = _p(h.title or _home_short(h.cwd) or "")
    native = _short_id(h.session_id)
    count = f"  ({plural.count(h.hit_count, 'hit')})" if by_session and h.hit_count is not None else ""
    if h.match == "meaning":
        count = "  (by meaning: none of the words)"
    head = f"{h.provider:<8} {native:<12} {when:<16} {kind:<12} {where}{count}"
    if color:
        head = _BOLD + head + _RESET
    lines = [head, "    " + _snippet(h, h.kind, h.tool, color)]
    if by_session and h.matched_terms and len(h.matched_terms) > 1:
        # Where the session says each term the row's own event does not: why a person's words found it.
        for t in h.matched_terms:
            if t.seq != h.seq:
                label = _KIND_LABEL.get(t.kind, t.kind)
                lines.append(f"      {_p(t.term)} (#{t.seq} {label}): " + _snippet(t, t.kind, None, color))
    if h.context:
        for ev in h.context:
            mark = ">" if ev.seq == h.seq else " "
            text = _p(" ".join(ev.text.split())[:160])
            line = f"  {mark} #{ev.seq:<5} {_KIND_LABEL.get(ev.kind, ev.kind):<10} {text}"
            lines.append(_DIM + line + _RESET if color and ev.seq != h.seq else line)
    if h.resume:
        resume = _p(h.resume)
        lines.append(("    " + _DIM + "resume: " + resume + _RESET) if color else "    resume: " + resume)
    return "\n".join(lines)


def render_group(hits: list[Hit], *, color: bool) -> str:
    """One session's hits under one heading (a terminal's search, as ripgrep groups matches under their file):
    agent, title, when, project and hit count, the resume command once, then each hit's kind, time and snippet."""
    first = hits[0]
    title = _p(first.title or "") or "(untitled)"
    where = _p(_home_short(first.cwd))
    head = f"{first.provider}  {title}"
    found = "by meaning: none of the words" if first.match == "meaning" else plural.count(len(hits), "hit")
    facts = "  ".join(x for x in (_minute(first.timestamp), where, found) if x)
    lines = [(_BOLD + head + _RESET + "  " + _DIM + facts + _RESET) if color else f"{head}  {facts}"]
    if first.resume:
        resume = _p(first.resume)
        lines.append(("  " + _DIM + "$ " + resume + _RESET) if color else "  $ " + resume)
    for h in hits:
        kind = _KIND_LABEL.get(h.kind, h.kind)
        if h.tool:
            kind = f"{kind}:{_p(h.tool)}"
        if h.exit_code is not None:
            kind += f" exit={h.exit_code}"
        label = f"  #{h.seq:<5} {kind:<12} {_minute(h.timestamp)[11:]}"
        lines.append(f"{_DIM + label + _RESET if color else label}  {_snippet(h, h.kind, h.tool, color)}")
        for ev in h.context or ():
            if ev.seq != h.seq:
                text = _p(" ".join(ev.text.split())[:160])
                line = f"         #{ev.seq:<5} {_KIND_LABEL.get(ev.kind, ev.kind):<10} {text}"
                lines.append(_DIM + line + _RESET if color else line)
    return "\n".join(lines) + "\n"


def render_row(row: SessionRow) -> str:
    """One line a session (``voyager list``): agent, id, last activity, events, title or cwd."""
    when = _minute(row.updated or row.started)
    title = _p(row.title or row.cwd or "")
    return f"{row.provider:<8} {_short_id(row.session_id):<12}  {when:<16}  {row.events:>6} ev  {title}"


def render_timeline(row: SessionRow, events: list[Event], *, color: bool) -> str:
    """A session header then one block per event, full text."""
    from voyager_sessions.core.isotime import iso  # here: a search's hits need no datetime

    head = [
        f"{row.provider} session {_p(row.native_id)}",
        f"  title:   {_p(row.title) or '-'}",
        f"  cwd:     {_p(row.cwd) or '-'}",
    ]
    if row.git_branch or row.git_repo:
        head.append("  git:     " + " ".join(_p(x) for x in (row.git_repo, row.git_branch) if x))
    if row.parent:
        head.append(f"  parent:  {_p(row.parent)}")
    head.append(f"  time:    {row.started or '?'} .. {row.updated or '?'}   {plural.count(row.events, 'event')}")
    if row.resume:
        head.append(f"  resume:  {_p(row.resume)}")
    out = ["\n".join(head), ""]
    for ev in events:
        when = (iso(ev.ts) or "").replace("T", " ").rstrip("Z")
        label = _KIND_LABEL.get(ev.kind, ev.kind) + (f":{_p(ev.tool)}" if ev.tool else "")
        if ev.exit_code is not None:
            label += f" exit={ev.exit_code}"
        title = f"#{ev.seq} {when} {label} ({ev.origin})"
        out.append(_BOLD + title + _RESET if color else title)
        body = tool_call_text(ev.tool, ev.text, color=color) if ev.kind == "tool_call" else _p(ev.text, multiline=True)
        out.append("    " + body.replace("\n", "\n    "))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
