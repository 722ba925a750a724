"""What the index makes of text, through the real CLI (issue #34): characters of unspaced scripts are adjacent only
where nothing separates them, parts of identifiers are found while whole identifiers and needles stay exact.

Sessions in Claude Code's real format, scanned by ``voyager scan``; queries through ``voyager search --json``.
"""

from __future__ import annotations


import pytest

from tests.support.run import search_json
from tests.support.sessions import write_turn_sessions

SESSIONS: dict[str, list[tuple[str, str]]] = {
    # Korean writes spaces between words: 가나 said only apart here, and said together in k2.
    "k1": [("user", "가 나 다 라"), ("assistant", "数据 库 and 数据\n库 on two lines")],
    "k2": [("user", "가나다라"), ("assistant", "数据库 the whole word")],
    # Identifiers: snake_case, camelCase, an acronym, a SCREAMING one; a decoy one character off.
    "i1": [
        ("user", "the nightly job crashed"),
        ("tool", 'File "jobs/invoice_batch.py", line 212\n    InvoiceBatchWriter(session).flush_pending()'),
        ("assistant", "MaxRAMPercentage was too low; ERR_VOYAGER_00012 is gone"),
    ],
    "i2": [("user", "a batch of emails, sent in one batch"), ("assistant", "the ERR_VOYAGER_000123 code and ram")],
    "i3": [("user", "nothing of the kind here"), ("assistant", "E_VOY_42170 and pending_batches")],
}


@pytest.fixture
def indexed(home, run):
    write_turn_sessions(home, SESSIONS)
    assert run("scan").exit_code == 0


def _names(doc) -> list[str]:
    return [h["session_id"].partition(":")[2][:2] for h in doc["hits"]]


@pytest.mark.parametrize("query", ["가나", "나다라", "据库", "数据库"])
def test_cjk_characters_are_never_adjacent_across_whitespace(indexed, run, query):
    """``가나`` finds 가나다라, never 가 나 다 라; ``据库`` never 数据 库 nor 数据 and 库 on two lines."""
    res, doc = search_json(run, query)
    assert res.exit_code == 0 and set(_names(doc)) == {"k2"}, _names(doc)
    for h in doc["hits"]:  # what is lit is the characters together
        start, end = h["highlights"][0]
        assert h["snippet"][start:end] == query


def test_a_quoted_phrase_with_its_whitespace_finds_it_said_apart(indexed, run):
    res, doc = search_json(run, '"가 나"')
    assert res.exit_code == 0 and _names(doc) == ["k1"]
    res, doc = search_json(run, '"数据 库"')  # a space or a line break, one or several: whitespace
    assert res.exit_code == 0 and _names(doc) == ["k1"] and doc["total"] == 1
    assert [doc["hits"][0]["snippet"][s:e] for s, e in doc["hits"][0]["highlights"]] == ["数据 库", "数据 库"]
    res, doc = search_json(run, "가 나")  # two words: a session that says each, apart or together
    assert set(_names(doc)) == {"k1", "k2"}


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("batch", ["i2", "i1"]),  # the word said as itself first, then as a part (invoice_batch, InvoiceBatchWriter)
        ("writer", ["i1"]),
        ("flush", ["i1"]),
        ("ram", ["i2", "i1"]),  # MaxRAMPercentage: an acronym inside
        ("percentage", ["i1"]),
        ("voyager", {"i1", "i2"}),  # both ERR_VOYAGER_ codes hold it, alike: either may come first
    ],
)
def test_a_word_finds_the_identifiers_it_is_part_of(indexed, run, query, found):
    res, doc = search_json(run, "--sessions", query)
    names = _names(doc)
    assert res.exit_code == 0 and (set(names) if isinstance(found, set) else names) == found, names
    for h in doc["hits"]:  # the part is lit inside the identifier
        assert any(h["snippet"][s:e].lower() == query for s, e in h["highlights"]), h["snippet"]


@pytest.mark.parametrize(
    ("query", "found"),
    [
        ("invoice_batch", ["i1"]),
        ("InvoiceBatchWriter", ["i1"]),
        ("ERR_VOYAGER_00012", ["i1"]),  # never ERR_VOYAGER_000123
        ("ERR_VOYAGER_000123", ["i2"]),
        ("E_VOY_4217", []),  # never E_VOY_42170
        ("batches", ["i3"]),  # a part as typed, not a stem: pending_batches, not batch
        ('"batch"', ["i2"]),  # quoted: the word as itself only
        ("batch*", ["i2"]),  # a prefix matches words (batch), not parts of identifiers (pending_batches)
    ],
)
def test_whole_identifiers_and_needles_stay_exact(indexed, run, query, found):
    res, doc = search_json(run, "--sessions", query)
    assert sorted(_names(doc)) == sorted(found), _names(doc)
    assert res.exit_code == (0 if found else 1)
