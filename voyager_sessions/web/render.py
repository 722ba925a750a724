"""Event text as safe HTML for the session view: Markdown for what people and agents write, folded tool output.

Markdown is rendered here, server-side, by markdown-it-py (CommonMark, tables and
strikethrough) with raw HTML disabled, so ``<script>`` in a message arrives as text; links
and images are allowed only to ``http``, ``https`` and ``mailto`` (anything else, such as
``javascript:`` or ``data:``, stays text), and images are shown as links (a page must not
fetch from elsewhere; the CSP forbids it anyway). Fenced code is highlighted by Pygments
when the fence names a language it knows (class names only: the colours are in the CSS).
Every other string is escaped. The output goes into the page as HTML, so this module is
the session view's one XSS boundary; tests/web/test_escaping.py attacks it.
"""

from __future__ import annotations

from functools import lru_cache
from html import escape
from typing import Any

from voyager_sessions.core.textsafe import printable

#: Kinds whose text is prose (rendered as Markdown); the rest is output, shown as it is.
PROSE_KINDS = frozenset({"user", "assistant", "reasoning", "checkpoint", "title"})
#: Output longer than this many lines is folded behind a <details> summary.
FOLD_LINES = 12
#: Markdown longer than this is shown as plain text: rendering a pasted megabyte is not worth its time.
MARKDOWN_CHARS = 200_000
SAFE_SCHEMES = ("http:", "https:", "mailto:")


def esc(text: str | None) -> str:
    """Session text made printable (control characters neutralised) and escaped for HTML, attributes included."""
    return escape(printable(text or "", multiline=True), quote=True)


@lru_cache(maxsize=1)
def _formatter() -> Any:
    from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]

    # nowrap: only escaped spans; markdown-it wraps them in <pre><code>. Made once: building its
    # style table costs more than highlighting a block.
    return HtmlFormatter(nowrap=True, classprefix="hl-")


@lru_cache(maxsize=256)
def _lexer(lang: str) -> Any:
    from pygments.lexers import get_lexer_by_name  # type: ignore[import-untyped]
    from pygments.util import ClassNotFound  # type: ignore[import-untyped]

    try:
        return get_lexer_by_name(lang)
    except ClassNotFound:
        return None


def _highlight(code: str, lang: str, _attrs: Any) -> str:
    """Pygments' spans for ``code`` when ``lang`` names a lexer; '' lets markdown-it escape it plainly."""
    if not lang:
        return ""
    try:
        from pygments import highlight  # type: ignore[import-untyped]
    except ImportError:
        return ""
    lexer = _lexer(lang.split()[0][:40].lower())
    return "" if lexer is None else highlight(code, lexer, _formatter())


def _safe_link(url: str) -> bool:
    return url.strip().lower().startswith(SAFE_SCHEMES)


@lru_cache(maxsize=1)
def _md() -> Any:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark", {"html": False, "linkify": False, "typographer": False, "highlight": _highlight})
    md.enable(["table", "strikethrough"])
    md.validateLink = _safe_link  # type: ignore[method-assign]

    def image(self, tokens, idx, options, env):  # noqa: ANN001 - markdown-it renderer rules get the renderer first
        tok = tokens[idx]
        src = tok.attrGet("src") or ""
        alt = "".join(t.content for t in tok.children or []) or src
        return f'<a href="{escape(src, quote=True)}" rel="noopener noreferrer">[image: {escape(alt)}]</a>'

    def link_open(self, tokens, idx, options, env):  # noqa: ANN001
        tokens[idx].attrSet("rel", "noopener noreferrer")
        tokens[idx].attrSet("target", "_blank")
        return self.renderToken(tokens, idx, options, env)

    md.add_render_rule("image", image)
    md.add_render_rule("link_open", link_open)
    return md


def markdown(text: str) -> str:
    """``text`` as Markdown (the safe subset above), or escaped and preformatted when it is too long for that."""
    text = printable(text, multiline=True)
    if len(text) > MARKDOWN_CHARS:
        return f'<pre class="plain">{escape(text)}</pre>'
    return _md().render(text)


def output(text: str) -> str:
    """Tool output or call arguments: preformatted, folded when long."""
    body = f"<pre>{esc(text)}</pre>"
    lines = text.count("\n") + 1
    if lines <= FOLD_LINES:
        return body
    first = esc(text.split("\n", 1)[0][:120])
    return f"<details><summary>{lines:,} lines — <code>{first}</code></summary>{body}</details>"


def _code(text: str, language: str) -> str:
    """``text`` in a ``<pre><code>``, highlighted by Pygments when ``language`` names a lexer (escaped either way)."""
    shown = printable(text, multiline=True)
    spans = _highlight(shown, language, None) if language else ""
    cls = f' class="language-{escape(language, quote=True)}"' if language else ""
    return f"<pre><code{cls}>{spans or escape(shown)}</code></pre>"


def _folded(body: str, lines: int, summary: str) -> str:
    """A long block behind a ``<details>`` that says how long it is (open: the reader came for it)."""
    if lines <= CALL_LINES:
        return body
    return f"<details open><summary>{lines:,} lines — {summary}</summary>{body}</details>"


#: A tool call's diff or code longer than this many lines is shown in a <details> (open) that says so.
CALL_LINES = 40

_DIFF_CLASS = {"+": "add", "-": "del", "@": "hunk", "=": "hunk", " ": "keep"}


def tool_call_html(tool: str | None, text: str) -> str:
    """A tool call as people read it (``core/toolview.py``): an edit as a diff, a written file as highlighted code
    in its language, a shell call as its command, fields labelled, the rest pretty JSON; every string escaped."""
    from voyager_sessions.core import toolview

    out: list[str] = []
    fields: list[str] = []

    def flush() -> None:
        if fields:
            out.append(f'<dl class="fields">{"".join(fields)}</dl>')
            fields.clear()

    for part in toolview.parts(tool, text):
        if isinstance(part, toolview.Field):
            multi = "\n" in part.text
            value = f'<dd class="multi">{esc(part.text)}</dd>' if multi else f"<dd>{esc(part.text)}</dd>"
            fields.append(
                f"<dt>{esc(part.label)}</dt>{value}" if part.label else f'<dd class="bare">{esc(part.text)}</dd>'
            )
            continue
        flush()
        if isinstance(part, toolview.Diff):
            head = f'<div class="file">{esc(part.label)}</div>' if part.label else ""
            rows = "".join(
                f'<span class="{_DIFF_CLASS.get(tag, "keep")}">{esc(line if tag in "@=" else f"{tag} {line}")}\n</span>'
                for tag, line in part.lines
            )
            out.append(head + _folded(f'<pre class="diff">{rows}</pre>', len(part.lines), esc(part.label or "diff")))
        elif isinstance(part, toolview.Code):
            lang = f' <span class="lang">{esc(part.language)}</span>' if part.language else ""
            body = part.text[:-1] if part.text.endswith("\n") else part.text
            out.append(
                f'<div class="file">{esc(part.label)}{lang}</div>'
                + _folded(_code(body, part.language), body.count("\n") + 1, esc(part.label))
            )
        elif isinstance(part, toolview.Command):
            out.append(f'<pre class="cmd"><span class="prompt">$ </span>{esc(part.text)}</pre>')
        elif isinstance(part, toolview.Json):
            out.append(_folded(f'<pre class="json">{esc(part.text)}</pre>', part.text.count("\n") + 1, "arguments"))
        elif isinstance(part, toolview.Note):
            out.append(f'<p class="note">{esc(part.text)}</p>')
    flush()
    return f'<div class="call">{"".join(out)}</div>' if out else ""


def event_html(kind: str, text: str, tool: str | None = None) -> str:
    """The body of one event as the session view shows it."""
    if kind in PROSE_KINDS:
        return markdown(text)
    if kind == "meta":
        return f"<details><summary>injected context ({len(text):,} chars)</summary><pre>{esc(text)}</pre></details>"
    if kind == "tool_call":
        return tool_call_html(tool, text)
    return output(text)


def pygments_css() -> str:
    """The highlighter's colours (class names prefixed ``hl-``), for the shipped style sheet's companion."""
    try:
        from pygments.formatters import HtmlFormatter  # type: ignore[import-untyped]
    except ImportError:
        return ""

    def defs(style: str) -> str:
        # The block's own background is the page's (`.body pre`); a style's would box each line of code, and in
        # the dark scheme a light box hides the text.
        lines = HtmlFormatter(classprefix="hl-", style=style).get_style_defs(".md pre code").splitlines()
        return "\n".join(line for line in lines if line.startswith(".md pre code .") and "background" not in line)

    return f"{defs('friendly')}\n@media (prefers-color-scheme: dark) {{\n{defs('github-dark')}\n}}\n"
