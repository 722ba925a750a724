"""Snippets: phrase-aware highlights with offsets into the excerpt."""

from __future__ import annotations

from voyager_sessions.search.snippets import find_spans, make_snippet


def test_cjk_pair_highlights_only_adjacent():
    text = "数字和据点，但是数据库在这里"
    spans = find_spans(text, [(("数", "据"), False)])
    assert [text[s:e] for s, e in spans] == ["数据"]


def test_word_boundaries_and_prefix():
    text = "error ERR_X_12 terror"
    assert [text[s:e] for s, e in find_spans(text, [(("error",), False)])] == ["error"]
    assert [text[s:e] for s, e in find_spans(text, [(("err",), True)])] == ["error", "ERR_X_12"]


def test_fullwidth_text_is_highlighted_by_halfwidth_query():
    text = "value ＡＢＣ１２３ here"
    assert [text[s:e] for s, e in find_spans(text, [(("abc123",), False)])] == ["ＡＢＣ１２３"]


def test_snippet_window_and_offsets():
    text = "start " + "pad " * 200 + "the needle_here is found\n\n\tthere " + "tail " * 100
    snippet, hl = make_snippet(text, [(("needle_here",), False)], width=80)
    assert len(snippet) <= 100 and snippet.startswith("…") and snippet.endswith("…")
    assert [snippet[s:e] for s, e in hl] == ["needle_here"]
    assert "\n" not in snippet and "\t" not in snippet


def test_no_match_gives_the_start():
    snippet, hl = make_snippet("hello world", [], width=80)
    assert snippet == "hello world" and hl == []
