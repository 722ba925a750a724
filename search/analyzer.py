"""How text becomes searchable terms: CJK character by character, code as typed.

One tokenizer, registered on the index as ``voyager`` and used for queries too, so
indexing and querying can never disagree:

* Chinese, Japanese (kanji, kana, the long-vowel mark) and Korean (Hangul) become
  one token per character. A query of n such characters is a phrase of n adjacent
  positions, so ``数据`` matches "数据库" and never "数字和据点": exact substring
  search for any length, including the two-character queries trigram indexes cannot
  answer.
* Runs of other letters, digits, marks and ``_`` are one token (``ERR_VOYAGER_00012``,
  ``my_var``), so identifiers match exactly and a neighbour id does not.
* Every other non-space character is a token of its own (``.``, ``/``, ``+``, ``-``),
  so ``src/store/db.py``, ``foo.bar()``, ``c++`` and ``--no-verify`` are phrases that
  keep their punctuation instead of collapsing into common words.
* Text is NFKC-normalized in Python before Tantivy sees it (full-width ``ＡＢＣ１２３``
  is ``ABC123``) and lower-cased by the analyzer.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

TOKENIZER_NAME = "voyager"

# Scripts written without spaces between words. Kept as one class so the Rust regex
# below and the Python snippet matcher agree on what a "CJK character" is.
_CJK_CLASS = r"\p{Han}\p{Hiragana}\p{Katakana}\p{Hangul}\x{30FC}\x{3005}\x{3006}\x{3007}"

#: The Rust-regex the Tantivy tokenizer applies: a CJK char | a word run | one symbol.
TOKEN_PATTERN = (
    "[" + _CJK_CLASS + "]"
    + r"|[\p{L}\p{N}\p{M}_--[" + _CJK_CLASS + "]]+"
    + r"|[^\s\p{L}\p{N}\p{M}_]"
)

#: Longest token kept (bytes); longer runs (base64 blobs, minified code) are dropped
#: from the index rather than bloating the term dictionary.
MAX_TOKEN_BYTES = 200


def normalize(text: str) -> str:
    """NFKC-normalize ``text`` (full-width forms, compatibility characters) for indexing and querying."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)


def build_analyzer():  # -> tantivy.TextAnalyzer
    """The TextAnalyzer registered under ``TOKENIZER_NAME`` on every opened index."""
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.regex(TOKEN_PATTERN))
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .build()
    )


@lru_cache(maxsize=1)
def _analyzer():
    return build_analyzer()


def tokens(text: str) -> list[str]:
    """The terms ``text`` produces, exactly as the index sees them."""
    return _analyzer().analyze(normalize(text))
