"""The registry of agent adapters, derived from the agent manifest: one module a provider, each exposing ``ADAPTER``.

Which agents there are, in which order, and which module reads each is declared once, in
``voyager_sessions.ingest.manifest`` (one row an agent); this package only turns a provider name into its
adapter. Modules are imported only when asked for, so a command that needs one adapter does not pay
for all of them. ``PROVIDERS`` is read from the manifest on every access, so a row added with
``manifest.register`` is a provider like the built-in ones.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from voyager_sessions.ingest import manifest

if TYPE_CHECKING:
    from voyager_sessions.ingest.adapters.base import Adapter

    #: Every provider name, in the order scans and ``doctor`` report in (the manifest's order).
    PROVIDERS: tuple[str, ...]


def get(name: str) -> Adapter:
    """The adapter for provider ``name``; KeyError if there is none."""
    return importlib.import_module(manifest.row(name).module).ADAPTER


def __getattr__(attr: str) -> object:
    if attr == "PROVIDERS":
        return manifest.names()
    raise AttributeError(f"module {__name__!r} has no attribute {attr!r}")
