"""The one family of errors Voyager reports to a person, and the exit codes they mean.

Every layer raises these (or a subclass named for its case); the front ends (the click
CLI, the lean search path, the server and the MCP server) print one line,
``voyager: <message>``, and exit with ``exit_code``. Nothing else decides an exit code.

Exit codes, as ``grep``'s: 0 something matched, 1 nothing matched, 2 a usage, query or
data error the user can act on, 3 busy (another writer holds the index), 4 an internal
error (a bug: reported with a hint to set ``VOYAGER_DEBUG=1`` for a traceback).
"""

from __future__ import annotations

import errno

EXIT_OK = 0
EXIT_NONE = 1
EXIT_USAGE = 2
EXIT_BUSY = 3
EXIT_INTERNAL = 4

#: The largest count or offset an option takes (what SQLite and Tantivy can hold).
MAX_INT = 2**62


def one_line(message: object) -> str:
    """``message`` as one line: whitespace (newlines included) collapsed to single spaces."""
    return " ".join(str(message).split())


class VoyagerError(Exception):
    """A failure reported as one line on stderr (``voyager: <message>``), exit ``exit_code``."""

    exit_code: int = EXIT_USAGE

    def __init__(self, message: object = "") -> None:
        super().__init__(one_line(message))


class UserError(VoyagerError):
    """A mistake the user can fix (a bad option, an unknown session, a malformed query): exit 2."""

    exit_code = EXIT_USAGE


class Busy(VoyagerError):
    """Another process holds what this one needs to write (the index writer, a database): exit 3."""

    exit_code = EXIT_BUSY


class StoreError(VoyagerError):
    """One of Voyager's own databases cannot be used; the message says why: exit 2."""

    exit_code = EXIT_USAGE


class DiskFull(VoyagerError):
    """The data dir's disk is full: nothing was lost, the next run after space is freed goes on: exit 2."""

    exit_code = EXIT_USAGE

    @classmethod
    def at(cls, path: object) -> DiskFull:
        """The one line a full disk is reported with, naming the file that could not be written."""
        return cls(f"no space left on device ({path})")


def no_space(exc: BaseException) -> bool:
    """True when ``exc`` is the operating system saying the disk (or the user's quota) is full."""
    return isinstance(exc, OSError) and exc.errno in (errno.ENOSPC, errno.EDQUOT)


class IndexWriteError(VoyagerError):
    """The search index could not be written for a reason other than a full disk: exit 4 (nothing is lost:
    the scan state is written only after the index commits, so the next scan does the work again)."""

    exit_code = EXIT_INTERNAL


class IndexDamaged(VoyagerError):
    """The search index cannot be opened or read; ``voyager scan --rebuild`` makes it anew from the sources."""

    exit_code = EXIT_USAGE


def failure(exc: BaseException) -> tuple[str, int]:
    """The one line (without newline) and the exit code a command's failure is reported with.

    A ``VoyagerError`` is its message; an interrupt is exit 130; anything else is a bug,
    exit 4 with a hint (``VOYAGER_DEBUG=1`` makes the CLI raise instead). The click CLI
    and ``voyager serve`` (which sends the line to its client as data) report through
    this one function, so they say the same.
    """
    from voyager_sessions.core.textsafe import printable

    if isinstance(exc, VoyagerError):
        return f"voyager: {printable(str(exc))}", exc.exit_code
    if isinstance(exc, KeyboardInterrupt):
        return "voyager: interrupted", 130
    unusable = unusable_name(exc)
    if unusable is not None:
        return f"voyager: {unusable}", EXIT_USAGE
    return (
        f"voyager: internal error: {type(exc).__name__}: {printable(str(exc))} (set VOYAGER_DEBUG=1 for a traceback)",
        EXIT_INTERNAL,
    )


def unusable_name(exc: BaseException) -> str | None:
    """What to say when ``exc`` is a name (an id, a path, a variable) holding bytes no file system call or
    encoder can take: a NUL, or bytes that are not UTF-8 (what the OS hands Python as lone surrogates). Such
    a name comes from outside (a crafted session file, an environment); it is reported in one line, never as
    an internal error. None for anything else."""
    if isinstance(exc, ValueError) and "embedded null" in str(exc).lower():  # "… byte", "… character"
        return "an id, path or query holds a NUL byte, which no file or program can be given (a crafted session file?)"
    if isinstance(exc, UnicodeEncodeError) and "surrogates not allowed" in str(exc):
        shown = exc.object[max(0, exc.start - 40) : exc.end + 40] if isinstance(exc.object, str) else ""
        shown = shown.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        from voyager_sessions.core.textsafe import printable

        shown = printable(" ".join(shown.split()))  # a session's text may hold terminal escapes
        return f"an id, path or query holds bytes that are not UTF-8 text, which Voyager cannot store or pass on: …{shown}…"
    return None
