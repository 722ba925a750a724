"""The Amp adapter: Sourcegraph Amp's local thread files, ``<data dir>/threads/T-<id>.json`` (documented, not yet observed).

Owns what Voyager knows about Amp's threads. The evidence is peers' parsers and test data
(agentsview, a few single-agent readers), not a real install: Amp asks for an ampcode.com
login before it writes anything, and newer releases keep threads on Amp's server, so a
local file may hold little or nothing (an empty thread is simply empty, never an error).

One JSON document a thread, rewritten whole as the thread goes on (read whole again;
``reread_delta`` keeps an added turn at the cost of what it adds): ``{v, id: "T-<uuid>",
created (epoch ms), title, env.initial.trees[{displayName, uri: "file://<cwd>"}],
messages[], meta.traces[{startTime, endTime}]}``. ``messages[]`` are ``{role: user|assistant,
content: [blocks], state, usage{model, inputTokens, outputTokens, cache*InputTokens,
timestamp}}`` with Anthropic-style blocks: ``text``, ``thinking``, ``tool_use`` (``id``,
``name``, ``input``) and ``tool_result`` in two spellings, the canonical ``tool_use_id`` +
``content`` and Amp's own ``toolUseID`` + ``run{status: done|error|cancelled, result,
error.message}`` (a shell result ``{output, exitCode}``: the exit code is kept).

Only a ``user`` message's ``text`` is a person's prompt; a ``user`` message holding only
tool results carries the results. Resume: ``amp threads continue <id>`` in the thread's
directory, as a peer's session browser documents it (*verify*).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import unquote, urlsplit

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    compact_json,
    epoch,
    int_or_none,
    list_or_empty,
    parse_ts,
    doc_with_list,
    document_items,
    arg,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, absolute_path, exit_code, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.core.model import Session, session_id

PROVIDER = "amp"
LABEL = "Amp"
#: Amp's shell tool; its input names the command ``cmd`` (``command`` in some samples).
SHELL_TOOLS = frozenset({"bash", "shell"})
_THREAD = re.compile(r"\AT-[A-Za-z0-9_-]+\.json\Z")


def threads_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_AMP_HOME``, ``$XDG_DATA_HOME/amp`` or ``~/.local/share/amp``, with ``threads/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None
    return home / "threads"


def cwd_of(doc: dict[str, Any]) -> str | None:
    """The first workspace tree's ``file://`` URI as a path (the thread's working directory)."""
    trees = list_or_empty(as_dict(as_dict(doc.get("env")).get("initial")).get("trees"))
    uri = str_or_none(as_dict(trees[0]).get("uri")) if trees else None
    if uri is None or not uri.startswith("file://"):
        return None
    return absolute_path(unquote(urlsplit(uri).path))


def resume_command(cwd: str | None, native_id: str) -> str | None:
    """``amp threads continue <id>``, in the thread's working directory."""
    return resume_in(cwd, "amp", "threads", "continue", arg(native_id))


def result_text(value: Any) -> str:
    """A tool result as text: a string as is; a shell/read/edit result's ``output``/``content``/``diff``; else JSON."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        for key in ("output", "content", "diff"):
            if key in value:
                return result_text(value[key])
        return compact_json(value)
    if isinstance(value, list):
        if all(isinstance(v, str) for v in value):
            return "\n".join(value)
        texts = [b["text"] for b in value if isinstance(b, dict) and isinstance(b.get("text"), str)]
        return "\n".join(texts) if texts else compact_json(value)
    return compact_json(value)


class _ThreadRead:
    """One read of one thread file."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = Path(source.path)
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)

    def run(self) -> Iterator[Item]:
        read = doc_with_list(self.path, "messages", "an Amp thread file", ("id", "title", "created", "env", "meta"))
        if isinstance(read, Notice):
            yield read
            return
        doc, messages = read
        native = str_or_none(doc.get("id")) or self.path.stem
        sid = session_id(PROVIDER, native)
        model = None
        tokens_in = tokens_out = 0
        last_ts: float | None = None

        def drafts() -> Iterator[Draft]:
            nonlocal model, tokens_in, tokens_out, last_ts
            for message in messages:
                if not isinstance(message, dict):
                    self.unknown.saw(type(message).__name__)
                    continue
                usage = as_dict(message.get("usage"))
                ts = parse_ts(usage.get("timestamp")) or epoch(as_dict(message.get("meta")).get("sentAt"))
                last_ts = ts or last_ts
                model = str_or_none(usage.get("model")) or model
                tokens_in += sum(
                    int_or_none(usage.get(k)) or 0
                    for k in ("inputTokens", "cacheCreationInputTokens", "cacheReadInputTokens")
                )
                tokens_out += int_or_none(usage.get("outputTokens")) or 0
                yield from self._message(message, ts)

        title = str_or_none(doc.get("title"))
        cwd = cwd_of(doc)

        def session() -> Session:  # the model, tokens and last time are the messages'
            return Session(
                id=sid,
                provider=PROVIDER,
                native_id=native,
                title=title.strip() if title and title.strip() else None,
                cwd=cwd,
                model=model,
                resume=resume_command(cwd, native),
                started=epoch(doc.get("created")),
                updated=self._ended(doc) or last_ts,
                source=str(self.path),
                tokens_in=tokens_in or None,
                tokens_out=tokens_out or None,
            )

        events = number(EventCounter(sid, 0), drafts())
        yield from document_items(sid, session, events, messages, self.before, self.unknown, str(self.path))

    @staticmethod
    def _ended(doc: dict[str, Any]) -> float | None:
        """The end of the last trace that has one (when the thread last did something)."""
        for trace in reversed(list_or_empty(as_dict(doc.get("meta")).get("traces"))):
            if (ts := parse_ts(as_dict(trace).get("endTime"))) is not None:
                return ts
        return None

    def _message(self, message: dict[str, Any], ts: float | None) -> Iterator[Draft]:
        role = message.get("role")
        content = message.get("content")
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else list_or_empty(content)
        if role not in ("user", "assistant"):
            self.unknown.saw(f"role:{role}")
            return
        for block in blocks:
            if not isinstance(block, dict):
                self.unknown.saw("block:not-object")
                continue
            btype = block.get("type")
            if btype == "text":
                if role == "user":
                    yield ("user", "human", block.get("text"), {"ts": ts})
                else:
                    yield ("assistant", "agent", block.get("text"), {"ts": ts})
            elif btype in ("thinking", "redacted_thinking"):
                yield ("reasoning", "agent", block.get("thinking"), {"ts": ts})
            elif btype == "tool_use":
                name = str_or_none(block.get("name"))
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(name, block.get("input"), SHELL_TOOLS),
                    {"ts": ts, "tool": name, "call_id": str_or_none(block.get("id"))},
                )
            elif btype == "tool_result":
                yield self._result(block, ts)
            elif btype not in ("image", "file"):
                self.unknown.saw(f"block:{btype}")

    @staticmethod
    def _result(block: dict[str, Any], ts: float | None) -> Draft:
        call_id = str_or_none(block.get("tool_use_id")) or str_or_none(block.get("toolUseID"))
        run = block.get("run")
        if not isinstance(run, dict):
            return (
                "tool_result",
                "tool",
                result_text(block.get("content")),
                {"ts": ts, "call_id": call_id, "is_error": block.get("is_error") is True},
            )
        status = run.get("status")
        result = run.get("result")
        code = exit_code(result.get("exitCode")) if isinstance(result, dict) else None
        if result is None and status == "error":
            text = str_or_none(as_dict(run.get("error")).get("message")) or "error"
        elif result is None and status == "cancelled":
            text = "cancelled"
        else:
            text = result_text(result)
        failed = (
            status == "error"
            or (code is not None and code != 0)
            or (isinstance(result, dict) and result.get("success") is False)
        )
        return ("tool_result", "tool", text, {"ts": ts, "call_id": call_id, "exit_code": code, "is_error": failed})


class AmpAdapter:
    """Amp's thread files under its data dir's ``threads/``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [threads_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        yield from walk_files(
            threads_dir(env), ".json", PROVIDER, append_only=False, match=lambda name: bool(_THREAD.match(name))
        )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isfile(source.path):
            return iter([Notice(source=source.path, reason="not an Amp thread file; skipped", fatal=True)])
        return _ThreadRead(source, cursor).run()


ADAPTER = AmpAdapter()
