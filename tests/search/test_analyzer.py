"""The analyzer: CJK per character, code as typed, normalization and case folding."""

from __future__ import annotations

import pytest

from voyager_sessions.search.analyzer import normalize, tokens


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
    assert tokens("a" * 199) == ["a" * 199] and tokens("a" * 200) == []  # MAX_TOKEN_BYTES is the first dropped


@pytest.mark.parametrize(
    "text, expected",
    [
        ("テストcase数据abc", ["テ", "ス", "ト", "case", "数", "据", "abc"]),  # wide chars glued to words
        ("«hello» ¿qué?", ["«", "hello", "»", "¿", "qué", "?"]),  # two-byte punctuation splits
        ("كلمة، أخرى", ["كلمة", "،", "أخرى"]),  # Arabic comma
        ("ภาษาไทย", ["ภ", "า", "ษ", "า", "ไ", "ท", "ย"]),  # Thai has no spaces: per character too
        ("emoji😀x", ["emoji", "😀", "x"]),  # four-byte characters
        ("a\x00b\x1cc", ["a", "\x00", "b", "\x1c", "c"]),  # controls are symbols, not word glue
        ("tab\there\u3000全角", ["tab", "here", "全", "角"]),  # ideographic space separates
        ("x—y→z", ["x", "—", "y", "→", "z"]),
        ("Việt Nam", ["việt", "nam"]),  # letters above U+0800 in spaced scripts stay words
        ("हिन्दी भाषा", ["हिन्दी", "भाषा"]),
        ("a\x0bb\x85c\u2028d\u1680e", ["a", "b", "c", "d", "e"]),  # Unicode whitespace separates
        ("하고b", ["하", "고", "b"]),
    ],
)
def test_tokens_edges(text, expected):
    assert tokens(text) == expected


def test_lone_surrogates_do_not_break_tokenizing():
    toks = tokens("lone \ud800 surrogate")
    assert toks == ["lone", "?", "surrogate"]


def test_split_tokens_leaves_plain_words_alone():
    from voyager_sessions.search.analyzer import split_tokens

    s = "just words_and spaces\n123"
    assert split_tokens(s) is s


def test_prepared_text_matches_the_reference_rule():
    """The index's tokens equal those of a slow, obviously-correct tokenizer of the documented rule."""
    import random
    import unicodedata

    from voyager_sessions.search.analyzer import UNSPACED

    # Unicode's White_Space property, written out (Python's isspace() adds \x1c-\x1f).
    white = set("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {chr(c) for c in range(0x2000, 0x200B)}

    def solo_script(code: int) -> bool:
        return code >= 0x3000 or any(lo <= code <= hi for lo, hi in UNSPACED)

    def reference(text: str) -> list[str]:
        out: list[str] = []
        word = ""
        for ch in unicodedata.normalize("NFKC", text):
            if ch == "_" or (unicodedata.category(ch)[0] in "LNM" and not solo_script(ord(ch))):
                word += ch
                continue
            if word:
                out.append(word)
                word = ""
            if ch not in white:
                out.append(ch)
        if word:
            out.append(word)
        return out

    alphabet = (
        "ab_Z9 .-/(é×«\u0301\u00a0数据テスト한고\u0e20😀،\t\n\x1c\x0b\x85\u2028\u1680\u3000—→ệहि\u093f"
        "ꙁ\ua4d0\ua000ᄀ\u2e80\ufe0f\u00ad"
    )
    rng = random.Random(7)
    for _ in range(5000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        assert tokens(text) == [t.lower() for t in reference(text)], repr(text)


def test_prepare_many_gives_each_text_the_tokens_prepare_does():
    """Texts prepared together (joined, split back) tokenize exactly as when prepared alone."""
    import random

    from voyager_sessions.search import analyzer as A

    an = A.analyzer()
    # Edges that could leak across the joins: the separator itself, empty texts, a leading
    # combining mark (NFKC must not compose it with what precedes), trailing CJK, whitespace.
    alphabet = [
        "a",
        "Z9",
        "_",
        " ",
        ".",
        "数",
        "据",
        "テ",
        "한",
        "\u0301",
        "é",
        "\x1e",
        "\x1c",
        "\u3000",
        "\u2028",
        "😀",
        "ệ",
        "\t",
        "\n",
        "—",
        "(",
        "\ud800",
        "ｱ",
        "ＡＢ",
    ]
    rng = random.Random(11)
    for trial in range(400):
        texts = ["".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12))) for _ in range(rng.randint(0, 40))]
        if trial % 4:  # most batches without the separator, so they really go through the joined path
            texts = [t.replace("\x1e", "") for t in texts]
        A.BATCH_CHARS = rng.choice((8, 64, 32 * 1024))  # groups of one, of a few, and of all
        try:
            got = A.prepare_many(texts)
            utf8 = A.prepare_many(texts, utf8=True)
        finally:
            A.BATCH_CHARS = 32 * 1024
        want = [an.analyze(A.prepare(t)) for t in texts]
        assert [an.analyze(p) for p in got] == want, texts
        assert [an.analyze(p.decode()) for p in utf8] == want, texts  # the bytes a scan worker sends on


def test_prepare_many_joins_texts():
    """The joined path is taken (it is the point): one prepare call for a batch of plain texts."""
    from unittest import mock

    from voyager_sessions.search import analyzer as A

    with mock.patch.object(A, "_split", wraps=A._split) as spy:
        out = A.prepare_many(["用pytest跑测试", "foo.bar()", "", "数据库"])
    assert spy.call_count == 1
    assert [o.split() for o in out] == [
        ["用", "pytest", "跑", "测", "试"],
        ["foo", ".", "bar", "(", ")"],
        [],
        ["数", "据", "库"],
    ]


# -- whitespace beside a CJK character is a gap; identifiers' parts (issue #34) ----------------------------------


@pytest.mark.parametrize(
    "text, expected",
    [
        ("가나", [(0, "가"), (1, "나")]),
        ("가 나", [(0, "가"), (2, "나")]),  # Korean writes spaces between words: 가나 is not in 가 나
        ("数据 库", [(0, "数"), (1, "据"), (3, "库")]),
        ("数据\n库", [(0, "数"), (1, "据"), (3, "库")]),
        ("数据\r\n\t 库", [(0, "数"), (1, "据"), (3, "库")]),  # one gap a run (of up to four whitespace bytes)
        ("数据\u3000库", [(0, "数"), (1, "据"), (3, "库")]),  # the ideographic space is whitespace too
        ("가 나 다", [(0, "가"), (2, "나"), (4, "다")]),
        ("用 pytest 跑", [(0, "用"), (1, "pytest"), (2, "跑")]),  # between a CJK character and a word: as always
        ("数据，库", [(0, "数"), (1, "据"), (2, ","), (3, "库")]),  # punctuation is not whitespace
        ("hello  world", [(0, "hello"), (1, "world")]),
        ("数\x1f据", [(0, "数"), (2, "据")]),  # the gap's own character in a text is a gap as well
    ],
)
def test_whitespace_between_cjk_characters_leaves_an_empty_position(text, expected):
    from voyager_sessions.search.analyzer import positioned

    assert positioned(text) == expected


def test_positions_match_the_reference_rule():
    """Positions (the index's, through ``prepare`` and the analyzer) equal a slow reference: tokens as the documented
    rule cuts them, and one empty position for every run of up to four whitespace bytes between a character from
    U+3000 up and the one before it (any of three bytes or more in UTF-8: a CJK character, or an arrow before one)."""
    import random
    import unicodedata

    from voyager_sessions.search.analyzer import GAP, SOLO_FROM, positioned, tokens

    white = set("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | {chr(c) for c in range(0x2000, 0x200B)}

    def reference(text: str) -> list[tuple[int, str]]:
        norm = unicodedata.normalize("NFKC", text)
        out: list[tuple[int, str]] = []
        pos = 0
        i = 0
        while i < len(norm):
            if norm[i] in white:
                j = i
                while j < len(norm) and norm[j] in white:
                    j += 1
                ascii_run = all(c in " \t\n\r\v\f" or c == "\u3000" for c in norm[i:j]) and j - i <= 4
                beside = (
                    i > 0
                    and ord(norm[i - 1]) >= 0x800
                    and norm[i - 1] not in white
                    and j < len(norm)
                    and ord(norm[j]) >= SOLO_FROM
                    and norm[j] not in white
                )
                if beside and ascii_run:
                    pos += 1
                i = j
                continue
            j = i
            while j < len(norm) and norm[j] not in white:
                j += 1
            for tok in tokens(norm[i:j]) if GAP not in norm[i:j] else []:
                out.append((pos, tok))
                pos += 1
            i = j
        return out

    alphabet = ["a", "Zb", " ", "  ", "\n", "\t", "数", "据", "한", "テ", "😀", ".", "é", "\u3000", "_", "-", "→", "ệ"]
    rng = random.Random(3)
    for _ in range(3000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 14)))
        assert positioned(text) == reference(text), repr(text)


@pytest.mark.parametrize(
    "text, parts",
    [
        ("call invoice_batch_writer now", {"invoice", "batch", "writer"}),
        ("InvoiceBatchWriter", {"invoice", "batch", "writer"}),
        ("MaxRAMPercentage=75", {"max", "ram", "percentage"}),
        ("HTTPServer and IOError in camelCase code", {"http", "server", "io", "error", "camel", "case"}),
        ("E_VOY_4217", {"voy", "4217"}),  # one-letter parts are not worth indexing
        ("__init__ and _private_var", {"init", "private", "var"}),
        ("plain words, Capitalised, UPPER, snake-less", set()),
        ("naïve_x café_pièce", set()),  # not ASCII identifiers
        ("数据库_表 and 用snake_case跑", {"snake", "case"}),
        ("src/store/db.py kebab-case foo.bar", set()),  # already tokens of their own
    ],
)
def test_identifier_parts(text, parts):
    from voyager_sessions.search.analyzer import identifier_parts, prepare

    assert set(identifier_parts(prepare(text).encode()).split()) == {p.encode() for p in parts}


def test_a_few_gaps_in_long_text_are_cut_in_as_many_dense_ones_are():
    """Two ways to put the gaps in (a cut at each when they are few, one XOR when they are many): the same terms and
    positions either way."""
    from voyager_sessions.search.analyzer import positioned

    sparse = "word " * 300 + "数据 库 and 가 나" + " word" * 300
    got = positioned(sparse)
    cjk = [(p, t) for p, t in got if t in "数据库가나"]
    assert [t for _, t in cjk] == ["数", "据", "库", "가", "나"]
    assert cjk[1][0] - cjk[0][0] == 1 and cjk[2][0] - cjk[1][0] == 2 and cjk[4][0] - cjk[3][0] == 2
    dense = "가 나 " * 400
    positions = [p for p, _ in positioned(dense)]
    assert positions == list(range(0, 1600, 2))
