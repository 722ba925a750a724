"""How text becomes searchable terms: CJK character by character, code as typed.

One rule, applied identically to indexed text and to queries (``prepare`` then the
analyzer registered on the index as ``voyager``), so the two can never disagree:

* Every character from U+0800 up is a token by itself. That is all of Chinese,
  Japanese (kanji, kana, the long-vowel mark) and Korean (Hangul), and the other
  scripts written without spaces (Thai, Lao, Khmer, Myanmar). A query of n such
  characters is a phrase of n adjacent positions, so ``数据`` matches "数据库" and
  never "数字和据点": exact substring search at any length, including the
  two-character queries trigram indexes cannot answer. (Symbols in that range —
  dashes, quotes, arrows, emoji — are single tokens as well.)
* Below U+0800 (Latin, Greek, Cyrillic, Hebrew, Arabic …), runs of letters, digits,
  combining marks and ``_`` are one token (``ERR_VOYAGER_00012``, ``my_var``,
  ``naïve``), so identifiers match exactly and a neighbour id does not.
* Every other non-space character is a token of its own (``.``, ``/``, ``+``, ``-``,
  ``«``, ``،``), so ``src/store/db.py``, ``foo.bar()``, ``c++`` and ``--no-verify`` are
  phrases that keep their punctuation instead of collapsing into common words.
* Text is NFKC-normalized (full-width ``ＡＢＣ１２３`` is ``ABC123``, half-width kana
  are full-width) and lower-cased.

Why the work is split this way: Tantivy's regex tokenizer costs about 500 ns per
token, and per-character CJK text is mostly tokens. ``prepare`` instead puts a space
around every token that is not a word run, using only whole-buffer byte operations
(``bytes.translate`` to see which separators occur, one ``bytes.replace`` per
separator that does, one regex scan for a wide character glued to a word), and the
index's own tokenizer just splits on whitespace. Indexing the bench's CJK-heavy
session went from ~0.9 to ~0.25 CPU-seconds in Tantivy for ~0.19 s in Python.
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

TOKENIZER_NAME = "voyager"

#: Longest token kept (bytes); longer runs (base64 blobs, minified code) are dropped
#: from the index rather than bloating the term dictionary.
MAX_TOKEN_BYTES = 200

#: Characters from here up are one token each (the UTF-8 encodings of 3 and 4 bytes).
WIDE_FROM = 0x800

#: Bytes that never start a separate token: ASCII word characters, ASCII whitespace,
#: and UTF-8 continuation bytes. Deleting them leaves the bytes that might (ASCII
#: symbols and the lead bytes of multi-byte characters), in far fewer bytes.
_QUIET = bytes(
    sorted(
        set(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_ \t\n\r\x0b\x0c")
        | set(range(0x80, 0xC0))
    )
)
#: ASCII symbol byte -> the same byte with a space on each side.
_ASCII_SPACED = {b: b" " + bytes((b,)) + b" " for b in range(0x80) if b not in _QUIET}

#: Lead bytes of the 3- and 4-byte UTF-8 sequences (characters from U+0800 up), each
#: with a space put in front of it.
_WIDE_LEADS = bytes(range(0xE0, 0xF5))
_WIDE_SPACED = tuple((bytes((b,)), b" " + bytes((b,))) for b in _WIDE_LEADS)

#: A wide character followed directly by a word character (``用pytest``): the one
#: boundary a byte replacement cannot see, since it lies after the character's
#: continuation bytes. (A regex over the text is cheaper here than over its bytes.)
_WIDE_THEN_WORD = re.compile("([\u0800-\U0010ffff])(?=[0-9A-Za-z_\u0080-\u07ff])")


@lru_cache(maxsize=1)
def _symbols_by_lead() -> dict[int, tuple[tuple[bytes, bytes], ...]]:
    """Two-byte UTF-8 symbols (not a letter, digit, mark or space), grouped by lead byte.

    Built on first use (a few hundred microseconds), so a search over ASCII pays nothing.
    """
    groups: dict[int, list[tuple[bytes, bytes]]] = {}
    for code in range(0x80, WIDE_FROM):
        ch = chr(code)
        if unicodedata.category(ch)[0] in "LNM" or ch.isspace():
            continue
        enc = ch.encode()
        groups.setdefault(enc[0], []).append((enc, b" " + enc + b" "))
    return {lead: tuple(pairs) for lead, pairs in groups.items()}


def normalize(text: str) -> str:
    """NFKC-normalize ``text`` (full-width forms, compatibility characters) for indexing and querying."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)


def split_tokens(text: str) -> str:
    """``text`` with a space around every token that is not a word run (see the module rules).

    Splitting the result on whitespace gives exactly the tokens (before lower-casing
    and the length cap). Returns ``text`` itself when there is nothing to separate.
    """
    # A lone surrogate (undecodable input some providers write) becomes "?": Tantivy
    # only takes valid Unicode.
    data = text.encode("utf-8", "replace")
    present = data.translate(None, _QUIET)
    if not present:
        return text
    narrow = present.translate(None, _WIDE_LEADS)
    if len(narrow) != len(present):
        # A space after each wide character that is glued to what follows (``用pytest``)...
        parts = _WIDE_THEN_WORD.split(text)
        if len(parts) > 1:
            parts[1::2] = [ch + " " for ch in parts[1::2]]
            data = "".join(parts).encode("utf-8", "replace")
        # ...and before every wide character, one pass per lead byte that occurs.
        for lead, spaced in _WIDE_SPACED:
            if lead in present:
                data = data.replace(lead, spaced)
    for byte in set(narrow):
        if byte < 0x80:
            data = data.replace(bytes((byte,)), _ASCII_SPACED[byte])
        else:
            for enc, spaced in _symbols_by_lead().get(byte, ()):
                if enc in data:
                    data = data.replace(enc, spaced)
    return data.decode()


def prepare(text: str) -> str:
    """What the index's tokenizer is given for ``text``: normalized, then split."""
    return split_tokens(normalize(text))


def build_analyzer():  # -> tantivy.TextAnalyzer
    """The TextAnalyzer registered under ``TOKENIZER_NAME``: it expects ``prepare``d text."""
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .build()
    )


@lru_cache(maxsize=1)
def analyzer():  # -> tantivy.TextAnalyzer
    """The one analyzer of this process (built once: indexes register it, queries use it)."""
    return build_analyzer()


def tokens(text: str) -> list[str]:
    """The terms ``text`` produces, exactly as the index sees them."""
    return analyzer().analyze(prepare(text))
