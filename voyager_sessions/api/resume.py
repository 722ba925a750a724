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

The directory is the one the command ``cd``s into, else the session's working directory
(``codex resume``, ``opencode DIR --session``, ``cline --id`` do not ``cd``; the agent still
works where it runs). Before handing over, :func:`missing` names what is not there: the
agent's binary on ``PATH``, or the directory.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Callable, Mapping
from typing import NoReturn

import msgspec

from voyager_sessions.core.errors import UserError
from voyager_sessions.core.model import Session


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
    """How to reopen ``session``, or None when its agent has no command for that."""
    command = session.resume
    if not command or not command.strip():
        return None
    parsed = parse_command(command)
    if parsed is None:
        return ResumeRecipe(argv=("sh", "-c", command), cwd=session.cwd or None, shell=True)
    argv, cd = parsed
    return ResumeRecipe(argv=argv, cwd=cd or session.cwd or None)


def missing(r: ResumeRecipe, *, which: Callable[[str], str | None] = shutil.which) -> list[str]:
    """What the recipe needs and does not find: its program on PATH, its directory. Empty when all is there."""
    gaps: list[str] = []
    if which(r.binary) is None:
        where = "is not an executable file" if os.sep in r.binary else "is not on PATH"
        gaps.append(f"`{r.binary}` {where}")
    if r.cwd is not None:
        if not os.path.isabs(r.cwd):
            gaps.append(f"the session's directory {r.cwd!r} is not an absolute path")
        elif not os.path.isdir(r.cwd):
            gaps.append(f"the session's directory {r.cwd} does not exist")
    return gaps


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
