"""The Visual Studio Copilot adapter: GitHub Copilot's OpenTelemetry traces in Visual Studio (documented).

Copilot in Visual Studio exports its chats as OpenTelemetry spans, as agentsview's
``visualstudio_copilot.go`` reads them: files ``*_VSGitHubCopilot_traces*.jsonl`` in
``VSGitHubCopilotLogs/traces`` under the temp dir (``%LOCALAPPDATA%\\Temp`` on Windows; peers also look
in ``~/Library/Caches`` and ``~/.cache``), each line one OTLP export,
``{"resourceSpans": [{"scopeSpans": [{"spans": [{"spanId", "startTimeUnixNano", "endTimeUnixNano",
"attributes": [{"key", "value": {"stringValue" | "intValue"}}]}]}]}]}``. A conversation's spans are
spread over several files and a file holds several conversations, so the folder is one source and a
conversation (``gen_ai.conversation.id``) is a session:

* a ``chat`` span (``gen_ai.operation.name``): ``gen_ai.input.messages`` is the whole history sent
  (``[{"role", "parts": [{"type", "content"}]}]``), whose last ``user`` message is the prompt of this
  turn (once a turn: the next call of the same turn sends it again); ``gen_ai.output.messages`` is
  the reply (``text`` parts, and ``tool_call`` parts with ``id``/``name``/``arguments``); the model and
  ``gen_ai.usage.*`` tokens;
* a tool span (``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.call.arguments``,
  ``gen_ai.tool.call.result``): a call that ran, and its result (the chat span's copy of that call is
  then not indexed again).

Reading keeps memory bounded: a first pass over the files takes each conversation's signature
(its spans' ids and ends), and only the conversations that changed are read again, a batch at a
time. Visual Studio 2026's one-file conversations (``copilot-chat/…/sessions/<uuid>``) are not read:
their folder is not documented. No command reopens a chat outside the IDE.
"""

from __future__ import annotations

import hashlib
import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    int_or_none,
    list_or_empty,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, json_value, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.files import folder_fingerprint
from voyager_sessions.ingest.jsondoc import sorted_files
from voyager_sessions.ingest.jsonl import Record, read_records
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "visualstudio-copilot"
LABEL = "Visual Studio Copilot"
TRACE_MARK = "_VSGitHubCopilot_traces"
CONVERSATION = "gen_ai.conversation.id"
#: Attribute text held at most while one batch of changed conversations is read (the rest wait for the next pass).
BATCH_CHARS = 32 << 20


def traces_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_VISUALSTUDIO_COPILOT_HOME`` (authoritative), else the traces folder for this platform."""
    home = (
        "visualstudio-copilot.windows"
        if sys.platform.startswith("win")
        else "visualstudio-copilot.mac"
        if sys.platform == "darwin"
        else PROVIDER
    )
    return manifest.agent_homes((home,), env)


def trace_files(folder: Path) -> list[Path]:
    return [p for p in sorted_files(folder, ".jsonl") if TRACE_MARK in p.name]


def attributes(span: dict[str, Any]) -> dict[str, str]:
    out: dict[str, str] = {}
    for attr in list_or_empty(span.get("attributes")):
        attr = as_dict(attr)
        key, value = attr.get("key"), as_dict(attr.get("value"))
        text = value.get("stringValue")
        if not isinstance(text, str):
            text = str(value["intValue"]) if isinstance(value.get("intValue"), (int, str)) else None
        if isinstance(key, str) and text is not None:
            out[key] = text
    return out


def spans_of(export: Any) -> Iterator[dict[str, Any]]:
    for resource in list_or_empty(as_dict(export).get("resourceSpans")):
        for scope in list_or_empty(as_dict(resource).get("scopeSpans")):
            for span in list_or_empty(as_dict(scope).get("spans")):
                if isinstance(span, dict):
                    yield span


def _count(value: Any) -> int:
    """An integer an attribute holds as text (OTLP's ``intValue`` is a string); 0 for anything else."""
    return (int_or_none(int(value)) or 0) if isinstance(value, str) and value.isdigit() and len(value) < 20 else 0


def _nanos(value: Any) -> float | None:
    n = _count(value) if isinstance(value, str) else int_or_none(value)
    return n / 1e9 if n else None


def _messages(raw: str | None) -> list[dict[str, Any]]:
    return [m for m in list_or_empty(json_value(raw)) if isinstance(m, dict)]


def _parts_text(message: dict[str, Any], kind: str = "text") -> str:
    return "\n".join(
        p["content"].strip()
        for p in list_or_empty(message.get("parts"))
        if isinstance(p, dict)
        and p.get("type", kind) == kind
        and isinstance(p.get("content"), str)
        and p["content"].strip()
    )


class _Conversation:
    """What one conversation's spans add up to: its drafts in time order, its model, tokens and times."""

    def __init__(self, native: str) -> None:
        self.native = native
        self.spans: list[tuple[float, dict[str, str]]] = []

    def add(self, span: dict[str, Any], attrs: dict[str, str]) -> None:
        self.spans.append((_nanos(span.get("startTimeUnixNano")) or 0.0, attrs))

    def items(self, path: str, unknown: UnknownRecords) -> list[Item]:
        self.spans.sort(key=lambda s: s[0])
        executed = {
            a["gen_ai.tool.call.id"]
            for _, a in self.spans
            if a.get("gen_ai.tool.name") and a.get("gen_ai.tool.call.id")
        }
        prompts: set[tuple[str, str]] = set()
        drafts: list[Draft] = []
        model = None
        tokens_in = tokens_out = 0
        for start, a in self.spans:
            ts = start or None
            if a.get("gen_ai.tool.name"):
                ran = a["gen_ai.tool.name"]
                call_id = a.get("gen_ai.tool.call.id")
                drafts.append(
                    (
                        "tool_call",
                        "agent",
                        tool_call_text(ran, a.get("gen_ai.tool.call.arguments")),
                        {"ts": ts, "tool": ran, "call_id": call_id},
                    )
                )
                drafts.append(
                    (
                        "tool_result",
                        "tool",
                        a.get("gen_ai.tool.call.result"),
                        {"ts": ts, "tool": ran, "call_id": call_id},
                    )
                )
            elif a.get("gen_ai.operation.name") == "chat":
                model = a.get("gen_ai.response.model") or a.get("gen_ai.request.model") or model
                tokens_in += _count(a.get("gen_ai.usage.input_tokens"))
                tokens_out += _count(a.get("gen_ai.usage.output_tokens"))
                users = [m for m in _messages(a.get("gen_ai.input.messages")) if m.get("role") == "user"]
                prompt = next((t for t in (_parts_text(m) for m in reversed(users)) if t), "")
                key = (a.get("copilot_chat.root_request_id", ""), prompt)
                if prompt and key not in prompts:  # every call of a turn sends the turn's prompt again
                    prompts.add(key)
                    drafts.append(("user", "human", prompt, {"ts": ts}))
                for message in _messages(a.get("gen_ai.output.messages")):
                    for part in list_or_empty(message.get("parts")):
                        part = as_dict(part)
                        ptype = part.get("type")
                        if ptype == "text":
                            drafts.append(("assistant", "agent", part.get("content"), {"ts": ts}))
                        elif ptype == "reasoning":
                            drafts.append(("reasoning", "agent", part.get("content"), {"ts": ts}))
                        elif ptype == "tool_call":
                            if part.get("id") in executed:
                                continue  # the call ran: its tool span, with its result, is indexed instead
                            name = str_or_none(part.get("name"))
                            fields = {"ts": ts, "tool": name, "call_id": str_or_none(part.get("id"))}
                            drafts.append(("tool_call", "agent", tool_call_text(name, part.get("arguments")), fields))
                        else:
                            unknown.saw(f"part:{ptype}")
        sid = session_id(PROVIDER, self.native)
        events = list(number(EventCounter(sid, 0), drafts))
        if not events:
            return []
        times = [s for s, _ in self.spans if s]
        return [
            Session(
                id=sid,
                provider=PROVIDER,
                native_id=self.native,
                model=model,
                started=min(times) if times else None,
                updated=max(times) if times else None,
                resume=None,
                source=path,
                tokens_in=tokens_in or None,
                tokens_out=tokens_out or None,
            ),
            *events,
        ]


def _spans(files: list[Path], notices: list[Notice]) -> Iterator[tuple[str, dict[str, Any], dict[str, str]]]:
    """(conversation id, span, its attributes) of every span with a conversation, file by file, line by line."""
    for path in files:
        for item in read_records(str(path)):
            if isinstance(item, Notice):
                # One file that cannot be read costs only its spans: the folder is still read.
                notices.append(msgspec.structs.replace(item, fatal=False) if item.fatal else item)
                continue
            assert isinstance(item, Record)
            for span in spans_of(item.value):
                attrs = attributes(span)
                native = attrs.get(CONVERSATION)
                if native:
                    yield native, span, attrs


def read_traces(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    folder = Path(source.path)
    files = trace_files(folder)
    known = cursor.state.get("sessions") if cursor is not None else None
    known = known if isinstance(known, dict) else {}
    unknown = UnknownRecords(LABEL)
    notices: list[Notice] = []
    # Pass 1: each conversation's signature (its spans' ids and ends) and how much text it holds.
    digests: dict[str, Any] = {}
    sizes: dict[str, int] = {}
    for native, span, attrs in _spans(files, notices):
        h = digests.setdefault(native, hashlib.blake2b(digest_size=10))
        h.update(f"{span.get('spanId')}|{span.get('endTimeUnixNano')}\0".encode("utf-8", "surrogatepass"))
        sizes[native] = sizes.get(native, 0) + sum(len(v) for v in attrs.values())
    yield from notices
    signatures = {native: h.hexdigest() for native, h in digests.items()}
    changed = [n for n in signatures if known.get(n) != signatures[n]]
    out = {n: s for n, s in signatures.items() if known.get(n) == s}
    for native in sorted(out):
        yield Unchanged(session=session_id(PROVIDER, native))
    # Pass 2: the changed conversations, a batch at a time (each batch reads the files again).
    while changed:
        batch: dict[str, _Conversation] = {}
        held = 0
        while changed and (not batch or held + sizes[changed[0]] <= BATCH_CHARS):
            native = changed.pop(0)
            batch[native] = _Conversation(native)
            held += sizes[native]
        for native, span, attrs in _spans(files, []):
            if native in batch:
                batch[native].add(span, attrs)
        for native, conversation in batch.items():
            yield from conversation.items(source.path, unknown)
            out[native] = signatures[native]
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=0, tail_hash="", state={"sessions": out})


class VisualStudioCopilotAdapter:
    """Copilot's trace folder in Visual Studio: one source holding every conversation its spans name."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return traces_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for folder in traces_dirs(env):
            files = trace_files(folder)
            if not files:
                continue
            try:
                fp = folder_fingerprint(folder, files)
            except OSError:
                continue
            yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isdir(source.path):
            return iter(
                [Notice(source=source.path, reason="not a Visual Studio Copilot traces folder; skipped", fatal=True)]
            )
        return read_traces(source, cursor)


ADAPTER = VisualStudioCopilotAdapter()
