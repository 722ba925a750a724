"""OpenHands V0 sessions (before the software-agent-sdk CLI): ``<persistence dir>/sessions/<id>/``.

Documented, not observed (OpenHands' V0 storage code: ``openhands/storage/locations.py``
and its event serialization): ``events/<n>.json`` holds event ``n`` (numbered from 0,
written once) and ``metadata.json`` the conversation's title, model and times;
``event_cache/`` (chunks of the same events) is a copy and is not read. An event is an
action ``{"action": "run", "args": {"command": …, "thought": …}, "source": …}`` or an
observation ``{"observation": "run", "content": …, "extras": {"metadata": {"exit_code": …}},
"cause": <action id>}``. Times are ``datetime.now()`` without a zone: local time. V0 had no
command to resume a session by id: ``resume`` is None.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    SessionFacts,
    UnknownRecords,
    as_dict,
    int_or_none,
    parse_ts,
    str_or_none,
)
from voyager_sessions.ingest.adapters._openhands_common import EVENTS, LABEL, PROVIDER, Mapper
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.eventdir import event_files, event_folder_fingerprint, read_event_folder
from voyager_sessions.ingest.files import subdirs
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Session

V0_EVENT = re.compile(r"(\d+)\.json")
METADATA = "metadata.json"

#: Actions that are not a turn of the conversation (the system prompt, state changes, recalls of the
#: prompt, requests): skipped. ``think``, ``finish``, ``message`` and ``condensation`` have their own
#: mapping; every other action is a tool call.
_NOT_TURNS = frozenset(
    {
        "system",
        "recall",
        "change_agent_state",
        "null",
        "condensation_request",
        "pause",
        "resume",
        "stop",
        "start",
        "loop_recovery",
    }
)
#: Observations with nothing of their own to index (state changes, recalled context, echoes of a thought).
_NOT_RESULTS = frozenset({"agent_state_changed", "null", "recall", "think", "condense", "loop_detection"})
#: Actions that run a command or code: searched as the command (``cmd``'s ``command``, ``ipython``'s ``code``).
_RUNS_CODE = frozenset({"run", "run_ipython"})
#: Action fields that are bookkeeping, not what the agent asked for.
_BOOKKEEPING_ARGS = frozenset(
    {
        "thought",
        "blocking",
        "is_static",
        "hidden",
        "confirmation_state",
        "security_risk",
        "impl_source",
        "is_input",
        "cwd",
        "include_extra",
        "kernel_init_code",
        "wait_for_response",
        "image_urls",
        "file_urls",
        "activated_microagents",
    }
)


def v0_root(env: Mapping[str, str]) -> Path:
    """``<OpenHands persistence dir>/sessions``."""
    return manifest.agent_dir("openhands", env) / "sessions"


def is_v0(folder: Path) -> bool:
    return os.path.isfile(folder / METADATA) or bool(event_files(folder / EVENTS, V0_EVENT))


def v0_sources(root: Path) -> Iterator[Source | Notice]:
    """A Source per V0 session folder under ``root``."""
    for folder in subdirs(root):
        if isinstance(folder, Notice):
            yield folder
            continue
        files = event_files(folder / EVENTS, V0_EVENT)
        if not files and not os.path.isfile(folder / METADATA):
            continue
        try:
            fp = event_folder_fingerprint(folder, [folder / METADATA], folder / EVENTS, files)
        except OSError:
            continue
        yield Source(provider=PROVIDER, path=str(folder), fingerprint=fp, append_only=False)


class V0Mapper(Mapper):
    """One V0 event file's object to events."""

    def events(self, doc: dict[str, Any]) -> Iterator[Event]:
        ts = parse_ts(doc.get("timestamp"), naive="local")
        if isinstance(doc.get("action"), str):
            yield from self._action(doc, doc["action"], ts)
        elif isinstance(doc.get("observation"), str):
            yield from self._observation(doc, doc["observation"], ts)
        else:
            self.unknown.saw("event neither action nor observation")

    def _action(self, doc: dict[str, Any], action: str, ts: float | None) -> Iterator[Event]:
        args = as_dict(doc.get("args"))
        source = doc.get("source")
        if action in _NOT_TURNS:
            return
        if action == "message":
            text = args.get("content") if isinstance(args.get("content"), str) else doc.get("message")
            if source == "user":
                yield from self._one("user", "human", text, ts)
            elif source == "agent":
                yield from self._one("assistant", "agent", text, ts)
            else:
                yield from self._one("meta", "provider", text, ts)
            return
        if action == "condensation":
            yield from self._one("meta", "provider", args.get("summary"), ts)
            return
        thought = args.get("thought")
        if action == "think":
            yield from self._one("reasoning", "agent", thought, ts)
            return
        yield from self._one("assistant", "agent", thought, ts)  # the text beside the call
        if action in ("finish", "reject"):
            outputs = as_dict(args.get("outputs"))
            final = args.get("final_thought") or outputs.get("content") or outputs.get("reason") or args.get("reason")
            yield from self._one("assistant", "agent", final, ts)
            return
        fields = {k: v for k, v in args.items() if k not in _BOOKKEEPING_ARGS and v not in (None, "", [], {})}
        text = tool_call_text(action, fields, _RUNS_CODE)
        call_id = str(doc["id"]) if int_or_none(doc.get("id")) is not None else None
        yield from self._one("tool_call", "agent", text, ts, tool=action, call_id=call_id)

    def _observation(self, doc: dict[str, Any], observation: str, ts: float | None) -> Iterator[Event]:
        if observation in _NOT_RESULTS:
            return
        extras = as_dict(doc.get("extras"))
        meta = as_dict(extras.get("metadata"))
        exit_code = int_or_none(meta.get("exit_code"))
        if exit_code is None:
            exit_code = int_or_none(extras.get("exit_code"))
        if exit_code == -1:
            exit_code = None  # "no exit code yet", not a status
        failed = observation in ("error", "user_rejected") or doc.get("success") is False
        cause = doc.get("cause")
        call_id = str(cause) if int_or_none(cause) is not None else None
        text = doc.get("content") if isinstance(doc.get("content"), str) else doc.get("message")
        yield from self._one(
            "tool_result", "tool", text, ts, tool=observation, call_id=call_id, exit_code=exit_code, is_error=failed
        )


def read_v0(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    folder = Path(source.path)
    meta: dict[str, Any] = {}
    if os.path.exists(folder / METADATA):
        got = read_json_object(folder / METADATA, fatal=False)
        if isinstance(got, Notice):
            yield got
        else:
            meta = got
    facts = SessionFacts()
    facts.native_id = str_or_none(meta.get("conversation_id")) or folder.name
    facts.model = str_or_none(meta.get("llm_model"))
    facts.observe_ts(parse_ts(meta.get("created_at"), naive="local"))
    facts.observe_ts(parse_ts(meta.get("last_updated_at"), naive="local"))
    title = str_or_none(meta.get("title"))

    def make_session(f: SessionFacts) -> Session:
        return f.session(PROVIDER, title=title, title_source="agent", resume=None, source=source.path)

    files = event_files(folder / EVENTS, V0_EVENT)
    unknown = UnknownRecords(f"{LABEL} (V0)")
    yield from read_event_folder(
        source, cursor, files, facts, make_session, lambda counter: V0Mapper(counter, unknown), unknown
    )
