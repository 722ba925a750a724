"""The picker says which rows were found by meaning alone (the search behind it fuses where the model is)."""

from __future__ import annotations

from voyager_sessions.tui.backend import SessionHit
from voyager_sessions.tui.view import session_row


def _row(match: str) -> SessionHit:
    return SessionHit(
        session_id="claude:x",
        provider="claude",
        title="Export timeouts",
        cwd="/home/dev/x",
        when=None,
        hits=2,
        match=match,
    )


def test_a_row_found_by_meaning_alone_says_so_and_counts_no_hits():
    text = session_row(_row("meaning"), width=120).plain
    assert "by meaning" in text and "hit" not in text


def test_a_word_row_counts_its_hits():
    text = session_row(_row("all"), width=120).plain
    assert "2 hits" in text and "by meaning" not in text
