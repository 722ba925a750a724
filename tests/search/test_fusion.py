"""The fusion rule (search.fusion) and the session text the embedder reads (search.embed), without the model."""

from __future__ import annotations

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
