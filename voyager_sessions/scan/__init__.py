"""The scan: the application layer that moves data from the adapters into the index and the state store.

It sits above ``ingest`` (formats), ``search`` (Tantivy) and ``store`` (SQL) and is the
only code that moves data between them: :mod:`.plan` decides what to read,
:mod:`.source_read` turns one source's stream into index documents and state rows,
:mod:`.run` orders the commits, :mod:`.workers` reads sources on other processes and
:mod:`.chunks` carries their streams back. See :func:`scan`.
"""

from __future__ import annotations

from typing import Any

__all__ = ["ScanSummary", "Skipped", "scan"]


def __getattr__(name: str) -> Any:
    # Loaded on first use: a search reads how far a scan has got (``.progress``) without importing the scan.
    if name == "scan":
        from voyager_sessions.scan.run import scan

        return scan
    if name in ("ScanSummary", "Skipped"):
        from voyager_sessions.scan import summary

        return getattr(summary, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
