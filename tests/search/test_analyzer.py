"""The analyzer: CJK per character, code as typed, normalization and case folding."""

from __future__ import annotations

import pytest

from voyager.search.analyzer import normalize, tokens


@pytest.mark.parametrize(
    "text, expected",
    [
        ("数据库", ["数", "据", "库"]),
        ("用pytest跑测试", ["用", "pytest", "跑", "测", "试"]),
        ("データベースを", ["デ", "ー", "タ", "ベ", "ー", "ス", "を"]),
        ("ﾃﾞｰﾀ", ["デ", "ー", "タ"]),  # half-width katakana, voiced mark folded in
        ("데이터베이스를", ["데", "이", "터", "베", "이", "스", "를"]),
        ("ＡＢＣ１２３", ["abc123"]),
        ("ERR_VOYAGER_00012", ["err_voyager_00012"]),
        ("src/store/db.py", ["src", "/", "store", "/", "db", ".", "py"]),
        ("foo.bar()", ["foo", ".", "bar", "(", ")"]),
        ("--no-verify", ["-", "-", "no", "-", "verify"]),
        ("c++", ["c", "+", "+"]),
        ("Café NAÏVE", ["café", "naïve"]),
    ],
)
def test_tokens(text, expected):
    assert tokens(text) == expected


def test_normalize_keeps_ascii_identity():
    s = "plain ascii"
    assert normalize(s) is s
    assert normalize("ＡＢＣ") == "ABC"


def test_overlong_tokens_are_dropped():
    assert tokens("a" * 500 + " ok") == ["ok"]
