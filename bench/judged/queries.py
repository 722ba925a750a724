"""The judged queries: ``queries.json`` read into Structs (the file is the record; this only loads it).

Classes: ``remembered`` (three or four words a person would remember, spread over
different messages of the target session), ``paraphrase`` (the session described in other
words, at most partly literal) and ``cjk`` (remembered words in Chinese or Japanese), in
``queries.json``; ``cjk-paraphrase`` (a Chinese or Japanese session described in other
words in its language) and ``cross-lingual`` (an English session described in Chinese or
Japanese), in ``queries-cjk-paraphrase.json``. Every query has exactly one target, a
session key of ``bench.judged.corpus``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

import msgspec

PATH = Path(__file__).with_name("queries.json")
#: Further query files, read after ``queries.json`` (a class added in its own file merges without conflict).
MORE = (Path(__file__).with_name("queries-cjk-paraphrase.json"),)
CLASSES: tuple[str, ...] = ("remembered", "paraphrase", "cjk", "cjk-paraphrase", "cross-lingual")


class JudgedQuery(msgspec.Struct, frozen=True, kw_only=True):
    id: str
    query: str
    target: str
    # `class` is a keyword in Python: the field is named cls and encoded as "class".
    cls: Literal["remembered", "paraphrase", "cjk", "cjk-paraphrase", "cross-lingual"] = msgspec.field(name="class")


class QueryFile(msgspec.Struct, kw_only=True):
    about: str
    queries: list[JudgedQuery]


def load(path: Path = PATH) -> list[JudgedQuery]:
    queries = msgspec.json.decode(path.read_bytes(), type=QueryFile).queries
    if path == PATH:
        for more in MORE:
            queries += msgspec.json.decode(more.read_bytes(), type=QueryFile).queries
    return queries
