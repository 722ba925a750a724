"""The judged queries: ``queries.json`` read into Structs (the file is the record; this only loads it).

Classes, in ``queries.json``: ``remembered`` (three or four words a person would remember, spread
over different messages of the target session), ``paraphrase`` (the session described in other
words, at most partly literal) and ``cjk`` (remembered words in Chinese or Japanese), from issue
#22; ``description`` (the session told at length, a sentence of 14 words or more, partly
literal), ``pasted`` (a command or a fragment of tool output pasted as it was shown),
``identifier`` (words among which some are only parts of an identifier the session holds:
``lineitem`` of ``billing_lineitem``, ``ram`` of ``MaxRAMPercentage``), ``typo`` (remembered
words, one of them mistyped) and ``cjk-description`` (the session told in one Chinese or
Japanese sentence, without spaces), from issue #34's word ranking. In
``queries-cjk-paraphrase.json``, from issue #34's meaning search: ``cjk-paraphrase`` (a Chinese
or Japanese session described in other words in its language) and ``cross-lingual`` (an English
session described in Chinese or Japanese). Every query has exactly one target, a session key of
``bench.judged.corpus``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal, get_args

import msgspec

PATH = Path(__file__).with_name("queries.json")
#: Further query files, read after ``queries.json`` (a class added in its own file merges without conflict).
MORE = (Path(__file__).with_name("queries-cjk-paraphrase.json"),)
Class = Literal[
    "remembered",
    "paraphrase",
    "cjk",
    "description",
    "pasted",
    "identifier",
    "typo",
    "cjk-description",
    "cjk-paraphrase",
    "cross-lingual",
]
#: The classes, in the order they are reported.
CLASSES: tuple[str, ...] = get_args(Class)


class JudgedQuery(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    query: str
    target: str
    # `class` is a keyword in Python: the field is named cls and encoded as "class".
    cls: Class = msgspec.field(name="class")


class QueryFile(msgspec.Struct, kw_only=True):
    about: str
    queries: list[JudgedQuery]


def load(path: Path = PATH) -> list[JudgedQuery]:
    queries = msgspec.json.decode(path.read_bytes(), type=QueryFile).queries
    if path == PATH:
        for more in MORE:
            queries += msgspec.json.decode(more.read_bytes(), type=QueryFile).queries
    return queries
