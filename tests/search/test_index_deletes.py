"""SearchIndex.delete_sessions: the sessions' old documents go, and an index that was empty is asked no delete.

A first index replaces every session before adding it (the scan cannot know it is new to the index):
one Tantivy delete operation a source, 15,000 at 10,000 Claude Code sessions, 3.6 s of a 30 s first
index's CPU spent deleting nothing. Into an index that had no document when its writer opened, only
the sessions added since can have documents, and only those are deleted.
"""

from __future__ import annotations

from typing import Any

from voyager_sessions.core.model import Event
from voyager_sessions.search.index import SearchIndex


def _events(session: str, n: int = 3) -> list[Event]:
    return [
        Event(
            session=session,
            seq=i,
            kind="user" if i == 0 else "assistant",
            origin="human" if i == 0 else "agent",
            text=f"words of {session} number {i}",
            ts=1_700_000_000.0 + i,
        )
        for i in range(n)
    ]


class _CountingWriter:
    """The real writer, its delete operations counted."""

    def __init__(self, real: Any) -> None:
        self.real = real
        self.deletes = 0

    def delete_documents_by_query(self, query: Any) -> None:
        self.deletes += 1
        self.real.delete_documents_by_query(query)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


def _spied(index: SearchIndex) -> _CountingWriter:
    spy = _CountingWriter(index.writer())
    index._writer = spy  # type: ignore[assignment]
    return spy


def _docs(index: SearchIndex, session: str) -> int:
    import tantivy

    searcher = index.index.searcher()
    return searcher.search(tantivy.Query.term_query(index.schema, "session", session), limit=100).count


def test_an_index_that_was_empty_is_asked_no_delete_for_sessions_it_never_held(tmp_path):
    index = SearchIndex(tmp_path / "index")
    spy = _spied(index)
    index.delete_sessions(["claude:a", "claude:b"])
    assert spy.deletes == 0
    index.add_events(_events("claude:a"))
    index.commit()
    assert _docs(index, "claude:a") == 3
    index.close()


def test_a_session_added_since_the_writer_opened_is_still_replaced(tmp_path):
    index = SearchIndex(tmp_path / "index")
    spy = _spied(index)
    index.add_events(_events("claude:a"))
    index.add_events(_events("claude:b"))
    index.delete_sessions(["claude:a", "claude:never"])  # the same session read again in the same scan
    assert spy.deletes == 1
    index.add_events(_events("claude:a", 2))
    index.commit()
    assert (_docs(index, "claude:a"), _docs(index, "claude:b")) == (2, 3)
    index.close()


def test_an_index_holding_documents_deletes_as_asked(tmp_path):
    first = SearchIndex(tmp_path / "index")
    first.add_events(_events("claude:a"))
    first.commit()
    first.close()
    index = SearchIndex(tmp_path / "index")
    spy = _spied(index)
    index.delete_sessions(["claude:a"])
    index.commit()
    assert spy.deletes == 1 and _docs(index, "claude:a") == 0
    index.close()
