"""The MiMo Code adapter: Xiaomi's OpenCode fork, ``~/.local/share/mimocode`` (documented), read by the OpenCode reader.

MiMo Code keeps OpenCode's storage in its own data dir: the SQLite database ``mimocode.db``
(OpenCode's tables), or, in its file-backed layout, the JSON tree under ``storage/`` with the
sessions' descriptions in ``storage/session_diff/<project>/ses_*.json`` (where OpenCode has
``storage/session/``) and the messages and parts in ``storage/message/`` and ``storage/part/``
as OpenCode writes them. The evidence is agentsview's ``mimocode.go`` and ``discovery.go`` (its
reader is OpenCode's with those two names changed), not a real install. What is MiMo Code's here
is one :class:`~voyager_sessions.ingest.adapters.opencode.Product`: its name, its homes
(``VOYAGER_MIMOCODE_HOME`` / ``VOYAGER_MIMOCODE_DB``, ``$XDG_DATA_HOME/mimocode``) and those two
names. No resume command is known (peers name none; the fork's flags were not seen).
"""

from __future__ import annotations

from voyager_sessions.ingest.adapters.opencode import OpenCodeAdapter, Product, probe

__all__ = ["ADAPTER", "MIMOCODE", "probe"]

MIMOCODE = Product(
    name="mimocode",
    label="MiMo Code",
    home="mimocode",
    db_override="mimocode.db",
    db_name="mimocode.db",
    binary=None,
    dir_argument=False,
    session_dirs=("session_diff", "session"),
)

ADAPTER = OpenCodeAdapter(MIMOCODE)
