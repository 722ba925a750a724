"""Session text is hostile input: what Voyager prints must never drive the terminal that shows it.

Text from sessions (messages, titles, paths, tool names, ids) may hold terminal control
sequences: ``ESC[2J`` clears the screen, OSC 52 writes the clipboard, OSC 0 retitles the
window, a bare CR overwrites what was printed. :func:`printable` turns every control
character (C0, DEL and C1, U+009B CSI included) into a visible stand-in of the same
length (one character for one), so highlight offsets computed on the text stay valid and
Voyager's own colours, added afterwards, are the only escape sequences in the output.
:func:`escape_json_controls` does the same for JSON: C0 is escaped by every JSON encoder;
DEL and the C1 range are valid JSON as raw characters, so a careless ``jq -r`` would print
them: they are written as ``\\u00XX`` escapes instead.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing: a server's client imports this
if TYPE_CHECKING:
    from typing import Any

#: C0 controls become the Unicode "control pictures" (␀ … ␟), DEL becomes ␡, C1 controls
#: (U+0080 … U+009F, CSI among them) the replacement character: all visible, all one wide.
_SINGLE_LINE = {c: 0x2400 + c for c in range(0x20)}
_SINGLE_LINE[0x7F] = 0x2421
_SINGLE_LINE.update({c: 0xFFFD for c in range(0x80, 0xA0)})
_MULTI_LINE = dict(_SINGLE_LINE)
del _MULTI_LINE[0x0A], _MULTI_LINE[0x09]  # newlines and tabs keep a timeline readable


def printable(text: str | None, *, multiline: bool = False) -> str:
    """``text`` with every control character replaced by a visible stand-in (newlines and tabs kept if ``multiline``)."""
    if not text:
        return text or ""
    return text.translate(_MULTI_LINE if multiline else _SINGLE_LINE)


def escape_json_controls(data: bytes) -> bytes:
    """Encoded JSON with DEL and the C1 controls written as ``\\u00XX`` escapes (still the same JSON value)."""
    if b"\x7f" not in data and b"\xc2" not in data:
        return data
    # Byte for byte, without ``re`` (a server's client would import it for this alone): in UTF-8, U+0080-U+009F
    # are the pairs C2 80 - C2 9F, and C2 is never a pair's second byte, so no two pairs overlap.
    data = data.replace(b"\x7f", b"\\u007f")
    if b"\xc2" in data:
        for c in range(0x80, 0xA0):
            pair = bytes((0xC2, c))
            if pair in data:
                data = data.replace(pair, b"\\u%04x" % c)
    return data


def as_unicode(obj: Any) -> Any:
    """``obj`` (builtins: dicts, lists, strings …) with every string made valid Unicode: a name the OS handed
    over in bytes that are not UTF-8 (a path from an environment variable; Python holds each such byte as a lone
    surrogate) has U+FFFD for each of those bytes, so it can be written as JSON. Only called when encoding failed."""
    if isinstance(obj, str):
        return obj.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
    if isinstance(obj, dict):
        return {as_unicode(k): as_unicode(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [as_unicode(v) for v in obj]
    return obj
