"""Cursor's agent transcripts: ``<cursor home>/projects/<project>/agent-transcripts/``.

Layouts (AV, AS, DJ, FAD): ``<uuid>.{jsonl,txt}`` or ``<uuid>/<uuid>.{jsonl,txt}``, and a
subagent's ``<uuid>/subagents/<child>.{jsonl,txt}`` (its parent is ``<uuid>``). When both
a ``.jsonl`` and a ``.txt`` exist for one id, discovery keeps the ``.jsonl``.

Formats (``probe`` names them):

``transcript-jsonl``  one message a line, Anthropic's shape: ``{"role", "message": {"content":
                      [text | thinking | tool_use | tool_result]}}``; the person's words sit in
                      ``<user_query>`` inside the user text. Lines without a role are Cursor's
                      control records.
``transcript-txt``    plain text: ``user:`` / ``assistant:`` lines open a message; inside an
                      assistant message ``[Thinking]``, ``[Tool call] <name>`` (then indented
                      ``key=value`` lines or JSON) and ``[Tool result]`` open indented blocks (AV).

A transcript is a copy of a conversation some other surface may keep richer: the CLI's
``store.db`` (tool results, reasoning) or the editor's composer (bubbles). When that copy
holds the conversation, the transcript yields nothing, so a turn is never counted twice;
otherwise it is indexed as ``cursor:<uuid>.transcript`` (its own id, so withdrawing it
later never touches the richer copy's events). Transcripts are re-read whole when they
change, because that decision may withdraw what was indexed. They carry no timestamps;
the file's mtime is the session's last update. The cwd comes from the project's
``.workspace-trusted`` (``workspacePath``), else from the project directory's name
resolved against the file system (``Users-me-my-app`` -> ``/Users/me/my-app`` when exactly
one existing directory spells it).
"""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from voyager_sessions.ingest.adapters._common import EventCounter, UnknownRecords, str_or_none
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters.cursor import cli
from voyager_sessions.ingest.adapters.cursor._messages import (
    anthropic_message_events,
    render_tool_input,
    user_events,
)
from voyager_sessions.ingest.adapters._vscode import has_prefix, table_exists
from voyager_sessions.ingest.files import open_regular, read_notice
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.jsonl import BadLine, decode_line, read_records
from voyager_sessions.ingest.sqlite import connect_readonly
from voyager_sessions.core.model import Event, Origin, Session, session_id

PROVIDER = "cursor"
TRANSCRIPTS = "agent-transcripts"
#: Records without a role that Cursor writes between messages (DJ): skipped without a word.
_CONTROL = frozenset({"turn_ended", "turn_started"})
#: A plain-text transcript larger than this is not read (named instead).
MAX_TXT_BYTES = 64 << 20


def native_id(uuid: str) -> str:
    """A transcript's own id: the conversation's, marked, so it never collides with the richer copy's."""
    return f"{uuid}.transcript"


def _layout(path: Path) -> tuple[str, str | None, Path | None]:
    """(uuid, parent uuid for a subagent, the project directory) of a transcript path."""
    uuid = path.stem
    parent = path.parent.parent.name if path.parent.name == "subagents" else None
    for ancestor in path.parents:
        if ancestor.name == TRANSCRIPTS:
            return uuid, parent, ancestor.parent
    return uuid, parent, None


def richer_copy(uuid: str, cursor_home: Path | None, app_dirs: Iterable[Path]) -> bool:
    """True when the CLI's store or the editor's composer holds conversation ``uuid`` (read that instead)."""
    if cursor_home is not None:
        try:
            with os.scandir(cursor_home / "chats") as it:
                buckets = [e.path for e in it if e.is_dir(follow_symlinks=False)]
        except OSError:
            buckets = []
        for bucket in buckets:
            store = Path(bucket) / uuid / "store.db"
            if os.path.isfile(store) and cli.has_messages(store):
                return True
    for user_dir in app_dirs:
        db = user_dir / "globalStorage" / "state.vscdb"
        if not os.path.isfile(db):
            continue
        try:
            conn = connect_readonly(db, lenient_text=True)
        except sqlite3.Error:
            continue
        try:
            if table_exists(conn, "cursorDiskKV") and has_prefix(conn, "cursorDiskKV", f"bubbleId:{uuid}:"):
                return True
        except sqlite3.DatabaseError:
            pass
        finally:
            conn.close()
    return False


# ---------------------------------------------------------------------------
# cwd
# ---------------------------------------------------------------------------

_resolved: dict[str, str | None] = {}
_MAX_PROBES = 256


def _resolve_slug(slug: str) -> str | None:
    """The one existing absolute directory whose path, with ``/`` and ``.`` written as ``-``, is ``slug``."""
    if slug in _resolved:
        return _resolved[slug]
    parts = slug.split("-")
    found: list[str] = []
    probes = 0

    def walk(base: str, i: int) -> None:
        nonlocal probes
        if len(found) > 1 or probes > _MAX_PROBES:
            return
        if i == len(parts):
            found.append(base)
            return
        # The next name is parts[i..j] rejoined by '-' or '.', for as few parts as exist on disk.
        for j in range(i + 1, min(len(parts), i + 6) + 1):
            for name in _joins(parts[i:j]):
                probes += 1
                candidate = os.path.join(base, name)
                if name and os.path.isdir(candidate):
                    walk(candidate, j)

    if parts and all(parts):
        walk("/", 0)
    result = found[0] if len(found) == 1 and probes <= _MAX_PROBES else None
    _resolved[slug] = result
    return result


def _joins(pieces: list[str]) -> Iterator[str]:
    if len(pieces) == 1:
        yield pieces[0]
        return
    for rest in _joins(pieces[1:]):
        yield f"{pieces[0]}-{rest}"
        yield f"{pieces[0]}.{rest}"


def project_cwd(project: Path | None) -> str | None:
    if project is None:
        return None
    trusted = read_json_object(project / ".workspace-trusted", fatal=False)
    if isinstance(trusted, dict):
        where = str_or_none(trusted.get("workspacePath"))
        if where and where.startswith("/") and where.isprintable():
            return where
    return _resolve_slug(project.name)


# ---------------------------------------------------------------------------
# Reading
# ---------------------------------------------------------------------------


def _mtime(path: str) -> float | None:
    try:
        return os.stat(path).st_mtime
    except OSError:
        return None


def read_transcript(source: Source, cursor: Cursor | None, app_dirs: Iterable[Path]) -> Iterator[Item]:
    """One transcript's Session and Events, unless a richer surface holds the same conversation."""
    path = Path(source.path)
    uuid, parent_uuid, project = _layout(path)
    cursor_home = project.parent.parent if project is not None and project.parent.name == "projects" else None
    app_dirs = list(app_dirs)
    if parent_uuid is None and richer_copy(uuid, cursor_home, app_dirs):
        return
    parent = None
    if parent_uuid is not None:
        parent = session_id(
            PROVIDER, parent_uuid if richer_copy(parent_uuid, cursor_home, app_dirs) else native_id(parent_uuid)
        )
    native = native_id(uuid)
    sid = session_id(PROVIDER, native)
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        cwd=project_cwd(project),
        updated=_mtime(source.path),
        parent=parent,
        resume=None,
        source=source.path,
    )
    counter = EventCounter(sid, 0)
    unknown = UnknownRecords("Cursor")
    person: Origin = "provider" if parent is not None else "human"  # a subagent's task is the parent agent's
    if path.suffix == ".txt":
        yield from _read_txt(source.path, counter, person, unknown)
    else:
        yield from _read_jsonl(source.path, counter, person, unknown)
    if (notice := unknown.notice(source.path)) is not None:
        yield notice


def _read_jsonl(path: str, counter: EventCounter, person: Origin, unknown: UnknownRecords) -> Iterator[Item]:
    for record in read_records(path, 0):
        if isinstance(record, Notice):
            yield record
            continue
        line = record.value
        if not isinstance(line, dict):
            unknown.saw(type(line).__name__)
            continue
        role = line.get("role")
        message = line.get("message")
        content = message.get("content") if isinstance(message, dict) else line.get("content")
        if role not in ("user", "assistant"):
            kind = line.get("type")
            if kind not in _CONTROL:
                unknown.saw(kind if isinstance(kind, str) else f"role {role!r}")
            continue
        yield from anthropic_message_events(counter, role, content, person=person, ts=None, unknown=unknown)


def _read_txt(path: str, counter: EventCounter, person: Origin, unknown: UnknownRecords) -> Iterator[Item]:
    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_TXT_BYTES + 1)
    except OSError as exc:
        yield read_notice(path, exc)
        return
    if len(data) > MAX_TXT_BYTES:
        yield Notice(source=path, reason=f"larger than {MAX_TXT_BYTES:,} bytes; skipped", fatal=True)
        return
    text = data.decode("utf-8", "replace").replace("\x00", "\ufffd")
    for role, lines in _txt_messages(text.splitlines()):
        if role == "user":
            yield from user_events(counter, "\n".join(lines).strip(), person=person, ts=None)
        else:
            yield from _txt_assistant(counter, lines)


def _txt_messages(lines: list[str]) -> Iterator[tuple[str, list[str]]]:
    role: str | None = None
    body: list[str] = []
    for line in lines:
        marker = line.strip()
        if marker in ("user:", "assistant:"):
            if role is not None:
                yield role, body
            role, body = marker[:-1], []
        elif role is not None:
            body.append(line)
    if role is not None:
        yield role, body


_MARKERS = ("[Thinking]", "[Tool call]", "[Tool result]")


def _ends_block(line: str) -> bool:
    """A block body is indented (or blank); a marker or a line at the margin ends it."""
    stripped = line.strip()
    return stripped.startswith(_MARKERS) or (bool(stripped) and not line[:1].isspace())


def _dedent(lines: list[str]) -> str:
    indents = [len(line) - len(line.lstrip()) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(line[cut:] for line in lines).strip()


def _tool_args(body: list[str]) -> Any:
    raw = _dedent(body)
    if not raw:
        return None
    try:
        # decode_line, not json.loads: a lone surrogate escape (a cut emoji) is replaced, since the index
        # cannot take one; nesting too deep is refused.
        return decode_line(raw.encode("utf-8", "surrogatepass"))
    except BadLine:
        pass
    params: dict[str, str] = {}
    for line in raw.splitlines():
        key, sep, value = line.strip().partition("=")
        if not sep or not key.strip():
            return raw  # not key=value lines: keep the text as written
        params[key.strip()] = value.strip()
    return params


def _txt_assistant(counter: EventCounter, lines: list[str]) -> Iterator[Event]:
    prose: list[str] = []
    i = 0

    def flush() -> Iterator[Event]:
        if (ev := counter.make("assistant", "agent", "\n".join(prose).strip())) is not None:
            yield ev
        prose.clear()

    while i < len(lines):
        stripped = lines[i].strip()
        if not stripped.startswith(_MARKERS):
            prose.append(lines[i])
            i += 1
            continue
        yield from flush()
        head = stripped
        i += 1
        start = i
        while i < len(lines) and not _ends_block(lines[i]):
            i += 1
        body = lines[start:i]
        ev: Event | None
        if head.startswith("[Thinking]"):
            first = head[len("[Thinking]") :].strip()
            ev = counter.make("reasoning", "agent", "\n".join(x for x in (first, _dedent(body)) if x))
        elif head.startswith("[Tool call]"):
            name = head[len("[Tool call]") :].strip() or None
            ev = counter.make("tool_call", "agent", render_tool_input(name, _tool_args(body)), tool=name)
        else:
            name = head[len("[Tool result]") :].strip() or None
            ev = counter.make("tool_result", "tool", _dedent(body), tool=name)
        if ev is not None:
            yield ev
    yield from flush()


def probe_transcript(path: str) -> str:
    p = Path(path)
    kind = "transcript-txt" if p.suffix == ".txt" else "transcript-jsonl"
    return f"subagent-{kind}" if p.parent.name == "subagents" else kind
