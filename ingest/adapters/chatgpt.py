"""The ChatGPT adapter: the ``conversations.json`` of a ChatGPT data export (documented, not yet observed).

Owns what Voyager knows about ChatGPT's export format; finding the export (``voyager
import``, the imports folder) and reading it whole or from its zip is ``_exports``'.
The evidence is agentsview's ChatGPT importer and its tests, not a real export.

The file is a list of conversations ``{title, create_time, update_time (epoch s, float),
mapping, current_node, conversation_id | id}``. ``mapping`` is a tree of nodes ``{id,
parent, children, message}``; the conversation a person sees is the path from
``current_node`` up to the root (an edited prompt or a regenerated answer leaves its older
branch behind). ``message`` is ``{author{role, name}, create_time, content{content_type,
parts | text | thoughts}, metadata{model_slug, is_visually_hidden_from_conversation}}``:

* ``user`` ``text``/``multimodal_text`` parts: a person's prompt, unless hidden from the
  conversation or ``user_editable_context`` (custom instructions: meta);
* ``assistant``: ``text`` is the reply, ``thoughts`` reasoning, ``code`` a tool call (the
  code interpreter's input, or a tool's JSON arguments when ``recipient`` names a tool);
  ``reasoning_recap`` ("Thought for 5s") is skipped;
* ``tool``: a tool's result (``execution_output``, browsing quotes, …);
* ``system``: meta.

A web chat has no resume command.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, ClassVar, Final

from voyager_sessions.ingest.adapters import _exports
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    epoch,
    list_or_empty,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, number
from voyager_sessions.ingest.adapters.base import Item
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER: Final = "chatgpt"
LABEL = "ChatGPT export"
#: A chain longer than this is a loop in corrupt parent links, not a conversation.
_MAX_CHAIN = 1_000_000
_SKIPPED_TYPES = frozenset({"reasoning_recap", "tether_browsing_display", "model_editable_context"})


def visible_path(mapping: dict[str, Any], current: Any) -> list[dict[str, Any]]:
    """The nodes from the root to ``current`` (without it: every node, in mapping order)."""
    if not isinstance(current, str) or current not in mapping:
        return [n for n in mapping.values() if isinstance(n, dict)]
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    node_id: Any = current
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen and len(out) < _MAX_CHAIN:
        seen.add(node_id)
        node = as_dict(mapping[node_id])
        out.append(node)
        node_id = node.get("parent")
    out.reverse()
    return out


def parts_text(content: dict[str, Any]) -> str:
    """The text of a message's content: its string ``parts`` (images and other objects skipped), or ``text``."""
    parts = [p for p in list_or_empty(content.get("parts")) if isinstance(p, str) and p]
    if parts:
        return "\n".join(parts)
    text = content.get("text")
    return text if isinstance(text, str) else ""


def _message(message: dict[str, Any], unknown: UnknownRecords) -> Iterator[Draft]:
    role = as_dict(message.get("author")).get("role")
    content = as_dict(message.get("content"))
    ctype = content.get("content_type")
    meta = as_dict(message.get("metadata"))
    ts = epoch(message.get("create_time"))
    if ctype in _SKIPPED_TYPES:
        return
    if role == "user":
        hidden = meta.get("is_visually_hidden_from_conversation") is True or ctype == "user_editable_context"
        if hidden:
            yield ("meta", "provider", parts_text(content) or _context(content), {"ts": ts})
        else:
            yield ("user", "human", parts_text(content), {"ts": ts})
    elif role == "assistant":
        recipient = str_or_none(message.get("recipient"))
        if ctype == "thoughts":
            thoughts = [as_dict(t).get("content") for t in list_or_empty(content.get("thoughts"))]
            yield ("reasoning", "agent", "\n".join(t for t in thoughts if isinstance(t, str) and t), {"ts": ts})
        elif ctype == "code" or (recipient not in (None, "all")):
            tool = recipient if recipient not in (None, "all") else "python"
            yield ("tool_call", "agent", tool_call_text(tool, parts_text(content)), {"ts": ts, "tool": tool})
        elif ctype in ("text", "multimodal_text"):
            yield ("assistant", "agent", parts_text(content), {"ts": ts})
        else:
            unknown.saw(f"assistant:{ctype}")
    elif role == "tool":
        name = str_or_none(as_dict(message.get("author")).get("name"))
        yield ("tool_result", "tool", parts_text(content), {"ts": ts, "tool": name})
    elif role == "system":
        yield ("meta", "provider", parts_text(content), {"ts": ts})
    else:
        unknown.saw(f"role:{role}")


def _context(content: dict[str, Any]) -> str:
    """Custom instructions as text (``user_editable_context``: ``user_profile``, ``user_instructions``)."""
    return "\n".join(v for k in ("user_profile", "user_instructions") if isinstance(v := content.get(k), str) and v)


def convert(conv: dict[str, Any], native: str, unknown: UnknownRecords, *, source: str) -> Iterator[Item]:
    """One conversation's Session and Events."""
    mapping = conv.get("mapping")
    if not isinstance(mapping, dict):
        unknown.saw("conversation:no-mapping")
        return
    sid = session_id(PROVIDER, native)
    drafts: list[Draft] = []
    model = None
    for node in visible_path(mapping, conv.get("current_node")):
        message = node.get("message")
        if message is None:
            continue  # the root: no message
        if not isinstance(message, dict):
            unknown.saw("message:not-object")
            continue
        model = str_or_none(as_dict(message.get("metadata")).get("model_slug")) or model
        drafts.extend(_message(message, unknown))
    title = str_or_none(conv.get("title"))
    yield Session(
        id=sid,
        provider=PROVIDER,
        native_id=native,
        title=title.strip() if title and title.strip() else None,
        model=model,
        started=epoch(conv.get("create_time")),
        updated=epoch(conv.get("update_time")),
        source=source,
    )
    yield from number(EventCounter(sid, 0), drafts)


class ChatGPTAdapter(_exports.ExportAdapter):
    """ChatGPT data exports, recorded with ``voyager import`` or left in the imports folder."""

    name: ClassVar[_exports.ExportKind] = PROVIDER
    label = LABEL
    id_key = "conversation_id"
    convert = staticmethod(convert)


ADAPTER = ChatGPTAdapter()
