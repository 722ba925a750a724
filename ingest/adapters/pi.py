"""The Pi adapter: ``<pi agent dir>/sessions/--<cwd>--/<time>_<id>.jsonl`` to Sessions and Events.

Owns what Voyager knows about Pi's session files (pi-mono's coding agent, and two forks that write
the same format: Oh My Pi under ``~/.omp/agent``, and Prime Intellect's Prime Agent, flat in
``~/.prime/agent/sessions/`` or ``$PRIME_AGENT_SESSION_DIR``, documented by agentsview's ``pi.go``:
its file names need not carry the header's id, its ``parentSession`` is the forked file's path, whose
header names the parent, and a ``child_usage_attributed`` entry replaces an earlier assistant
message's usage with one that counts its subagents' too; no resume command is known for it). A file is one session:
a ``session`` header line (its id, cwd, start time and, for a fork, the file it was
forked from), then entries that form a tree through ``id``/``parentId``. Branching
(``/tree``, ``/branch``) adds a second child to an earlier entry instead of rewriting
anything, so every entry is indexed in line order: a branch left behind is still
something that was said.

Entry kinds: ``message`` (roles ``user``, ``assistant`` with ``thinking``/``text``/
``toolCall`` blocks, ``toolResult``, ``bashExecution`` for a ``!command`` the person
ran, ``custom``/``hookMessage``, ``branchSummary``, ``compactionSummary``),
``model_change``, ``thinking_level_change``, ``session_info`` (the name a person gave the
session: its title), ``custom_message``, ``compaction``, ``branch_summary``, ``label``
and ``custom`` (extension state, not conversation: skipped). Pi keeps no copies of a
prompt, so nothing needs de-duplicating. Files are append-only; reading resumes at the
byte where the last scan stopped.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import msgspec

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    JsonlSessionRead,
    epoch,
    int_or_none,
    join_text,
    parse_ts,
    opt,
    resume_in,
    str_or_none,
)
from voyager_sessions.ingest.adapters._drafts import Draft
from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.files import open_regular, walk_files
from voyager_sessions.ingest.jsonl import Record, decode_line
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Session, session_id

PROVIDER = "pi"

#: Tools whose ``arguments.command`` is a shell command: indexed as the command itself.
_SHELL_TOOLS = frozenset({"bash", "shell", "exec", "terminal"})

#: Entry kinds that are not conversation and carry nothing to search: skipped without a word.
_NOT_CONVERSATION = frozenset({"custom"})


def native_id_of_file(name: str) -> str:
    """The session id in a session file's name, ``<time>_<id>.jsonl``; the stem when there is no ``_``."""
    stem = name[:-6] if name.endswith(".jsonl") else name
    _, sep, rest = stem.partition("_")
    return rest if sep and rest else stem


def resume_command(binary: str, cwd: str | None, native_id: str) -> str | None:
    """``pi --session <id>`` (an id prefix is accepted) looks the id up among the sessions of the
    directory it runs in first and offers to fork one found elsewhere: so it runs in the cwd."""
    return resume_in(cwd, binary, opt("--session" if binary == "pi" else "--resume", native_id))


def _under(path: str, marker: str, home: str) -> bool:
    """True when ``path`` lies below ``marker`` (a default place) or the manifest home ``home`` as set now."""
    if marker in path:
        return True
    root = manifest.agent_home(home, os.environ)
    if root is None:
        return False
    try:
        return Path(path).resolve().is_relative_to(root.expanduser().resolve())
    except (OSError, ValueError):
        return False


def _is_prime(path: str) -> bool:
    """True when ``path`` lies in Prime Agent's sessions dir (no resume command; its forks name files)."""
    return _under(path, f"{os.sep}.prime{os.sep}agent{os.sep}", "pi.prime")


def header_id(path: str) -> str | None:
    """The ``id`` of the ``session`` header that opens the session file at ``path`` (None if unreadable)."""
    try:
        with open_regular(path) as fh:
            first = fh.readline(1 << 16)
        header = decode_line(first.rstrip(b"\n"))
    except (OSError, ValueError, msgspec.DecodeError):
        return None
    return str_or_none(header.get("id")) if isinstance(header, dict) and header.get("type") == "session" else None


#: Assistant messages whose usage a later ``child_usage_attributed`` entry may replace: the latest kept.
USAGES_KEPT = 64


def _is_omp(path: str) -> bool:
    """True when ``path`` lies in Oh My Pi's agent dir (resumed with ``omp``, not ``pi``)."""
    return _under(path, f"{os.sep}.omp{os.sep}", "omp")


def render_call(name: str | None, arguments: Any) -> str:
    """A tool call's searchable text, by the one rule (``toolcall.tool_call_text``, docs/json.md)."""
    return tool_call_text(name, arguments, _SHELL_TOOLS)


class _PiRead(JsonlSessionRead):
    """One pass over one session file (or what was appended to it since the cursor)."""

    provider = PROVIDER
    #: Whether the file is Prime Agent's, and the latest assistant messages' usage (entry id -> (in, out)) a
    #: ``child_usage_attributed`` entry may replace. Class defaults, so that a reader of Pi's format for another
    #: agent that sets itself up without this ``__init__`` (OpenClaw's) reads it as Pi's.
    prime: bool = False
    usages: dict[str, tuple[int, int]] | None = None

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.prime = _is_prime(source.path)
        self.binary: str | None = None if self.prime else "omp" if _is_omp(source.path) else "pi"
        label = "Prime Agent" if self.prime else "Oh My Pi" if self.binary == "omp" else "Pi"
        state = self._start(source.path, cursor, label)
        self.name_id = native_id_of_file(Path(source.path).name)
        self.usages = {
            u[0]: (u[1], u[2])
            for u in state.get("usages") or ()
            if isinstance(u, list) and len(u) == 3 and isinstance(u[0], str) and all(isinstance(n, int) for n in u[1:])
        }

    # -- session -------------------------------------------------------------------

    def _session(self) -> Session:
        native = self.facts.native_id
        assert native is not None
        return self.facts.session(
            self.provider,
            title=self.facts.user_title,
            title_source="user",
            resume=resume_command(self.binary, self.facts.cwd, native) if self.binary else None,
            source=self.path,
        )

    def _state(self) -> dict[str, Any]:
        state = self.facts.to_state()
        if self.usages:
            state["usages"] = [[k, i, o] for k, (i, o) in self.usages.items()]
        return state

    def _establish(self, native_id: str | None) -> Session | None:
        """Fix the session id (the header's, else the file name's); returns the Session to yield first."""
        if self.counter is not None:
            return None
        return self._begin(native_id or self.name_id)

    # -- the stream ------------------------------------------------------------------

    def _record(self, record: Record) -> Iterator[Item]:
        if isinstance(record.value, dict):
            yield from self._numbered(self._entry(record.value), self.name_id)

    def _entry(self, entry: dict[str, Any]) -> Iterator[Draft | Session]:
        kind = entry.get("type")
        ts = parse_ts(entry.get("timestamp"))
        if kind == "session":
            yield from self._header(entry, ts)
            return
        self.facts.observe_ts(ts)
        if kind == "message":
            message = entry.get("message")
            if isinstance(message, dict):
                if message.get("role") == "assistant" and isinstance(entry.get("id"), str):
                    self._remember_usage(entry["id"], message.get("usage"))
                yield from self._message(message, epoch(message.get("timestamp")) or ts)
        elif kind == "child_usage_attributed":
            self._attributed(entry.get("targetId"), entry.get("aggregateUsage"))
        elif kind == "model_change":
            model = str_or_none(entry.get("modelId"))
            if model:
                self.facts.model = model
                provider = str_or_none(entry.get("provider"))
                yield ("meta", "provider", f"model: {provider}/{model}" if provider else f"model: {model}", {"ts": ts})
        elif kind == "thinking_level_change":
            level = str_or_none(entry.get("thinkingLevel"))
            yield ("meta", "provider", f"thinking level: {level}" if level else None, {"ts": ts})
        elif kind == "session_info":
            # /name: the latest one wins; an empty name clears it.
            name = entry.get("name")
            self.facts.user_title = name.strip() if isinstance(name, str) and name.strip() else None
        elif kind == "custom_message":
            yield ("meta", "provider", join_text(entry.get("content")), {"ts": ts})
        elif kind in ("compaction", "branch_summary"):
            yield ("meta", "provider", entry.get("summary"), {"ts": ts})
        elif kind == "label":
            label = str_or_none(entry.get("label"))
            yield ("meta", "provider", f"label: {label}" if label else None, {"ts": ts})
        elif not (isinstance(kind, str) and kind in _NOT_CONVERSATION):  # a list or dict type is unhashable
            self.unknown.saw(kind)

    def _header(self, entry: dict[str, Any], ts: float | None) -> Iterator[Session]:
        facts = self.facts
        version = entry.get("version")
        if isinstance(version, int) and not isinstance(version, bool):
            self.unknown.version = f"(session format v{version})"
        facts.observe_ts(ts)
        facts.cwd = facts.cwd or str_or_none(entry.get("cwd"))
        parent = str_or_none(entry.get("parentSession"))
        if parent and facts.parent is None:
            # A fork names the file it was forked from; that file's name carries its id (Prime Agent's need
            # not: its header, in the file of that name beside this one, names the parent).
            name = parent.replace("\\", "/").rsplit("/", 1)[-1]
            found = header_id(os.path.join(os.path.dirname(self.path), name)) if self.prime else None
            facts.parent = session_id(self.provider, found or native_id_of_file(name))
        first = self._establish(str_or_none(entry.get("id")))
        if first is not None:
            yield first

    def _message(self, message: dict[str, Any], ts: float | None) -> Iterator[Draft]:
        role = message.get("role")
        if role == "user":
            yield ("user", "human", join_text(message.get("content")), {"ts": ts})
        elif role == "assistant":
            yield from self._assistant(message, ts)
        elif role == "toolResult":
            yield (
                "tool_result",
                "tool",
                join_text(message.get("content")),
                {
                    "ts": ts,
                    "tool": str_or_none(message.get("toolName")),
                    "call_id": str_or_none(message.get("toolCallId")),
                    "is_error": message.get("isError") is True,
                },
            )
        elif role == "bashExecution":
            # A command the person ran with ``!``: their tool run, with the exit code Pi recorded.
            command = message.get("command")
            yield ("tool_call", "human", tool_call_text("bash", command), {"ts": ts, "tool": "bash"})
            code = int_or_none(message.get("exitCode"))
            output = message.get("output")
            yield (
                "tool_result",
                "tool",
                output if isinstance(output, str) else None,
                {
                    "ts": ts,
                    "tool": "bash",
                    "exit_code": code,
                    "is_error": (code is not None and code != 0) or message.get("cancelled") is True,
                },
            )
        elif role in ("custom", "hookMessage"):
            yield ("meta", "provider", join_text(message.get("content")), {"ts": ts})
        elif role in ("branchSummary", "compactionSummary"):
            yield ("meta", "provider", message.get("summary"), {"ts": ts})
        else:
            self.unknown.saw(f"message:{role}")

    def _assistant(self, message: dict[str, Any], ts: float | None) -> Iterator[Draft]:
        model = str_or_none(message.get("model"))
        if model:
            self.facts.model = model
        self._usage(message.get("usage"))
        content = message.get("content")
        if isinstance(content, str):
            yield ("assistant", "agent", content, {"ts": ts})
        for block in content if isinstance(content, list) else ():
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "text":
                yield ("assistant", "agent", block.get("text"), {"ts": ts})
            elif btype == "thinking":
                yield ("reasoning", "agent", block.get("thinking"), {"ts": ts})
            elif btype == "toolCall":
                name = str_or_none(block.get("name"))
                yield (
                    "tool_call",
                    "agent",
                    render_call(name, block.get("arguments")),
                    {"ts": ts, "tool": name, "call_id": str_or_none(block.get("id"))},
                )
        if message.get("stopReason") in ("error", "aborted"):
            # Pi's own account of a failed request, not the model's words.
            yield ("meta", "provider", message.get("errorMessage"), {"ts": ts, "is_error": True})

    def _usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        tokens_in, tokens_out = _tokens(usage)
        self.facts.tokens_in = (self.facts.tokens_in or 0) + tokens_in
        self.facts.tokens_out = (self.facts.tokens_out or 0) + tokens_out

    def _remember_usage(self, entry_id: str, usage: Any) -> None:
        if self.usages is None:
            self.usages = {}
        self.usages[entry_id] = _tokens(usage) if isinstance(usage, dict) else (0, 0)
        while len(self.usages) > USAGES_KEPT:
            del self.usages[next(iter(self.usages))]

    def _attributed(self, target: Any, usage: Any) -> None:
        """Prime Agent's ``child_usage_attributed``: the usage of assistant message ``target`` is now ``usage``
        (its own and its subagents'). A target not among the latest messages cannot be corrected: skipped."""
        if not isinstance(target, str) or not self.usages or target not in self.usages or not isinstance(usage, dict):
            return
        old_in, old_out = self.usages[target]
        new_in, new_out = _tokens(usage)
        self.usages[target] = (new_in, new_out)
        self.facts.tokens_in = (self.facts.tokens_in or 0) + new_in - old_in
        self.facts.tokens_out = (self.facts.tokens_out or 0) + new_out - old_out


def _tokens(usage: dict[str, Any]) -> tuple[int, int]:
    """(tokens in, tokens out) of a Pi usage record: input with the cache's reads and writes, and output."""
    tokens_in = sum(int_or_none(usage.get(k)) or 0 for k in ("input", "cacheRead", "cacheWrite"))
    return tokens_in, int_or_none(usage.get("output")) or 0


class PiAdapter:
    """Pi's (and Oh My Pi's) session files under their agent dirs' ``sessions/``."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        """Pi's sessions dir(s), then Oh My Pi's. ``VOYAGER_PI_HOME`` names Pi's agent dir and is
        authoritative for Pi; otherwise ``PI_CODING_AGENT_SESSION_DIR`` (the sessions dir itself) is
        read beside the agent dir's ``sessions/`` (sessions written before it was set stay there)."""
        found: list[Path] = []
        if not env.get("VOYAGER_PI_HOME"):
            extra = manifest.agent_home("pi.sessions", env)
            if extra is not None:
                found.append(extra)
        for home in ("pi", "omp"):
            base = manifest.agent_home(home, env)
            if base is not None:
                found.append(base / "sessions")
        prime = manifest.agent_home("pi.prime", env)  # Prime Agent's sessions dir itself (flat)
        if prime is not None:
            found.append(prime)
        unique: dict[str, Path] = {}
        for root in found:
            unique.setdefault(os.path.normpath(str(root)), root)
        return list(unique.values())

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        seen: set[str] = set()
        for root in self.roots(env):
            for item in walk_files(root, ".jsonl", self.name):
                # A sessions dir inside another one (an override pointing below the default): once.
                if isinstance(item, Source):
                    if item.path in seen:
                        continue
                    seen.add(item.path)
                yield item

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _PiRead(source, cursor).run()


ADAPTER = PiAdapter()
