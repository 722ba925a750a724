"""The Markdown export: a session that reads the same in every CommonMark/GFM viewer, whatever its text holds.

Session text is not trusted to be Markdown. Renderers disagree with any hand-made reading of it
at the corners (is ``\\``` an escaped backtick or a backslash before code? is a fence whose
info string holds a backtick a fence?), and one disagreement is enough for a ``<img onerror>``
or a ``<!--`` that swallows the rest of the page. So the export decides what is code by its
own simple rules and then *writes* every piece in a form with one meaning under CommonMark and
GFM alike:

- code (a fenced block, or a code span on one line) is re-emitted, never copied: a backtick
  fence longer than any backtick run inside it, with an info string of word characters only;
  a code span delimited by more backticks than it holds, padded where CommonMark would strip;
- everything else is literal text: each character that could start HTML, a link, an autolink,
  an entity, emphasis, strikethrough or math is backslash-escaped, a line-start that could
  open a block (heading, list, quote, table, setext underline) is escaped, leading indentation
  becomes no-break spaces (never an indented code block), and line breaks are hard breaks;
- strings placed inside the export's own ``<details><summary>`` (an HTML block) are HTML-escaped.

What a renderer then shows is the session's text, character for character, with code as code.
tests/test_export.py renders every export with two real renderers (cmark-gfm, GitHub's; and
markdown-it) and fuzzes this with the agents' captures and hostile strings.
"""

from __future__ import annotations

import html
import re

from voyager_sessions.export.blocks import (
    CODE_FACTS,
    Block,
    ExportDoc,
    blocks,
    capped,
    facts,
    failed,
    heading,
    outcome,
    tool_summary,
    utc_text,
    when,
    who,
)
from voyager_sessions.core.textsafe import printable

#: A fence opener as CommonMark reads one: up to three spaces, then three or more backticks (whose
#: info string has no backtick) or tildes.
_FENCE_OPEN = re.compile(r"^ {0,3}(?:(?P<ticks>`{3,})(?P<tinfo>[^`]*)|(?P<tildes>~{3,})(?P<info>.*))$")
_BACKTICKS = re.compile(r"`+")
#: In text, what is escaped wherever it stands: a scheme's colon or ``www``'s dot (GFM's extended
#: autolinks start there), and the characters that start HTML and autolinks (``<``), entities
#: (``&``), links and images (``[`` ``]``), emphasis (``*`` ``_``), strikethrough (``~``), code
#: (`````), table cells (``|``), math on GitHub (``$``), plus ``>`` and the backslash itself.
_ESCAPE = re.compile(r"(?i)(?<![A-Za-z0-9])(?:www(?=\.)|(?:https?|ftp|mailto|xmpp)(?=:))|[\\`*_\[\]<>&~|$]")
#: In a heading ``#`` too (a trailing run of them would close it).
_ESCAPE_HEADING = re.compile(_ESCAPE.pattern + "|#")
#: A line start that could open a block: heading, quote, list item, thematic break, setext
#: underline, table delimiter row; or an ordered-list marker (its ``.`` or ``)`` is escaped).
_BLOCK_START = re.compile(r"[#>+=:\-]|(?P<num>\d{1,9})[.)]")
_INFO_WORD = re.compile(r"[A-Za-z0-9_+.#-]{1,40}")
_NBSP = "\u00a0"


def fence(text: str, info: str = "") -> str:
    """``text`` in a backtick fence longer than any backtick run inside it (at least three).

    The info string is kept only if its first word is a language name (``[A-Za-z0-9_+.#-]``):
    never a backtick, never anything a renderer could read as more.
    """
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    words = info.split()
    info = words[0] if words and _INFO_WORD.fullmatch(words[0]) else ""
    return f"{ticks}{info}\n{text}\n{ticks}"


def code_span(text: str) -> str:
    """``text`` (one line) as a code span: delimited by more backticks than any run inside it.

    CommonMark strips one space from each end when both ends have one, and a span that starts
    or ends with a backtick needs a space to part it from its delimiters: in either case one
    space of padding on each side keeps the content exact.
    """
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * (longest + 1)
    pad = " " if text.strip(" ") and (text[0] == "`" or text[-1] == "`" or (text[0] == " " and text[-1] == " ")) else ""
    return f"{ticks}{pad}{text}{pad}{ticks}"


def _escape_match(m: re.Match[str]) -> str:
    s = m.group()
    if len(s) > 1:  # ``www`` or a scheme: escape the ``.`` or ``:`` that follows instead
        return s + "\\"
    return "\\" + s


def escape(text: str, *, line_start: bool = False, heading: bool = False) -> str:
    """Literal text (one line) escaped so no renderer reads markup in it.

    With ``line_start`` the text begins a line (or a list item): what could open a block there
    is escaped too, and leading indentation becomes no-break spaces (four spaces would make an
    indented code block; a no-break space is not indentation to CommonMark, and still shows).
    """
    indent = ""
    if line_start:
        stripped = text.lstrip(" \t")
        indent = text[: len(text) - len(stripped)].replace("\t", "    ").replace(" ", _NBSP)
        text = stripped
        m = _BLOCK_START.match(text)
        if m:
            cut = m.end() - 1
            return indent + _escape_run(text[:cut], heading) + "\\" + text[cut] + _escape_run(text[cut + 1 :], heading)
    return indent + _escape_run(text, heading)


def _escape_run(text: str, heading: bool) -> str:
    return (_ESCAPE_HEADING if heading else _ESCAPE).sub(_escape_match, text)


def inline(line: str, *, line_start: bool = False, heading: bool = False) -> str:
    """One line of session text as Markdown: its code spans as code, everything else literal.

    A run of backticks opens a code span when a run of the same length follows later on the
    line (CommonMark's rule, within one line); an unmatched run is literal backticks. Each run's
    next run of its length is found in one pass over the runs, so any line takes linear time.
    """
    runs = [(m.start(), m.end()) for m in _BACKTICKS.finditer(line)]
    if not runs:
        return escape(line, line_start=line_start, heading=heading)
    following: dict[int, int] = {}  # run index -> index of the next run of the same length
    last: dict[int, int] = {}
    for i in range(len(runs) - 1, -1, -1):
        n = runs[i][1] - runs[i][0]
        if n in last:
            following[i] = last[n]
        last[n] = i
    out: list[str] = []
    pos = 0
    i = 0
    while i < len(runs):
        start, end = runs[i]
        if i in following:
            closing = runs[following[i]]
            out.append(escape(line[pos:start], line_start=line_start and pos == 0, heading=heading))
            out.append(code_span(line[end : closing[0]]))
            pos = closing[1]
            i = following[i] + 1
        else:
            i += 1
    out.append(escape(line[pos:], line_start=line_start and pos == 0, heading=heading))
    return "".join(out)


def prose(text: str) -> str:
    """A prompt or a reply as Markdown: its fenced code as code, everything else literal text.

    A fence opens as CommonMark opens one and closes at its closing fence or at the end of the
    text; it is written anew (see :func:`fence`). Text lines keep their breaks (hard breaks
    inside a paragraph, blank lines between paragraphs).
    """
    out: list[str] = []
    para: list[str] = []

    def flush() -> None:
        if para:
            out.append("\\\n".join(para))
            out.append("")
            para.clear()

    lines = printable(text, multiline=True).split("\n")
    i = 0
    while i < len(lines):
        m = _FENCE_OPEN.match(lines[i])
        if m is None:
            line = lines[i].rstrip(" \t")
            if line:
                para.append(inline(line, line_start=True))
            else:
                flush()
            i += 1
            continue
        flush()
        marker = m.group("ticks") or m.group("tildes")
        close = re.compile("^ {0,3}" + re.escape(marker[0]) + "{" + str(len(marker)) + r",}[ \t]*$")
        body: list[str] = []
        i += 1
        while i < len(lines) and not close.match(lines[i]):
            body.append(lines[i])
            i += 1
        i += 1  # the closing fence (or the end)
        out += [fence("\n".join(body), m.group("tinfo") or m.group("info") or ""), ""]
    flush()
    return "\n".join(out).strip("\n")


def _fold(summary: str, body: list[str], *, open_: bool = False) -> list[str]:
    """A ``<details>`` block: an HTML-escaped summary, a blank line, then Markdown."""
    tag = "<details open>" if open_ else "<details>"
    return [f"{tag}<summary>{html.escape(summary, quote=False)}</summary>", "", *body, "", "</details>", ""]


def _capped_fence(text: str, seq: int, sid: str, info: str = "") -> list[str]:
    shown, note = capped(printable(text, multiline=True))
    out = [fence(shown, info)]
    if note:
        out += ["", f"_… {escape(note)}: {code_span(printable(f'voyager show {sid} --around {seq}'))} has them._"]
    return out


def _tool(block: Block, sid: str) -> list[str]:
    status = outcome(block)
    summary = f"{'✗' if failed(block) else '▸'} {tool_summary(block)} · {status}"
    body: list[str] = []
    call = block.call
    if call is not None:
        body += [f"**Call** · {when(call.ts)}", "", *_capped_fence(call.text, call.seq, sid), ""]
    for res in block.results:
        label = (
            "**Output**"
            + (f" · exit {res.exit_code}" if res.exit_code is not None else "")
            + (" · error" if res.is_error else "")
        )
        body += [f"{label} · {when(res.ts)}", "", *_capped_fence(res.text, res.seq, sid), ""]
    return _fold(summary, body[:-1] if body else ["_(nothing recorded)_"])


def _one_line(value: str) -> str:
    return printable(" ".join(str(value).split()))


def render(doc: ExportDoc) -> str:
    """The whole Markdown document."""
    row = doc.timeline.session
    sid = row.session_id
    out = [f"# {inline(heading(row), heading=True)}", "", "| | |", "| --- | --- |"]
    for label, value in facts(row, doc.agent):
        out.append(f"| {label} | {_cell(value, code=label in CODE_FACTS)} |")
    out.append("")
    if doc.checkpoint is not None:
        out += ["## Checkpoint", ""]
        if doc.checkpoint.updated:
            out += [f"_Saved with `voyager checkpoint`, updated {utc_text(doc.checkpoint.updated)}._", ""]
        short = [
            (label, text) for label, shape, text in doc.checkpoint.fields if isinstance(text, str) and shape == "line"
        ]
        if short:
            out += [*(f"- **{escape(label)}:** {inline(_one_line(text))}" for label, text in short), ""]
        for label, shape, field in doc.checkpoint.fields:
            if isinstance(field, list):
                out += [
                    f"**{escape(label)}**",
                    "",
                    *(f"- {inline(_one_line(item), line_start=True)}" for item in field),
                    "",
                ]
            elif shape != "line":
                out += [f"**{escape(label)}**", "", prose(field), ""]
    out += ["## Timeline", ""]
    agent = printable(doc.agent)
    for block in blocks(doc.timeline.events):
        ev = block.first
        if block.kind in ("user", "assistant"):
            out += [
                f"### {escape(who(ev, agent), heading=True)} · {when(ev.ts) or 'time unknown'}",
                "",
                prose(ev.text) or "_(empty)_",
                "",
            ]
        elif block.kind == "tool":
            out += _tool(block, sid)
        else:
            # Reasoning reads as prose; injected context (and anything else) is quoted as it was.
            body = (
                [prose(ev.text) or "_(empty)_"]
                if block.kind == "reasoning"
                else _capped_fence(ev.text, ev.seq, sid, "text")
            )
            out += _fold(f"{who(ev, agent)} · {when(ev.ts)}".rstrip(" ·"), body)
    exported = " on " + utc_text(doc.exported) if doc.exported else ""
    out += ["---", "", f"_Exported from {escape(agent)} by Voyager{exported}._", ""]
    return "\n".join(out)


def _cell(value: str, *, code: bool) -> str:
    """A table cell: one line; ids and paths as code, the rest literal text (no code spans).

    GFM splits a row at every unescaped pipe, inside code spans too, and unescapes ``\\|`` in a
    cell before reading it: a code cell escapes its pipes after the span is built, and text
    is escaped whole (``escape`` escapes pipes), so no span can straddle a cell's edge.
    """
    one = " ".join(value.split())
    if code:
        return code_span(one).replace("|", "\\|")
    return escape(one)
