"""OpenCode adapter: every storage shape OpenCode has shipped, read-only, into Sessions and Events.

This package owns recognising each shape *by its tables and columns* and turning it into
Voyager's model; nothing else in Voyager knows these layouts (``docs/opencode.md``). Its
parts:

``schema``      the storage generations as values, and detecting which a database holds
``db``          the SQLite reader (one read transaction, one session at a time, only what changed)
``tree``        the early ``storage/`` JSON tree
``emit``        parts, content items and provider rows -> Events (shared by both readers)
``signature``   what a rescan remembers per session (typed records in the cursor)
``product``     which agent of the family a store belongs to (OpenCode, Kilo Code CLI)
``calling``     which session is calling an MCP tool now (the manifest's ``running-tool`` caller way)

Anything unrecognised is ``unknown-schema``; a file SQLite cannot read is ``unreadable``.
Both are reported as a fatal ``Notice`` from ``read`` (never as "0 sessions"), and
:func:`probe` names the shape for ``voyager doctor``.

Read-only is a contract, not a habit: databases open through
:func:`voyager_sessions.ingest.sqlite.connect_readonly` (``mode=ro``, ``query_only``, and
``immutable`` only when there is no ``-wal`` to hide).
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from pathlib import Path

from voyager_sessions.ingest.adapters.base import Cursor, Item, Notice, Source
from voyager_sessions.ingest.adapters.opencode import signature
from voyager_sessions.ingest.adapters.opencode.calling import calling_session
from voyager_sessions.ingest.adapters.opencode.db import read_db
from voyager_sessions.ingest.adapters.opencode.product import OPENCODE, Product
from voyager_sessions.ingest.adapters.opencode.schema import MIGRATION_KEY, SHAPES, detect_shape
from voyager_sessions.ingest.adapters.opencode.tree import read_tree, tree_fingerprint
from voyager_sessions.ingest.sqlite import connect_readonly, read_schema, sqlite_source

__all__ = [
    "ADAPTER",
    "MIGRATION_KEY",
    "SHAPES",
    "OpenCodeAdapter",
    "Product",
    "calling_session",
    "connect_readonly",
    "detect_shape",
    "probe",
    "tree_fingerprint",
]


def probe(path: str | os.PathLike[str]) -> str:
    """Name the storage shape at ``path`` (a database file or a ``storage/`` directory), for ``voyager doctor``."""
    p = Path(path)
    if os.path.isdir(p):
        return "json" if os.path.isdir(p / "session") or os.path.isdir(p / "session_diff") else "unknown-schema"
    if not os.path.isfile(p):
        return "unreadable"
    schema = read_schema(p)
    return "unreadable" if schema is None else detect_shape(schema)


class OpenCodeAdapter:
    """Discovers one agent's database(s) and JSON tree and streams their sessions, read-only.

    One instance per :class:`Product`: OpenCode, and agents that kept its storage (Kilo).
    """

    def __init__(self, product: Product) -> None:
        self.product = product
        self.name = product.name

    def roots(self, env: Mapping[str, str]) -> list[Path]:
        override = self.product.named_db(env)
        if override is not None:
            return [override]
        home = self.product.data_dir(env)
        return [home / self.product.db_name, home / "storage"]

    def discover(self, env: Mapping[str, str]) -> Iterator[Source | Notice]:
        override = self.product.named_db(env)
        if override is not None:
            # Authoritative: an operator-named database must not lead to reading the default one.
            yield from sqlite_source(self.name, override, named=True)
            return
        home = self.product.data_dir(env)
        yield from sqlite_source(self.name, home / self.product.db_name)
        storage = home / "storage"
        if any(os.path.isdir(storage / d) for d in self.product.session_dirs):
            fp = tree_fingerprint(storage, self.product.session_dirs)
            yield Source(provider=self.name, path=str(storage), fingerprint=fp)

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        """Every session of ``source`` (Session first, then its events, seq from 0).

        For a database, the final Cursor records each session's signature; given that cursor
        back, sessions whose rows did not change are reported ``Unchanged`` instead of being
        read again. The JSON tree is always read whole.
        """
        if os.path.isdir(source.path):
            yield from read_tree(source, self.product)
        else:
            known = signature.load(cursor.state.get("sessions")) if cursor is not None else None
            yield from read_db(source, self.product, known)


ADAPTER = OpenCodeAdapter(OPENCODE)
