"""A session catalog that knows nothing: for tests of the engine's ranking on an index built in place."""

from __future__ import annotations


class NoCatalog:
    """No session metadata (no titles, no working directories, no recency): the ranking is all a test looks at."""

    def resolve_session(self, ref, limit=50):
        return []

    def session_ids_where(self, columns, text):
        return []

    def session_ids_titled(self, words, limit=1000):
        return []

    def sessions_by_id(self, ids):
        return {}

    def latest_of(self, ids):
        return {}

    def newest(self, ids, n):
        latest = self.latest_of(ids)  # what a test may patch
        return sorted(ids, key=lambda sid: (-latest.get(sid, 0.0), sid))[:n]


def varied_events(
    seed: int,
    sessions: int,
    prefix: str,
    words: list[str],
    *,
    least_words: int,
    events: tuple[int, int],
    most_words: int,
) -> list:
    """Sessions each drawing their events' words from their own random subset of ``words`` (``least_words`` of
    them at least), ``events`` (least, most) events a session, 1 to ``most_words`` words an event: many hold some words of a query and not others. Deterministic for ``seed``."""
    import random

    from voyager_sessions.core.model import Event

    rng = random.Random(seed)
    out = []
    for s in range(sessions):
        vocab = rng.sample(words, rng.randint(least_words, len(words)))
        for seq in range(rng.randint(*events)):
            kind = rng.choice(["user", "assistant", "tool_result"])
            out.append(
                Event(
                    session=f"claude:{prefix}{s:03d}",
                    seq=seq,
                    kind=kind,
                    origin={"user": "human", "tool_result": "tool"}.get(kind, "agent"),
                    text=" ".join(rng.choice(vocab) for _ in range(rng.randint(1, most_words))),
                    ts=1_700_000_000.0 + s * 100 + seq,
                )
            )
    return out


def sessions_read(monkeypatch) -> list[str]:
    """The sessions whose best event a search looks up (``Searcher._best_in``), appended as it does: a list the
    test reads and clears between searches."""
    from voyager_sessions.search.engine import Searcher

    read: list[str] = []
    real = Searcher._best_in

    def spy(self, s, q, sid, **kw):
        read.append(sid)
        return real(self, s, q, sid, **kw)

    monkeypatch.setattr(Searcher, "_best_in", spy)
    return read
