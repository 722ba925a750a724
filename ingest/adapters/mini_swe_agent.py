"""The mini-swe-agent adapter: ``<global config dir>/last_mini_run.traj.json`` to Sessions and Events.

mini-swe-agent's ``mini`` (observed 2.4.6) saves the run it is making to one file,
``last_mini_run.traj.json`` in its global config dir (``$MSWEA_GLOBAL_CONFIG_DIR``, else
``~/.config/mini-swe-agent``), rewritten whole after every step and **overwritten by the next
run**: ``{"info": {"mini_version", "config", "model_stats", "exit_status"…}, "messages": […],
"trajectory_format"}``. There is no run id, no cwd (``environment.cwd`` is ``""``: the
process's) and no resume.

* **Which run.** A run's id is a digest of its task message and the first time stamped in it.
  The Cursor remembers the run indexed last and a digest of its messages: when the file is
  rewritten and still begins with exactly those messages, it is the same run grown by a step
  (same session, only the new events indexed); anything else is a new run, a new session.
  Earlier runs stay indexed and findable (reported ``Unchanged``, their ids kept in the Cursor),
  although the file no longer holds them; a rebuilt index (``voyager scan --rebuild``) can only hold
  the run the file holds now.
* **Who said it.** The first ``user`` message is the task wrapped in the instance template:
  the task (the text standing where the template's ``{{task}}`` is) is a person's prompt, the
  template around it meta. Later ``user`` messages are mini's own (format errors, limits:
  meta), except what a person typed in the interactive modes: a new task, a comment rejecting
  a command, an interruption's comment (the person's words only), a command run in human mode.
  The system prompt is meta.
* **Tools.** Assistant ``tool_calls`` (``bash``: the command itself), ``tool`` messages with the
  output and the exit code mini recorded (``extra.returncode``). Reasoning stands in
  ``reasoning_content`` (or only in the raw model response, ``extra.response``): indexed once.
  Releases that answered in text (``mini-swe-agent-1`` trajectories) keep observations as
  ``user`` messages: tool results.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    as_dict,
    compact_json,
    DeltaStream,
    epoch,
    EventCounter,
    int_or_none,
    join_text,
    list_or_empty,
    openai_tool_calls,
    release,
    reread_delta,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.adapters._drafts import json_value
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source, Unchanged
from voyager_sessions.ingest.files import walk_files
from voyager_sessions.ingest.jsondoc import StreamedArray, read_json_streamed, stream_end
from voyager_sessions.core.model import Event, Kind, Origin, Session, session_id

PROVIDER = "mini-swe-agent"
LABEL = "mini-swe-agent"
FILE = "last_mini_run.traj.json"
_HOMES = ("mini-swe-agent", "mini-swe-agent.mac")

_SHELL_TOOLS = frozenset({"bash"})
#: Earlier runs remembered in the Cursor (so they stay indexed): far more than anyone makes, and a bound.
MAX_RUNS = 5000
#: ``{{ task }}`` in the instance template (Jinja), spaces and trim markers allowed.
_TASK_SLOT = re.compile(r"\{\{-?\s*task\s*-?\}\}")
_JINJA = re.compile(r"\{\{|\{%|\{#")

#: What mini writes before a person's words in a user message of the interactive modes.
_PERSON_PREFIXES = (
    "The user added a new task: ",
    "Commands not executed. The user rejected your commands with the following message: ",
    "Interrupted by user: ",
)
#: Words mini puts in place of a comment the person did not give.
_NOT_A_COMMENT = frozenset({"Temporary interruption caught."})
_HUMAN_COMMAND = re.compile(r"\AUser command: \n```bash\n(.*)\n```\Z", re.S)
#: What releases that answered in text wrote as a command's observation.
_OBSERVATION = ("<returncode>", "Observation:", "<output>")


def homes(env: Mapping[str, str]) -> list[Path]:
    """The config dirs that may hold mini-swe-agent's files (Linux/XDG first, then macOS), without repeats."""
    return manifest.agent_homes(_HOMES, env)


def split_task(text: str, template: Any) -> tuple[str, str] | None:
    """(task, the template's own text) of the first user message, when ``template`` shows where the task
    stands: the literal text before ``{{task}}`` opens the message and the literal text after it follows."""
    if not isinstance(template, str):
        return None
    slot = _TASK_SLOT.search(template)
    if slot is None:
        return None
    before = template[: slot.start()]
    after = template[slot.end() :]
    if _JINJA.search(before) or not text.startswith(before):
        return None
    j = _JINJA.search(after)
    tail = after[: j.start()] if j else after
    rest = text[len(before) :]
    if tail.strip():
        at = rest.find(tail.rstrip()) if tail.rstrip() else -1
        if at < 0:
            return None
        task = rest[:at]
    else:
        task = rest
    return task.strip(), (before + text[len(before) + len(task) :]).strip()


def _text(content: Any) -> str:
    return content if isinstance(content, str) else join_text(content)


class _Run:
    """The events of the run the file holds, in message order."""

    def __init__(self, doc: dict[str, Any], sid: str, unknown: UnknownRecords) -> None:
        self.info = as_dict(doc.get("info"))
        self.config = as_dict(self.info.get("config"))
        self.counter = EventCounter(sid, 0)
        self.unknown = unknown
        self.events: list[Event] = []
        self.model: str | None = None
        self.tokens = [0, 0]
        self.task_seen = False

    def add(self, kind: Kind, origin: Origin, text: Any, ts: float | None, **extra: Any) -> None:
        if isinstance(text, str) and (ev := self.counter.make(kind, origin, text, ts=ts, **extra)) is not None:
            self.events.append(ev)

    def message(self, msg: Any) -> None:
        if not isinstance(msg, dict):
            self.unknown.saw(f"a JSON {type(msg).__name__} message")
            return
        role = msg.get("role")
        extra = as_dict(msg.get("extra"))
        ts = epoch(extra.get("timestamp"))
        if role == "system":
            self.add("meta", "provider", _text(msg.get("content")), ts)
        elif role == "user":
            self.user(msg, extra, ts)
        elif role == "assistant":
            self.assistant(msg, extra, ts)
        elif role == "tool":
            self.tool(msg, extra, ts)
        elif role == "exit":
            submission = extra.get("submission")
            self.add(
                "meta", "agent", _text(msg.get("content")) or (submission if isinstance(submission, str) else ""), ts
            )
        else:
            self.unknown.saw(f"role:{role}" if isinstance(role, str) else "a message without a role")

    def user(self, msg: dict[str, Any], extra: dict[str, Any], ts: float | None) -> None:
        text = _text(msg.get("content"))
        if not self.task_seen and "interrupt_type" not in extra:
            self.task_seen = True
            split = split_task(text, as_dict(self.config.get("agent")).get("instance_template"))
            if split is None:
                self.add("user", "human", text, ts)  # no template to tell the task from: the whole message
            else:
                task, wrapper = split
                self.add("user", "human", task, ts)
                self.add("meta", "provider", wrapper, ts)
            return
        human = _HUMAN_COMMAND.match(text)
        if human is not None:
            self.add("user", "human", human.group(1), ts)  # a command the person typed in human mode
            return
        for prefix in _PERSON_PREFIXES:
            if text.startswith(prefix):
                said = text[len(prefix) :]
                if said.strip() and said.strip() not in _NOT_A_COMMENT:
                    self.add("user", "human", said, ts)
                    return
        if extra.get("interrupt_type") is None and text.lstrip().startswith(_OBSERVATION):
            self.add("tool_result", "tool", text, ts)  # a text-mode release's observation
            return
        self.add("meta", "provider", text, ts)

    def assistant(self, msg: dict[str, Any], extra: dict[str, Any], ts: float | None) -> None:
        response = as_dict(extra.get("response"))
        choices = list_or_empty(response.get("choices"))
        raw = as_dict(as_dict(choices[0]).get("message")) if choices else {}
        self.model = str_or_none(response.get("model")) or self.model
        usage = as_dict(response.get("usage"))
        self.tokens[0] += int_or_none(usage.get("prompt_tokens")) or 0
        self.tokens[1] += int_or_none(usage.get("completion_tokens")) or 0
        said: list[str] = []
        for thought in (msg.get("reasoning_content"), raw.get("reasoning_content")):
            if isinstance(thought, str) and thought.strip() and thought not in said:
                said.append(thought)
                self.add("reasoning", "agent", thought, ts)
        self.add("assistant", "agent", _text(msg.get("content")), ts)
        for call in openai_tool_calls(msg.get("tool_calls")):
            self.add(
                "tool_call",
                "agent",
                tool_call_text(call.name, call.arguments, _SHELL_TOOLS),
                ts,
                tool=call.name,
                call_id=call.id,
            )

    def tool(self, msg: dict[str, Any], extra: dict[str, Any], ts: float | None) -> None:
        content = _text(msg.get("content"))
        doc = json_value(content) if content.lstrip().startswith("{") else None
        doc = doc if isinstance(doc, dict) else {}
        raw = extra.get("raw_output")
        if isinstance(raw, str):
            out = raw
        elif isinstance(doc.get("output"), str):
            out = doc["output"]
        elif "output_head" in doc or "output_tail" in doc:
            out = "\n".join(p for p in (doc.get("output_head"), doc.get("output_tail")) if isinstance(p, str))
        else:
            out = content
        problem = extra.get("exception_info") or doc.get("exception_info")
        if isinstance(problem, str) and problem.strip() and problem not in out:
            out = f"{out}\n{problem}" if out else problem
        code = int_or_none(extra.get("returncode"))
        if code is None:
            code = int_or_none(doc.get("returncode"))
        self.add(
            "tool_result",
            "tool",
            out,
            ts,
            call_id=str_or_none(msg.get("tool_call_id")),
            exit_code=code,
            is_error=bool(code) or (isinstance(problem, str) and bool(problem.strip())),
        )


def _first_ts(messages: Iterable[Any]) -> float | None:
    for msg in messages:
        ts = epoch(as_dict(as_dict(msg).get("extra")).get("timestamp"))
        if ts is not None:
            return ts
    return None


def run_id(messages: Iterable[Any]) -> str:
    """The id of the run ``messages`` begin: a digest of its first user message and its first time stamp."""
    task = next((m.get("content") for m in messages if isinstance(m, dict) and m.get("role") == "user"), None)
    h = hashlib.blake2b(digest_size=8)
    h.update(compact_json(task).encode("utf-8", "surrogatepass"))
    h.update(repr(_first_ts(messages)).encode())
    return f"run-{h.hexdigest()}"


def prefix_digest(messages: list[Any], count: int) -> str:
    """A digest of the first ``count`` messages: what tells the same run grown from a new one."""
    h = hashlib.blake2b(digest_size=12)
    for msg in messages[:count]:
        h.update(compact_json(msg).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
    return h.hexdigest()


def _same_run(messages: list[Any], state: dict[str, Any]) -> str | None:
    """The id of the run the cursor describes when ``messages`` still begin with its messages, else None."""
    run, known = state.get("run"), state.get("messages")
    if not (isinstance(run, str) and isinstance(known, list) and len(known) == 2):
        return None
    count = int_or_none(known[0])
    if count is None or count <= 0 or count > len(messages) or prefix_digest(messages, count) != known[1]:
        return None
    return run


def _digests(messages: Iterable[Any], at: int | None) -> tuple[int, str, str | None]:
    """How many ``messages``, :func:`prefix_digest` of them all, and of the first ``at`` (None if fewer): one pass."""
    h = hashlib.blake2b(digest_size=12)
    count = 0
    prefix = h.hexdigest() if at == 0 else None
    for msg in messages:
        h.update(compact_json(msg).encode("utf-8", "surrogatepass"))
        h.update(b"\0")
        count += 1
        if count == at:
            prefix = h.hexdigest()
    return count, h.hexdigest(), prefix


def read_trajectory(source: Source, cursor: Cursor | None) -> Iterator[Item]:
    """The run the file holds (only what it added since the cursor, when it is the same run), and every
    earlier run the cursor remembers as Unchanged, so that an overwrite does not unindex it. A file larger
    than ``jsondoc.STREAM_JSON_BYTES`` is streamed: a pass tells which run it is, the next yields its events
    as they come, the Session said first and again once the events changed it (its times, model, tokens)."""
    state = dict(cursor.state) if cursor is not None else {}
    earlier = [s for s in list_or_empty(state.get("earlier")) if isinstance(s, str)]
    notices: list[Notice] = []
    doc = read_json_streamed(source.path, "messages", ("info",), notices=notices)
    if isinstance(doc, Notice):
        yield doc
        return
    if not isinstance(doc, dict):
        yield Notice(source=source.path, reason=f"a JSON {type(doc).__name__}, not an object; skipped", fatal=True)
        return
    yield from notices
    messages = doc.get("messages")
    if not isinstance(messages, (list, StreamedArray)):
        yield Notice(
            source=source.path,
            fatal=True,
            reason='no "messages" list: not a mini-swe-agent trajectory Voyager knows; skipped',
        )
        return
    unknown = UnknownRecords(LABEL)
    info = as_dict(doc.get("info"))
    version = str_or_none(info.get("mini_version"))
    unknown.version = version
    if isinstance(messages, StreamedArray):
        known = list_or_empty(state.get("messages"))
        at = int_or_none(known[0]) if len(known) == 2 else None
        count, digest, prefix = _digests(messages, at)
        run_name = state.get("run")
        same = run_name if isinstance(run_name, str) and at and prefix is not None and prefix == known[1] else None
    else:
        same = _same_run(messages, state)
        count = len(messages)
    native = same or run_id(messages)
    if not same and isinstance(state.get("run"), str) and state["run"] != native:
        earlier.append(session_id(PROVIDER, state["run"]))  # the run the file held before: keep it indexed
    earlier = [s for s in dict.fromkeys(earlier) if s != session_id(PROVIDER, native)][-MAX_RUNS:]
    sid = session_id(PROVIDER, native)
    run = _Run(doc, sid, unknown)
    for old in earlier:
        yield Unchanged(session=old)
    new_state: dict[str, Any] = {"earlier": earlier}
    before = state.get("delta") if same else None
    times: list[float] = []  # the first and last stamp of the run's events

    def session() -> Session:
        cwd = str_or_none(as_dict(run.config.get("environment")).get("cwd"))
        return Session(
            id=sid,
            provider=PROVIDER,
            native_id=native,
            cwd=cwd,
            model=str_or_none(as_dict(run.config.get("model")).get("model_name")) or run.model,
            started=times[0] if times else None,
            updated=times[-1] if times else None,
            source=source.path,
            tokens_in=run.tokens[0] or None,
            tokens_out=run.tokens[1] or None,
            agent_version=release(version),
        )

    def stamped(ts: float | None) -> None:
        if ts is not None:
            times[:] = [min(times[0], ts), max(times[1], ts)] if times else [ts, ts]

    if isinstance(messages, list):
        for msg in messages:
            run.message(msg)
        made = len(run.events)
        if run.events:
            for e in run.events:
                stamped(e.ts)
            yield session()
            items, delta = reread_delta(sid, run.events, before)
            yield from items
            new_state.update(run=native, messages=[count, prefix_digest(messages, count)], delta=delta)
    else:
        first: Session | None = None
        stream = DeltaStream(sid, before)
        made = 0
        for msg in messages:
            run.message(msg)
            for ev in run.events:
                stamped(ev.ts)
                if first is None:
                    first = session()
                    yield first
                yield from stream.add(ev)
            made += len(run.events)
            run.events.clear()  # yielded: never held
        ended = list(stream_end(messages, source.path))
        yield from ended
        if any(n.fatal for n in ended):
            return
        if first is not None:
            items, delta = stream.finish()
            yield from items
            if (last := session()) != first:
                yield last
            new_state.update(run=native, messages=[count, digest], delta=delta)
    if (notice := unknown.notice(source.path)) is not None:
        yield notice
    yield Cursor(offset=0, next_seq=made, tail_hash="", session=sid if made else None, state=new_state)


class MiniSweAgentAdapter:
    """mini-swe-agent's last run, and the earlier runs it overwrote that Voyager had indexed."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        return [home / FILE for home in homes(env)]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        for home in homes(env):
            # The one file in the folder (its .env and configs are not sessions).
            yield from walk_files(
                home, FILE, PROVIDER, append_only=False, match=lambda name: name == FILE, skip_dir=lambda _name: True
            )

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return read_trajectory(source, cursor)


ADAPTER = MiniSweAgentAdapter()
