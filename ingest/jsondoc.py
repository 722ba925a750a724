"""Reading whole JSON documents: a session kept as one JSON file, or a folder of one-event JSON files.

Agents that rewrite a session file in place (Cline's ``*.messages.json``, Gemini's older
``session-*.json``, Vibe's chunks, OpenHands' per-event files) are read whole through
:func:`read_json`: a regular file only (never blocks), lenient about encodings (invalid
UTF-8 and lone UTF-16 surrogates become U+FFFD, as in the JSONL reader), refusing
documents beyond a size cap, and answering a :class:`~voyager_sessions.ingest.adapters.base.Notice`
instead of raising, so one broken file costs that file only. A value nested too deeply for
the decoders (what a hostile or buggy writer can leave in one message) costs that value
only: it is read as ``null``, and named, while the rest of the document is kept.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters.base import Notice
from voyager_sessions.ingest.files import open_regular, read_notice
from voyager_sessions.ingest.jsonl import BadLine, TooDeep, decode_line, env_cap

#: A JSON document larger than this is not read (named instead): no session file comes near it,
#: and it is decoded in memory whole. ``VOYAGER_MAX_JSON_BYTES`` changes it.
MAX_JSON_BYTES = 256 << 20


#: In a document that is nested too deeply to decode, arrays and objects deeper than this are read as
#: ``null``. No agent's session comes near it; the decoders' own limit (Python's recursion limit)
#: lies far beyond it, so what remains decodes.
MAX_DEPTH = 128

#: A JSON string (skipped whole: brackets inside it are text), or a bracket.
_TOKEN = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def flatten_deep(data: bytes, limit: int = MAX_DEPTH) -> tuple[bytes, int]:
    """``data`` (JSON text) with every array or object nested deeper than ``limit`` replaced by ``null``,
    and how many were replaced. One pass over the text, linear in its size."""
    out: list[bytes] = []
    depth = kept_to = replaced = 0
    cut: int | None = None
    for m in _TOKEN.finditer(data):
        c = data[m.start()]
        if c == 0x22:  # '"': a string, brackets and all
            continue
        if c in (0x5B, 0x7B):  # '[' '{'
            depth += 1
            if depth == limit + 1 and cut is None:
                cut = m.start()
        else:
            if depth == limit + 1 and cut is not None:
                out += (data[kept_to:cut], b"null")
                kept_to, cut = m.end(), None
                replaced += 1
            depth -= 1
    out.append(data[kept_to:])
    return b"".join(out), replaced


def decode_document(data: bytes, name: str, notices: list[Notice] | None = None) -> Any:
    """The JSON value in ``data`` (see :func:`~voyager_sessions.ingest.jsonl.decode_line`), with values
    nested deeper than ``MAX_DEPTH`` read as ``null`` when the whole is too deep to decode (a Notice
    naming them goes to ``notices``). Raises :class:`BadLine` when ``data`` is not JSON."""
    try:
        return decode_line(data)
    except TooDeep:
        flat, replaced = flatten_deep(data)
        value = decode_line(flat)  # TooDeep again only if the text is not JSON at all
        if notices is not None:
            notices.append(Notice(source=name, reason=f"{replaced} value{'s' if replaced != 1 else ''} nested more than "
                                                      f"{MAX_DEPTH} deep skipped (read as null)"))
        return value


def max_json_bytes() -> int:
    return env_cap("VOYAGER_MAX_JSON_BYTES", MAX_JSON_BYTES)


def read_json(path: str | os.PathLike[str], *, fatal: bool = True, notices: list[Notice] | None = None) -> Any | Notice:
    """The JSON value in the file at ``path``, or a Notice saying why it could not be read.

    ``fatal`` is what the Notice says about the source: True when the file *is* the
    source (a session file), False when it is one piece of a larger source (one event
    file of a folder, a side file holding a title). ``notices`` collects what was skipped
    inside a document that was read (values nested too deeply).
    """
    name = os.fspath(path)
    try:
        with open_regular(name) as fh:
            size = os.fstat(fh.fileno()).st_size
            limit = max_json_bytes()
            if size > limit:
                return Notice(source=name, reason=f"{size:,} bytes: larger than {limit:,} (VOYAGER_MAX_JSON_BYTES); skipped",
                              fatal=fatal)
            data = fh.read(limit + 1)
    except OSError as exc:
        return read_notice(name, exc, fatal=fatal)
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    if not data.strip():
        return Notice(source=name, reason="empty file: nothing to index yet", fatal=False)
    try:
        return decode_document(data.strip(), name, notices)
    except BadLine as exc:
        # A document rewritten in place may be caught half-written: worth a retry.
        return Notice(source=name, reason=f"{exc}; skipped", fatal=fatal, transient=True)


def read_json_object(path: str | os.PathLike[str], *, fatal: bool = True,
                     notices: list[Notice] | None = None) -> dict[str, Any] | Notice:
    """Like :func:`read_json`, for a document that must be a JSON object."""
    value = read_json(path, fatal=fatal, notices=notices)
    if isinstance(value, Notice) or isinstance(value, dict):
        return value
    return Notice(source=os.fspath(path), reason=f"a JSON {type(value).__name__}, not an object; skipped", fatal=fatal)


def sorted_files(folder: Path, suffix: str) -> list[Path]:
    """The regular files in ``folder`` whose names end with ``suffix``, in name order ([] if unreadable)."""
    try:
        with os.scandir(folder) as it:
            return sorted(Path(e.path) for e in it if e.name.endswith(suffix) and e.is_file(follow_symlinks=False))
    except OSError:
        return []
