"""The HTML export: one self-contained file, readable on a phone, that fetches nothing and runs nothing.

Every string from the session is made printable and HTML-escaped (``html.escape`` with
quotes) before it is placed; text keeps its line breaks through CSS (``pre-wrap``), never
through markup built from it. The only style is the inline sheet below, allowed by its
hash in a Content-Security-Policy meta tag that denies everything else (scripts, images,
fonts, frames, connections, forms), so even a file edited or injected after the fact cannot
load or run anything. Reasoning, injected context and tool calls fold into ``<details>``.
"""

from __future__ import annotations

import base64
import hashlib
from html import escape

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

CSS = """
:root{color-scheme:light dark;--fg:#1f2328;--muted:#59636e;--bg:#fff;--box:#f6f8fa;--line:#d1d9e0;
--user:#ddf4ff;--bad:#cf222e;--ok:#1a7f37}
@media (prefers-color-scheme:dark){:root{--fg:#e6edf3;--muted:#9198a1;--bg:#0d1117;--box:#151b23;
--line:#3d444d;--user:#0c2d6b;--bad:#f85149;--ok:#3fb950}}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--fg);font:16px/1.5 system-ui,-apple-system,"Segoe UI",sans-serif}
main{max-width:52rem;margin:0 auto;padding:1rem}
h1{font-size:1.5rem;line-height:1.25;margin:.5rem 0 1rem;overflow-wrap:anywhere}
h2{font-size:1.2rem;margin:2rem 0 .75rem;border-bottom:1px solid var(--line);padding-bottom:.25rem}
dl.facts{display:grid;grid-template-columns:max-content 1fr;gap:.25rem .75rem;margin:0;font-size:.9rem}
dl.facts dt{color:var(--muted)}
dl.facts dd{margin:0;overflow-wrap:anywhere}
code,pre,.mono{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;font-size:.85rem}
.turn{margin:1rem 0;padding:.75rem 1rem;border:1px solid var(--line);border-radius:.5rem}
.turn.user{background:var(--user)}
.who{font-weight:600;margin-bottom:.25rem}
time,.meta{color:var(--muted);font-weight:400;font-size:.85rem}
.text{white-space:pre-wrap;overflow-wrap:anywhere;margin:0}
details{margin:.5rem 0;border:1px solid var(--line);border-radius:.5rem;background:var(--box)}
summary{cursor:pointer;padding:.5rem .75rem;overflow-wrap:anywhere}
details>div{padding:0 .75rem .75rem}
pre{white-space:pre-wrap;overflow-wrap:anywhere;margin:.25rem 0 .75rem;padding:.5rem;background:var(--bg);
border:1px solid var(--line);border-radius:.375rem}
.bad{color:var(--bad)}.ok{color:var(--ok)}
.note{color:var(--muted);font-style:italic;font-size:.85rem}
ul.cp{margin:.25rem 0 .75rem;padding-left:1.25rem}
footer{color:var(--muted);font-size:.8rem;margin:2rem 0 1rem}
""".strip()


def csp(style: str = CSS) -> str:
    """A policy that allows this file's one style sheet and nothing else."""
    digest = base64.b64encode(hashlib.sha256(style.encode("utf-8")).digest()).decode("ascii")
    return (
        f"default-src 'none'; style-src 'sha256-{digest}'; img-src 'none'; script-src 'none'; "
        "base-uri 'none'; form-action 'none'"
    )


def _e(text: str | None, *, multiline: bool = False) -> str:
    """Session text made printable, then escaped for HTML (attributes included)."""
    return escape(printable(text or "", multiline=multiline), quote=True)


def _time(ts: float | None) -> str:
    stamp = when(ts)
    return f" <time>{escape(stamp)}</time>" if stamp else ""


def _pre(text: str, seq: int, sid: str) -> list[str]:
    shown, note = capped(printable(text, multiline=True))
    out = [f"<pre>{escape(shown, quote=True)}</pre>"]
    if note:
        out.append(
            f'<p class="note">… {escape(note)}: <code>voyager show {_e(sid)} --around {seq}</code> has them.</p>'
        )
    return out


def _tool(block: Block, sid: str) -> list[str]:
    status = outcome(block)
    cls = "bad" if failed(block) else "ok" if block.results else "meta"
    out = [
        '<details class="tool">',
        f'<summary><span class="mono">{escape(tool_summary(block), quote=True)}</span> · '
        f'<span class="{cls}">{escape(status)}</span></summary>',
        "<div>",
    ]
    call = block.call
    if call is not None:
        out += [f'<div class="meta">Call{_time(call.ts)}</div>', *_pre(call.text, call.seq, sid)]
    for res in block.results:
        label = (
            "Output"
            + (f" · exit {res.exit_code}" if res.exit_code is not None else "")
            + (" · error" if res.is_error else "")
        )
        out += [f'<div class="meta">{escape(label)}{_time(res.ts)}</div>', *_pre(res.text, res.seq, sid)]
    return [*out, "</div>", "</details>"]


def render(doc: ExportDoc) -> str:
    """The whole HTML document."""
    row = doc.timeline.session
    sid = row.session_id
    title = heading(row)
    agent = printable(doc.agent)
    out = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{escape(csp(), quote=True)}">',
        '<meta name="referrer" content="no-referrer">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{escape(title)}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        "<main>",
        f"<h1>{escape(title)}</h1>",
        '<dl class="facts">',
    ]
    for label, value in facts(row, doc.agent):
        mono = ' class="mono"' if label in CODE_FACTS else ""
        out.append(f"<dt>{escape(label)}</dt><dd{mono}>{escape(value, quote=True)}</dd>")
    out.append("</dl>")
    if doc.checkpoint is not None:
        out.append("<h2>Checkpoint</h2>")
        if doc.checkpoint.updated:
            out.append(
                f'<p class="meta">Saved with voyager checkpoint, updated {escape(utc_text(doc.checkpoint.updated))}</p>'
            )
        short = [(label, value) for label, shape, value in doc.checkpoint.fields if shape == "line"]
        if short:
            out += [
                '<dl class="facts">',
                *(f"<dt>{escape(label)}</dt><dd>{_e(str(value))}</dd>" for label, value in short),
                "</dl>",
            ]
        for label, shape, field in doc.checkpoint.fields:
            if isinstance(field, list):
                out += [
                    f'<div class="who">{escape(label)}</div>',
                    '<ul class="cp">',
                    *(f"<li>{_e(item)}</li>" for item in field),
                    "</ul>",
                ]
            elif shape != "line":
                out += [f'<div class="who">{escape(label)}</div>', f'<p class="text">{_e(field, multiline=True)}</p>']
    out.append("<h2>Timeline</h2>")
    for block in blocks(doc.timeline.events):
        ev = block.first
        if block.kind in ("user", "assistant"):
            out += [
                f'<section class="turn {block.kind}">',
                f'<div class="who">{_e(who(ev, agent))}{_time(ev.ts)}</div>',
                f'<div class="text">{_e(ev.text, multiline=True)}</div>',
                "</section>",
            ]
        elif block.kind == "tool":
            out += _tool(block, sid)
        else:
            body = (
                [f'<div class="text">{_e(ev.text, multiline=True)}</div>']
                if block.kind == "reasoning"
                else _pre(ev.text, ev.seq, sid)
            )
            out += [
                f'<details class="{block.kind}">',
                f"<summary>{_e(who(ev, agent))}{_time(ev.ts)}</summary>",
                "<div>",
                *body,
                "</div>",
                "</details>",
            ]
    exported = f" on {escape(utc_text(doc.exported))}" if doc.exported else ""
    out += [
        f"<footer>Exported from {escape(agent)} by Voyager{exported}.</footer>",
        "</main>",
        "</body>",
        "</html>",
        "",
    ]
    return "\n".join(out)
