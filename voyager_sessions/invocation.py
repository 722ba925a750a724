"""One run of a reading command (search, list, show, stats): where its output goes, where its data comes from.

A command run from a terminal writes to this process's stdout and stderr and opens
the index itself. The same command run for someone else (a client of ``voyager serve``,
a tool call of ``voyager mcp``) must produce the very bytes it would have produced
there, so the commands never choose a stream or open the index directly: they ask
this module, which answers from the :class:`Invocation` in effect (a context variable,
so each of a server's threads has its own) or, when none is, from the process itself.

* :class:`Capture` records stdout as bytes, encoded as the client's stdout would encode
  them, and stderr as text, each piece with the stdout offset it was written at, so a
  client can replay both streams in their original order. Its streams report the
  client's terminals, so click strips colours exactly when it would have there.
* A :class:`Backend` supplies the index reader and the refresh scan: the server lends a
  reader it keeps open and runs the refresh through its own scan scheduler.

Nothing here imports click, msgspec or tantivy.
"""

from __future__ import annotations

import io
import sys
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol


class _TerminalText(io.TextIOWrapper):
    """A text stream over bytes that says whether the client's stream is a terminal."""

    def __init__(self, buffer: io.BytesIO, encoding: str, errors: str, tty: bool) -> None:
        super().__init__(buffer, encoding=encoding, errors=errors, newline="\n", write_through=True)
        self._tty = tty

    def isatty(self) -> bool:
        return self._tty


class _StderrText:
    """The client's stderr: text kept with the stdout offset it was written at."""

    def __init__(self, capture: Capture, tty: bool) -> None:
        self._capture = capture
        self._tty = tty

    def write(self, text: str) -> int:
        self._capture.stdout.flush()
        parts = self._capture.stderr_parts
        offset = self._capture.buffer.tell()
        if parts and parts[-1][0] == offset:
            parts[-1] = (offset, parts[-1][1] + text)
        else:
            parts.append((offset, text))
        return len(text)

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return self._tty


class Capture:
    """A command's output kept for a client: stdout bytes, stderr text at stdout offsets."""

    def __init__(self, *, stdout_tty: bool = False, stderr_tty: bool = False, encoding: str = "utf-8",
                 errors: str = "strict") -> None:
        self.buffer = io.BytesIO()
        self.stdout = _TerminalText(self.buffer, encoding, errors, stdout_tty)
        self.stderr_parts: list[tuple[int, str]] = []
        self.stderr = _StderrText(self, stderr_tty)

    def stdout_bytes(self) -> bytes:
        self.stdout.flush()
        return self.buffer.getvalue()

    def stderr_text(self) -> str:
        return "".join(text for _, text in self.stderr_parts)


class Backend(Protocol):
    """Where a command run by a server reads from, and how it refreshes the index first."""

    def reader(self, ddir: Path) -> AbstractContextManager[Any]:
        """An ``api.Reader`` (or one with its methods) for the duration of the ``with`` block."""

    def refresh(self, ddir: Path, quiet: bool) -> None:
        """What ``run_scan(quiet=…)`` does for a search: scan (notices to stderr unless quiet), raise as it raises."""


class Invocation:
    """A command run for someone else: its output ``capture``, its ``data_dir``, and the ``backend`` if any.

    ``data_dir_label`` is the data dir as the client spells it (relative to its own working
    directory, say), for output; ``data_dir`` is where this process finds it.
    ``remember``: a search run for the CLI (a client of the server) records itself as
    the last search, as it would have in the client's own process; one run for an
    agent's tool call (``voyager mcp``) does not.
    """

    __slots__ = ("backend", "capture", "data_dir", "data_dir_label", "remember")

    def __init__(self, capture: Capture, data_dir: Path, backend: Backend | None = None, *,
                 remember: bool = True, data_dir_label: str | None = None) -> None:
        self.capture = capture
        self.data_dir = data_dir  # where the files are, from this process
        self.data_dir_label = str(data_dir) if data_dir_label is None else data_dir_label  # as the client names it
        self.backend = backend
        self.remember = remember


_current: ContextVar[Invocation | None] = ContextVar("voyager_invocation", default=None)


@contextmanager
def invoked(inv: Invocation) -> Iterator[Invocation]:
    """Run the block as ``inv`` (in this thread or task only)."""
    token = _current.set(inv)
    try:
        yield inv
    finally:
        _current.reset(token)


def current() -> Invocation | None:
    return _current.get()


def text_stream(err: bool) -> Any:
    """The stream ``click.echo`` should write to: the capture's, or None for this process's own."""
    inv = _current.get()
    if inv is None:
        return None
    return inv.capture.stderr if err else inv.capture.stdout


def binary_stdout() -> Any:
    """Where encoded output (JSON) goes."""
    inv = _current.get()
    return sys.stdout.buffer if inv is None else inv.capture.stdout.buffer


def remembers() -> bool:
    """Whether a search should be remembered as the last one (``voyager resume -``): for a person, not an agent."""
    inv = _current.get()
    return inv is None or inv.remember


def isatty(*, err: bool) -> bool:
    """Whether the (client's) stdout or stderr is a terminal."""
    inv = _current.get()
    if inv is None:
        return (sys.stderr if err else sys.stdout).isatty()
    return (inv.capture.stderr if err else inv.capture.stdout).isatty()
