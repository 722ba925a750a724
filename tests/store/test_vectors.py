"""meaning.db (store.vectors): a vector counts only while its session is as it was when its text was read."""

from __future__ import annotations

import stat

import pytest

from voyager_sessions.core.model import Session, SessionRecord
from voyager_sessions.store.state import StateStore
from voyager_sessions.store.vectors import VectorStore

MODEL = "test-model"


def _record(sid: str, events: int, updated: float | None) -> SessionRecord:
    s = Session(id=sid, provider="claude", native_id=sid.partition(":")[2], updated=updated, started=1.0)
    return SessionRecord(session=s, events=events)


@pytest.fixture
def dbs(tmp_path):
    state = StateStore(tmp_path / "state.db")
    state.commit_scan(
        sessions=[_record("claude:a", 3, 10.0), _record("claude:b", 5, 20.0), _record("claude:e", 0, 5.0)]
    )
    vectors = VectorStore(tmp_path / "meaning.db", tmp_path / "state.db")
    yield state, vectors
    vectors.close()
    state.close()


def test_pending_lists_sessions_without_a_vector_newest_first_and_skips_empty_ones(dbs):
    _, v = dbs
    assert v.pending(MODEL) == [("claude:b", (5, 20.0)), ("claude:a", (3, 10.0))]
    assert v.counts(MODEL) == (0, 2)


def test_a_vector_is_fresh_while_its_stamp_is_the_sessions(dbs):
    state, v = dbs
    v.put(MODEL, [("claude:a", (3, 10.0), b"A" * 4), ("claude:b", (5, 20.0), b"B" * 4)])
    assert v.fresh(MODEL) == (["claude:a", "claude:b"], [b"A" * 4, b"B" * 4])
    assert v.pending(MODEL) == [] and v.counts(MODEL) == (2, 2)
    # The session grows: its vector describes what it said before and is no longer used, nor counted.
    state.commit_scan(sessions=[_record("claude:a", 4, 30.0)])
    assert v.fresh(MODEL) == (["claude:b"], [b"B" * 4])
    assert v.pending(MODEL) == [("claude:a", (4, 30.0))]
    assert v.counts(MODEL) == (1, 2)


def test_a_vector_written_for_an_older_stamp_is_never_used(dbs):
    # What a killed or raced embedder could leave: a vector read at a stamp the session has left since.
    _, v = dbs
    v.put(MODEL, [("claude:a", (2, 9.0), b"old!")])
    assert v.fresh(MODEL) == ([], [])
    assert ("claude:a", (3, 10.0)) in v.pending(MODEL)


def test_other_models_vectors_do_not_count_and_prune_drops_them_and_the_gone(dbs):
    state, v = dbs
    v.put("other", [("claude:a", (3, 10.0), b"xxxx")])
    v.put(MODEL, [("claude:b", (5, 20.0), b"yyyy")])
    assert v.counts(MODEL) == (1, 2)
    state.commit_scan(removed_sessions=["claude:b"])
    assert v.prune(MODEL) == 2
    assert v.fresh(MODEL) == ([], [])


def test_forget_drops_vectors(dbs):
    _, v = dbs
    v.put(MODEL, [("claude:a", (3, 10.0), b"aaaa"), ("claude:b", (5, 20.0), b"bbbb")])
    v.forget(["claude:a"])
    assert v.fresh(MODEL)[0] == ["claude:b"]


def test_meaning_db_is_private_and_state_db_is_only_read(dbs, tmp_path):
    _, v = dbs
    v.put(MODEL, [("claude:a", (3, 10.0), b"aaaa")])
    assert stat.S_IMODE((tmp_path / "meaning.db").stat().st_mode) == 0o600
    with pytest.raises(Exception, match="readonly"):
        v.state.execute("DELETE FROM sessions")


def test_open_if_exists_creates_nothing(tmp_path):
    assert VectorStore.open_if_exists(tmp_path / "meaning.db", tmp_path / "state.db") is None
    assert not (tmp_path / "meaning.db").exists()


def test_a_reader_takes_a_file_not_yet_given_its_tables_for_no_vectors(tmp_path):
    StateStore(tmp_path / "state.db").close()
    (tmp_path / "meaning.db").touch()  # what a reader may meet while the embedder creates it
    assert VectorStore.open_if_exists(tmp_path / "meaning.db", tmp_path / "state.db", readonly=True) is None
