"""The Gemini CLI adapter: ``<gemini home>/tmp/<project>/chats/`` to Sessions and Events.

Owns everything Voyager knows about how Gemini CLI records a chat (docs/agents.md):

* **Where.** ``~/.gemini`` (or ``$GEMINI_CLI_HOME/.gemini``) keeps each project's chats in
  ``tmp/<project>/chats/``, where ``<project>`` is a short name that ``projects.json`` maps
  from the working directory (older versions used ``sha256(cwd)``, which a session's
  ``projectHash`` still is). A session is ``session-<start minute>-<id[:8]>.jsonl``; older
  versions wrote ``….json``, one JSON document rewritten in place, which a resume migrates
  to a ``.jsonl`` of the same name. A subagent's chat is ``chats/<parent id>/<child id>.jsonl``.
  ``~/.gemini/antigravity*`` belongs to another agent and is never looked at.
* **A patch log, not a transcript.** A header line ``{sessionId, projectHash, startTime, …}``;
  ``{"$set": {…}}`` replaces top-level fields, among them ``messages``, a snapshot that
  replaces the whole list and stamps every message with the time of writing; any other line
  is a message *upserted* by ``id`` (a model turn is written again once its tool calls are
  added). Replaying it: a message keeps the earliest time any version of it carried; the
  last upserted version wins, and a snapshot's version (a re-serialisation that drops tool
  results and may mask outputs) only stands for a message no line ever upserted. Nothing a
  snapshot or a ``$rewindTo`` leaves out is dropped: search keeps what was said.
* **One session, several files.** A resume in another minute starts a new file for the same
  session id; a migrated ``.json`` sits beside its ``.jsonl``; and the move from
  ``tmp/<sha256(cwd)>/`` to ``tmp/<short name>/`` *copied* the folder, so a session can stand
  in both. The files of one project (both its folders) that share an ``id[:8]``, or a
  subagent's file and its copy, are therefore one Source (its path the first of them, its
  fingerprint over all of them), read together and merged by ``sessionId``: re-reading one
  of them can never drop what another holds, and no session is yielded by two sources.
* **Copies never counted twice.** A user message made only of ``functionResponse`` parts,
  and the ``<id>_response`` message a resume synthesises, repeat the results already kept
  with the model turn's ``toolCalls``: a tool result is indexed once per call id.
* **Who said it.** ``<session_context>`` and ``<hook_context>`` user text is injected
  context (meta); so is a ``/compress`` prompt and the ``<state_snapshot>`` summary that
  answers it. In a subagent's chat the "user" is the parent agent. ``thoughts`` and
  thought parts are reasoning. Gemini CLI records no exit code: it stays ``None``.

Re-reading is whole (the log is small and snapshots rewrite history), but the Cursor
keeps a digest of what each session yielded, so a new turn is indexed as just that turn.
A legacy ``.json`` larger than ``jsondoc.STREAM_JSON_BYTES`` that is its session's only
file is never held: its messages are streamed (``read_json_streamed``) and their events
yielded as they come, so it is indexed whatever its size in bounded memory.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Container, Generator, Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters import _genai
from voyager_sessions.ingest.adapters._common import (
    MAX_IDS_KEPT,
    DeltaStream,
    EventCounter,
    UnknownRecords,
    cached_by_stat,
    int_or_none,
    parse_ts,
    reread_delta,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import group_fingerprint, open_regular, subdirs, walk_files
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json, read_json_streamed, stream_end
from voyager_sessions.ingest.jsonl import read_records
from voyager_sessions.ingest.toolcall import report_pair
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "gemini"

#: ``session-<YYYY-MM-DDTHH-MM>-<first 8 characters of the session id>.jsonl`` (``.json`` in older versions).
_SESSION_FILE = re.compile(r"^session-(\d{4}-\d{2}-\d{2}T\d{2}-\d{2})-(.+)\.jsonl?$")
#: User text Gemini CLI injects itself (the first is in every session, under the same id).
_INJECTED = ("<session_context>", "<hook_context>")
#: ``/compress`` sent as a prompt (``gemini -p``): its answer is the compaction summary.
_COMPRESS = re.compile(r"/compress(?:\s|$)")
_SUMMARY = "<state_snapshot>"
#: The suffix of the user message a resume synthesises to pair a model turn with its results.
_PAIRED = "_response"
#: The top-level keys of a legacy document besides its messages (what ``_Conversation.fields`` reads).
_DOC_KEYS = ("sessionId", "projectHash", "kind", "directories", "summary", "startTime", "lastUpdated")


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``gemini --resume <session id>``, run in the session's project: sessions are looked up per directory."""
    return resume_in(cwd, "gemini", opt("--resume", native_id))


def _id8(name: str) -> str | None:
    m = _SESSION_FILE.match(name)
    return m.group(2) if m else None


def _is_chat_file(name: str) -> bool:
    return name.endswith(".jsonl") or (name.startswith("session-") and name.endswith(".json"))


def chat_place(path: Path) -> tuple[Path, str | None]:
    """The chats folder a chat file belongs to, and the parent session id when it is a subagent's
    (``chats/<parent id>/<child id>.jsonl``)."""
    if path.parent.name != "chats" and path.parent.parent.name == "chats":
        return path.parent.parent, path.parent.name
    return path.parent, None


def group_key(path: Path) -> str:
    """What the files of one session share within a project: ``id[:8]`` for a session file, the
    place below ``chats`` for a subagent's (a migration copies both)."""
    folder, parent = chat_place(path)
    id8 = _id8(path.name) if parent is None else None
    return f"session:{id8}" if id8 is not None else f"file:{path.relative_to(folder)}"


# -- the project a chat belongs to -----------------------------------------------------------------


def _load_projects(path: str) -> dict[str, str]:
    """``projects.json``: ``{"projects": {cwd: short name}}``."""
    value = read_json(path, fatal=False)
    projects = value.get("projects") if isinstance(value, dict) else None
    if not isinstance(projects, dict):
        return {}
    return {cwd: name for cwd, name in projects.items() if isinstance(cwd, str) and isinstance(name, str)}


def _load_marker(path: str) -> str:
    with open_regular(path) as fh:
        return fh.read(1 << 16).decode("utf-8", "replace").strip()


def _sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()


class _Project:
    """What a chats folder's place tells: the project's working directory and its other chats folder.

    When Gemini CLI moved ``tmp/<sha256(cwd)>/`` to ``tmp/<short name>/`` it *copied* the
    folder, so a session may stand in both; they are read as one project.
    """

    def __init__(self, chats: Path) -> None:
        self.chats = chats
        self.dir = chats.parent
        self.tmp = self.dir.parent
        projects = cached_by_stat(str(self.tmp.parent / "projects.json"), _load_projects, {})
        self._by_hash = {_sha256(cwd): cwd for cwd in projects}
        by_name = {name: cwd for cwd, name in projects.items()}
        # Newer versions also leave the owner's path in the project folder itself.
        marker = cached_by_stat(str(self.dir / ".project_root"), _load_marker, "") or None
        self.known_cwd: str | None = by_name.get(self.dir.name) or marker or self._by_hash.get(self.dir.name)
        self.short_name = projects.get(self.known_cwd) if self.known_cwd else None

    def key(self) -> str:
        """One name for the project, whichever of its folders this is."""
        return f"cwd:{self.known_cwd}" if self.known_cwd else f"dir:{self.dir}"

    def folders(self) -> list[Path]:
        """Every chats folder of this project that exists, this one first."""
        out = [self.chats]
        if self.known_cwd:
            for name in (self.short_name, _sha256(self.known_cwd)):
                other = self.tmp / name / "chats" if name else None
                if other is not None and other not in out and other.is_dir():
                    out.append(other)
        return out

    def cwd(self, project_hash: str | None, directories: list[Any]) -> str | None:
        found = self.known_cwd
        if not found and project_hash:
            found = self._by_hash.get(project_hash)
        if not found and directories and isinstance(directories[0], str):
            found = directories[0]  # a subagent's header names the workspace
        return found or None

    def session_files(self, path: Path) -> list[Path]:
        """Every file of the session ``path`` belongs to, in name (time) order: in each chats folder
        of the project, the session files with its ``id[:8]``, or the copy of its subagent file."""
        key = group_key(path)
        found: set[Path] = {path}
        for folder in self.folders():
            if key.startswith("session:"):
                try:
                    names = os.listdir(folder)
                except OSError:
                    continue
                found.update(folder / n for n in names if _id8(n) is not None and f"session:{_id8(n)}" == key)
            elif (twin := folder / key.removeprefix("file:")).is_file():
                found.add(twin)
        return sorted(found, key=lambda f: (f.name, str(f)))


# -- replaying the log ---------------------------------------------------------------------------


class _Message:
    __slots__ = ("record", "ts", "live")

    def __init__(self, record: dict[str, Any], ts: float | None, live: bool) -> None:
        self.record = record
        self.ts = ts
        #: An upserted line (or a legacy document) wrote it, not only a snapshot.
        self.live = live


class _Conversation:
    """One session id's state as its files are replayed."""

    def __init__(self, sid: str) -> None:
        self.sid = sid
        self.project_hash: str | None = None
        self.kind: str | None = None
        self.directories: list[Any] = []
        self.summary: str | None = None
        self.started: float | None = None
        self.updated: float | None = None
        self.messages: dict[str, _Message] = {}
        #: The messages of a legacy document too large to hold, when it is the session's only file:
        #: rendered as they are read instead of kept in ``messages``.
        self.stream: StreamedArray | None = None

    def fields(self, record: dict[str, Any]) -> None:
        """Top-level fields from a header, a legacy document or a ``$set``."""
        self.project_hash = str_or_none(record.get("projectHash")) or self.project_hash
        self.kind = str_or_none(record.get("kind")) or self.kind
        if isinstance(record.get("directories"), list):
            self.directories = record["directories"]
        summary = record.get("summary")
        if isinstance(summary, str) and summary.strip():
            self.summary = summary.strip()
        start, last = parse_ts(record.get("startTime")), parse_ts(record.get("lastUpdated"))
        if start is not None and (self.started is None or start < self.started):
            self.started = start
        for ts in (start, last):
            if ts is not None and (self.updated is None or ts > self.updated):
                self.updated = ts

    def upsert(self, record: dict[str, Any], *, snapshot: bool) -> None:
        mid = record["id"]
        ts = parse_ts(record.get("timestamp"))
        known = self.messages.get(mid)
        if known is None:
            self.messages[mid] = _Message(record, ts, not snapshot)
            return
        if ts is not None and (known.ts is None or ts < known.ts):
            known.ts = ts  # a snapshot restamps every message with its own time
        if not snapshot:
            known.record, known.live = record, True


class _Replay:
    """The files of one source replayed into conversations, keyed by session id."""

    def __init__(self, unknown: UnknownRecords) -> None:
        self.unknown = unknown
        self.conversations: dict[str, _Conversation] = {}

    def _conversation(self, sid: str, pending: list[tuple[dict[str, Any], bool]]) -> _Conversation:
        conv = self.conversations.get(sid)
        if conv is None:
            conv = self.conversations[sid] = _Conversation(sid)
        for record, snapshot in pending:  # messages that came before the header
            conv.upsert(record, snapshot=snapshot)
        pending.clear()
        return conv

    def log(self, path: Path) -> Iterator[Notice]:
        """Replay one ``.jsonl`` patch log; yields what had to be skipped (a fatal Notice if it cannot be read)."""
        current: _Conversation | None = None
        pending: list[tuple[dict[str, Any], bool]] = []
        for item in read_records(str(path)):
            if isinstance(item, Notice):
                yield item
                if item.fatal:
                    return
                continue
            line = item.value
            if not isinstance(line, dict):
                self.unknown.saw(f"a JSON {type(line).__name__}")
            elif "$rewindTo" in line:
                continue  # the CLI hides what follows; search keeps what was said
            elif isinstance(line.get("id"), str):
                if current is None:
                    pending.append((line, False))
                else:
                    current.upsert(line, snapshot=False)
            elif isinstance(line.get("$set"), dict):
                patch = line["$set"]
                if isinstance(patch.get("sessionId"), str) and patch["sessionId"]:
                    current = self._conversation(patch["sessionId"], pending)
                messages = patch.get("messages")
                for msg in messages if isinstance(messages, list) else ():
                    if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                        if current is None:
                            pending.append((msg, True))
                        else:
                            current.upsert(msg, snapshot=True)
                if current is not None:
                    current.fields(patch)
            elif isinstance(line.get("sessionId"), str) and line["sessionId"]:
                current = self._conversation(line["sessionId"], pending)
                current.fields(line)
            else:
                self.unknown.saw("record with keys " + ",".join(sorted(map(str, line))[:4]))
        if pending:
            yield Notice(source=str(path), reason=f"{len(pending)} message(s) before any session header; skipped")

    def document(self, path: Path, *, alone: bool = False) -> Iterator[Notice]:
        """Read one legacy ``.json`` session document (``{sessionId, …, messages: […]}``); a large one that is
        its session's only file (``alone``) is left to be streamed when rendered (``_Conversation.stream``)."""
        skipped: list[Notice] = []
        doc = read_json_streamed(path, "messages", _DOC_KEYS, notices=skipped)
        if isinstance(doc, Notice):
            yield doc
            return
        if not isinstance(doc, dict):
            yield Notice(source=str(path), reason=f"a JSON {type(doc).__name__}, not an object; skipped", fatal=True)
            return
        yield from skipped
        sid = doc.get("sessionId")
        if not isinstance(sid, str) or not sid:
            yield Notice(
                source=str(path),
                reason="a JSON document without a sessionId: not a Gemini CLI session; skipped",
                fatal=True,
            )
            return
        fresh = sid not in self.conversations
        conv = self._conversation(sid, [])
        conv.fields(doc)
        messages = doc.get("messages")
        if isinstance(messages, StreamedArray) and alone and fresh:
            conv.stream = messages
            return
        # Merged with the session's other files: held like theirs (a large document costs its messages,
        # never its decoding whole).
        for msg in messages if isinstance(messages, (list, StreamedArray)) else ():
            if isinstance(msg, dict) and isinstance(msg.get("id"), str):
                conv.upsert(msg, snapshot=False)
        yield from stream_end(messages, str(path))


# -- a conversation's events ------------------------------------------------------------------------


class _Render:
    """Turns one replayed conversation into events, dropping the copies (see the module docstring)."""

    def __init__(self, conv: _Conversation, subagent: bool, unknown: UnknownRecords) -> None:
        self.conv = conv
        self.counter = EventCounter(session_id(PROVIDER, conv.sid), 0)
        self.subagent = subagent
        self.unknown = unknown
        self.resulted: set[str] = set()  # call ids whose result is indexed
        self.result_texts: set[str] = set()  # for results that carry no call id
        self.compressing = False  # the next model turn answers a /compress
        self.model: str | None = None
        self.tokens_in = self.tokens_out = 0
        self.counted = False

    def events(self) -> list[Event]:
        pairs = ((mid, msg.record, msg.ts) for mid, msg in self.conv.messages.items())
        return list(self.each(pairs, self.conv.messages))

    def streamed(self, messages: StreamedArray) -> Iterator[Event]:
        """The events of a streamed legacy document, as :meth:`events` gives them for the same messages held:
        a pass finds the turns a resume paired with a ``_response`` copy (only if there is such a copy),
        and the next renders. A message written twice is rendered once, at its first place, the
        way its first version says (held, the last version would win: no document seen repeats one)."""
        bases: set[str] = set()
        for msg in messages:
            mid = msg.get("id") if isinstance(msg, dict) else None
            if isinstance(mid, str) and mid.endswith(_PAIRED) and len(bases) < MAX_IDS_KEPT:
                bases.add(mid[: -len(_PAIRED)])
        paired: set[str] = set()
        if bases:
            for msg in messages:
                mid = msg.get("id") if isinstance(msg, dict) else None
                if isinstance(mid, str) and mid in bases:
                    paired.add(mid)
        if messages.error is not None:
            return  # caught half-written: the caller says so (stream_end)
        yield from self.each(self._unique(messages), paired)

    @staticmethod
    def _unique(messages: StreamedArray) -> Iterator[tuple[str, dict[str, Any], float | None]]:
        seen: dict[str, None] = {}
        for msg in messages:
            if not isinstance(msg, dict) or not isinstance(mid := msg.get("id"), str) or mid in seen:
                continue
            seen[mid] = None
            if len(seen) > MAX_IDS_KEPT:  # a copy sits near its original: the oldest ids can go
                del seen[next(iter(seen))]
            yield mid, msg, parse_ts(msg.get("timestamp"))

    def each(
        self, messages: Iterable[tuple[str, dict[str, Any], float | None]], ids: Container[str]
    ) -> Iterator[Event]:
        """The events of ``messages`` (id, record, time) in order; ``ids`` holds at least every id a
        ``<id>_response`` copy pairs with."""
        for mid, rec, ts in messages:
            out: list[Event] = []
            kind = rec.get("type")
            if kind == "user":
                if mid.endswith(_PAIRED) and mid[: -len(_PAIRED)] in ids:
                    continue  # a resume's synthetic copy of a turn's tool results
                out.extend(self._user(rec, ts))
            elif kind == "gemini":
                out.extend(self._model(rec, ts))
            elif kind in ("info", "error", "warning"):
                out.extend(self._meta(rec.get("content"), ts))
            else:
                self.unknown.saw(kind if isinstance(kind, str) else "message without a type")
            yield from out

    def _meta(self, content: Any, ts: float | None) -> Iterator[Event]:
        for part in _genai.as_parts(content):
            text = _genai.text_of(part)
            if text is not None and (ev := self.counter.make("meta", "provider", text, ts=ts)) is not None:
                yield ev

    def _prompt(self, text: str, ts: float | None) -> Event | None:
        head = text.lstrip()
        if head.startswith(_INJECTED):
            return self.counter.make("meta", "provider", text, ts=ts)
        if _COMPRESS.match(head) or head.startswith(_SUMMARY):
            self.compressing = True
            return self.counter.make("meta", "provider", text, ts=ts)
        return self.counter.make("user", "provider" if self.subagent else "human", text, ts=ts)

    def _user(self, rec: dict[str, Any], ts: float | None) -> Iterator[Event]:
        shown = "\n".join(t for p in _genai.as_parts(rec.get("displayContent")) if (t := _genai.text_of(p)))
        if shown.strip():
            # What the person typed; the content sent adds what it expanded (@files): context.
            if (ev := self._prompt(shown, ts)) is not None:
                yield ev
        for part in _genai.as_parts(rec.get("content")):
            text = _genai.text_of(part)
            if text is not None:
                if shown.strip():
                    ev = None if text.strip() == shown.strip() else self.counter.make("meta", "provider", text, ts=ts)
                else:
                    ev = self._prompt(text, ts)
            elif (response := _genai.function_response(part)) is not None:
                ev = self._response(response, ts)
            else:
                continue
            if ev is not None:
                yield ev

    def _response(self, response: dict[str, Any], ts: float | None) -> Event | None:
        """A ``functionResponse`` in a user message: indexed only if its call's result is not already."""
        call_id = str_or_none(response.get("id"))
        text, _ = _genai.response_text(response)
        if (call_id in self.resulted) if call_id else (text in self.result_texts):
            return None
        ev = _genai.tool_result_event(self.counter, response, ts)
        if ev is not None:
            self._resulted(call_id, text)
        return ev

    def _resulted(self, call_id: str | None, text: str) -> None:
        if call_id:
            self.resulted.add(call_id)
        else:
            self.result_texts.add(text)

    def _model(self, rec: dict[str, Any], ts: float | None) -> Iterator[Event]:
        self._usage(rec)
        parts = _genai.as_parts(rec.get("content"))
        summary = self.compressing or any((t := _genai.text_of(p)) and t.lstrip().startswith(_SUMMARY) for p in parts)
        self.compressing = False
        thoughts = rec.get("thoughts")
        reasoned = False
        for thought in thoughts if isinstance(thoughts, list) else ():
            if not isinstance(thought, dict):
                continue
            subject, body = str_or_none(thought.get("subject")), str_or_none(thought.get("description"))
            text = f"{subject}\n{body}" if subject and body else (body or subject)
            if (
                ev := self.counter.make("reasoning", "agent", text, ts=parse_ts(thought.get("timestamp")) or ts)
            ) is not None:
                reasoned = True
                yield ev
        raw_calls = rec.get("toolCalls")
        calls = [c for c in raw_calls if isinstance(c, dict)] if isinstance(raw_calls, list) else []
        call_ids = {c["id"] for c in calls if isinstance(c.get("id"), str)}
        kind, origin = ("meta", "provider") if summary else ("assistant", "agent")
        yield from _genai.model_events(
            self.counter, parts, ts, text_kind=kind, text_origin=origin, thoughts=not reasoned, skip_calls=call_ids
        )
        for call in calls:
            yield from self._tool_call(call, ts)

    def _tool_call(self, call: dict[str, Any], ts: float | None) -> Iterator[Event]:
        if (ev := _genai.tool_call_event(self.counter, call, ts)) is not None:
            yield ev
        texts: list[str] = []
        failed = False
        for part in _genai.as_parts(call.get("result")):
            if (response := _genai.function_response(part)) is not None:
                text, error = _genai.response_text(response)
                failed = failed or error
            else:
                text = _genai.text_of(part) or ""
            if text:
                texts.append(text)
        if not texts and isinstance(call.get("resultDisplay"), str):
            texts.append(call["resultDisplay"])
        text = "\n".join(texts)
        call_id = str_or_none(call.get("id"))
        # Gemini CLI keeps a status, never an exit code: exit_code stays None. What ``invoke_agent`` returned
        # is its subagent's report (the one kind/origin, docs/json.md).
        ev = self.counter.make(
            *report_pair(str_or_none(call.get("name"))),
            text,
            ts=parse_ts(call.get("timestamp")) or ts,
            call_id=call_id,
            is_error=failed or call.get("status") == "error",
        )
        if ev is not None:
            self._resulted(call_id, text)
            yield ev

    def _usage(self, rec: dict[str, Any]) -> None:
        self.model = str_or_none(rec.get("model")) or self.model
        tokens = rec.get("tokens")
        if isinstance(tokens, dict):
            self.counted = True
            self.tokens_in += int_or_none(tokens.get("input")) or 0
            self.tokens_out += (int_or_none(tokens.get("output")) or 0) + (int_or_none(tokens.get("thoughts")) or 0)


# -- the adapter ---------------------------------------------------------------------------------


class _GeminiRead:
    """One read of one source: replay its files, then yield each conversation's Session and events."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = Path(source.path)
        self.cursor = cursor
        self.unknown = UnknownRecords("Gemini CLI")
        chats, parent = chat_place(self.path)
        #: A subagent's chat sits in ``chats/<parent session id>/``.
        self.parent = parent
        self.project = _Project(chats)

    def run(self) -> Iterator[Item]:
        replay = _Replay(self.unknown)
        files = self.project.session_files(self.path)
        failures: list[Notice] = []
        for f in files:
            for notice in replay.document(f, alone=len(files) == 1) if f.suffix == ".json" else replay.log(f):
                if notice.fatal:
                    failures.append(notice)
                else:
                    yield notice
        if len(failures) == len(files):
            yield failures[0]  # nothing could be read: keep what was indexed, say why
            return
        for notice in failures:  # one file of several: the others still stand
            yield Notice(source=notice.source, reason=notice.reason, where=notice.where, transient=notice.transient)
        before = self.cursor.state.get("sessions") if self.cursor is not None else None
        before = before if isinstance(before, dict) else {}
        kept: dict[str, Any] = {}
        for conv in replay.conversations.values():
            render = _Render(conv, self.parent is not None or conv.kind == "subagent", self.unknown)
            if conv.stream is not None:
                ended = yield from self._streamed(conv, render, before.get(conv.sid), kept)
                if not ended:
                    return
                continue
            events = render.events()
            yield self._session(conv, render)
            items, kept[conv.sid] = reread_delta(render.counter.session, events, before.get(conv.sid))
            yield from items
        if (notice := self.unknown.notice(str(self.path))) is not None:
            yield notice
        yield Cursor(offset=0, next_seq=0, tail_hash="", state={"sessions": kept})

    def _streamed(
        self, conv: _Conversation, render: _Render, before: Any, kept: dict[str, Any]
    ) -> Generator[Item, None, bool]:
        """A streamed legacy document's Session, events as they come (a Session again if reading them changed
        it: the model, the tokens); False when the file ended early (a fatal Notice said so)."""
        assert conv.stream is not None
        first = self._session(conv, render)
        yield first
        delta = DeltaStream(render.counter.session, before)
        for ev in render.streamed(conv.stream):
            yield from delta.add(ev)
        ended = True
        for notice in stream_end(conv.stream, str(self.path)):
            ended = ended and not notice.fatal
            yield notice
        if not ended:
            return False
        items, kept[conv.sid] = delta.finish()
        yield from items
        if (last := self._session(conv, render)) != first:
            yield last
        return True

    def _session(self, conv: _Conversation, render: _Render) -> Session:
        cwd = self.project.cwd(conv.project_hash, conv.directories)
        # A main session's summary is the title Gemini CLI generates for /resume; a
        # subagent's is its result, already kept as its complete_task call.
        title = None if self.parent is not None or conv.kind == "subagent" else conv.summary
        return Session(
            id=session_id(PROVIDER, conv.sid),
            provider=PROVIDER,
            native_id=conv.sid,
            title=title,
            title_source="agent" if title else None,
            cwd=cwd,
            model=render.model,
            started=conv.started,
            updated=conv.updated,
            parent=session_id(PROVIDER, self.parent) if self.parent else None,
            # A subagent cannot be resumed on its own; its work lives on in the parent.
            resume=resume_command(cwd, self.parent or conv.sid),
            source=str(self.path),
            tokens_in=render.tokens_in if render.counted else None,
            tokens_out=render.tokens_out if render.counted else None,
        )


def probe(path: str) -> str:
    """The shape of a source, for ``voyager doctor``, from its place alone."""
    p = Path(path)
    if chat_place(p)[1] is not None:
        return "subagent"
    return "legacy-json" if p.suffix == ".json" else "jsonl-patch-log"


class GeminiAdapter:
    """Gemini CLI chats under ``<gemini home>/tmp/*/chats`` (``~/.gemini``, or ``$GEMINI_CLI_HOME/.gemini``)."""

    name: ClassVar[str] = "gemini"

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        home = manifest.agent_home("gemini", env)
        return [home / "tmp"] if home is not None else []

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for tmp in self.roots(env):
            projects: dict[str, list[Path]] = {}
            for folder in subdirs(tmp):
                if isinstance(folder, Notice):
                    yield folder
                else:
                    projects.setdefault(_Project(folder / "chats").key(), []).append(folder / "chats")
            for folders in projects.values():
                yield from self._sessions(folders)

    def _sessions(self, folders: list[Path]) -> Iterator[Source | Notice]:
        """One Source per session of one project: the files sharing an ``id[:8]`` (or a subagent's
        file and its copy) go together, its path the first of them in name order."""
        groups: dict[str, list[Source]] = {}
        for chats in folders:
            for item in walk_files(chats, ".jsonl", PROVIDER, append_only=False, match=_is_chat_file):
                if isinstance(item, Notice):
                    yield item
                    continue
                p = Path(item.path)
                # A symlinked file comes with its real path, somewhere else: a session of its own.
                key = group_key(p) if chat_place(p)[0] == chats else item.path
                groups.setdefault(key, []).append(item)
        for members in groups.values():
            members.sort(key=lambda src: (Path(src.path).name, src.path))
            yield Source(
                provider=PROVIDER,
                path=members[0].path,
                fingerprint=group_fingerprint([src.fingerprint for src in members]),
                append_only=False,
            )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _GeminiRead(source, cursor).run()


ADAPTER = GeminiAdapter()
