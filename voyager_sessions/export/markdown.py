"""The Markdown export: a session that reads well on GitHub, and that its own text cannot break.

Turns are headed by who spoke and when; prompts and replies stay Markdown (they mostly are),
with raw HTML neutralised outside code (a stray ``<!--`` or ``</details>`` in a reply must not
swallow or close the rest of the page) and any code fence they leave open closed. Reasoning,
injected context and tool calls fold into ``<details>``; their text sits in fences longer than
any run of backticks inside it, so no text can end its fence early. Summaries and other
strings placed in HTML are HTML-escaped.
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
from voyager_sessions.textsafe import printable

_FENCE_OPEN = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_BACKTICKS = re.compile(r"`+")


def fence(text: str, info: str = "") -> str:
    """``text`` in a backtick fence longer than any backtick run inside it (at least three)."""
    longest = max((len(m) for m in _BACKTICKS.findall(text)), default=0)
    ticks = "`" * max(3, longest + 1)
    return f"{ticks}{info}\n{text}\n{ticks}"


def _inline(text: str) -> str:
    """One line of Markdown with ``<`` and ``&`` escaped outside code spans (raw HTML cannot start)."""
    out: list[str] = []
    pos = 0
    while pos < len(text):
        m = _BACKTICKS.search(text, pos)
        if m is None:
            out.append(_escape_html(text[pos:]))
            break
        out.append(_escape_html(text[pos:m.start()]))
        # A code span: the same number of backticks closes it; unmatched, the backticks are literal.
        closing = re.compile(r"(?<!`)" + m.group() + r"(?!`)").search(text, m.end())
        if closing is None:
            out.append(m.group())
            pos = m.end()
        else:
            out.append(text[m.start():closing.end()])
            pos = closing.end()
    return "".join(out)


def _escape_html(text: str) -> str:
    # ``<`` starts every tag and comment, ``&`` every entity; ``>`` stays (it starts a blockquote).
    return text.replace("&", "&amp;").replace("<", "&lt;")


def prose(text: str) -> str:
    """A prompt or a reply as Markdown: printable, HTML neutralised outside code, every fence closed."""
    lines = printable(text, multiline=True).split("\n")
    out: list[str] = []
    open_fence: str | None = None
    for line in lines:
        m = _FENCE_OPEN.match(line)
        if open_fence is None:
            if m:
                open_fence = m.group(1)
                out.append(line)
            else:
                out.append(_inline(line))
        else:
            out.append(line)
            if m and m.group(1)[0] == open_fence[0] and len(m.group(1)) >= len(open_fence) and \
                    not line.strip()[len(m.group(1)):].strip():
                open_fence = None
    if open_fence is not None:
        out.append(open_fence)
    return "\n".join(out).strip("\n")


def _fold(summary: str, body: list[str], *, open_: bool = False) -> list[str]:
    """A ``<details>`` block: an HTML-escaped summary, a blank line, then Markdown."""
    tag = "<details open>" if open_ else "<details>"
    return [f"{tag}<summary>{html.escape(summary, quote=False)}</summary>", "", *body, "", "</details>", ""]


def _capped_fence(text: str, seq: int, sid: str, info: str = "") -> list[str]:
    shown, note = capped(printable(text, multiline=True))
    out = [fence(shown, info)]
    if note:
        out.append(f"_… {note}: `voyager show {_code(sid)} --around {seq}` has them._")
    return out


def _code(text: str) -> str:
    """``text`` safe inside a one-backtick code span (no backticks, one line)."""
    return printable(text).replace("`", "'")


def _tool(block: Block, sid: str) -> list[str]:
    status = outcome(block)
    summary = f"{'✗' if failed(block) else '▸'} {tool_summary(block)} · {status}"
    body: list[str] = []
    call = block.call
    if call is not None:
        body += [f"**Call** · {when(call.ts)}", "", *_capped_fence(call.text, call.seq, sid), ""]
    for res in block.results:
        label = "**Output**" + (f" · exit {res.exit_code}" if res.exit_code is not None else "") + \
            (" · error" if res.is_error else "")
        body += [f"{label} · {when(res.ts)}", "", *_capped_fence(res.text, res.seq, sid), ""]
    return _fold(summary, body[:-1] if body else ["_(nothing recorded)_"])


def render(doc: ExportDoc) -> str:
    """The whole Markdown document."""
    row = doc.timeline.session
    sid = row.session_id
    out = [f"# {_inline(heading(row))}", "", "| | |", "| --- | --- |"]
    for label, value in facts(row, doc.agent):
        out.append(f"| {label} | {_cell(value, code=label in CODE_FACTS)} |")
    out.append("")
    if doc.checkpoint is not None:
        out += ["## Checkpoint", ""]
        if doc.checkpoint.updated:
            out += [f"_Saved with `voyager checkpoint`, updated {utc_text(doc.checkpoint.updated)}._", ""]
        short = [(label, value) for label, shape, value in doc.checkpoint.fields if shape == "line"]
        if short:
            out += [*(f"- **{label}:** {_inline(printable(' '.join(str(value).split())))}" for label, value in short), ""]
        for label, shape, value in doc.checkpoint.fields:
            if isinstance(value, list):
                out += [f"**{label}**", "", *(f"- {_inline(printable(' '.join(item.split())))}" for item in value), ""]
            elif shape != "line":
                out += [f"**{label}**", "", prose(value), ""]
    out += ["## Timeline", ""]
    agent = printable(doc.agent)
    for block in blocks(doc.timeline.events):
        ev = block.first
        if block.kind in ("user", "assistant"):
            out += [f"### {_inline(who(ev, agent))} · {when(ev.ts) or 'time unknown'}", "", prose(ev.text) or "_(empty)_", ""]
        elif block.kind == "tool":
            out += _tool(block, sid)
        else:
            # Reasoning reads as the Markdown it mostly is; injected context (and anything else) is quoted as it was.
            body = [prose(ev.text) or "_(empty)_"] if block.kind == "reasoning" else \
                _capped_fence(ev.text, ev.seq, sid, "text")
            out += _fold(f"{who(ev, agent)} · {when(ev.ts)}".rstrip(" ·"), body)
    out += ["---", "", f"_Exported from {agent} by Voyager{' on ' + utc_text(doc.exported) if doc.exported else ''}._", ""]
    return "\n".join(out)


def _cell(value: str, *, code: bool) -> str:
    """A table cell: one line, pipes escaped; ids and paths as code."""
    one = " ".join(value.split())
    if code:
        longest = max((len(m) for m in _BACKTICKS.findall(one)), default=0)
        ticks = "`" * (longest + 1)
        pad = " " if one.startswith("`") or one.endswith("`") else ""
        return f"{ticks}{pad}{one}{pad}{ticks}".replace("|", "\\|")  # GFM: a pipe splits cells even in code
    return _inline(one).replace("|", "\\|")
