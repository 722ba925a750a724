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
