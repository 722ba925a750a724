"""Copilot Chat in VS Code: the editor's own chat-session files, read-only, into Sessions and Events.

Where (FAD, FR; docs/agents.md): ``<Code | Code - Insiders | VSCodium>/User/`` then
``workspaceStorage/<ws>/chatSessions/<id>.json|.jsonl`` (cwd: ``<ws>/workspace.json``
``folder``), ``globalStorage/emptyWindowChatSessions/`` (no folder) and
``globalStorage/transferredChatSessions/`` (a session moving between windows; skipped when
a workspace already holds the same id). ``VOYAGER_COPILOT_VSCODE_HOME`` names one user dir
and nothing else is probed.

Variants (``probe`` names them): ``json`` (a serialized session, version 3; March 2025 to
1.108) and ``jsonl`` (1.109+: a mutation log replayed by ``ingest/mutation_log.py``; a value
a later entry overwrote is gone). When both exist for one id the ``.jsonl`` is read.

A session is ``requests``; each request is one turn:

* ``message.text`` is what the person typed (``user``/``human``);
* ``response`` parts: markdown (no ``kind``, or ``markdownContent``/``markdownVuln``), run
  together into one ``assistant`` event per stretch of text, inline references kept as
  their names; ``thinking`` -> ``reasoning``; ``toolInvocationSerialized`` -> ``tool_call``
  (a terminal command's command line; other tools their input, else the message VS Code
  showed) and ``tool_result`` when output was kept (a terminal's output and exit code, a
  tool's ``resultDetails``); ``warning``/``confirmation`` -> ``meta``; progress, edit groups,
  code-block links and the like carry no text and are skipped by name; anything else is
  counted and named.
* ``result.errorDetails`` -> ``meta`` marked as an error.

Only requests answered by GitHub Copilot are kept (``agent.extensionId`` / ``agent.id``
starting ``github.copilot``, or no agent recorded, as in older files): the same store
holds other extensions' chat participants (``@azure``, ``@mermaid`` …): their requests are
left out, and named in a Notice where they share a session with Copilot. There is
no command to reopen a chat outside the editor: ``resume`` is None.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from voyager_sessions.core import paths
from voyager_sessions.ingest import manifest
from voyager_sessions.ingest import mutation_log
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    epoch,
    int_or_none,
    str_or_none,
)
from voyager_sessions.ingest.adapters._vscode import session_files, uri_path, workspace_dirs, workspace_folder
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json_streamed, stream_end
from voyager_sessions.ingest.toolcall import SUBAGENT_REPORT, report_pair, tool_call_text
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "copilot-vscode"
#: The top-level keys of a session document besides its ``requests`` (what its Session reads).
_DOC_KEYS = ("version", "sessionId", "creationDate", "lastMessageDate", "customTitle")
#: The VS Code builds whose user dirs hold these sessions.
APPS: tuple[str, ...] = ("Code", "Code - Insiders", "VSCodium")
SUFFIXES = (".jsonl", ".json")

#: Response parts that carry no searchable text of their own (UI bookkeeping): skipped by name.
_SILENT_PARTS = frozenset(
    {
        "codeblockUri",
        "textEditGroup",
        "notebookEditGroup",
        "undoStop",
        "prepareToolInvocation",
        "progressMessage",
        "progressTask",
        "progressTaskSerialized",
        "command",
        "mcpServersStarting",
        "extensions",
        "pullRequest",
        "multiDiffData",
        "codeCitation",
        "treeData",
        "hook",
        "elicitation",
        "elicitationSerialized",
        "questionCarousel",
        "clearToPreviousToolInvocation",
        "workspaceEdit",
        "references",
        "textEdit",
        "notebookEdit",
        "move",
        "toolInvocation",
        "usedContext",
        "contentReference",
        "agentDetection",
    }
)


@dataclass(frozen=True)
class ChatApp:
    """An editor whose chat panel keeps VS Code's chat-session files: Copilot Chat in VS Code, and forks whose
    own assistant writes the same files (Positron's). Everything that differs between them is one value."""

    #: The provider its sessions are filed under.
    provider: str
    #: What its files are called in notices ("VS Code").
    label: str
    #: The manifest home naming one user dir outright (authoritative when set).
    override: str
    #: The editors (VS Code-family app folders) whose user dirs hold the files.
    apps: tuple[str, ...]
    #: Keep only the requests GitHub Copilot answered (VS Code's panel also hosts other extensions' participants).
    copilot_only: bool


COPILOT = ChatApp(provider=PROVIDER, label="VS Code", override="copilot-vscode.app", apps=APPS, copilot_only=True)


def user_dirs(env: Mapping[str, str], app: ChatApp = COPILOT) -> list[Path]:
    override = manifest.agent_home(app.override, env)
    if override is not None:
        return [override]
    return [d for name in app.apps for d in paths.vscode_user_dirs(env, name)]


def _session_files(folder: Path, provider: str = PROVIDER) -> list[Source | Notice]:
    """Session files in one container; a ``.json`` is dropped when the same id also has a ``.jsonl``."""
    return session_files(folder, provider, ".jsonl", ".json")


def _stem(path: str) -> str:
    name = os.path.basename(path)
    for suffix in SUFFIXES:
        if name.endswith(suffix):
            return name[: -len(suffix)]
    return name


# ---------------------------------------------------------------------------
# One session document -> events
# ---------------------------------------------------------------------------


def _md(value: Any) -> str | None:
    """Text of a string or an ``IMarkdownString`` (``{"value": …}``)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict) and isinstance(value.get("value"), str):
        return value["value"]
    return None


def responder(request: dict[str, Any]) -> str | None:
    """None when GitHub Copilot answered (or no agent is recorded); else who did (extension or agent id)."""
    agent = request.get("agent")
    if not isinstance(agent, dict):
        return None
    ext = agent.get("extensionId")
    ext_id = str_or_none(ext.get("value")) if isinstance(ext, dict) else str_or_none(ext)
    agent_id = str_or_none(agent.get("id"))
    if any(v.lower().startswith("github.copilot") for v in (ext_id, agent_id) if v):
        return None
    return ext_id or agent_id


def _reference_name(part: dict[str, Any]) -> str | None:
    name = str_or_none(part.get("name"))
    if name:
        return name
    ref = part.get("inlineReference")
    if isinstance(ref, dict):
        target = ref.get("uri") if isinstance(ref.get("uri"), dict) else ref
        found = str_or_none(target.get("fsPath")) or str_or_none(target.get("path")) or uri_path(target.get("external"))
        return posixpath.basename(found) if found else str_or_none(ref.get("name"))
    return None


def _tool_events(counter: EventCounter, part: dict[str, Any], ts: float | None) -> Iterator[Event]:
    tool = str_or_none(part.get("toolId"))
    call_id = str_or_none(part.get("toolCallId"))
    data = part.get("toolSpecificData") if isinstance(part.get("toolSpecificData"), dict) else {}
    details = part.get("resultDetails")
    output: str | None = None
    exit_code: int | None = None
    call: Any  # the call's arguments as recorded: a command line, an object, a prompt (the one rule renders them)
    kind = data.get("kind")
    if kind == "terminal":
        line = data.get("commandLine")
        if isinstance(line, dict):
            call = (
                str_or_none(line.get("userEdited"))
                or str_or_none(line.get("toolEdited"))
                or str_or_none(line.get("original"))
            )
        else:
            call = str_or_none(data.get("command"))  # the older shape
        out = data.get("terminalCommandOutput")
        output = str_or_none(out.get("text")) if isinstance(out, dict) else None
        state = data.get("terminalCommandState")
        exit_code = int_or_none(state.get("exitCode")) if isinstance(state, dict) else None
    elif kind == "input":
        call = data.get("rawInput")
    elif kind == "subagent":
        call = str_or_none(data.get("prompt")) or str_or_none(data.get("description"))
        output = str_or_none(data.get("result"))
    else:
        call = None
    if call is None and isinstance(details, dict):
        call = str_or_none(details.get("input"))
    if call is None:
        call = _md(part.get("pastTenseMessage")) or _md(part.get("invocationMessage"))
    if (
        ev := counter.make("tool_call", "agent", tool_call_text(tool, call), ts=ts, tool=tool, call_id=call_id)
    ) is not None:
        yield ev
    is_error = False
    if output is None and isinstance(details, dict):
        outs = details.get("output")
        if isinstance(outs, list):
            texts = [o["value"] for o in outs if isinstance(o, dict) and isinstance(o.get("value"), str)]
            output = "\n".join(texts) or None
        is_error = details.get("isError") is True
    elif output is None and isinstance(details, list):
        named = [uri_path(d.get("external")) or str_or_none(d.get("path")) for d in details if isinstance(d, dict)]
        output = "\n".join(n for n in named if n) or None
    if output is not None:
        # A subagent's result is its report: the one kind/origin every adapter gives one (docs/json.md).
        rkind, rorigin = SUBAGENT_REPORT if kind == "subagent" else report_pair(tool)
        ev = counter.make(
            rkind, rorigin, output, ts=ts, tool=tool, call_id=call_id, exit_code=exit_code, is_error=is_error
        )
        if ev is not None:
            yield ev


def _response_events(counter: EventCounter, parts: Any, ts: float | None, unknown: UnknownRecords) -> Iterator[Event]:
    text: list[str] = []

    def flush() -> Iterator[Event]:
        if text and (ev := counter.make("assistant", "agent", "".join(text), ts=ts)) is not None:
            yield ev
        text.clear()

    for part in parts if isinstance(parts, list) else ():
        if not isinstance(part, dict):
            continue
        kind = part.get("kind")
        if kind is None or kind == "markdownContent" or kind == "markdownVuln":
            value = _md(part) if kind is None else _md(part.get("content"))
            if value:
                text.append(value)
        elif kind == "inlineReference":
            if name := _reference_name(part):
                text.append(name)
        elif kind == "thinking":
            yield from flush()
            value = part.get("value")
            thought = "".join(v for v in value if isinstance(v, str)) if isinstance(value, list) else str_or_none(value)
            if (ev := counter.make("reasoning", "agent", thought, ts=ts)) is not None:
                yield ev
        elif kind == "toolInvocationSerialized":
            yield from flush()
            yield from _tool_events(counter, part, ts)
        elif kind in ("warning", "confirmation"):
            yield from flush()
            said = [_md(part.get("title")), _md(part.get("message")), _md(part.get("content"))]
            if (ev := counter.make("meta", "provider", "\n".join(s for s in said if s), ts=ts)) is not None:
                yield ev
        elif isinstance(kind, str) and kind in _SILENT_PARTS:  # a list or dict kind is unhashable
            continue
        else:
            unknown.saw(f"response part {kind!r}"[:80])
    yield from flush()


class _Tally:
    """What a session's requests add up to besides their events (its Session's facts)."""

    def __init__(self) -> None:
        self.others: dict[str, int] = {}  # {responder: requests} that were not Copilot's
        self.model: str | None = None
        self.tokens_in = self.tokens_out = 0
        self.first: float | None = None
        self.last: float | None = None


def _request_events(
    requests: Iterable[Any], counter: EventCounter, tally: _Tally, unknown: UnknownRecords, copilot_only: bool = True
) -> Iterator[Event]:
    """The events of ``requests`` in order, their facts added to ``tally`` as they are read."""
    for request in requests:
        if not isinstance(request, dict):
            continue
        who = responder(request) if copilot_only else None
        if who is not None:
            tally.others[who] = tally.others.get(who, 0) + 1
            continue
        ts = epoch(request.get("timestamp"))
        if ts is not None:
            tally.first = ts if tally.first is None else min(tally.first, ts)
            tally.last = ts if tally.last is None else max(tally.last, ts)
        message = request.get("message")
        prompt = _md({"value": message.get("text")}) if isinstance(message, dict) else _md(message)
        if (ev := counter.make("user", "human", prompt, ts=ts)) is not None:
            yield ev
        yield from _response_events(counter, request.get("response"), ts, unknown)
        result = request.get("result") if isinstance(request.get("result"), dict) else {}
        error = result.get("errorDetails")
        if (
            isinstance(error, dict)
            and (ev := counter.make("meta", "provider", str_or_none(error.get("message")), ts=ts, is_error=True))
            is not None
        ):
            yield ev
        meta = result.get("metadata")
        if isinstance(meta, dict):
            tally.tokens_in += int_or_none(meta.get("promptTokens")) or 0
            tally.tokens_out += int_or_none(meta.get("outputTokens")) or 0
        tally.model = str_or_none(request.get("modelId")) or tally.model


def _session(
    doc: dict[str, Any], native: str, tally: _Tally, cwd: str | None, source: str, provider: str = PROVIDER
) -> Session:
    started = epoch(doc.get("creationDate"))
    return Session(
        id=session_id(provider, native),
        provider=provider,
        native_id=native,
        title=str_or_none(doc.get("customTitle")),
        cwd=cwd,
        model=tally.model,
        started=started if started is not None else tally.first,
        updated=epoch(doc.get("lastMessageDate")) or tally.last,
        resume=None,
        source=source,
        tokens_in=tally.tokens_in or None,
        tokens_out=tally.tokens_out or None,
    )


def session_items(
    doc: dict[str, Any], native: str, *, cwd: str | None, source: str, unknown: UnknownRecords, app: ChatApp = COPILOT
) -> tuple[list[Session | Event], dict[str, int]]:
    """The Session and Events of one session document, and {responder: requests} that were not Copilot's."""
    tally = _Tally()
    requests = doc.get("requests")
    counter = EventCounter(session_id(app.provider, native), 0)
    listed = requests if isinstance(requests, list) else ()
    events = list(_request_events(listed, counter, tally, unknown, app.copilot_only))
    if not events:
        return [], tally.others
    return [_session(doc, native, tally, cwd, source, app.provider), *events], tally.others


def _streamed_items(
    doc: dict[str, Any],
    native: str,
    *,
    cwd: str | None,
    source: str,
    unknown: UnknownRecords,
    tally: _Tally,
    app: ChatApp = COPILOT,
) -> Iterator[Item]:
    """:func:`session_items` for a document whose ``requests`` are streamed (a large file): the Session as soon
    as the first event is known, each event as it comes, and the Session again when the rest changed it."""
    requests = doc["requests"]
    counter = EventCounter(session_id(app.provider, native), 0)
    first: Session | None = None
    for ev in _request_events(requests, counter, tally, unknown, app.copilot_only):
        if first is None:
            first = _session(doc, native, tally, cwd, source, app.provider)
            yield first
        yield ev
    ended = list(stream_end(requests, source))
    yield from ended
    if first is None or any(n.fatal for n in ended):
        return
    if (last := _session(doc, native, tally, cwd, source, app.provider)) != first:
        yield last


def _cwd_of(path: Path) -> str | None:
    """The folder of the workspace a ``chatSessions`` file belongs to (None for global containers)."""
    folder = path.parent
    if folder.name == "chatSessions" and folder.parent.parent.name == "workspaceStorage":
        return workspace_folder(folder.parent)
    return None


def read_session(source: Source, app: ChatApp = COPILOT) -> Iterator[Item]:
    path = source.path
    notices: list[Notice] = []
    if path.endswith(".jsonl"):
        doc, notices = mutation_log.replay(path)
        if doc is None and not any(n.fatal for n in notices):
            notices.append(
                Notice(source=path, reason="no initial state (kind 0) in the log: nothing to replay", fatal=True)
            )
    else:
        # A large file's requests are streamed, a request at a time (the log above is replayed whole).
        doc = read_json_streamed(path, "requests", _DOC_KEYS, notices=notices)
        if isinstance(doc, Notice):
            notices.append(doc)
            doc = None
    yield from notices
    if doc is None or any(n.fatal for n in notices):
        return
    if not isinstance(doc, dict) or not ("requests" in doc or "sessionId" in doc):
        yield Notice(source=path, reason="not a chat session (no sessionId, no requests); skipped")
        return
    unknown = UnknownRecords(app.label)
    version = doc.get("version")
    if isinstance(version, int) and not isinstance(version, bool):
        unknown.version = f"(session format {version})"
    native, cwd = _stem(path), _cwd_of(Path(path))
    if isinstance(doc.get("requests"), StreamedArray):
        tally = _Tally()
        said = False  # whether the session had any event (then its Session went out)
        for item in _streamed_items(doc, native, cwd=cwd, source=path, unknown=unknown, tally=tally, app=app):
            yield item
            if isinstance(item, Notice) and item.fatal:
                return  # caught half-written: read again next scan
            said = said or isinstance(item, Session)
        others = tally.others
    else:
        produced, others = session_items(doc, native, cwd=cwd, source=path, unknown=unknown, app=app)
        said = bool(produced)
        yield from produced
    # A session only other participants answered is theirs, not Copilot's: nothing to say. Where
    # they share a session with Copilot, what was left out is named.
    if others and said:
        named = ", ".join(f"{k} ×{n}" if n > 1 else k for k, n in sorted(others.items()))
        yield Notice(
            source=path,
            reason=f"{sum(others.values())} request(s) answered by other chat participants "
            f"than GitHub Copilot skipped ({named})",
        )
    if (notice := unknown.notice(path)) is not None:
        yield notice


class CopilotVSCodeAdapter:
    """Copilot Chat's sessions in VS Code's (and Insiders', VSCodium's) storage; see the module doc.

    One instance per :class:`ChatApp`: Copilot Chat in VS Code, and editors that keep the same files (Positron)."""

    name: str = PROVIDER

    def __init__(self, app: ChatApp = COPILOT) -> None:
        self.app = app
        self.name = app.provider

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return user_dirs(env, self.app)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        provider = self.app.provider
        for user in user_dirs(env, self.app):
            in_workspaces: set[str] = set()
            for ws in workspace_dirs(user):
                if os.path.isdir(ws / "chatSessions"):
                    for item in _session_files(ws / "chatSessions", provider):
                        if isinstance(item, Source):
                            in_workspaces.add(_stem(item.path))
                        yield item
            yield from _session_files(user / "globalStorage" / "emptyWindowChatSessions", provider)
            for item in _session_files(user / "globalStorage" / "transferredChatSessions", provider):
                if isinstance(item, Source) and _stem(item.path) in in_workspaces:
                    continue  # arrived in its new window: that copy is read
                yield item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        """One session file, whole (a log is replayed from its start: a later entry may rewrite an earlier one)."""
        return read_session(source, self.app)


def probe(path: str | os.PathLike[str]) -> str:
    """``jsonl`` (mutation log) or ``json`` (with its format version, e.g. ``json-v3``)."""
    p = os.fspath(path)
    if p.endswith(".jsonl"):
        return "jsonl"
    doc = read_json_streamed(p, "requests", ("version",))  # a large file: its version, not its requests
    version = doc.get("version") if isinstance(doc, dict) else None
    return f"json-v{version}" if isinstance(version, int) and not isinstance(version, bool) else "json"


ADAPTER = CopilotVSCodeAdapter()
