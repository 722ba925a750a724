"""Handing a session back to its agent: the resume recipe, what it needs, and the hand-over itself.

Every adapter records how its agent reopens a session as one shell command
(``Session.resume``), each part ``shlex.quote``d, in one of two shapes: ``WORD…`` or
``cd DIR && WORD…``. :func:`recipe` reads that command back into an argv and a directory,
and accepts the reading only when building the command again from them gives back the
stored string byte for byte: then the argv is exactly the words ``sh`` would run, nothing
unquoted can hide in it, and no shell is needed. The agent then *replaces* Voyager's
process (:func:`hand_over`: ``chdir`` + ``execve``), so it owns the terminal as if the
person had typed the command.

A stored command of any other shape is never re-interpreted: it runs as the one argument
of ``sh -c``, in the session's directory (``shell=True`` below).

Every word of the command after the program that begins with ``-`` must be an option the agent
manifest declares for resume commands (``manifest.foreign_option``); anything else came from a
session file (an id ``--dangerously-skip-permissions``, kept by an index built before the
adapters wrote such ids as data) and the session gets no recipe: :func:`why_none` says why. So
does a word holding a NUL, which no program can be handed.

The directory is the one the command ``cd``s into, else the session's working directory
(``codex resume``, ``opencode DIR --session``, ``cline --id`` do not ``cd``; the agent still
works where it runs). Before handing over, :func:`missing` names what is not there or not safe:
the agent's binary on ``PATH``; the directory, which must exist, be a directory, belong to this
user (or root) and be writable by no other user, nor lie below a folder another user owns or
may rename (:func:`unsafe_directory`): an agent started in a folder someone else controls
runs their project settings (hooks, MCP servers) as this user.
"""

from __future__ import annotations

import os
import shlex
import shutil
import stat
import sys
from collections.abc import Callable, Mapping
from typing import NoReturn

import msgspec

from voyager_sessions.core.errors import UserError
from voyager_sessions.core.model import Session
from voyager_sessions.ingest import manifest


class ResumeRecipe(msgspec.Struct, frozen=True, kw_only=True):
    """How to reopen one session: run ``argv`` in ``cwd`` (None: wherever Voyager runs).

    ``shell`` is True when the adapter's command had a shape :func:`recipe` does not read
    back exactly: ``argv`` is then ``("sh", "-c", command)``.
    """

    argv: tuple[str, ...]
    cwd: str | None = None
    shell: bool = False

    @property
    def binary(self) -> str:
        """The program that must be found (the agent's, or ``sh`` for a command run by the shell)."""
        return self.argv[0]

    def command(self) -> str:
        """The recipe as one shell command, every part quoted: ``cd DIR && WORD…`` or ``WORD…``."""
        words = " ".join(shlex.quote(a) for a in self.argv)
        return f"cd {shlex.quote(self.cwd)} && {words}" if self.cwd else words


def parse_command(command: str) -> tuple[tuple[str, ...], str | None] | None:
    """``(argv, cd_dir)`` of a command in the adapters' shape, or None when it is not exactly that shape.

    Exact means: quoting the words again, the same way, rebuilds ``command`` byte for byte.
    """
    try:
        words = shlex.split(command, posix=True)
    except ValueError:  # an unbalanced quote: not a command any adapter writes
        return None
    cwd: str | None = None
    if len(words) >= 3 and words[0] == "cd" and words[2] == "&&":
        cwd, words = words[1], words[3:]
    if not words or not words[0]:
        return None
    rebuilt = ResumeRecipe(argv=tuple(words), cwd=cwd).command()
    return (tuple(words), cwd) if rebuilt == command and (cwd is None or cwd) else None


def recipe(session: Session) -> ResumeRecipe | None:
    """How to reopen ``session``, or None when its agent has no command for that, or none that is safe
    (:func:`why_none` says which)."""
    command = session.resume
    if not command or not command.strip():
        return None
    parsed = parse_command(command)
    if parsed is None:
        return ResumeRecipe(argv=("sh", "-c", command), cwd=session.cwd or None, shell=True)
    argv, cd = parsed
    if _refusal(argv, cd) is not None:
        return None
    return ResumeRecipe(argv=argv, cwd=cd or session.cwd or None)


def _refusal(argv: tuple[str, ...], cd: str | None) -> str | None:
    if any("\0" in word for word in (*argv, cd or "")):
        return "it holds a NUL byte, which no program can be given"
    foreign = manifest.foreign_option(argv)
    if foreign is not None:
        return f"its command holds {shlex.quote(foreign)}, which `{argv[0]}` would read as an option"
    return None


def why_none(session: Session) -> str:
    """Why :func:`recipe` gives ``session`` no command: one clause, for a one-line error."""
    command = session.resume
    parsed = parse_command(command) if command else None
    if parsed is not None:
        refusal = _refusal(*parsed)
        if refusal is not None:
            return f"Voyager will not run it: {refusal} (the session's files put it there)"
    try:
        binary = manifest.row(session.provider).binary
    except KeyError:
        binary = None
    if binary is None:
        return "its agent has no command that reopens a session outside its own app"
    if session.parent:
        return f"`{binary}` reopens it through its parent session, {session.parent}"
    data = [session.native_id, session.cwd or ""]
    if any(v.startswith("-") or "\0" in v for v in data):
        return (
            f"its id or folder, as its files give them, cannot be handed to `{binary}` as data "
            "(it begins with '-' where the agent takes no other form, or holds a NUL byte)"
        )
    return f"its files do not say how `{binary}` would find it"


def missing(r: ResumeRecipe, *, which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """What the recipe needs and does not find (or would not be safe to use): its program on PATH, its directory.
    Empty when all is there."""
    gaps: list[str] = []
    if which(r.binary) is None:
        where = "is not an executable file" if os.sep in r.binary else "is not on PATH"
        gaps.append(f"`{r.binary}` {where}")
    if r.cwd is not None:
        if not os.path.isabs(r.cwd):
            gaps.append(f"the session's directory {r.cwd!r} is not an absolute path")
        else:
            unsafe = unsafe_directory(r.cwd)
            if unsafe is not None:
                gaps.append(unsafe)
    return gaps


def unsafe_directory(path: str, *, uid: int | None = None) -> str | None:
    """Why an agent must not be started in ``path`` for user ``uid`` (default: this process's), or None.

    The folder must exist and be a directory that belongs to the user or to root and that no other user may
    write; each folder above it must belong to the user or root, and be writable by others only with the
    sticky bit (``/tmp``: nobody can rename what they do not own there). The rule is OpenSSH's for the
    files it trusts. A session's files name the folder, and an agent reads its project's settings (hooks,
    MCP servers, instructions) from where it starts.
    """
    uid = os.geteuid() if uid is None else uid
    shown = path  # the one line an error is reported with makes control characters visible (``printable``)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return f"the session's directory {shown} does not exist"
    except OSError as exc:
        return f"the session's directory {shown} cannot be read: {exc.strerror or exc}"
    if not stat.S_ISDIR(st.st_mode):
        return f"the session's directory {shown} is not a directory"
    if st.st_uid not in (uid, 0):
        return f"the session's directory {shown} belongs to another user (uid {st.st_uid})"
    if st.st_mode & stat.S_IWOTH:
        return f"the session's directory {shown} is writable by every user"
    real = os.path.realpath(path)
    parent = os.path.dirname(real)
    while True:
        try:
            up = os.stat(parent)
        except OSError:
            break
        if up.st_uid not in (uid, 0):
            return f"the session's directory {shown} lies in {parent}, which belongs to another user (uid {up.st_uid})"
        if up.st_mode & stat.S_IWOTH and not up.st_mode & stat.S_ISVTX:
            return f"the session's directory {shown} lies in {parent}, which every user can write"
        if parent == os.path.dirname(parent):
            break
        parent = os.path.dirname(parent)
    return None


def hand_over(r: ResumeRecipe, env: Mapping[str, str] | None = None) -> NoReturn:
    """Become the agent: change to the recipe's directory and exec its program (never returns).

    ``PWD`` is set to the directory, as a shell's ``cd`` would, for agents that read it.
    Raises a one-line UserError when the program cannot be run after all.
    """
    environ = dict(os.environ if env is None else env)
    if r.cwd is not None:
        try:
            os.chdir(r.cwd)  # `missing` saw the directory, but it may be unenterable, or gone since
        except OSError as exc:
            raise UserError(f"cannot resume: cannot enter {r.cwd}: {exc.strerror or exc}") from None
        environ["PWD"] = r.cwd
    program = shutil.which(r.binary, path=environ.get("PATH", os.defpath))
    if program is None:
        raise UserError(f"cannot resume: `{r.binary}` is not on PATH")
    sys.stdout.flush()
    sys.stderr.flush()
    try:
        os.execve(program, list(r.argv), environ)
    except OSError as exc:
        raise UserError(f"cannot resume: cannot run {program}: {exc.strerror or exc}") from None
    raise AssertionError("execve returned")  # pragma: no cover
