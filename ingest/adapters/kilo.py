"""Kilo Code CLI adapter: OpenCode's storage in Kilo's own data dir, read by the OpenCode reader.

Kilo Code CLI (observed 7.7.9) is a fork of OpenCode and keeps the same tables, in
``kilo.db`` under ``$XDG_DATA_HOME/kilo`` (``~/.local/share/kilo``). It adds tables of its
own (``kilo_board``, ``kilo_board_message``: ``kilo_board.objective`` repeats the first
prompt) which the reader never opens, so nothing is indexed twice. What is Kilo's here is
one :class:`~voyager_sessions.ingest.adapters.opencode.Product`: its name, where it
lives (``VOYAGER_KILO_HOME`` / ``VOYAGER_KILO_DB`` override, see the manifest's homes (``ingest/manifest.py``))
and how a session resumes (``kilo --session <id>``, run in the session's directory).
"""

from __future__ import annotations

from voyager_sessions.ingest.adapters.opencode import OpenCodeAdapter, Product, probe

__all__ = ["ADAPTER", "KILO", "probe"]

KILO = Product(
    name="kilo",
    label="Kilo Code CLI",
    home="kilo",
    db_override="kilo.db",
    db_name="kilo.db",
    binary="kilo",
    dir_argument=False,
    evidence="observed",
    versions=("7.7.9",),
)

ADAPTER = OpenCodeAdapter(KILO)
