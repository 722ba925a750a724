"""The iCodeMate adapter: an OpenCode fork, ``~/.local/share/icodemate`` (documented), read by the OpenCode reader.

iCodeMate keeps OpenCode's storage in its own data dir, as MiMo Code does: ``icodemate.db``
(OpenCode's tables), or the JSON tree under ``storage/`` whose sessions' descriptions sit in
``storage/session_diff/<project>/ses_*.json``. The evidence is agentsview's ``icodemate.go`` and
``discovery.go`` (OpenCode's reader with those names changed), not a real install. What is
iCodeMate's here is one :class:`~voyager_sessions.ingest.adapters.opencode.Product`: its name, its
homes (``VOYAGER_ICODEMATE_HOME`` / ``VOYAGER_ICODEMATE_DB``, ``$XDG_DATA_HOME/icodemate``) and
those names. No resume command is known.
"""

from __future__ import annotations

from voyager_sessions.ingest.adapters.opencode import OpenCodeAdapter, Product, probe

__all__ = ["ADAPTER", "ICODEMATE", "probe"]

ICODEMATE = Product(
    name="icodemate",
    label="iCodeMate",
    home="icodemate",
    db_override="icodemate.db",
    db_name="icodemate.db",
    binary=None,
    dir_argument=False,
    session_dirs=("session_diff", "session"),
)

ADAPTER = OpenCodeAdapter(ICODEMATE)
