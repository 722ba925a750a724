"""The Claude.ai adapter: the ``conversations.json`` of a Claude.ai data export (documented, not yet observed).

Owns what Voyager knows about Claude.ai's export format; finding the export (``voyager
import``, the imports folder) and reading it whole or from its zip is ``_exports``'.
The evidence is agentsview's Claude.ai importer and its tests, not a real export.

The file is a list of conversations ``{uuid, name (the title), created_at, updated_at
(ISO), chat_messages[], current_leaf_message_uuid?}``; a message is ``{uuid, sender:
human|assistant, text, content[blocks], created_at, attachments[{file_name,
extracted_content}], parent_message_uuid?}``. Blocks: ``text``, ``thinking``, ``tool_use``
(``name``, ``input``), ``tool_result`` (``content``); ``voice_note``/``token_budget`` carry
nothing to find. Without blocks, ``text`` is the message.

A ``human`` message's text is a person's prompt; an attachment's extracted text is what the
person attached, not typed: meta. Where ``current_leaf_message_uuid`` names a message and
the parent links reach it, only that branch is read (an edited prompt leaves the older
branch behind); else the messages in the order given. A web chat has no resume command.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Final

from voyager_sessions.ingest.adapters import _exports
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    compact_json,
    join_text,
    list_or_empty,
    parse_ts,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Item
from voyager_sessions.core.model import Session, session_id

PROVIDER: Final = "claude-ai"
LABEL = "Claude.ai export"
_MAX_CHAIN = 1_000_000
_QUIET_BLOCKS = frozenset({"voice_note", "token_budget", "image", "document"})


def visible_branch(messages: list[Any], leaf: Any) -> list[Any]:
    """The branch ending at ``leaf`` (root first) when parent links lead there, else ``messages`` as given."""
    by_id = {m["uuid"]: m for m in messages if isinstance(m, dict) and isinstance(m.get("uuid"), str)}
    if not isinstance(leaf, str) or leaf not in by_id:
        return messages
    out: list[Any] = []
    seen: set[str] = set()
    node: Any = leaf
    while isinstance(node, str) and node in by_id and node not in seen and len(out) < _MAX_CHAIN:
        seen.add(node)
        out.append(by_id[node])
        node = by_id[node].get("parent_message_uuid")
    out.reverse()
    return out


def _message(message: dict[str, Any], unknown: UnknownRecords) -> Iterator[Draft]:
    sender = message.get("sender")
    ts = parse_ts(message.get("created_at"))
    if sender not in ("human", "assistant"):
        unknown.saw(f"sender:{sender}")
        return
    blocks = list_or_empty(message.get("content"))
    texts = [b for b in blocks if isinstance(b, dict) and b.get("type") == "text"]
    if not texts:
        # No text block: the message's ``text`` is the message.
        yield (
            ("user", "human", message.get("text"), {"ts": ts})
            if sender == "human"
            else ("assistant", "agent", message.get("text"), {"ts": ts})
        )
    for block in blocks:
        if not isinstance(block, dict):
            unknown.saw("block:not-object")
            continue
        btype = block.get("type")
        if btype == "text":
            yield (
                ("user", "human", block.get("text"), {"ts": ts})
                if sender == "human"
                else ("assistant", "agent", block.get("text"), {"ts": ts})
            )
        elif btype == "thinking":
            yield ("reasoning", "agent", block.get("thinking"), {"ts": ts})
        elif btype == "tool_use":
            name = str_or_none(block.get("name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, block.get("input"), frozenset()),
                {"ts": ts, "tool": name, "call_id": str_or_none(block.get("id"))},
            )
        elif btype == "tool_result":
            content = block.get("content")
            text = join_text(content) if isinstance(content, (str, list)) else compact_json(content)
            yield (
                "tool_result",
                "tool",
                text if content is not None else "",
                {
                    "ts": ts,
                    "tool": str_or_none(block.get("name")),
                    "call_id": str_or_none(block.get("tool_use_id")),
                    "is_error": block.get("is_error") is True,
                },
            )
        elif not isinstance(btype, str):
            unknown.saw("block:no-type")
        elif btype not in _QUIET_BLOCKS:
            unknown.saw(f"block:{btype}")
    for attachment in list_or_empty(message.get("attachments")):
        a = as_dict(attachment)
        body = a.get("extracted_content")
        if isinstance(body, str) and body.strip():
            name = str_or_none(a.get("file_name"))
            yield ("meta", "provider", f"[{name}]\n{body}" if name else body, {"ts": ts})


def convert(conv: dict[str, Any], native: str, unknown: UnknownRecords, *, source: str) -> Iterator[Item]:
    """One conversation's Session and Events."""
    messages = conv.get("chat_messages")
    if not isinstance(messages, list):
        unknown.saw("conversation:no-chat_messages")
        return
    sid = session_id(PROVIDER, native)
    drafts: list[Draft] = []
    for message in visible_branch(messages, conv.get("current_leaf_message_uuid")):
        if isinstance(message, dict):
            drafts.extend(_message(message, unknown))
        else:
            unknown.saw("message:not-object")
    title = str_or_none(conv.get("name"))
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=title.strip() if title and title.strip() else None,
        started=parse_ts(conv.get("created_at")),
        updated=parse_ts(conv.get("updated_at")),
        source=source,
    )
    yield from number(EventCounter(sid, 0), drafts)


class ClaudeAIAdapter(_exports.ExportAdapter):
    """Claude.ai data exports, recorded with ``voyager import`` or left in the imports folder."""

    name: ClassVar[_exports.ExportKind] = PROVIDER
    label = LABEL
    id_key = "uuid"
    convert = staticmethod(convert)


ADAPTER = ClaudeAIAdapter()
