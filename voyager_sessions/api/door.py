"""The front door for a front end that asks many questions: one typed method per operation.

A picker asks, per keystroke and per selected row, for a search, a session's events, its resume command,
an export. :class:`Door` answers each with the operation's own result type, through ``voyager serve`` when
one runs for the data dir (its index open and fresh) and in this process otherwise (on ``local``, a backend
the front end keeps open), and says which answered the last question (:attr:`Door.served`): the choice of
transport is made here, below every front end.
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, cast

import msgspec

from voyager_sessions.api import Backend, Stats, ask_where
from voyager_sessions.api.requests import (
    ExportRequest,
    ListRequest,
    SearchRequest,
    SessionRequest,
    ShowRequest,
    StatsRequest,
)
from voyager_sessions.core.model import Facets, SearchResult, SessionList, Timeline
from voyager_sessions.core.paths import DataDir

if TYPE_CHECKING:
    from voyager_sessions.api.sessions import Exported, Resolved, ResumePlan


class Excerpt(msgspec.Struct, frozen=True, kw_only=True):
    """What a row shows of its session: one event's seq, kind and tool, and its excerpt with the matches marked."""

    seq: int
    kind: str
    tool: str | None = None
    snippet: str
    highlights: list[tuple[int, int]] = []


class Door:
    """Every reading operation of the API for one data dir, typed (see the module's docstring)."""

    def __init__(self, data_dir: DataDir | Path, *, use_server: bool = True, local: Backend | None = None) -> None:
        self.data_dir = data_dir if isinstance(data_dir, DataDir) else DataDir(data_dir)
        self.use_server = use_server
        self.local = local
        #: Whether ``voyager serve`` answered the last question (else this process did).
        self.served = False

    def _ask(self, op: str, req: msgspec.Struct) -> object:
        result, self.served = ask_where(op, req, data_dir=self.data_dir, use_server=self.use_server, backend=self.local)
        return result

    def search(self, req: SearchRequest) -> SearchResult:
        return cast(SearchResult, self._ask("search", req))

    def browse(self, req: SearchRequest) -> SearchResult:
        return cast(SearchResult, self._ask("browse", req))

    def facets(self, req: SearchRequest) -> Facets:
        return cast(Facets, self._ask("facets", req))

    def list(self, req: ListRequest) -> SessionList:
        return cast(SessionList, self._ask("list", req))

    def show(self, req: ShowRequest) -> Timeline:
        return cast(Timeline, self._ask("show", req))

    def stats(self) -> Stats:
        return cast(Stats, self._ask("stats", StatsRequest()))

    def session(self, req: SessionRequest) -> Resolved:
        return cast("Resolved", self._ask("session", req))

    def export(self, req: ExportRequest) -> Exported:
        return cast("Exported", self._ask("export", req))

    def resume(self, req: SessionRequest) -> ResumePlan:
        return cast("ResumePlan", self._ask("resume", req))

    def title_prompt(self, session_id: str, query: str) -> Excerpt | None:
        """What a row found by its session's title shows instead of the title again (the prompt tells more): the
        session's best event for ``query`` that is not its title, else its first prompt (nothing marked), else
        None. The picker and the web page ask it behind the rows, so typing never waits for it."""
        from voyager_sessions.core.model import KINDS

        if query.strip():
            found = self.search(
                SearchRequest(
                    query=query.strip(),
                    limit=1,
                    session=session_id,
                    kinds=[k for k in KINDS if k != "title"],
                    refresh=False,
                )
            )
            hit = next((h for h in found.hits if h.session_id == session_id), None)
            if hit is not None:
                return Excerpt(
                    seq=hit.seq,
                    kind=hit.kind,
                    tool=hit.tool,
                    snippet=hit.snippet,
                    highlights=[(a, b) for a, b in hit.highlights],
                )
        events = self.show(ShowRequest(session=session_id, around=0, window=8)).events
        first = next((e for e in events if e.kind == "user"), None)
        if first is None:
            return None
        return Excerpt(seq=first.seq, kind=first.kind, snippet=" ".join(first.text.split())[:240])
