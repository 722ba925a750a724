"""The Aider adapter: ``.aider.chat.history.md``, the Markdown log Aider keeps in each project.

Aider has no session store in HOME: every run appends to a history file in the project
it runs in (its git root, else the working directory). So discovery needs places to
look, and this module owns the rule (see :meth:`AiderAdapter.discover`):

1. ``$VOYAGER_AIDER_HOME``, when set, is authoritative: that directory and its immediate
   subdirectories, nothing else.
2. Otherwise: ``$HOME`` and its immediate subdirectories (``~/proj/.aider.chat.history.md``);
   every directory in ``$VOYAGER_AIDER_ROOTS`` (``os.pathsep``-separated) and its immediate
   subdirectories; the working directory of every session Voyager has indexed, from any
   agent, and that directory's ancestors (the history sits at the git root, the session may
   have run below it) — the scan hands these over as ``Hints``; and Aider's own
   ``$AIDER_CHAT_HISTORY_FILE``: an absolute path is read as it is, a relative one is the
   file name looked for in every place above (beside the default name).

A walk that starts from a recorded folder stays inside ``$VOYAGER_LOOK_WITHIN`` when it is set
(``Hints.within``: the tests pin it to their sandbox).

The format (observed on 0.86.2): each run starts with ``# aider chat started at <local
time>``; what the person typed is on ``#### `` lines (several in a row are one prompt);
Aider's status output is on ``> `` lines (``meta``); everything else is the model's
reply. Status and prompt lines end with two spaces (a Markdown line break), which tells
them from a reply's own ``#### heading`` or ``> quote``. The first status line of a run
echoes the command line, prompt included (``--message …``): that copy is cut from the
``meta`` event so the prompt is one event. ``.aider.input.history`` logs every prompt
twice more and is never read.

One heading is one session (``aider:<path>#<heading byte offset>``, stable because the
file only grows). Reading resumes at a byte offset: the cursor stops before the first
block that may still grow (the last one), so the next scan reads it again and replaces
what it yielded; a new heading after the cursor starts a new session in the same source.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterator, Mapping
from datetime import datetime
from pathlib import Path
from typing import Any, ClassVar

from voyager_sessions.ingest import manifest
from voyager_sessions.ingest.adapters._common import EventCounter, release, opt, resume_in
from voyager_sessions.ingest.adapters.base import Cursor, Fingerprint, Hints, Item, Notice, Source
from voyager_sessions.ingest.files import kind_of, open_regular, read_notice
from voyager_sessions.ingest.jsonl import Record, cursor_after, max_line_bytes
from voyager_sessions.core.model import Event, Session, session_id

PROVIDER = "aider"
#: Aider's default ``--chat-history-file``.
HISTORY_NAME = ".aider.chat.history.md"

HEADING = "# aider chat started at "
#: The heading's time. Only the prefix makes a heading: a time garbled by a bad disk (or junk after
#: it) costs the run its start time, not its turns.
_HEADING_TIME = re.compile(r"\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}")
_VERSION = re.compile(r"Aider v(\d[\w.+-]*)")
_MODEL = re.compile(r"^(?:Main model|Model): (\S+)", re.M)
_TOKENS = re.compile(r"^Tokens: ([\d.,]+)(k?) sent, .*?([\d.,]+)(k?) received", re.M)
#: The flags that carry a prompt on Aider's command line (the first status line echoes it).
_MESSAGE_FLAGS = ("--message ", "--msg ", "-m ", "--message=", "--msg=")
#: What Aider writes for an empty input.
_BLANK_PROMPT = "<blank>"


# -- where histories are ---------------------------------------------------------------------


def extra_roots(env: Mapping[str, str]) -> list[Path]:
    """``$VOYAGER_AIDER_ROOTS``: directories (``os.pathsep``-separated) searched with their children."""
    return [Path(p).expanduser() for p in env.get("VOYAGER_AIDER_ROOTS", "").split(os.pathsep) if p.strip()]


def history_names(env: Mapping[str, str]) -> tuple[tuple[str, ...], Path | None]:
    """The file names to look for in a directory, and the one history file named outright, if any.

    ``$AIDER_CHAT_HISTORY_FILE`` (Aider's own setting) as an absolute path names one file;
    as a relative path it is the name Aider uses in every project (the default name is
    still looked for: older runs used it).
    """
    custom = env.get("AIDER_CHAT_HISTORY_FILE", "").strip()
    if not custom:
        return (HISTORY_NAME,), None
    path = Path(custom).expanduser()
    if path.is_absolute():
        return (HISTORY_NAME,), path
    return tuple(dict.fromkeys((custom, HISTORY_NAME))), None


class _Finder:
    """One discovery pass: every place checked once, every file yielded once (however it was reached)."""

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.checked: set[str] = set()
        self.found: set[tuple[int, int]] = set()

    def file(self, path: Path) -> Iterator[Source | Notice]:
        try:
            st = os.stat(path)
        except (OSError, ValueError):  # absent (the usual case), or a name the OS refuses
            return
        if not stat.S_ISREG(st.st_mode):
            yield Notice(source=str(path), reason=f"{kind_of(st.st_mode)}, not a regular file; skipped")
            return
        if (st.st_dev, st.st_ino) in self.found:
            return
        self.found.add((st.st_dev, st.st_ino))
        # The real path, so the session ids (path-based) do not depend on which place led here.
        yield Source(
            provider=PROVIDER,
            path=os.path.realpath(path),
            fingerprint=Fingerprint(size=st.st_size, mtime_ns=st.st_mtime_ns, inode=st.st_ino),
            append_only=True,
        )

    def directory(self, d: Path) -> Iterator[Source | Notice]:
        key = str(d)
        if key in self.checked:
            return
        self.checked.add(key)
        for name in self.names:
            yield from self.file(d / name)

    def with_children(self, d: Path) -> Iterator[Source | Notice]:
        """``d`` and each directory directly inside it (symlinked ones included)."""
        yield from self.directory(d)
        try:
            with os.scandir(d) as it:
                subdirs = sorted(e.path for e in it if _is_dir(e))
        except FileNotFoundError:
            return
        except (OSError, ValueError) as exc:
            yield Notice(source=str(d), reason=f"cannot read directory: {getattr(exc, 'strerror', None) or exc}")
            return
        for sub in subdirs:
            yield from self.directory(Path(sub))

    def upwards(self, cwd: str, hints: Hints | None = None) -> Iterator[Source | Notice]:
        """``cwd`` and its ancestors (the history is at the git root; a session may run below it), as far up
        as ``hints`` allow (``$VOYAGER_LOOK_WITHIN``: a walk from a recorded folder never leaves those)."""
        if not os.path.isabs(cwd):
            return
        d = Path(os.path.normpath(cwd))
        while True:
            if str(d) in self.checked:
                return  # this ancestor, and so all above it, were checked already
            if hints is not None and not hints.allows(d):
                return  # outside the folders discovery may look in, and so is every ancestor above it
            yield from self.directory(d)
            if d.parent == d:
                return
            d = d.parent


def _is_dir(entry: os.DirEntry) -> bool:
    try:
        return entry.is_dir()
    except OSError:
        return False


# -- reading ---------------------------------------------------------------------------------


def local_time(text: str) -> float | None:
    """Epoch seconds of Aider's heading time: local time without a zone, read in this machine's zone."""
    try:
        return datetime.strptime(text, "%Y-%m-%d %H:%M:%S").timestamp()
    except (ValueError, OverflowError, OSError):
        return None


def resume_command(path: str, cwd: str | None) -> str | None:
    """Reopen a project's chat: ``aider --restore-chat-history`` in the project (naming the file if not the default)."""
    if cwd is not None and os.path.basename(path) == HISTORY_NAME:
        return resume_in(cwd, "aider", "--restore-chat-history")
    return resume_in(None, "aider", opt("--chat-history-file", path), "--restore-chat-history")


def _line_break(line: str) -> str:
    """``line`` without the two spaces Aider ends prompt and status lines with."""
    return line[:-2] if line.endswith("  ") else line


def _prompt_line(line: str) -> bool:
    return line.startswith("####") and (len(line) == 4 or line[4] == " ")


def _number(digits: str, k: str) -> int:
    try:
        value = float(digits.replace(",", ""))
    except ValueError:
        return 0
    return int(value * 1000) if k else int(value)


def cut_prompt(echo: str, prompt: str) -> str:
    """The command-line echo without its copy of ``prompt`` (only where a message flag passed it)."""
    if not prompt:
        return echo
    for flag in _MESSAGE_FLAGS:
        at = echo.find(flag + prompt)
        if at >= 0:
            end = at + len(flag) + len(prompt)
            if end == len(echo) or echo[end] in " \n":
                return echo[: at + len(flag)] + "…" + echo[end:]
    return echo


class _Block:
    """Consecutive lines of one kind: ``prompt`` (``####``), ``status`` (``>``) or ``reply``."""

    __slots__ = ("kind", "lines", "start")

    def __init__(self, kind: str, start: int) -> None:
        self.kind = kind
        self.lines: list[str] = []
        self.start = start

    def text(self) -> str:
        if self.kind == "prompt":
            return "\n".join(_line_break(ln[5:] if len(ln) > 4 else "") for ln in self.lines)
        if self.kind == "status":
            return "\n".join(
                _line_break(ln[2:] if ln.startswith("> ") else ln[1:] if ln.startswith(">") else ln)
                for ln in self.lines
            ).strip()
        return "\n".join(self.lines).strip("\n")


class _Run:
    """What is known about one run (one heading): round-trips through ``Cursor.state``."""

    FIELDS = ("native_id", "started", "model", "version", "tokens_in", "tokens_out", "prompted")

    def __init__(self, **values: Any) -> None:
        self.native_id: str = values.get("native_id", "")
        self.started: float | None = values.get("started")
        self.model: str | None = values.get("model")
        self.version: str | None = values.get("version")
        self.tokens_in: int | None = values.get("tokens_in")
        self.tokens_out: int | None = values.get("tokens_out")
        #: The run's first prompt was seen (the status block before it may hold its copy).
        self.prompted: bool = bool(values.get("prompted"))

    def state(self) -> dict[str, Any]:
        return {k: v for k in self.FIELDS if (v := getattr(self, k)) is not None}

    def learn(self, status: str) -> None:
        if self.version is None and (m := _VERSION.search(status)):
            self.version = m.group(1)
        if m := _MODEL.search(status):
            self.model = m.group(1)
        for m in _TOKENS.finditer(status):
            self.tokens_in = (self.tokens_in or 0) + _number(m.group(1), m.group(2))
            self.tokens_out = (self.tokens_out or 0) + _number(m.group(3), m.group(4))


class AiderRead:
    """One pass over one history file (or what was appended since the cursor).

    A fork that keeps the same Markdown log under another heading (cecli) subclasses it: ``provider``,
    ``heading`` and :meth:`place` are its.
    """

    provider: ClassVar[str] = PROVIDER
    heading: ClassVar[str] = HEADING

    def place(self, path: str) -> tuple[str | None, str | None]:
        """The working directory of the history at ``path`` (None when unknown) and its resume command."""
        cwd = os.path.dirname(path) if os.path.basename(path) == HISTORY_NAME else None
        return cwd, resume_command(path, cwd)

    def __init__(self, source: Source, cursor: Cursor | None) -> None:
        self.path = source.path
        self.cwd, self.resume = self.place(self.path)
        self.cursor = cursor
        self.run: _Run | None = None
        self.counter: EventCounter | None = None
        self.sent: Session | None = None
        self.block: _Block | None = None
        self.blank = True  # the previous line was blank (a block's paragraph ended)
        self.held: _Block | None = None  # a run's first status block, until its first prompt
        self.orphans = 0  # non-blank lines before the first heading
        self.mtime: float | None = None
        # The commit point: everything before ``offset`` was yielded for good.
        self.commit_offset = 0
        self.commit_tail = 0
        self.commit_seq = 0
        self.commit_state: dict[str, Any] = {}
        self.committed = False  # a commit point was set in this pass
        # Where the last non-blank line read starts: the cursor's tail runs from there to the commit
        # point (a blank line alone would prove nothing about the file being the same).
        self.tail = 0
        self.oversized = 0
        if cursor is not None and cursor.session and isinstance(cursor.state.get("native_id"), str):
            self.run = _Run(**cursor.state)
            self.counter = EventCounter(cursor.session, cursor.next_seq)

    # -- sessions ----------------------------------------------------------------------------

    def _session(self, *, last: bool = False) -> Session:
        run = self.run
        assert run is not None
        updated = self.mtime if last and self.mtime is not None else run.started
        return Session(
            id=session_id(self.provider, run.native_id),
            provider=self.provider,
            native_id=run.native_id,
            cwd=self.cwd,
            model=run.model,
            started=run.started,
            updated=updated,
            resume=self.resume,
            source=self.path,
            tokens_in=run.tokens_in,
            tokens_out=run.tokens_out,
            agent_version=release(run.version),
        )

    def _event(self, kind: str, origin: str, text: str) -> Event | None:
        assert self.counter is not None and self.run is not None
        return self.counter.make(kind, origin, text, ts=self.run.started)  # type: ignore[arg-type]

    # -- the stream ----------------------------------------------------------------------------

    def stream(self) -> Iterator[Item]:
        offset = self.cursor.offset if self.cursor is not None and self.run is not None else 0
        try:
            fh = open_regular(self.path)
        except OSError as exc:
            yield read_notice(self.path, exc, what="open")
            return
        with fh:
            try:
                self.mtime = os.fstat(fh.fileno()).st_mtime
                fh.seek(offset)
            except OSError as exc:
                yield Notice(source=self.path, reason=f"cannot seek: {exc}", fatal=True, transient=True)
                return
            if self.run is not None:
                self.sent = self._session()
                yield self.sent
            pos = offset
            limit = max_line_bytes()
            try:
                while raw := fh.readline(limit + 1):
                    size = len(raw)
                    if size > limit and not raw.endswith(b"\n"):
                        # A line longer than any event can hold: skipped (named), never held in memory.
                        while True:
                            more = fh.readline(1 << 20)
                            size += len(more)
                            if not more or more.endswith(b"\n"):
                                break
                        self.oversized += 1
                        raw = f"[{size:,} bytes not read: a line longer than VOYAGER_MAX_LINE_BYTES]\n".encode()
                    yield from self._line(raw, pos)
                    if raw.strip():
                        self.tail = pos
                    pos += size
            except OSError as exc:
                yield Notice(source=self.path, reason=f"read failed: {exc.strerror or exc}", fatal=True, transient=True)
                return
        # At the end of the file the last block may still grow: yield it, but leave the cursor before it.
        yield from self._close_run(final=False)
        if self.orphans:
            yield Notice(
                source=self.path,
                reason=f"{self.orphans} line{'s' if self.orphans != 1 else ''} before the first "
                f"'{self.heading.strip()}' heading skipped (no run to put them in)",
            )
        if self.oversized:
            yield Notice(
                source=self.path,
                reason=f"{self.oversized} line(s) longer than {limit:,} bytes skipped (VOYAGER_MAX_LINE_BYTES)",
            )
        if pos == 0 and offset == 0:
            yield Notice(source=self.path, reason="empty file: nothing to index yet")
        yield self._cursor()

    def _line(self, raw: bytes, pos: int) -> Iterator[Item]:
        line = raw.decode("utf-8", "replace").rstrip("\n").rstrip("\r")
        if line.startswith(self.heading):
            m = _HEADING_TIME.match(line, len(self.heading))
            yield from self._close_run(final=True)
            yield from self._open_run(pos, m.group() if m else None)
            self._commit(pos + len(raw), pos)
            return
        if self.run is None:
            if line.strip():
                self.orphans += 1
            return
        block = self.block
        in_reply = block is not None and block.kind == "reply"
        if not line.strip():
            if in_reply:
                block.lines.append("")  # type: ignore[union-attr]
            self.blank = True
            return
        if _prompt_line(line) and (not in_reply or line.endswith("  ")):
            kind = "prompt"
        elif line.startswith(">") and (not in_reply or line.endswith("  ")):
            kind = "status"
        elif block is not None and block.kind == "status" and not self.blank:
            kind = "status"  # a multi-line status message: only its first line has the '>'
        else:
            kind = "reply"
        continues = block is not None and block.kind == kind and (kind == "reply" or not self.blank)
        if not continues:
            yield from self._close_block(next_start=pos)
            self.block = _Block(kind, pos)
        self.block.lines.append(line)  # type: ignore[union-attr]
        self.blank = False

    def _open_run(self, pos: int, when: str | None) -> Iterator[Item]:
        self.run = _Run(native_id=f"{self.path}#{pos}", started=local_time(when) if when else None)
        self.counter = EventCounter(session_id(self.provider, self.run.native_id), 0)
        self.block, self.held, self.blank = None, None, True
        self.sent = self._session()
        yield self.sent

    def _close_run(self, *, final: bool) -> Iterator[Item]:
        """The run ends (a new heading, ``final``) or the file does (the last block may grow)."""
        if self.run is None:
            return
        yield from self._close_block(next_start=None, final=final)
        if self.held is not None:
            yield from self._release_held("")
        now = self._session(last=not final)
        if now != self.sent:
            self.sent = now
            yield now

    def _close_block(self, *, next_start: int | None, final: bool = True) -> Iterator[Item]:
        """Turn the current block into events. ``next_start``: where the line that ended it starts (the
        commit point when nothing is held back); None at a heading (it commits itself) or the end."""
        block, self.block = self.block, None
        run = self.run
        if block is None or run is None:
            return
        text = block.text()
        if block.kind == "status":
            run.learn(text)
            if not run.prompted and self.held is None:
                self.held = block  # may hold the run's prompt as a copy: cut once the prompt is known
            else:
                if (ev := self._event("meta", "provider", text)) is not None:
                    yield ev
        elif block.kind == "prompt":
            if self.held is not None:
                yield from self._release_held(text)
            run.prompted = True
            if text.strip() != _BLANK_PROMPT and (ev := self._event("user", "human", text)) is not None:
                yield ev
        elif (ev := self._event("assistant", "agent", text)) is not None:
            yield ev
        if final and next_start is not None and self.held is None:
            self._commit(next_start, self.tail)

    def _release_held(self, prompt: str) -> Iterator[Item]:
        held, self.held = self.held, None
        assert held is not None
        if (ev := self._event("meta", "provider", cut_prompt(held.text(), prompt))) is not None:
            yield ev

    # -- the cursor ----------------------------------------------------------------------------

    def _commit(self, offset: int, tail: int) -> None:
        assert self.run is not None and self.counter is not None
        self.committed = True
        self.commit_offset = offset
        self.commit_tail = tail
        self.commit_seq = self.counter.seq
        self.commit_state = self.run.state()

    def _cursor(self) -> Cursor:
        if not self.committed:
            # Nothing became final in this pass: stay exactly where the last read stopped.
            if self.cursor is not None and self.run is not None:
                return self.cursor
            return Cursor(offset=0, next_seq=0, tail_hash="", tail_start=0, session=None, state={})
        # The scan checks that bytes [tail, offset) are unchanged before it appends (jsonl.tail_matches).
        span = Record(value=None, start=self.commit_tail, end=self.commit_offset, complete=True, lineno=0)
        return cursor_after(
            self.path,
            span,
            next_seq=self.commit_seq,
            session=session_id(self.provider, self.commit_state["native_id"]),
            state=self.commit_state,
        )


class AiderAdapter:
    """Aider's per-project ``.aider.chat.history.md`` files (see the module docstring for where they are looked for)."""

    name: ClassVar[str] = "aider"

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        base = manifest.agent_home("aider", env)
        assert base is not None
        if env.get("VOYAGER_AIDER_HOME"):
            return [base]
        _, named = history_names(env)
        return [base, *extra_roots(env), *([named] if named else [])]

    def discover(self, env: Mapping[str, str], hints: Hints | None = None) -> Iterator[Source | Notice]:
        names, named = history_names(env)
        base = manifest.agent_home("aider", env)
        assert base is not None
        if env.get("VOYAGER_AIDER_HOME"):
            yield from _Finder((HISTORY_NAME,)).with_children(base)
            return
        finder = _Finder(names)
        if named is not None:
            yield from finder.file(named)
        yield from finder.with_children(base)
        for root in extra_roots(env):
            yield from finder.with_children(root)
        for cwd in sorted(hints.cwds if hints else ()):
            yield from finder.upwards(cwd, hints)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return AiderRead(source, cursor).stream()


ADAPTER = AiderAdapter()
