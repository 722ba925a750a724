"""The Posit Assistant adapter: ``~/.posit/assistant/workspaces/<ws>/<conversation>/`` (documented, not yet observed).

Posit Assistant (posit-dev/assistant; distinct from Positron's built-in assistant) keeps a folder per
conversation, as agentsview's ``posit_assistant_provider.go`` reads it:

* ``<ws>/workspace.json``: ``{"path"}``, the project the conversations ran in (their cwd);
* ``conversation.json``: the message tree, ``{"schemaVersion", "root": {"id", "title", "summary",
  "timestamp" (ms), "metadata": {"kind", "parentTreeId", "task", "gitBranch"}}, "messages": [{"id",
  "parentId", "isActive", "lmMessageIds": [n…], "timestamp"}]}``; the active nodes, in order, are the
  conversation the person sees (an edited turn leaves its old branch inactive: not read); a model
  message no node names (the tree is rewritten whole each turn: a crash can cut it, or leave a turn
  out) is read after them, in id order, so an unreadable tree costs the order, not the conversation;
* ``lm-messages.jsonl``: every model message, appended, ``{"id": n, "message": {...}}`` in the AI
  SDK's shape: ``role`` ``user``/``system``/``assistant``/``tool``, ``content`` a string or parts
  (``text``, ``reasoning``, ``tool-call`` with ``toolCallId``/``toolName``/``input``, ``tool-result``
  with ``toolCallId``/``output``), and ``providerOptions.providerMetadata.positai`` (``timestamp``,
  ``modelId``, ``usage``);
* ``ui-messages.jsonl``: the render log (the same conversation again: not read);
* ``subagents/<id>/``: a subagent's conversation in the same shape (``metadata.kind: "subagent"``,
  ``parentTreeId``), whose prompts the parent agent wrote.

The assistant folds summaries of earlier turns into its replies inside ``<MESSAGESUMMARY>`` /
``<CONVERSATIONSUMMARY>`` tags: those are context, not the reply (meta). Not run here (an IDE
extension); no resume command outside the IDE.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._blocks import result_text
from voyager_sessions.ingest.adapters._common import (
    EventCounter,
    UnknownRecords,
    as_dict,
    epoch,
    int_or_none,
    list_or_empty,
    reread_end,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft, absolute_path, number
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import folder_fingerprint, subdirs
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.jsonl import read_records
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Origin, Session, session_id

PROVIDER = "posit-assistant"
LABEL = "Posit Assistant"
CONVERSATION, LM_MESSAGES, WORKSPACE, SUBAGENTS = (
    "conversation.json",
    "lm-messages.jsonl",
    "workspace.json",
    "subagents",
)
_SUMMARY = re.compile(r"<(MESSAGESUMMARY|CONVERSATIONSUMMARY)>(.*?)</\1>", re.S)
#: Subagent folders nested deeper than this are a loop (a symlink), not conversations.
_MAX_NESTING = 16


def workspaces_dir(env: Mapping[str, str]) -> Path:
    """``$VOYAGER_POSIT_ASSISTANT_HOME`` or ``~/.posit/assistant``, with ``workspaces/`` below it."""
    home = manifest.agent_home(PROVIDER, env)
    assert home is not None  # HOME is the last resort
    return home / "workspaces"


def text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(
        p["text"]
        for p in list_or_empty(content)
        if isinstance(p, dict) and p.get("type") == "text" and isinstance(p.get("text"), str)
    )


def message_drafts(
    message: dict[str, Any], ts: float | None, person: Origin, unknown: UnknownRecords
) -> Iterator[Draft]:
    role = message.get("role")
    content = message.get("content")
    if role == "user":
        yield ("user", person, text_of(content), {"ts": ts})
    elif role == "system":
        yield ("meta", "provider", text_of(content), {"ts": ts})
    elif role == "assistant":
        parts = [{"type": "text", "text": content}] if isinstance(content, str) else list_or_empty(content)
        for part in parts:
            part = as_dict(part)
            ptype = part.get("type")
            if ptype == "text" and isinstance(part.get("text"), str):
                text = part["text"]
                for m in _SUMMARY.finditer(text):
                    yield ("meta", "agent", m.group(2), {"ts": ts})
                yield ("assistant", "agent", _SUMMARY.sub("", text), {"ts": ts})
            elif ptype == "reasoning":
                yield ("reasoning", "agent", part.get("text"), {"ts": ts})
            elif ptype == "tool-call":
                name = str_or_none(part.get("toolName"))
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(name, part.get("input")),
                    {"ts": ts, "tool": name, "call_id": str_or_none(part.get("toolCallId"))},
                )
            elif ptype not in ("step-start", "file", "image"):
                unknown.saw(f"part:{ptype}")
    elif role == "tool":
        for part in list_or_empty(content):
            part = as_dict(part)
            if part.get("type") != "tool-result":
                unknown.saw(f"part:{part.get('type')}")
                continue
            output = part.get("output")
            value = as_dict(output).get("value", output)
            failed = str(as_dict(output).get("type") or "").startswith("error")
            yield (
                "tool_result",
                "tool",
                result_text(value),
                {
                    "ts": ts,
                    "tool": str_or_none(part.get("toolName")),
                    "call_id": str_or_none(part.get("toolCallId")),
                    "is_error": failed,
                },
            )
    else:
        unknown.saw(f"role:{role}")


class _ConversationRead:
    """One read of one conversation folder: the active nodes of its tree, through the model messages they name."""

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.folder = Path(source.path)
        self.before = cursor.state.get("delta") if cursor is not None else None
        self.unknown = UnknownRecords(LABEL)

    def _workspace(self) -> Path:
        """The workspace folder: the conversation's parent, above any ``subagents/<id>`` levels."""
        folder = self.folder
        while folder.parent.name == SUBAGENTS:
            folder = folder.parent.parent
        return folder.parent

    def run(self) -> Iterator[Item]:
        tree = read_json_object(self.folder / CONVERSATION)
        broken: Notice | None = None
        if isinstance(tree, Notice):
            if not os.path.isfile(self.folder / LM_MESSAGES):
                yield tree
                return
            # The tree is rewritten whole each turn, the model messages appended: a tree cut by a crash
            # costs the order of the turns, not the conversation.
            broken, tree = tree, {}
        notices: list[Notice] = []
        lm: dict[int, dict[str, Any]] = {}
        if os.path.isfile(self.folder / LM_MESSAGES):
            for item in read_records(str(self.folder / LM_MESSAGES)):
                if isinstance(item, Notice):
                    notices.append(item)
                    continue
                line = as_dict(item.value)
                n = int_or_none(line.get("id"))
                if n is not None and isinstance(line.get("message"), dict):
                    lm[n] = line["message"]
        yield from notices
        if any(n.fatal for n in notices):
            return
        nodes = [as_dict(node) for node in list_or_empty(tree.get("messages"))]
        if broken is not None:
            if not lm:
                yield broken
                return
            yield Notice(
                source=broken.source,
                reason=f"{broken.reason.removesuffix('; skipped')}: every message of {LM_MESSAGES} read in id order"
                " instead (an edited turn's old branch too)",
                fatal=False,
            )
        # A model message no node names (its node broken, the tree cut, or a turn appended after the tree
        # was last written) is read after the tree's, in id order: the tree orders messages, it does not hold them.
        named = {n for node in nodes for n in list_or_empty(node.get("lmMessageIds")) if isinstance(n, int)}
        orphans = sorted(n for n in lm if n not in named)
        if orphans:
            nodes.append({"lmMessageIds": orphans})
        root = as_dict(tree.get("root"))
        meta = as_dict(root.get("metadata"))
        native = self.folder.name
        sid = session_id(PROVIDER, native)
        parent = str_or_none(meta.get("parentTreeId"))
        if meta.get("kind") == "subagent" and parent is None and self.folder.parent.name == SUBAGENTS:
            parent = self.folder.parent.parent.name
        subagent = meta.get("kind") == "subagent" or self.folder.parent.name == SUBAGENTS
        person: Origin = "provider" if subagent else "human"
        drafts: list[Draft] = []
        stamps: list[float] = []
        model = None
        tokens_in = tokens_out = 0
        for node in nodes:
            if node.get("isActive") is False:
                continue  # a branch an edit left behind
            node_ts = epoch(node.get("timestamp"))
            for n in list_or_empty(node.get("lmMessageIds")):
                message = lm.get(n) if isinstance(n, int) else None
                if message is None:
                    self.unknown.saw("node naming a missing model message")
                    continue
                positai = as_dict(
                    as_dict(as_dict(message.get("providerOptions")).get("providerMetadata")).get("positai")
                )
                ts = epoch(positai.get("timestamp")) or node_ts
                if ts is not None:
                    stamps.append(ts)
                model = str_or_none(positai.get("modelId")) or model
                usage = as_dict(positai.get("usage"))
                tokens_in += sum(
                    int_or_none(usage.get(k)) or 0 for k in ("inputTokens", "cacheReadTokens", "cacheWriteTokens")
                )
                tokens_out += int_or_none(usage.get("outputTokens")) or 0
                drafts.extend(message_drafts(message, ts, person, self.unknown))
        events = list(number(EventCounter(sid, 0), drafts))
        workspace = read_json_object(self._workspace() / WORKSPACE, fatal=False)
        cwd = absolute_path(workspace.get("path")) if isinstance(workspace, dict) else None
        title = str_or_none(root.get("title"))
        yield Session(
            id=sid,
            provider=PROVIDER,
            native_id=native,
            title=title,
            cwd=cwd,
            git_branch=str_or_none(meta.get("gitBranch")),
            model=model,
            started=epoch(root.get("timestamp")) or (min(stamps) if stamps else None),
            updated=max(stamps) if stamps else None,
            parent=session_id(PROVIDER, parent) if parent and parent != native else None,
            resume=None,
            source=str(self.folder),
            tokens_in=tokens_in or None,
            tokens_out=tokens_out or None,
        )
        yield from reread_end(sid, events, self.before, self.unknown, str(self.folder / CONVERSATION))


def _conversation(folder: Path, depth: int = 0) -> Iterator[Source | Notice]:
    if os.path.isfile(folder / CONVERSATION):
        files = [folder / CONVERSATION, folder / LM_MESSAGES, folder.parent / WORKSPACE]
        try:
            fp = folder_fingerprint(folder, files)
        except OSError:
            return  # vanished since listed
        yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)
    if depth < _MAX_NESTING:
        for sub in subdirs(folder / SUBAGENTS):
            if isinstance(sub, Path):
                yield from _conversation(sub, depth + 1)


class PositAssistantAdapter:
    """Posit Assistant's conversation folders, under every workspace (and their subagents')."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [workspaces_dir(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for workspace in subdirs(workspaces_dir(env)):
            if isinstance(workspace, Notice):
                yield workspace
                continue
            for folder in subdirs(workspace):
                if isinstance(folder, Notice):
                    yield folder
                else:
                    yield from _conversation(folder)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isdir(source.path):
            return iter(
                [Notice(source=source.path, reason="not a Posit Assistant conversation folder; skipped", fatal=True)]
            )
        return _ConversationRead(source, cursor).run()


ADAPTER = PositAssistantAdapter()
