"""The fusion rule (search.fusion) and the session text the embedder reads (search.embed), without the model."""

from __future__ import annotations

import os
import threading

import pytest

from tests.support.nocatalog import sessions_read
from voyager_sessions.search.embed import BUDGET, PER_MESSAGE, session_text
from voyager_sessions.search.fusion import fuse, meaning_text


def test_when_every_word_matches_the_words_decide_and_meaning_only_follows():
    words = ["a", "b", "a", "c"]  # event rows keyed by their session (a has two)
    meaning = ["z", "c", "y", "a"]
    assert fuse(words, True, meaning) == ["a", "b", "a", "c", "z", "y"]


def test_a_needle_keeps_its_rows_even_when_meaning_ranks_them_last():
    assert fuse(["needle-1", "needle-2"], True, ["other-1", "other-2", "needle-2", "needle-1"])[:2] == [
        "needle-1",
        "needle-2",
    ]


def test_a_description_fuses_by_reciprocal_rank():
    # b: words 2nd + meaning 1st beats a: words 1st alone; z (meaning 2nd) beats c (words 3rd).
    order = fuse(["a", "b", "c"], False, ["b", "z"])
    assert order == ["b", "a", "z", "c"]


def test_a_description_with_no_word_match_is_meanings_order():
    assert fuse([], False, ["x", "y", "z"]) == ["x", "y", "z"]
    assert fuse([], True, ["x", "y"]) == ["x", "y"]


def test_the_embedded_query_is_its_words_not_its_filters_or_negations():
    assert meaning_text(['"rate limit"', "redis*", "-docker", "export"]) == "rate limit redis export"
    assert meaning_text([]) == ""


def test_session_text_is_bounded_and_reads_the_first_and_last_messages():
    said = [(i, f"message {i} " + "x" * 1000) for i in range(200)]
    text = session_text(None, said)
    assert len(text) <= BUDGET + 16
    assert text.startswith("message 0 ")
    assert "message 199 " in text  # the end says what was done
    assert "message 100 " not in text
    assert all(len(line) <= PER_MESSAGE for line in text.splitlines())


def test_session_text_keeps_a_title_that_says_something_new_and_squashes_whitespace():
    said = [(0, "fix   the\n\nflaky  login test"), (3, "done")]
    assert session_text("Login flake", said) == "Login flake\nfix the flaky login test\ndone"
    assert session_text("fix the flaky", said) == "fix the flaky login test\ndone"
    assert session_text(None, [(0, "  \n ")]) == ""


def test_a_cjk_character_counts_as_much_as_the_token_it_is():
    from voyager_sessions.search.embed import WIDE_WEIGHT

    said = [(i, "数据库迁移失败了" * 100) for i in range(50)]
    text = session_text(None, said)
    assert len(text.replace("\n", "")) * WIDE_WEIGHT <= BUDGET
    assert "数据库迁移失败了" in text


def test_the_install_hint_is_said_the_same_everywhere():
    from voyager_sessions.api.meaning import INSTALL_HINT as front
    from voyager_sessions.search.embed import INSTALL_HINT

    assert front == INSTALL_HINT


def _varied_searcher(root):
    """30 sessions whose events draw words from their own subsets of six: many hold some words of a query."""
    from tests.support.nocatalog import NoCatalog, varied_events
    from voyager_sessions.search.engine import Searcher
    from voyager_sessions.search.index import SearchIndex

    words = ["alpha", "beta", "gamma", "delta", "kappa", "sigma"]
    index = SearchIndex(root / "index")
    events = varied_events(34, 30, "f", words, least_words=3, events=(2, 12), most_words=5)
    index.add_events(events)
    index.commit()
    return Searcher(index, NoCatalog(), ["claude"]), sorted({e.session for e in events})


class _FakeModel:
    """A query vector made from the query's text (the same text, the same vector): what fusion needs of the model."""

    def query(self, text):
        import numpy as np

        from voyager_sessions.search.embed import DIM

        v = np.random.default_rng(sum(map(ord, text))).standard_normal(DIM).astype(np.float32)
        return v / np.linalg.norm(v)


@pytest.mark.parametrize(("limit", "offset"), [(5, 0), (4, 6), (20, 0)])
@pytest.mark.parametrize("query", ["alpha beta", "alpha beta gamma delta kappa sigma", "kappa -gamma sigma"])
def test_meaning_reads_only_the_word_rows_its_page_shows(tmp_path, monkeypatch, query, limit, offset):
    """The word ranking is read DEPTH deep, but only the word rows that reach the fused page are read (their
    events, snippets, terms): the answer is the one reading every row gives, for fewer lookups."""
    np = pytest.importorskip("numpy")
    from voyager_sessions.search import fusion
    from voyager_sessions.search.embed import DIM, Matrix, encode
    from voyager_sessions.search.engine import Searcher, SearchOptions
    from voyager_sessions.search.syntax import parse

    searcher, ids = _varied_searcher(tmp_path)
    vecs = np.random.default_rng(7).standard_normal((len(ids) + 5, DIM)).astype(np.float32)
    vecs /= np.linalg.norm(vecs, axis=1, keepdims=True)
    matrix = Matrix([*ids, *(f"claude:only-meaning-{i}" for i in range(5))], encode(vecs))
    opts = SearchOptions(limit=limit, offset=offset, sessions=True)
    read = sessions_read(monkeypatch)
    extra: set[str] = set()  # the rows meaning alone brings in
    made = fusion._meaning_hits

    def meaning_rows(s, ids, *rest):
        extra.update(ids)
        return made(s, ids, *rest)

    monkeypatch.setattr(fusion, "_meaning_hits", meaning_rows)
    lazy, used = fusion.search_with_meaning(searcher, query, parse(query), opts, _FakeModel(), lambda: matrix)
    lazy_reads = set(read)
    read.clear()
    search = Searcher.search
    monkeypatch.setattr(Searcher, "search", lambda self, q, o, parsed, rows=None: search(self, q, o, parsed=parsed))
    every, _ = fusion.search_with_meaning(searcher, query, parse(query), opts, _FakeModel(), lambda: matrix)
    assert used and lazy == every
    word_rows = {h.session_id for h in lazy.hits} - extra
    assert lazy_reads == word_rows  # the page's word rows, and none other (none: a page of meaning's rows only)
    assert set(read) >= lazy_reads
    ranked = searcher.search(query, SearchOptions(limit=fusion.DEPTH, sessions=True), parse(query))
    if len(ranked.hits) > len(word_rows):  # word rows the page does not show: reading every row read them too
        assert len(set(read)) > len(lazy_reads)
    if (query, limit) == ("alpha beta", 5):
        assert len(ranked.hits) > limit  # not vacuous


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="the embedding runs beside the words on a second core")
def test_the_query_is_embedded_on_a_thread_of_its_own_while_the_words_are_ranked(tmp_path, monkeypatch):
    """The word ranking waits (here) until the query's embedding has started: it can only have started beside it,
    on another thread; the answer is the one of an embedding done when the ranking asks for it."""
    np = pytest.importorskip("numpy")
    from voyager_sessions.search import fusion, sessions
    from voyager_sessions.search.embed import DIM, Matrix, encode
    from voyager_sessions.search.engine import SearchOptions
    from voyager_sessions.search.syntax import parse

    searcher, ids = _varied_searcher(tmp_path)
    vecs = np.random.default_rng(3).standard_normal((len(ids), DIM)).astype(np.float32)
    matrix = Matrix(ids, encode(vecs / np.linalg.norm(vecs, axis=1, keepdims=True)))
    started = threading.Event()
    threads: list[int] = []

    class Model(_FakeModel):
        def query(self, text):
            threads.append(threading.get_ident())
            started.set()
            return super().query(text)

    cover = sessions.cover
    waited: list[bool] = []

    def ranking(*a, **kw):
        waited.append(started.wait(10))
        return cover(*a, **kw)

    query, opts = "alpha beta gamma delta kappa sigma", SearchOptions(limit=10, sessions=True)
    monkeypatch.setattr(sessions, "cover", ranking)
    beside, _ = fusion.search_with_meaning(searcher, query, parse(query), opts, Model(), lambda: matrix)
    assert waited == [True] and threads and threads[0] != threading.get_ident()
    monkeypatch.setattr(sessions, "cover", cover)
    monkeypatch.setattr(fusion, "_embed_beside", lambda model, text: None)  # embedded when the ranking asks
    after, _ = fusion.search_with_meaning(searcher, query, parse(query), opts, Model(), lambda: matrix)
    assert threads[-1] == threading.get_ident() and beside == after


@pytest.mark.skipif((os.cpu_count() or 1) < 2, reason="two aggregation threads need two cores")
def test_while_work_runs_beside_a_search_its_aggregations_keep_to_its_thread():
    from concurrent.futures import Future

    from voyager_sessions.search import sessions

    work: Future[None] = Future()
    with sessions.beside(work):
        assert set(sessions.each(lambda i: threading.get_ident(), range(6))) == {threading.get_ident()}
        work.set_result(None)
        seen: set[int] = set()

        def job(i: int) -> None:
            seen.add(threading.get_ident())

        sessions.each(job, range(6))
        assert len(seen) >= 2  # the calling thread takes the first job, the pool the others
