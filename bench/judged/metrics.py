"""Scoring a ranking against one target: rank, S@1, S@5, MRR@10 per query class.

S@k is the share of queries whose target session is among the first k sessions
returned; MRR@10 the mean of 1/rank over queries, counting a target ranked below 10 (or
not returned) as 0. Pure functions, so the tests and both engines score alike.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import msgspec

#: The metrics, in the order the table and the floor file list them.
NAMES: tuple[str, ...] = ("S@1", "S@5", "MRR@10")
DEPTH = 10


def rank_of(target: str, ranked: Sequence[str]) -> int | None:
    """1-based rank of ``target`` in ``ranked`` (first occurrence) within ``DEPTH``, else None."""
    for i, key in enumerate(ranked[:DEPTH], start=1):
        if key == target:
            return i
    return None


class ClassScore(msgspec.Struct, frozen=True, kw_only=True):
    queries: int
    s1: float
    s5: float
    mrr10: float

    def get(self, name: str) -> float:
        return {"S@1": self.s1, "S@5": self.s5, "MRR@10": self.mrr10}[name]


def score(ranks: Iterable[int | None]) -> ClassScore:
    rs = list(ranks)
    n = len(rs) or 1
    return ClassScore(
        queries=len(rs),
        s1=round(sum(r == 1 for r in rs) / n, 3),
        s5=round(sum(r is not None and r <= 5 for r in rs) / n, 3),
        mrr10=round(sum(1.0 / r for r in rs if r is not None) / n, 3),
    )
