"""The last search, remembered: what ``-`` names in ``voyager resume -`` and ``voyager export -``.

``voyager search`` (the CLI, not ``serve`` or ``mcp``) writes ``<data dir>/last-search.json``
after answering: the query, when, and the first hit it printed (with ``--sessions``, the
best session). The file is private (created 0600, replaced atomically, never followed
through a symlink) and small. Remembering is a courtesy to the next command, never a cost
to the search: it imports nothing heavy (no click), does not sync to disk, and any failure
to write is ignored.
"""

from __future__ import annotations

import _thread
import os
import time
from collections.abc import Sequence

import msgspec

from voyager_sessions.core.errors import UserError
from voyager_sessions.core.paths import DataDir

#: Larger than this, the file is not one this module wrote.
_MAX_BYTES = 64 * 1024


class LastSearch(msgspec.Struct, kw_only=True, omit_defaults=True):
    """What ``last-search.json`` holds."""

    query: str
    at: float
    #: The first hit's session (None when the search found nothing), and the event it hit.
    session_id: str | None = None
    seq: int | None = None
    title: str | None = None


def remember(ddir: DataDir, query: str, hits: Sequence[object]) -> None:
    """Record ``query`` and the session of its first hit (``hits``: the page printed). Never raises."""
    first = hits[0] if hits else None
    doc = LastSearch(
        query=query,
        at=time.time(),
        session_id=getattr(first, "session_id", None),
        seq=getattr(first, "seq", None),
        title=getattr(first, "title", None),
    )
    # Per thread too: ``voyager serve`` remembers its clients' searches from several threads at once.
    tmp = ddir.root / f".last-search.{os.getpid()}.{_thread.get_ident()}.tmp"
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            os.write(fd, msgspec.json.encode(doc))
        finally:
            os.close(fd)
        os.replace(tmp, ddir.last_search)
    except (OSError, ValueError):  # a full disk, a read-only data dir, a hostile symlink: the search stands
        try:
            os.unlink(tmp)
        except OSError:
            pass


def recall(ddir: DataDir) -> LastSearch:
    """The last search remembered, or a one-line UserError saying why there is none to use."""
    try:
        fd = os.open(ddir.last_search, os.O_RDONLY | os.O_NOFOLLOW)
    except FileNotFoundError:
        raise UserError("no search to take '-' from yet: run `voyager search …` first") from None
    except OSError as exc:
        raise UserError(f"cannot read {ddir.last_search}: {exc.strerror or exc}") from None
    try:
        data = os.read(fd, _MAX_BYTES + 1)
    except OSError as exc:  # a directory in its place, an I/O error
        raise UserError(f"cannot read {ddir.last_search}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        if len(data) > _MAX_BYTES:
            raise msgspec.DecodeError("too large")
        last = msgspec.json.decode(data, type=LastSearch)
    except msgspec.DecodeError:
        raise UserError(f"{ddir.last_search} is damaged: run `voyager search …` again") from None
    if last.session_id is None:
        raise UserError(f"the last search ({last.query!r}) found nothing: '-' names its first hit")
    return last
