"""The cecli adapter: ``<project>/.cecli/`` (observed, 1.10.0), the Aider fork's per-project history.

cecli (formerly aider-ce) keeps what Aider keeps in a project's ``.aider.chat.history.md`` in a folder
``.cecli/`` at the project's git root (the working directory outside a repository):

* ``chat.history``: Aider's Markdown log under another heading (``# cecli chat started at <local
  time>``), appended by every run: what the person typed on ``#### `` lines, status and tool lines
  on ``> `` lines, the model's replies as paragraphs. Read by Aider's reader (:class:`aider.AiderRead`).
* ``agents/<date>/<agent id>/<name>.json``: a session saved as JSON (``--auto-save``, ``/save-session``):
  ``chat_history.{done_messages,cur_messages}`` in OpenAI's chat shape, with the model's reasoning,
  its tool calls and their results, none of which the log keeps as such. No timestamps.
  ``sessions/<name>.json`` is either such a session or a reference to one
  (``{"type": "session-reference", "path": ".cecli/agents/…"}``; ``auto-save`` is re-pointed by each run).

The same run is told twice, in the log and in its JSON session, so the folder is one source and one
read decides: each JSON session is a session (its prompt found in a run of the log gives it the run's
start time), and a run of the log is a session of its own only when no JSON session starts with its
prompt. A person's prompt is then one event, however the run was saved. In agent mode cecli wraps the
person's input in ``<context name="user_input">``; an unwrapped user message there is the agent's own
nudge ("Continue with your task…"), meta.

Where: found the way Aider's histories are (the same rule, :mod:`aider`): ``$VOYAGER_CECLI_HOME`` and its
children when set; else HOME and its children, ``$VOYAGER_AIDER_ROOTS`` and theirs, and every indexed
session's working directory and its parents, inside ``$VOYAGER_LOOK_WITHIN`` when that is set. Resume:
``cecli --auto-load`` in the project reopens the session ``auto-save`` points to; cecli has no command
line for another one (``/load-session <name>`` inside it).
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import (
    as_dict,
    EventCounter,
    int_or_none,
    list_or_empty,
    openai_tool_calls,
    resume_in,
    str_or_none,
    UnknownRecords,
)
from voyager_sessions.ingest.adapters._drafts import Draft, json_value, number
from voyager_sessions.ingest.adapters.aider import AiderRead, _Finder, extra_roots
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Hints, Item, Notice, Source
from voyager_sessions.ingest.files import group_fingerprint, kind_of
from voyager_sessions.ingest.jsondoc import read_json_object
from voyager_sessions.ingest.toolcall import tool_call_text
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "cecli"
LABEL = "cecli"
FOLDER = ".cecli"
HISTORY = "chat.history"
HEADING = "# cecli chat started at "
SHELL_TOOLS = frozenset({"local--command", "command", "local--shell"})
#: How deep JSON sessions sit below ``agents/`` (``<date>/<agent id>/<name>.json``) and ``sessions/``.
_AGENTS_DEPTH = 3
#: Files one project's folder may hold before the rest are left out (and named): a bound on a scan.
_MAX_FILES = 10_000
_WRAPPED = re.compile(r'\A\s*<context name="user_input"[^>]*>\n?(.*?)\n?</context>\s*\Z', re.S)
_EXIT = re.compile(r"\(exit code (-?\d{1,10})\)")
#: A run's prompt kept to match it with a JSON session (the head is enough; a whole prompt may be huge).
_PROMPT_KEY = 2000


def _prompt_key(text: str) -> str:
    return " ".join(text.split())[:_PROMPT_KEY]


def session_files(folder: str) -> tuple[list[str], list[Notice]]:
    """The JSON session files of a ``.cecli`` folder: ``agents/*/*/*.json``, ``sessions/*.json`` and
    ``sessions/*/primary.json``, regular files only, sorted (references among them are sorted out on read)."""
    found: list[str] = []
    notices: list[Notice] = []

    def walk(d: str, depth: int) -> None:
        try:
            with os.scandir(d) as it:
                entries = sorted((e.name, e.path) for e in it)
        except FileNotFoundError:
            return
        except OSError as exc:
            notices.append(Notice(source=d, reason=f"cannot read directory: {exc.strerror or exc}"))
            return
        for name, path in entries:
            if len(found) >= _MAX_FILES:
                return
            try:
                st = os.stat(path)
            except OSError:
                continue
            if stat.S_ISDIR(st.st_mode) and depth > 1:
                walk(path, depth - 1)
            elif stat.S_ISREG(st.st_mode) and name.endswith(".json") and depth == 1:
                found.append(path)

    walk(os.path.join(folder, "agents"), _AGENTS_DEPTH)
    walk(os.path.join(folder, "sessions"), 1)
    walk(os.path.join(folder, "sessions"), 2)  # a named bundle: sessions/<name>/primary.json and its peers
    found = sorted(p for p in dict.fromkeys(found) if not _bundle_child(folder, p))
    if len(found) >= _MAX_FILES:
        notices.append(Notice(source=folder, reason=f"more than {_MAX_FILES:,} session files; the rest not read"))
    return found, notices


def _bundle_child(folder: str, path: str) -> bool:
    """A file of a named bundle other than its ``primary.json`` (sub-agents' states: not read yet)."""
    rel = os.path.relpath(path, os.path.join(folder, "sessions"))
    return not rel.startswith("..") and os.sep in rel and os.path.basename(rel) != "primary.json"


def _stat_part(path: str) -> Fingerprint | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino)


class _CecliFinder(_Finder):
    """Aider's walk (HOME and its children, roots, recorded folders and their parents), looking for ``.cecli``."""

    def __init__(self) -> None:
        super().__init__((FOLDER,))

    def file(self, path: Path) -> Iterator[Source | Notice]:
        try:
            st = os.stat(path)
        except (OSError, ValueError):
            return
        if not stat.S_ISDIR(st.st_mode):
            yield Notice(source=str(path), reason=f"{kind_of(st.st_mode)}, not a folder; skipped")
            return
        if (st.st_dev, st.st_ino) in self.found:
            return
        self.found.add((st.st_dev, st.st_ino))
        folder = os.path.realpath(path)
        files, notices = session_files(folder)
        yield from notices
        parts = [fp for p in (os.path.join(folder, HISTORY), *files) if (fp := _stat_part(p)) is not None]
        if not parts:
            return  # a .cecli folder with no history yet (settings only)
        yield Source(provider=PROVIDER, path=folder, fingerprint=group_fingerprint(parts))


class _LogRead(AiderRead):
    provider = PROVIDER
    heading = HEADING

    def place(self, path: str) -> tuple[str | None, str | None]:
        return os.path.dirname(os.path.dirname(path)), None


def _runs(history: str) -> Iterator[tuple[list[Item], str | None]]:
    """The runs of the log, one at a time: its items (Session first) and its first prompt (None if none)."""
    if not os.path.isfile(history):
        return
    source = Source(provider=PROVIDER, path=history, fingerprint=Fingerprint(size=0, mtime_ns=0, inode=0))
    items: list[Item] = []
    prompt: str | None = None
    current: str | None = None
    for item in _LogRead(source, None).stream():
        if isinstance(item, Cursor):
            continue
        if isinstance(item, Session) and item.id != current:
            if items:
                yield items, prompt
            items, prompt, current = [], None, item.id
        if isinstance(item, Notice) and current is None:
            yield [item], None
            continue
        if isinstance(item, Event) and prompt is None and item.kind == "user" and item.origin == "human":
            prompt = _prompt_key(item.text)
        items.append(item)
    if items:
        yield items, prompt


def _tool_text(content: Any) -> tuple[str, int | None]:
    """A tool message's text: cecli's ``{"result": [{"content": …}], "errors": […]}`` unwrapped, with the
    exit code its shell tool states ("… (exit code N). Output: …")."""
    text = content if isinstance(content, str) else ""
    doc = json_value(text) if text.lstrip().startswith("{") else None
    if isinstance(doc, dict) and "result" in doc:
        parts = [str_or_none(as_dict(r).get("content")) for r in list_or_empty(doc.get("result"))]
        parts += [e if isinstance(e, str) else tool_call_text(None, e) for e in list_or_empty(doc.get("errors"))]
        text = "\n".join(p for p in parts if p)
    m = _EXIT.search(text)
    return text, int(m.group(1)) if m else None


class _FolderRead:
    """One read of one ``.cecli`` folder: its JSON sessions, then the runs of its log they do not tell."""

    def __init__(self, source: Source) -> None:
        self.folder = source.path
        self.root = os.path.dirname(self.folder)
        self.unknown = UnknownRecords(LABEL)

    def run(self) -> Iterator[Item]:
        history = os.path.join(self.folder, HISTORY)
        started: dict[str, float] = {}
        for items, prompt in _runs(history):
            first = items[0]
            if prompt is not None and isinstance(first, Session) and first.started is not None:
                started.setdefault(prompt, first.started)
        files, notices = session_files(self.folder)
        yield from notices
        pointed = self._auto_save()
        told: set[str] = set()
        for path in files:
            yield from self._session_file(path, started, told, pointed)
        for items, prompt in _runs(history):
            if prompt is None or prompt not in told:
                yield from items
        if (notice := self.unknown.notice(self.folder)) is not None:
            yield notice

    def _auto_save(self) -> str | None:
        """The JSON session ``sessions/auto-save.json`` points to (what ``cecli --auto-load`` reopens)."""
        ref = read_json_object(os.path.join(self.folder, "sessions", "auto-save.json"), fatal=False)
        if isinstance(ref, Notice):
            return None
        if ref.get("type") != "session-reference":
            return os.path.join(self.folder, "sessions", "auto-save.json")
        rel = str_or_none(ref.get("path"))
        return os.path.normpath(os.path.join(self.root, rel)) if rel and not os.path.isabs(rel) else None

    def _session_file(
        self, path: str, started: dict[str, float], told: set[str], pointed: str | None
    ) -> Iterator[Item]:
        doc = read_json_object(path, fatal=False)
        if isinstance(doc, Notice):
            yield doc
            return
        if doc.get("type") == "session-reference":
            return
        history = as_dict(doc.get("chat_history"))
        if "chat_history" not in doc:
            if doc.get("encrypted") or doc.get("ciphertext") or doc.get("nonce"):
                yield Notice(source=path, reason="an encrypted cecli session (--session-encrypt): not read")
            else:
                yield Notice(source=path, reason="no 'chat_history': not a cecli session Voyager knows; skipped")
            return
        messages = [*list_or_empty(history.get("done_messages")), *list_or_empty(history.get("cur_messages"))]
        native = path
        sid = session_id(PROVIDER, native)
        agent_mode = doc.get("edit_format") == "agent"
        drafts: list[Draft] = []
        first_prompt: str | None = None
        for message in messages:
            if not isinstance(message, dict):
                self.unknown.saw(type(message).__name__)
                continue
            for draft in self._message(message, agent_mode):
                if first_prompt is None and draft[0] == "user" and draft[1] == "human" and isinstance(draft[2], str):
                    first_prompt = _prompt_key(draft[2])
                drafts.append(draft)
        if first_prompt is not None:
            told.add(first_prompt)
        try:
            mtime: float | None = os.stat(path).st_mtime
        except OSError:
            mtime = None
        usage = as_dict(doc.get("usage"))
        yield Session(
            id=sid,
            provider=PROVIDER,
            native_id=native,
            title=str_or_none(doc.get("session_name")) if doc.get("session_name") != "auto-save" else None,
            title_source="user" if doc.get("session_name") not in (None, "", "auto-save") else None,
            cwd=self.root,
            model=str_or_none(doc.get("model")),
            started=started.get(first_prompt or "") or mtime,
            updated=mtime,
            resume=resume_in(self.root, "cecli", "--auto-load") if path == pointed else None,
            source=path,
            tokens_in=int_or_none(usage.get("total_tokens_sent")),
            tokens_out=int_or_none(usage.get("total_tokens_received")),
        )
        yield from number(EventCounter(sid, 0), drafts)

    def _message(self, message: dict[str, Any], agent_mode: bool) -> Iterator[Draft]:
        role = message.get("role")
        content = message.get("content")
        text = content if isinstance(content, str) else tool_call_text(None, content) if content else ""
        if role == "user":
            m = _WRAPPED.match(text)
            if m is not None:
                yield ("user", "human", m.group(1), {})
            elif agent_mode:
                yield ("meta", "provider", text, {})  # the agent's own nudge, not the person's words
            else:
                yield ("user", "human", text, {})
        elif role == "assistant":
            yield ("reasoning", "agent", str_or_none(message.get("reasoning_content")), {})
            yield ("assistant", "agent", text, {})
            for call in openai_tool_calls(message.get("tool_calls")):
                yield (
                    "tool_call",
                    "agent",
                    tool_call_text(call.name, call.arguments, SHELL_TOOLS),
                    {"tool": call.name, "call_id": call.id},
                )
        elif role == "tool":
            output, code = _tool_text(content)
            yield (
                "tool_result",
                "tool",
                output,
                {
                    "call_id": str_or_none(message.get("tool_call_id")),
                    "exit_code": code,
                    "is_error": code is not None and code != 0,
                },
            )
        elif role == "system":
            yield ("meta", "provider", text, {})
        else:
            self.unknown.saw(f"role:{role}")


class CecliAdapter:
    """cecli's per-project ``.cecli`` folders (found as Aider's histories are)."""

    name: ClassVar[str] = PROVIDER

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        base = manifest.agent_home(PROVIDER, env)
        assert base is not None
        if env.get("VOYAGER_CECLI_HOME"):
            return [base]
        return [base, *extra_roots(env)]

    def discover(self, env: Mapping[str, str], hints: Hints | None = None) -> Iterator[Source | Notice]:
        base = manifest.agent_home(PROVIDER, env)
        assert base is not None
        finder = _CecliFinder()
        yield from finder.with_children(base)
        if env.get("VOYAGER_CECLI_HOME"):
            return
        for root in extra_roots(env):
            yield from finder.with_children(root)
        for cwd in sorted(hints.cwds if hints else ()):
            yield from finder.upwards(cwd, hints)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return _FolderRead(source).run()


ADAPTER = CecliAdapter()
