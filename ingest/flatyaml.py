"""Reading a small, flat YAML side file (``key: value`` lines) without a YAML dependency.

Some agents keep a session's facts in a tiny YAML file beside its log (GitHub Copilot
CLI's ``workspace.yaml``: id, cwd, name, created/updated times). Voyager needs only the
top-level scalars of such a file, so :func:`parse_flat_yaml` reads exactly that subset
of YAML 1.2 and nothing more: plain, single-quoted and double-quoted scalars (also
folded over several lines), block scalars (``|`` and ``>`` with chomping and
indentation indicators) and comments. A nested value (a mapping, a list, a flow
collection, an alias or a tagged node) is skipped and reads as ``None``. Anything else
(a line that is no key, an unterminated quote, a bad escape, a key given twice) raises
:class:`FlatYamlError` naming the line, so the caller can report the file and go on:
the file is data, never code, and no input makes this reader crash or loop.
"""

from __future__ import annotations

import os
import re

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.files import open_regular, read_notice

#: A side file larger than this is not a flat record of a session's facts: not read.
MAX_FLAT_YAML_BYTES = 1 << 20

_KEY = re.compile(r"([A-Za-z_][A-Za-z0-9_.-]*)[ \t]*:(?:[ \t]+(.*)|[ \t]*)$")
_BLOCK_HEADER = re.compile(r"([|>])(?:([+-])([1-9])?|([1-9])([+-])?)?[ \t]*(?:#.*)?$")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_SIMPLE_ESCAPES = {
    "0": "\0",
    "a": "\a",
    "b": "\b",
    "t": "\t",
    "\t": "\t",
    "n": "\n",
    "v": "\v",
    "f": "\f",
    "r": "\r",
    "e": "\x1b",
    " ": " ",
    '"': '"',
    "/": "/",
    "\\": "\\",
    "N": "\x85",
    "_": "\xa0",
    "L": "\u2028",
    "P": "\u2029",
}
_HEX_ESCAPES = {"x": 2, "u": 4, "U": 8}


class FlatYamlError(ValueError):
    """The text is not a flat YAML mapping this reader understands; the message says where and why."""


def parse_flat_yaml(text: str) -> dict[str, str | None]:
    """The top-level ``key: scalar`` pairs of ``text``; nested values read as ``None``."""
    lines = text.replace("\r\n", "\n").replace("\r", "\n").split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the text after the last newline is no line
    if lines and lines[0].startswith("\ufeff"):
        lines[0] = lines[0][1:]
    out: dict[str, str | None] = {}
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith("#") or line.rstrip() == "---":
            i += 1
            continue
        if line.rstrip() == "...":
            break
        m = _KEY.match(line)
        if m is None:
            raise FlatYamlError(f"line {i + 1}: not a 'key: value' line")
        key, rest = m.group(1), (m.group(2) or "").rstrip()
        if key in out:
            raise FlatYamlError(f"line {i + 1}: key {key!r} given twice")
        value, i = _value(lines, i, rest)
        out[key] = value
    return out


def _continues(line: str) -> bool:
    """True for a line that belongs to the value above it: blank, or indented."""
    return not line.strip() or line[0] in " \t"


def _skip_nested(lines: list[str], i: int) -> int:
    """The index after a nested value (indented lines, or a list at the key's own indentation)."""
    while i < len(lines) and (_continues(lines[i]) or lines[i].startswith("- ") or lines[i] == "-"):
        i += 1
    return i


def _value(lines: list[str], i: int, rest: str) -> tuple[str | None, int]:
    """The scalar that starts with ``rest`` on line ``i``, and the index of the line after it."""
    if not rest or rest.startswith("#"):
        return None, _skip_nested(lines, i + 1)
    first = rest[0]
    if first == "'":
        return _quoted(lines, i, rest, single=True)
    if first == '"':
        return _quoted(lines, i, rest, single=False)
    if first in "|>":
        return _block(lines, i, rest)
    if first in "[{&*!" or rest.startswith(("- ", "? ")) or rest == "-":
        return None, _skip_nested(lines, i + 1)  # a collection, alias, anchor or tag: not a flat scalar
    return _plain(lines, i, rest)


def _plain(lines: list[str], i: int, rest: str) -> tuple[str | None, int]:
    parts = [_strip_comment(rest)]
    j = i + 1
    while j < len(lines) and _continues(lines[j]):
        stripped = lines[j].strip()
        if stripped.startswith("#"):
            break  # a comment ends a plain scalar
        parts.append(_strip_comment(stripped) if stripped else "")
        j += 1
    while len(parts) > 1 and parts[-1] == "":
        parts.pop()  # trailing blank lines are not part of the value
    value = _fold(parts)
    return (None if value in _NULLS else value), j


def _strip_comment(text: str) -> str:
    """``text`` without a trailing `` # comment`` (a ``#`` right after a non-space is text)."""
    m = re.search(r"[ \t]#", text)
    return (text[: m.start()] if m else text).rstrip()


def _fold(parts: list[str]) -> str:
    """Join the lines of a flow scalar: a single line break becomes a space, each empty line a newline."""
    out = parts[0]
    newlines = 0
    for part in parts[1:]:
        if part == "":
            newlines += 1
            continue
        out += "\n" * newlines if newlines else " "
        out += part
        newlines = 0
    return out + "\n" * newlines


def _quoted(lines: list[str], i: int, rest: str, *, single: bool) -> tuple[str, int]:
    """A single- or double-quoted scalar, possibly over several lines, and the line after it."""
    quote = "'" if single else '"'
    text = rest[1:]
    pieces: list[str] = []  # the decoded text of each line of the scalar
    buf: list[str] = []
    glued = False  # this line ends in an escaped line break: the next one joins without a space
    flags: list[bool] = []  # per line break of the scalar: was it escaped?
    row = i
    while True:
        k = 0
        while k < len(text):
            c = text[k]
            if c == quote:
                if single and text[k + 1 : k + 2] == "'":
                    buf.append("'")
                    k += 2
                    continue
                tail = text[k + 1 :].strip()
                if tail and not tail.startswith("#"):
                    raise FlatYamlError(f"line {row + 1}: text after the closing quote")
                pieces.append("".join(buf))
                return _join_quoted(pieces, flags), row + 1
            if c == "\\" and not single:
                if k + 1 == len(text):
                    glued = True  # an escaped line break
                    k += 1
                    continue
                k = _escape(text, k, buf, row)
                continue
            buf.append(c)
            k += 1
        pieces.append("".join(buf))
        flags.append(glued)
        glued = False
        buf = []
        row += 1
        if row >= len(lines) or not _continues(lines[row]):
            raise FlatYamlError(f"line {i + 1}: unterminated {'single' if single else 'double'}-quoted value")
        text = lines[row].lstrip(" \t")


def _join_quoted(pieces: list[str], flags: list[bool]) -> str:
    """Fold the lines of a quoted scalar; ``flags[n]`` says the break after line ``n`` was escaped."""
    if len(pieces) == 1:
        return pieces[0]
    out = pieces[0] if flags[0] else pieces[0].rstrip(" \t")
    newlines = 0
    for n, piece in enumerate(pieces[1:], start=1):
        last = n == len(pieces) - 1
        part = piece if last or flags[n] else piece.rstrip(" \t")
        if part == "" and not last:
            newlines += 1
            continue
        if flags[n - 1] and not newlines:
            out += part
        else:
            out += ("\n" * newlines if newlines else " ") + part
        newlines = 0
    return out


def _escape(text: str, k: int, buf: list[str], row: int) -> int:
    """Decode the escape at ``text[k]`` (a backslash) into ``buf``; the index after it."""
    code = text[k + 1]
    if code in _SIMPLE_ESCAPES:
        buf.append(_SIMPLE_ESCAPES[code])
        return k + 2
    width = _HEX_ESCAPES.get(code)
    digits = text[k + 2 : k + 2 + width] if width else ""
    if not width or len(digits) != width or not all(d in "0123456789abcdefABCDEF" for d in digits):
        raise FlatYamlError(f"line {row + 1}: bad escape \\{code}")
    point = int(digits, 16)
    if point > 0x10FFFF:
        raise FlatYamlError(f"line {row + 1}: escape \\{code}{digits} is beyond Unicode")
    buf.append(chr(point) if not 0xD800 <= point <= 0xDFFF else "\ufffd")
    return k + 2 + width


def _block(lines: list[str], i: int, rest: str) -> tuple[str, int]:
    """A ``|`` (literal) or ``>`` (folded) block scalar, and the line after it."""
    m = _BLOCK_HEADER.match(rest)
    if m is None:
        raise FlatYamlError(f"line {i + 1}: bad block scalar header {rest!r}")
    style = m.group(1)
    chomp = m.group(2) or m.group(5) or ""
    explicit = m.group(3) or m.group(4)
    j = i + 1
    body: list[str] = []
    while j < len(lines) and _continues(lines[j]):
        body.append(lines[j])
        j += 1
    if explicit:
        indent = int(explicit)
    else:
        content = [ln for ln in body if ln.strip()]
        indent = min((len(ln) - len(ln.lstrip(" ")) for ln in content[:1]), default=0)
    if body and indent == 0 and any(ln.strip() for ln in body):
        raise FlatYamlError(f"line {i + 1}: block scalar without indentation")
    rows: list[str] = []
    for n, ln in enumerate(body, start=j - len(body)):
        if not ln.strip():
            rows.append(ln[indent:] if len(ln) > indent else "")
            continue
        if len(ln) - len(ln.lstrip(" ")) < indent:
            raise FlatYamlError(f"line {n + 1}: less indented than the block scalar it is in")
        rows.append(ln[indent:])
    # Trailing empty lines belong to the value only with "keep" chomping.
    trailing = 0
    while rows and rows[-1] == "":
        rows.pop()
        trailing += 1
    text = "\n".join(rows) if style == "|" else _fold_block(rows)
    if not rows:
        return ("\n" * trailing if chomp == "+" else ""), j
    if chomp == "-":
        return text, j
    if chomp == "+":
        return text + "\n" * (trailing + 1), j
    return text + "\n", j


def _fold_block(rows: list[str]) -> str:
    """Fold a ``>`` block: lines join with a space, empty lines are newlines, more-indented lines stay as they are."""
    out = ""
    started = False
    prev_kept = True  # the previous line was more indented (or there was none): no space before this one
    newlines = 0
    for row in rows:
        if row == "":
            newlines += 1
            continue
        indented = row[0] in " \t"
        if not started:
            out = "\n" * newlines  # leading empty lines are kept as they are
        elif newlines:
            out += "\n" * (newlines + (1 if indented or prev_kept else 0))
        else:
            out += "\n" if indented or prev_kept else " "
        out += row
        started = True
        prev_kept = indented
        newlines = 0
    return out


def read_flat_yaml(path: str | os.PathLike[str]) -> dict[str, str | None] | Notice:
    """The flat YAML mapping in the file at ``path``, or a (non-fatal) Notice saying why it could not be read."""
    name = os.fspath(path)
    try:
        with open_regular(name) as fh:
            data = fh.read(MAX_FLAT_YAML_BYTES + 1)
    except OSError as exc:
        return read_notice(name, exc, fatal=False)
    if len(data) > MAX_FLAT_YAML_BYTES:
        return Notice(source=name, reason=f"larger than {MAX_FLAT_YAML_BYTES:,} bytes: not a flat record; not read")
    try:
        return parse_flat_yaml(data.decode("utf-8", "replace"))
    except FlatYamlError as exc:
        return Notice(source=name, reason=f"not read: {exc}")
    except (RecursionError, IndexError) as exc:  # a reader bug must cost this file, not the scan
        return Notice(source=name, reason=f"not read: {type(exc).__name__}")
