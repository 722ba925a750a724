"""How text becomes searchable terms: CJK character by character, code as typed.

One rule, applied identically to indexed text and to queries (``prepare`` then the
analyzer registered on the index as ``voyager``), so the two can never disagree:

* Characters of scripts written without spaces are tokens by themselves: Chinese,
  Japanese (kanji, kana, the long-vowel mark), Korean (Hangul), Yi, and Thai, Lao,
  Tibetan, Myanmar, Khmer and Tai scripts (``UNSPACED``), and with them everything
  from U+3000 up (CJK blocks, Hangul syllables, emoji, and a few rare scripts such as
  Vai or Meetei Mayek, which then search as substrings). A query of n such
  characters is a phrase of n adjacent positions, so ``数据`` matches "数据库" and
  never "数字和据点": exact substring search at any length, including the
  two-character queries trigram indexes cannot answer.
* Runs of other letters, digits, combining marks and ``_`` are one token
  (``ERR_VOYAGER_00012``, ``my_var``, ``naïve``, ``Việt``, ``हिन्दी``), so identifiers
  and words match exactly and a neighbour id does not.
* Every other character that is not whitespace is a token of its own (``.``, ``/``,
  ``+``, ``-``, ``«``, ``،``, ``—``, emoji), so ``src/store/db.py``, ``foo.bar()``,
  ``c++`` and ``--no-verify`` are phrases that keep their punctuation instead of
  collapsing into common words. Whitespace is Unicode's (``\\v``, U+0085, U+2028 …).
* Text is NFKC-normalized (full-width ``ＡＢＣ１２３`` is ``ABC123``, half-width kana
  are full-width) and lower-cased.
* Whitespace between two characters from U+3000 up leaves an empty position between them
  (:data:`GAP`, a token the analyzer drops), so ``가나`` never matches ``가 나`` and ``据库``
  never matches ``数据 库`` or ``数据\n库``: characters of unspaced scripts are adjacent in the
  index only where nothing separates them in the text (issue #34).

Why the work is split this way: Tantivy's regex tokenizer costs about 500 ns per
token, and per-character CJK text is mostly tokens. ``prepare`` instead puts a space
around every token that is not a word run, mostly with whole-buffer byte operations
(``bytes.translate`` to see which separators occur, one ``bytes.replace`` per
separator that does; a CJK character glued to a word is found by a ``translate`` into
byte classes and a substring search, and a regex scan is left only for the few blocks
that mix letters and symbols), and the index's own tokenizer just splits on ASCII
whitespace. Indexing the bench's CJK-heavy session went from ~0.9 to ~0.25
CPU-seconds in Tantivy for ~0.1 s in Python (texts prepared in batches:
``prepare_many``).
"""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Literal, overload

if TYPE_CHECKING:  # imported where the analyzer is built: preparing text needs none of it
    import tantivy

TOKENIZER_NAME = "voyager"

#: Tokens of this many bytes or more (base64 blobs, minified code) are dropped from the
#: index rather than bloating the term dictionary (Tantivy's remove_long keeps shorter ones).
MAX_TOKEN_BYTES = 200

#: Scripts written without spaces between words, below U+3000 (from U+3000 up, every
#: character is a token by itself anyway).
UNSPACED: tuple[tuple[int, int], ...] = (
    (0x0E00, 0x0EFF),  # Thai, Lao
    (0x0F00, 0x0FFF),  # Tibetan
    (0x1000, 0x109F),  # Myanmar
    (0x1100, 0x11FF),  # Hangul Jamo
    (0x1780, 0x17FF),  # Khmer
    (0x1950, 0x19FF),  # Tai Le, New Tai Lue, Khmer symbols
    (0x1A20, 0x1AAF),  # Tai Tham
    (0x2E80, 0x2FFF),  # CJK and Kangxi radicals, ideographic description characters
)
#: From here up, every character is a token by itself.
SOLO_FROM = 0x3000

#: Put where whitespace separates two characters from U+3000 up: a token of its own (an ASCII control, spaced like
#: any symbol) that the analyzer drops as a stop word, so its position stays empty and the characters on either
#: side are not adjacent. The same character in a session's text (nothing a person searches for) is dropped too.
GAP = "\x1f"

#: Unicode's White_Space characters (Tantivy's whitespace tokenizer knows only ASCII's).
WHITESPACE = frozenset("\t\n\v\f\r \x85\xa0\u1680\u2028\u2029\u202f\u205f\u3000") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)


@lru_cache(maxsize=8192)
def is_word_char(ch: str) -> bool:
    """A character that joins its neighbours into one token: ``_``, or a letter, digit or mark of a spaced script.

    Cached: snippets ask it about the characters around every match of every shown event (a handful of distinct
    characters, asked thousands of times a search)."""
    if ch == "_":
        return True
    code = ord(ch)
    if code >= SOLO_FROM:
        return False
    if unicodedata.category(ch)[0] not in "LNM":
        return False
    return not any(lo <= code <= hi for lo, hi in UNSPACED)


# -- the fast path: bytes ---------------------------------------------------------

#: Bytes that never start a separate token: ASCII word characters, the ASCII whitespace
#: Tantivy splits on, and UTF-8 continuation bytes. Deleting them leaves the bytes
#: that might (ASCII symbols and the lead bytes of multi-byte characters).
_QUIET = bytes(
    sorted(set(b"0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ_ \t\n\r\x0c") | set(range(0x80, 0xC0)))
)
#: ASCII symbol byte -> the byte with a space on each side (vertical tab -> a space).
_ASCII_SPACED = {b: b" " + bytes((b,)) + b" " for b in range(0x80) if b not in _QUIET}
_ASCII_SPACED[0x0B] = b" "
#: Lead bytes of the characters from U+3000 up: every one is a token, so a space goes
#: in front of each.
_SOLO_LEAD_BYTES = bytes(range(0xE3, 0xF5))
_SOLO_LEADS = frozenset(_SOLO_LEAD_BYTES)
_SOLO_LEAD_ONE = tuple((lead, bytes((lead,))) for lead in _SOLO_LEAD_BYTES)
#: Lead bytes of U+0800–U+2FFF, where letters of spaced scripts and symbols mix.
_MIXED_LEADS = frozenset((0xE0, 0xE1, 0xE2))
_IDEOGRAPHIC_SPACE = "\u3000".encode()


#: Each UTF-8 byte's part in a CJK character glued to what follows it (``用pytest``), or in whitespace beside
#: one (``用 pytest``): a lead byte of a character from U+3000 up (``S``), a continuation byte (``c``), the
#: first byte of a character from U+0021 to U+2FFF (``G``, what a glued character may be), ASCII whitespace
#: (``w``), anything else (``.``: controls, which need no separation).
_GLUE_CLASS = bytes(
    ord("S")
    if b >= 0xE3
    else ord("c")
    if 0x80 <= b < 0xC0
    else ord("G")
    if 0x21 <= b < 0x80 or 0xC2 <= b < 0xE3
    else ord("w")
    if b in b" \t\n\r\x0b\x0c"
    else ord(".")
    for b in range(256)
)
#: A character from U+3000 up (3 or 4 bytes) directly followed by one below it: the
#: boundary a byte replacement cannot see, since it lies after the continuation bytes.
_GLUED = ((b"SccG", 3), (b"ScccG", 4))

#: Every ASCII whitespace byte to a space (the index's tokenizer splits on any of them alike).
_TO_SPACE = bytes(0x20 if b in b"\t\n\r\x0b\x0c" else b for b in range(256))
#: A marked whitespace class (``g``) to what turns a space into :data:`GAP` by XOR; every other class to 0.
_GAP_XOR = bytes(0x20 ^ ord(GAP) if b == ord("g") else 0 for b in range(256))


#: A run of 1 to :data:`GAP_RUN` whitespace bytes between two characters from U+3000 up, in classes (the end of
#: one, ``cc``; the start of the next, ``S``), and the same with its first byte marked (``g``).
GAP_RUN = 4
_GAP_MARKS = tuple((b"cc" + b"w" * k + b"S", b"ccg" + b"w" * (k - 1) + b"S") for k in range(1, GAP_RUN + 1))


def _gaps(data: bytes, classes: bytes) -> tuple[bytes, bytes]:
    """``data`` with the first byte of every run of whitespace between two characters from U+3000 up made a
    :data:`GAP` (and the rest of the run spaces), and its classes (``_GLUE_CLASS``, the gaps as ``g``: what
    ``_unglue`` reads). ``classes``: ``data``'s.

    Without a step per match (Korean text has a run between two words every few characters; a regex or a loop over
    them cost 4x the whole of ``prepare``): the runs are found by byte replacements in the class string (``ccwS``:
    the end of a character, a space, the start of one; up to :data:`GAP_RUN` whitespace bytes: a space, a line
    break, ``\\r\\n``, a blank line) and put into the text by one XOR of the two as integers. One gap a run: a
    quoted ``"数据 库"`` matches the text ``数据\\n库``, and ``数据  库`` too. A longer run (deep indentation between
    two lines of CJK text) is left as it was. Text with no whitespace after such a character (Chinese and Japanese
    are written without spaces) costs two substring searches."""
    if b"ccw" not in classes or b"wS" not in classes:
        return data, classes
    marked = classes
    for run, mark in _GAP_MARKS:
        marked = marked.replace(run, mark)
    if marked is classes:  # bytes.replace gives the same object back when nothing matched
        return data, classes
    # A character from U+3000 up is 3 or 4 bytes, so ``cc`` ends it (or one of U+0800-U+2FFF: a gap between an
    # arrow and a CJK character changes no search); the replacements never overlap, so every run is marked.
    n = len(data)
    if marked.count(b"g") * _SPARSE_GAPS < n:  # a few (CJK words among others): the text cut at each, no pass over all
        pieces: list[bytes] = []
        prev = 0
        at = marked.find(b"g")
        while at >= 0:
            pieces += (data[prev:at], _GAP_BYTE)
            prev = at + 1
            at = marked.find(b"g", prev)
        pieces.append(data[prev:])
        return b"".join(pieces), marked
    mask = marked.translate(_GAP_XOR)
    spaced = data.translate(_TO_SPACE)
    return (int.from_bytes(spaced, "big") ^ int.from_bytes(mask, "big")).to_bytes(n, "big"), marked


#: Below one gap in this many bytes, the text is cut at each gap rather than XORed whole (the cut costs a step a gap,
#: the XOR five passes over every byte).
_SPARSE_GAPS = 256
_GAP_BYTE = GAP.encode()


def _unglue(data: bytes, classes: bytes) -> bytes:
    """``data`` with a space after every character from U+3000 up that is followed directly by one
    from U+0021 to U+2FFF. Mostly a ``translate`` (``classes``, shared with ``_gaps``) and two substring
    searches over the text (no regex step per character): in CJK text such a boundary is rare, and most batches
    have none."""
    if b"cG" not in classes:  # no multi-byte character is followed directly by a glue-able one: the usual case
        return data
    cuts: list[int] = []
    for pattern, width in _GLUED:
        at = classes.find(pattern)
        while at >= 0:
            cuts.append(at + width)
            at = classes.find(pattern, at + width)
    if not cuts:
        return data
    cuts.sort()
    pieces = []
    prev = 0
    for cut in cuts:
        pieces.append(data[prev:cut])
        prev = cut
    pieces.append(data[prev:])
    return b" ".join(pieces)


@lru_cache(maxsize=1)
def _mixed_solo() -> re.Pattern[str]:
    """U+0800–U+2FFF's characters that are tokens by themselves. Built on first use (~5 ms)."""
    unspaced = {c for lo, hi in UNSPACED for c in range(lo, hi + 1)}
    category = unicodedata.category
    codes = [
        c
        for c in range(0x800, SOLO_FROM)
        if (c in unspaced or category(chr(c))[0] not in "LNM") and chr(c) not in WHITESPACE
    ]
    ranges: list[str] = []
    start = prev = codes[0]
    for c in (*codes[1:], -1):
        if c != prev + 1:
            ranges.append(f"\\u{start:04x}" if start == prev else f"\\u{start:04x}-\\u{prev:04x}")
            start = c
        prev = c
    return re.compile("([" + "".join(ranges) + "])")


@lru_cache(maxsize=1)
def _two_byte_table() -> dict[int, tuple[tuple[bytes, bytes], ...]]:
    """Two-byte characters (U+0080–U+07FF) that are not word characters, by lead byte:
    symbols get a space on each side, whitespace becomes a space. Built on first use."""
    groups: dict[int, list[tuple[bytes, bytes]]] = {}
    for code in range(0x80, 0x800):
        ch = chr(code)
        if is_word_char(ch):
            continue
        enc = ch.encode()
        groups.setdefault(enc[0], []).append((enc, b" " if ch in WHITESPACE else b" " + enc + b" "))
    return {lead: tuple(pairs) for lead, pairs in groups.items()}


def normalize(text: str) -> str:
    """NFKC-normalize ``text`` (full-width forms, compatibility characters) for indexing and querying."""
    if text.isascii():
        return text
    return unicodedata.normalize("NFKC", text)


def split_tokens(text: str) -> str:
    """``text`` with a space around every token that is not a word run (see the module rules).

    Splitting the result on ASCII whitespace gives exactly the tokens (before
    lower-casing and the length cap). Returns ``text`` itself when there is nothing to
    separate.
    """
    out = _split(text)
    return out.decode() if isinstance(out, bytes) else out


def _split(text: str) -> str | bytes:
    """``split_tokens(text)``, as the UTF-8 bytes it was made of when no step needed it as text again (most
    of the time: a caller that wants bytes, like the scan's workers, then skips a decode and an encode)."""
    # A lone surrogate (undecodable input some providers write) becomes "?": Tantivy
    # only takes valid Unicode.
    data = text.encode("utf-8", "replace")
    present = data.translate(None, _QUIET)
    if not present:
        return text
    # Which separator bytes occur. CJK text is mostly lead bytes of a few kinds: look for
    # those one by one (a memchr each) and make a set of the rest only, which is short.
    rest = present.translate(None, _SOLO_LEAD_BYTES)
    kinds = set(rest)
    if len(rest) < len(present):
        kinds.update(lead for lead, one in _SOLO_LEAD_ONE if one in present)
    if not kinds.isdisjoint(_SOLO_LEADS):
        if 0xE3 in kinds and _IDEOGRAPHIC_SPACE in data:
            data = data.replace(_IDEOGRAPHIC_SPACE, b" ")
        # Before any space is put in: from here on, whitespace next to such a character is no longer only the text's.
        data, classes = _gaps(data, data.translate(_GLUE_CLASS))
        if b"g" in classes:
            kinds.add(ord(GAP))
        data = _unglue(data, classes)
        for lead in kinds & _SOLO_LEADS:
            data = data.replace(bytes((lead,)), b" " + bytes((lead,)))
    for byte in kinds:
        if byte < 0x80:
            data = data.replace(bytes((byte,)), _ASCII_SPACED[byte])
        elif byte < 0xE0:
            for enc, spaced in _two_byte_table().get(byte, ()):
                if enc in data:
                    data = data.replace(enc, spaced)
    if kinds.isdisjoint(_MIXED_LEADS):
        return data
    out = data.decode()
    if 0xE1 in kinds or 0xE2 in kinds:
        for ws in WHITESPACE:
            if ws >= "\u1680" and ws in out:
                out = out.replace(ws, " ")
    return " ".join(_mixed_solo().split(out))


def prepare(text: str) -> str:
    """What the index's tokenizer is given for ``text``: normalized, then split."""
    return split_tokens(normalize(text))


#: Joins the texts of one ``prepare_many`` pass. An ASCII control character that is not
#: whitespace: ``prepare`` spaces it like any symbol, and it composes with nothing under
#: NFKC, so the joined result splits back at exactly these spaced separators.
_BATCH_SEP = "\x1e"


#: ``prepare_many`` joins texts up to about this many characters (bounds the joined copies' memory).
BATCH_CHARS = 32 * 1024


@overload
def prepare_many(texts: list[str], *, utf8: Literal[True]) -> list[bytes]: ...
@overload
def prepare_many(texts: list[str], *, utf8: Literal[False] = False) -> list[str]: ...
def prepare_many(texts: list[str], *, utf8: bool = False) -> list[str] | list[bytes]:
    """``prepare`` of each text, in few passes over them all: the same tokens, for ~20 % less time.

    Much of ``prepare``'s cost on short CJK-heavy texts is per call (a translate, a
    set, a regex scan and a replace per lead byte present, for every event), so texts
    are joined by a separator up to ``BATCH_CHARS``, prepared at once and split apart.
    Only the whitespace around tokens may differ from ``prepare``'s. With ``utf8`` the
    results are UTF-8 bytes (what a scan worker sends on), mostly without ever being
    decoded into text.
    """
    out: list[Any] = []
    group: list[str] = []
    size = 0
    for text in texts:
        if group and size + len(text) > BATCH_CHARS:
            out += _prepare_joined(group, utf8)
            group, size = [], 0
        group.append(text)
        size += len(text) + 1
    if group:
        out += _prepare_joined(group, utf8)
    return out


def _prepare_joined(texts: list[str], utf8: bool) -> list[Any]:
    if len(texts) < 2 or any(_BATCH_SEP in t for t in texts):  # a text holding the separator goes alone
        return [_prepared(t, utf8) for t in texts]
    # Split at the separator alone (one character: the fast split); the spaces ``prepare`` put
    # around it stay at the ends of the texts, where they separate nothing.
    done = _prepared(_BATCH_SEP.join(texts), utf8)
    out: list[Any] = done.split(b"\x1e") if isinstance(done, bytes) else done.split(_BATCH_SEP)
    if len(out) != len(texts):  # cannot happen by the rule above; never index a misaligned batch
        return [_prepared(t, utf8) for t in texts]
    return out


def _prepared(text: str, utf8: bool) -> str | bytes:
    out = _split(normalize(text))
    if utf8:
        return out if isinstance(out, bytes) else out.encode()
    return out.decode() if isinstance(out, bytes) else out


# -- identifier parts ---------------------------------------------------------------

#: Each byte's part in an ASCII identifier: ``a`` a small letter or digit, ``A`` a capital, ``_``, `` `` ASCII
#: whitespace (where tokens end in ``prepare``d text), ``.`` anything else. A case change inside a word shows as
#: ``aA`` (``invoiceBatch``) or ``AAa`` (``RAMPercentage``).
_CASE = bytes(
    ord("a")
    if chr(b).islower() or chr(b).isdigit()
    else ord("A")
    if chr(b).isupper()
    else ord("_")
    if b == 0x5F
    else ord(" ")
    if b in b" \t\n\r\x0b\x0c"
    else ord(".")
    for b in range(256)
)
#: The words after an ``_`` (applied to the text reversed too, the words before one): a whole run of ASCII letters
#: and digits not followed by a non-ASCII letter (``naïve_x`` gives no ``ve``). Nothing is asserted before the
#: ``_``: a pattern that starts with a plain character is searched for by skipping to it, ten times faster than one
#: that starts with a lookbehind, so the word after ``_`` in ``ü_bung`` is a part (rare in identifiers).
_AFTER_UNDERSCORE = re.compile(rb"_([A-Za-z0-9]+)(?![A-Za-z0-9\x80-\xff])")
#: Where an ASCII word splits further: a small letter or digit before a capital, and an acronym's last capital
#: before a capitalised word (``Max|RAM|Percentage``).
_CAMEL = re.compile(rb"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
#: Parts shorter than this are not indexed (``e`` of ``E_VOY_4217``, ``i`` of ``iPhone``): nothing a person searches.
MIN_PART = 2


def identifier_parts(prepared: bytes) -> bytes:
    """The words of the identifiers in ``prepared`` (``prepare``'s output, as UTF-8) that are made of several:
    ``invoice_batch_writer`` -> ``batch invoice writer``, ``MaxRAMPercentage`` -> ``max percentage ram``,
    ``E_VOY_4217`` -> ``4217 voy``; lower-cased, each once, space-separated (b"" when there is none).

    An identifier here is a run of ASCII letters, digits and ``_`` with ``_`` between two of its characters or a
    change of case inside (``snake_case``, ``camelCase``, ``SCREAMING_CASE``); kebab, dotted and path parts are
    tokens of their own already. The index gets the parts in a field of their own (``parts``), so ``batch`` finds
    ``invoice_batch_writer`` while the whole identifier stays one term of ``body``.

    Cost, the scan pays it for every event: every word beside an ``_`` is found by a search that starts at the
    ``_`` (forwards, then over the text reversed: two C-level passes, no step per byte); a case change by one
    ``translate`` and substring searches, a word a case change. Then only the distinct words are split."""
    words: set[bytes] = set()
    if b"_" in prepared:
        words.update(_AFTER_UNDERSCORE.findall(prepared))
        words.update(w[::-1] for w in set(_AFTER_UNDERSCORE.findall(prepared[::-1])))
    if prepared.islower():  # no capital at all (bytes.islower: ASCII only): no case changes either
        return _joined_parts(words)
    cases = prepared.translate(_CASE)
    # An acronym before a capitalised word (AAa: HTTPServer) is looked for only in text where a small letter meets a
    # capital (aA) somewhere: code that names things in camelCase (a search for it costs as much as for aA).
    for change in (b"aA", b"AAa") if b"aA" in cases else ():
        at = cases.find(change)
        while at >= 0:
            start = cases.rfind(b" ", 0, at) + 1
            end = cases.find(b" ", at)
            end = len(cases) if end < 0 else end
            # The whole word when it is ASCII letters and digits (an identifier's part); its words when it holds _.
            word = cases[start:end]
            if b"." not in word:
                words.update(w for w in prepared[start:end].split(b"_") if w)
            at = cases.find(change, end)
    return _joined_parts(words)


def _joined_parts(words: set[bytes]) -> bytes:
    """The words of ``words`` split further where their case changes, lower-cased, each once, space-separated."""
    if not words:
        return b""
    out = {
        piece.lower()
        for word in words
        for piece in ((word,) if word.islower() or word.isupper() or word.isdigit() else _CAMEL.split(word))
        if len(piece) >= MIN_PART
    }
    return b" ".join(sorted(out))


def build_analyzer() -> tantivy.TextAnalyzer:
    """The TextAnalyzer registered under ``TOKENIZER_NAME``: it expects ``prepare``d text. Tokens it drops (too
    long, :data:`GAP`) keep their positions empty."""
    import tantivy

    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.whitespace())
        .filter(tantivy.Filter.remove_long(MAX_TOKEN_BYTES))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.custom_stopword([GAP]))
        .build()
    )


@lru_cache(maxsize=1)
def analyzer() -> tantivy.TextAnalyzer:
    """The one analyzer of this process (built once: indexes register it, queries use it)."""
    return build_analyzer()


def tokens(text: str) -> list[str]:
    """The terms ``text`` produces, exactly as the index sees them."""
    return analyzer().analyze(prepare(text))


def positioned(text: str) -> list[tuple[int, str]]:
    """The terms ``text`` produces with their positions, as the index sees them: consecutive, but where a token was
    dropped (a :data:`GAP`, a token too long), whose position stays empty."""
    prepared = prepare(text)
    terms = analyzer().analyze(prepared)
    words = prepared.encode().split()  # the whitespace tokenizer's split: ASCII whitespace
    if len(words) == len(terms):
        return list(enumerate(terms))
    out: list[tuple[int, str]] = []
    for pos, word in enumerate(words):
        kept = analyzer().analyze(word.decode())
        if kept:
            out.append((pos, kept[0]))
    return out
