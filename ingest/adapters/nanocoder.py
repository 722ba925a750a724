"""The Nanocoder adapter: ``<data dir>/sessions/<uuid>.json`` (observed, 1.30.0) to Sessions and Events.

Owns what Voyager knows about Nanocoder's saved sessions. The interactive UI autosaves
one JSON document a session, ``{id, title, createdAt, lastAccessedAt, messageCount,
provider, model, workingDirectory, messages}``, rewritten whole as the chat goes on (read
whole again; ``reread_delta`` keeps an added turn at the cost of what it adds).
``sessions/sessions.json`` repeats the same metadata without the messages: never read.

``messages`` are in the OpenAI chat shape: ``user`` (what a person typed), ``assistant``
(``content``, ``reasoning`` as a string, ``tool_calls`` whose ``function.arguments`` is an
object, or JSON text; ``execute_bash``: the command), ``tool`` (``tool_call_id``, ``name``;
the exit code only as the text's first line ``EXIT_CODE: n``, which becomes the event's
exit code) and ``system`` (meta).

The title is the **latest** prompt cut with ``...``: it moves on with every turn, so it is
marked as a prompt-made title (``title_source: prompt``) and never indexed as a title of
its own; a title that is no prompt's beginning is kept as the agent's. Messages carry no
time: the session runs from ``createdAt`` to ``lastAccessedAt``.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    doc_with_list,
    document_items,
    epoch,
    EventCounter,
    join_text,
    json_sessions,
    openai_tool_calls,
    opt,
    resume_in,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.core.model import Event, Session, TitleSource, session_id

PROVIDER = "nanocoder"
LABEL = "Nanocoder"
INDEX = "sessions.json"
#: The top-level keys of a session file besides its messages (what its Session reads).
_DOC_KEYS = ("id", "workingDirectory", "title", "model", "createdAt", "lastAccessedAt")
#: Prompts kept to recognise the title as one of them cut short.
_PROMPTS_KEPT = 64

#: Tools whose ``command`` argument is a shell command.
SHELL_TOOLS = frozenset({"execute_bash", "bash", "shell"})
#: How Nanocoder's shell tool reports the exit status: the first line of its output.
_EXIT = re.compile(r"\AEXIT_CODE:[ \t]*(-?\d{1,10})[ \t]*(?:\r?\n|\Z)")


def sessions_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_NANOCODER_HOME``, ``$NANOCODER_DATA_DIR``, ``$XDG_DATA_HOME/nanocoder``, ``~/.local/share/nanocoder``
    (and macOS's ``~/Library/Application Support/nanocoder``), each with ``sessions/`` below it."""
    found: dict[str, Path] = {}
    for home in ("nanocoder", "nanocoder.mac"):
        base = manifest.agent_home(home, env)
        if base is not None:
            found.setdefault(os.path.normpath(str(base)), base / "sessions")
    return list(found.values())


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``nanocoder --resume <id>``, in the session's working directory."""
    return resume_in(cwd, "nanocoder", opt("--resume", native_id))


def split_exit(text: str) -> tuple[str, int | None]:
    """The output without its ``EXIT_CODE: n`` line, and n (None when the text states none)."""
    m = _EXIT.match(text)
    if m is None:
        return text, None
    return text[m.end() :], int(m.group(1))


def title_source(title: str, prompts: list[str]) -> TitleSource | None:
    """``prompt`` when ``title`` is one of the prompts cut short (Nanocoder's own titles), else None."""
    head = " ".join(title.split())
    head = head[:-3] if head.endswith("...") else head.rstrip("…")
    head = head.strip()
    if not head:
        return None
    return "prompt" if any(" ".join(p.split()).startswith(head) for p in prompts) else None


class _SessionRead:
    """One read of one session file."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = Path(source.path)
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)
        #: The prompts read, to tell whether the title is one cut short: only the first few are kept (a title
        #: Nanocoder makes comes from an early prompt), so a session of millions of them is not held.
        self.prompts: list[str] = []

    def run(self) -> Iterator[Item]:
        read = doc_with_list(self.path, "messages", "a Nanocoder session file", _DOC_KEYS)
        if isinstance(read, Notice):
            yield read
            return
        doc, messages = read
        native = str_or_none(doc.get("id")) or self.path.stem
        sid = session_id(PROVIDER, native)
        counter = EventCounter(sid, 0)

        def events() -> Iterator[Event]:
            for message in messages:
                if isinstance(message, dict):
                    yield from self._message(counter, message)
                else:
                    self.unknown.saw(type(message).__name__)

        cwd = str_or_none(doc.get("workingDirectory"))
        title = str_or_none(doc.get("title"))
        title = title.strip() if title and title.strip() else None

        def session() -> Session:  # the title's source depends on the prompts read
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                title=title,
                title_source=title_source(title, self.prompts) if title else None,
                cwd=cwd,
                model=str_or_none(doc.get("model")),
                started=epoch(doc.get("createdAt")),
                updated=epoch(doc.get("lastAccessedAt")),
                resume=resume_command(cwd, native),
                source=str(self.path),
            )

        yield from document_items(sid, session, events(), messages, self.before, self.unknown, str(self.path))

    def _message(self, counter: EventCounter, message: dict[str, Any]) -> Iterator[Event]:
        role = message.get("role")
        content = message.get("content")
        text = join_text(content) if isinstance(content, (str, list)) else ""
        drafts: list[tuple[Any, ...]] = []
        if role == "user":
            if len(self.prompts) < _PROMPTS_KEPT:
                self.prompts.append(text)
            drafts.append(("user", "human", text, {}))
        elif role == "assistant":
            drafts.append(("reasoning", "agent", str_or_none(message.get("reasoning")), {}))
            drafts.append(("assistant", "agent", text, {}))
            for call in openai_tool_calls(message.get("tool_calls")):
                drafts.append(
                    (
                        "tool_call",
                        "agent",
                        tool_call_text(call.name, call.arguments, SHELL_TOOLS),
                        {"tool": call.name, "call_id": call.id},
                    )
                )
        elif role == "tool":
            output, code = split_exit(text)
            drafts.append(
                (
                    "tool_result",
                    "tool",
                    output,
                    {
                        "tool": str_or_none(message.get("name")),
                        "call_id": str_or_none(message.get("tool_call_id")),
                        "exit_code": code,
                        "is_error": code is not None and code != 0,
                    },
                )
            )
        elif role == "system":
            drafts.append(("meta", "provider", text, {}))
        else:
            self.unknown.saw(f"role:{role}")
        for kind, origin, body, fields in drafts:
            if isinstance(body, str) and (ev := counter.make(kind, origin, body, **fields)) is not None:
                yield ev


class NanocoderAdapter:
    """Nanocoder's autosaved sessions under its data dir's ``sessions/``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return sessions_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in self.roots(env):
            yield from json_sessions(root, PROVIDER, INDEX, LABEL)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _SessionRead(source, cursor).run()


ADAPTER = NanocoderAdapter()
