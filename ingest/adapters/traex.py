"""The TRAE CLI 2.0 adapter: ``~/.trae/cli/{sessions,archived_sessions}/**/rollout-*.jsonl`` (documented).

TRAE CLI 2.0 (``traex``, also installed as ``traecli``/``trae-cli``) is ByteDance's closed-source fork
of Codex's Rust CLI: peers' readers (agentsview's ``traex.go``) parse its rollouts with their Codex
parser unchanged (``session_meta``, ``response_item``, ``event_msg``, ``turn_context``; its
``originator`` still says ``codex-tui``), only under its own home, ``~/.trae/cli`` (no variable of
its own is documented), with the dated ``sessions/YYYY/MM/DD/`` tree and the flat
``archived_sessions/`` that ``traex archive`` moves a rollout to. It keeps no ``session_index.jsonl``
(its ``history.jsonl`` repeats prompts, like Codex's: not read). Everything is
:class:`~._codex_read.CodexRead`'s; what is TRAE's is its ids (``traex:`` sessions never collide with
Codex's), its label and ``traex resume <id>``. Not run here: the CLI needs a TRAE login.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import ClassVar

from voyager_sessions.ingest.adapters._codex_read import CodexRead
from voyager_sessions.ingest.adapters.base import Cursor, Item, Source
from voyager_sessions.ingest.adapters.codex import CodexAdapter

PROVIDER = "traex"


class TraeXRead(CodexRead):
    """A TRAE CLI rollout: Codex's reader with TRAE's ids, label and program."""

    provider = PROVIDER
    label: ClassVar[str] = "TRAE CLI"
    binary: ClassVar[str] = "traex"


class TraeXAdapter(CodexAdapter):
    """TRAE CLI's rollouts under ``~/.trae/cli``."""

    name: ClassVar[str] = PROVIDER
    home: ClassVar[str] = PROVIDER

    def read(self, source: Source, cursor: Cursor | None = None) -> Iterator[Item]:
        return TraeXRead(source, cursor).run()


ADAPTER = TraeXAdapter()
