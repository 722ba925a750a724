"""The application's read side: search, list, show, stats and session resolving, as documents.

Every front end (the click CLI, the lean ``voyager search`` path, ``voyager serve`` and
``voyager mcp``) answers through these functions, so their answers are the same
documents (the JSON contract's Structs) whichever way a request came. This is where the
layers meet: the search engine is handed the state store as its session catalog and
the registry's provider names; ``show`` reads capped texts back through the adapters.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec

from voyager_sessions.errors import StoreError, UserError
from voyager_sessions.model import SCHEMA_VERSION, SearchResult, SessionList, SessionRecord, Timeline, session_row
from voyager_sessions.paths import DataDir

#: What a command that needs the index says when there is none.
NO_INDEX = "no index yet: run `voyager scan` (or `voyager demo` to try it)"


def require_index(ddir: DataDir) -> None:
    """Raise the one-line "no index yet" error unless a scan has written an index."""
    if not ddir.has_index():
        raise UserError(NO_INDEX)


def check_query(query: str) -> None:
    """Raise the one-line "bad query" UserError when ``query`` is malformed (before any work is done for it)."""
    from voyager_sessions.search.query import QueryError, parse

    try:
        parse(query)
    except QueryError as exc:
        raise UserError(f"bad query: {exc}") from None


def provider_names() -> tuple[str, ...]:
    """Every registered provider, in registry order (what ``provider:`` accepts)."""
    from voyager_sessions.ingest.adapters import PROVIDERS

    return PROVIDERS


class Reader:
    """The index and the state store opened for reading: one per request, or several a server keeps.

    ``shared``: a server's reader, lent to one request thread at a time (see
    ``voyager_sessions.serve.fresh.ReaderPool``).
    """

    def __init__(self, ddir: DataDir, *, shared: bool = False) -> None:
        from voyager_sessions.search.engine import Searcher
        from voyager_sessions.search.index import SearchIndex
        from voyager_sessions.store.state import StateStore

        self.ddir = ddir
        self.index = SearchIndex(ddir.index, create=False)
        try:
            # Reading never writes: a read-only connection keeps search working on a full disk.
            self.state = StateStore(ddir.state_db, readonly=True, lendable=shared)
        except StoreError:  # a schema upgrade is due: the one write a read may need
            self.state = StateStore(ddir.state_db, lendable=shared)
        self.searcher = Searcher(self.index, self.state, provider_names())

    def close(self) -> None:
        self.state.close()

    def reload(self) -> None:
        """See what was committed since this reader opened (a server calls it after a scan)."""
        self.index.index.reload()

    # -- the documents ------------------------------------------------------------

    def search(self, query: str, opts: Any = None) -> SearchResult:
        """The hits of ``query`` (``opts``: ``search.engine.SearchOptions``); a one-line UserError when it is malformed."""
        from voyager_sessions.search.query import QueryError

        try:
            return self.searcher.search(query, opts)
        except QueryError as exc:  # a filter's value is checked only here (provider:, since: …)
            raise UserError(f"bad query: {exc}") from None

    def list_sessions(self, *, provider: str | None = None, limit: int | None = 50, offset: int = 0) -> SessionList:
        total, recs = self.state.list_sessions(provider=provider, limit=limit, offset=offset)
        return SessionList(schema_version=SCHEMA_VERSION, total=total, sessions=[session_row(r) for r in recs])

    def resolve(self, ref: str) -> SessionRecord:
        """The one session ``ref`` names (id, native id or unambiguous prefix), or a one-line UserError."""
        ids = resolve_ids(self.state, ref)
        return self.state.sessions_by_id(ids)[ids[0]]

    def show(self, ref: str, *, around: int | None = None, window: int = 10) -> Timeline:
        """A session's timeline (or the window of ``window`` events each side of seq ``around``)."""
        from voyager_sessions.search.index import TRUNCATION_MARKER

        rec = self.resolve(ref)
        sid = rec.session.id
        lo = hi = None
        if around is not None:
            lo, hi = max(0, around - window), around + window
        events = self.index.session_events(sid, lo=lo, hi=hi)
        suffix = TRUNCATION_MARKER.rpartition("; ")[2]  # how a capped event's stored text ends
        capped = {e.seq for e in events if e.text.endswith(suffix) and e.seq >= 0}
        if capped and rec.session.source:
            from voyager_sessions.ingest.reread import full_texts

            texts = full_texts(rec.session.provider, rec.session.source, sid, capped)
            events = [msgspec.structs.replace(e, text=texts[e.seq]) if e.seq in texts else e for e in events]
        return Timeline(schema_version=SCHEMA_VERSION, session=session_row(rec), events=events)

    def stats(self) -> dict[str, Any]:
        counts = self.state.counts()
        last = self.state.last_scan()
        return {
            "schema_version": SCHEMA_VERSION,
            "data_dir": str(self.ddir.root),
            "providers": {p: {"sessions": s, "events": e or 0} for p, s, e in counts},
            "index_events": self.index.num_events(),
            "index_bytes": self.index.size_bytes(),
            "index_segments": self.index.num_segments(),
            "last_scan": None if last is None else {"finished": last[1], "summary": msgspec.json.decode(last[2])},
        }


@contextmanager
def reader(ddir: DataDir | Path) -> Iterator[Reader]:
    """A :class:`Reader` for one request; "no index yet" when there is none."""
    ddir = ddir if isinstance(ddir, DataDir) else DataDir(ddir)
    require_index(ddir)
    r = Reader(ddir)
    try:
        yield r
    finally:
        r.close()


def resolve_ids(catalog: Any, ref: str) -> list[str]:
    """The one id ``ref`` names, as a one-element list; a one-line UserError when it names none or several."""
    ids = catalog.resolve_session(ref)
    if not ids:
        raise UserError(f"no session matches '{ref}' (see `voyager list`)")
    if len(ids) > 1:
        raise UserError(f"'{ref}' is ambiguous: {', '.join(ids[:10])}{' …' if len(ids) > 10 else ''}; give more of the id")
    return ids


def search(data_dir: DataDir | Path, query: str, opts: Any = None) -> SearchResult:
    """Run one query against the index in ``data_dir``; a one-line UserError for a malformed query."""
    with reader(data_dir) as r:
        return r.search(query, opts)


def doctor(ddir: DataDir, env: Any) -> dict[str, Any]:
    """``voyager doctor``'s document: every agent (where Voyager looked, what it found and could not use) and health."""
    from voyager_sessions.errors import IndexDamaged
    from voyager_sessions.ingest.diagnose import diagnose
    from voyager_sessions.store.db import integrity

    from voyager_sessions.ingest.adapters.base import Hints

    indexed: dict[str, tuple[int, int]] = {}
    idx = None
    failed: dict[str, list[str]] = {}
    noted: dict[str, list[str]] = {}
    hints = Hints()
    health: dict[str, object] = {"data_dir": str(ddir.root), "index": "missing", "state_db": "missing"}
    if ddir.has_index():
        from voyager_sessions.search.index import SearchIndex
        from voyager_sessions.store.state import StateStore

        store = StateStore(ddir.state_db)
        try:
            indexed = {p: (s, e or 0) for p, s, e in store.counts()}
            failed = store.failed_sources()
            noted = store.noted_sources()
            hints = Hints(cwds=frozenset(store.known_cwds()), imports=frozenset(store.imports()))
        finally:
            store.close()
        health["state_db"] = integrity(ddir.state_db)
        try:
            idx = SearchIndex(ddir.index, create=False)
        except IndexDamaged as exc:
            health["index"] = str(exc)
            idx = None
    if idx is not None:
        state_events = sum(e for _, e in indexed.values())
        num_events = idx.num_events()
        # Checkpoint and title events are Voyager's own, not counted in the scan state.
        index_events = num_events - idx.count_kind("checkpoint") - idx.count_kind("title")
        health.update(index="ok" if index_events == state_events else
                      f"out of step: {index_events} events indexed, the scan state says {state_events} "
                      "(the next scan repairs it; `voyager scan`)",
                      index_events=num_events, index_segments=idx.num_segments(), index_bytes=idx.size_bytes())
    if ddir.checkpoints_db.exists():
        health["checkpoints_db"] = integrity(ddir.checkpoints_db)
    from voyager_sessions.ingest import zstd

    # Which agents' stores can be decompressed at all (the adapters name each store it blocks).
    health["zstd"] = zstd.backend() or f"not installed: install {zstd.INSTALL_HINT} to read DeepSeek Harness and Zed sessions"
    return {"schema_version": SCHEMA_VERSION, "providers": diagnose(env, indexed, failed, noted, hints), "health": health}


def imports(ddir: DataDir, env: Any) -> list[dict[str, Any]]:
    """``voyager import --list``: every recorded export and every file in the imports folder, with its kind
    (``chatgpt``, ``claude-ai``, or None when it is neither) and whether it is there."""
    import os

    from voyager_sessions.ingest.adapters import _exports
    from voyager_sessions.ingest.adapters.base import Hints
    from voyager_sessions.store.state import StateStore

    recorded: list[str] = []
    if ddir.state_db.exists():
        store = StateStore(ddir.state_db, readonly=True)
        try:
            recorded = store.imports()
        finally:
            store.close()
    out: list[dict[str, Any]] = []
    folder = {str(p) for p in _exports.candidates(env, Hints())}
    for path in [*recorded, *sorted(folder - set(recorded))]:
        try:
            kind = _export_kind(path) if os.path.exists(path) else None
            present = os.path.exists(path)
        except OSError:
            kind, present = None, False
        out.append({"path": path, "kind": kind, "present": present, "recorded": path in recorded})
    return out


def _export_kind(path: str) -> str | None:
    """The kind of the export at ``path``: a file's, or (a folder) its first conversations file's."""
    import os

    from voyager_sessions.ingest.adapters import _exports

    if os.path.isdir(path):
        files = _exports.conversation_files(Path(path))
        return _exports.kind_of(files[0]) if files else None
    return _exports.kind_of(path)


def import_export(ddir: DataDir, path: str, *, forget: bool = False) -> dict[str, Any]:
    """``voyager import PATH``: record a ChatGPT or Claude.ai export (``conversations.json``, its folder, or the
    zip) so every later scan reads it; ``forget`` drops it again. A path that is no export is a UserError."""
    import os

    from voyager_sessions.paths import ensure_private_dir
    from voyager_sessions.store.state import StateStore

    absolute = os.path.abspath(os.path.expanduser(path))
    if not forget:
        if not os.path.exists(absolute):
            raise UserError(f"{path}: no such file or folder")
        try:
            kind = _export_kind(absolute)
        except OSError as exc:
            raise UserError(f"{path}: cannot read it: {exc.strerror or exc}") from None
        if kind is None:
            raise UserError(f"{path}: not a ChatGPT or Claude.ai export (expected conversations.json, its folder, "
                            "or the export's .zip)")
    ensure_private_dir(ddir.root)
    store = StateStore(ddir.state_db)
    try:
        recorded = store.imports()
        if forget:
            if absolute not in recorded:
                raise UserError(f"{path}: not a recorded import (see `voyager import --list`)")
            store.set_imports([p for p in recorded if p != absolute])
            return {"path": absolute, "kind": None, "recorded": False, "already": False}
        already = absolute in recorded
        if not already:
            store.set_imports([*recorded, absolute])
    finally:
        store.close()
    return {"path": absolute, "kind": kind, "recorded": True, "already": already}
