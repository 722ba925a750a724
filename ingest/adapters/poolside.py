"""The Poolside Agent CLI adapter: ``<state dir>/poolside/trajectories/trajectory-<type>_<uuid>.ndjson`` (documented).

Poolside's CLI (``pool``) appends one event a line to a session's trajectory, as agentsview's
``poolside.go`` reads it (read from the Cursor's offset: a new turn costs what it adds). An event is
``{"id", "step_id", "timestamp", "type", "<type with _>": {payload}}``:

* ``session.start`` (``working_directories``, ``workspace``: the cwd; its ``prompt`` repeats the first
  ``session.input``) and ``session.input`` (``prompt``: what the person typed);
* ``thought.end`` (``thought``) and ``assistant_message.end`` (``assistant_message``): the model's
  reasoning and reply (their ``*.start`` events carry nothing);
* ``tool_call.parsed`` (``id``, ``name``, ``args``; the shell tool is ``shell`` with ``cmd``) and
  ``tool_call.result`` (``id``, ``tool_name``, ``observation``, ``is_error``);
* ``tool_call.inference.start`` (``chat_completion_request.model``) and ``tool_call.inference.end``
  (token counts, the cache's included): the model and the usage, per step;
* ``session.exit`` (``reason``) and ``session.error`` (``error``, meta).

The state dir is ``$XDG_STATE_HOME`` (``~/.local/state``) on Linux, ``~/Library/Application Support``
on macOS and ``%APPDATA%`` on Windows. Not run here (a Poolside account); ``pool history`` lists
sessions but no command reopens one by id that peers document.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    as_dict,
    int_or_none,
    list_or_empty,
    parse_ts,
    str_or_none,
)
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsonl import Record
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session

PROVIDER = "poolside"
LABEL = "Poolside"
PREFIX, SUFFIX = "trajectory-", ".ndjson"
#: Events with nothing of their own to search (their text comes with the matching ``*.end``).
_SILENT = frozenset(
    {"assistant_message.start", "thought.start", "tool_call.start", "tool_call.approval", "session.idle"}
)


def trajectories_dirs(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_POOLSIDE_HOME`` (authoritative), else Poolside's dir for this platform, ``trajectories/`` below it."""
    home = (
        "poolside.mac"
        if sys.platform == "darwin"
        else "poolside.windows"
        if sys.platform.startswith("win")
        else PROVIDER
    )
    return [d / "trajectories" for d in manifest.agent_homes((home,), env)]


def native_id_of(name: str) -> str:
    """``trajectory-<type>_<uuid>.ndjson`` -> ``<type>_<uuid>``."""
    stem = name[: -len(SUFFIX)] if name.endswith(SUFFIX) else name
    return stem[len(PREFIX) :] if stem.startswith(PREFIX) else stem


class _TrajectoryRead(JsonlSessionRead):
    """One pass over one trajectory (or what was appended to it since the Cursor)."""

    provider = PROVIDER

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self._start(source.path, cursor, LABEL)
        self.name_id = native_id_of(Path(source.path).name)
        if self.counter is None:
            self._identify(self.name_id)

    def _session(self) -> Session:
        return self.facts.session(PROVIDER, title=None, resume=None, source=self.path)

    def _record(self, record: Record) -> Iterator[Item]:
        event = record.value
        if not isinstance(event, dict):
            self.unknown.saw(f"a JSON {type(event).__name__}")  # type: ignore[union-attr]
            return
        yield from self._numbered(self._event(event), self.name_id)

    def _event(self, event: dict[str, Any]) -> Iterator[Any]:
        kind = event.get("type")
        ts = parse_ts(event.get("timestamp"))
        facts = self.facts
        facts.observe_ts(ts)
        body = as_dict(event.get(kind.replace(".", "_"))) if isinstance(kind, str) else {}
        if kind == "session.start":
            dirs = list_or_empty(body.get("working_directories"))
            facts.observe_place(dirs[0] if dirs else body.get("workspace"), None)
        elif kind == "session.input":
            yield ("user", "human", body.get("prompt"), {"ts": ts})
        elif kind == "thought.end":
            yield ("reasoning", "agent", body.get("thought"), {"ts": ts})
        elif kind == "assistant_message.end":
            yield ("assistant", "agent", body.get("assistant_message"), {"ts": ts})
        elif kind == "tool_call.parsed":
            name = str_or_none(body.get("name"))
            yield (
                "tool_call",
                "agent",
                tool_call_text(name, body.get("args")),
                {"ts": ts, "tool": name, "call_id": str_or_none(body.get("id"))},
            )
        elif kind == "tool_call.result":
            yield (
                "tool_result",
                "tool",
                body.get("observation"),
                {
                    "ts": ts,
                    "tool": str_or_none(body.get("tool_name")),
                    "call_id": str_or_none(body.get("id")),
                    "is_error": body.get("is_error") is True,
                },
            )
        elif kind == "tool_call.inference.start":
            facts.model = str_or_none(as_dict(body.get("chat_completion_request")).get("model")) or facts.model
        elif kind == "tool_call.inference.end":
            facts.tokens_in = (facts.tokens_in or 0) + sum(
                int_or_none(body.get(k)) or 0
                for k in ("input_tokens", "cache_read_input_tokens", "cache_write_input_tokens")
            )
            facts.tokens_out = (facts.tokens_out or 0) + (int_or_none(body.get("output_tokens")) or 0)
        elif kind == "session.exit":
            reason = str_or_none(body.get("reason"))
            yield ("meta", "provider", f"session ended: {reason}" if reason else None, {"ts": ts})
        elif kind == "session.error":
            yield ("meta", "provider", body.get("error"), {"ts": ts, "is_error": True})
        elif not (isinstance(kind, str) and kind in _SILENT):
            self.unknown.saw(kind if isinstance(kind, str) else "event without a type")  # type: ignore[union-attr]


class PoolsideAdapter:
    """Poolside's trajectories, one session each."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return trajectories_dirs(env)

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for root in trajectories_dirs(env):
            yield from walk_files(root, SUFFIX, PROVIDER, name_prefix=PREFIX)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        if not os.path.isfile(source.path):
            return iter([Notice(source=source.path, reason="not a Poolside trajectory; skipped", fatal=True)])
        return _TrajectoryRead(source, cursor).run()


ADAPTER = PoolsideAdapter()
