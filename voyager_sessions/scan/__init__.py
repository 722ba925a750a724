"""The scan: the application layer that moves data from the adapters into the index and the state store.

It sits above ``ingest`` (formats), ``search`` (Tantivy) and ``store`` (SQL) and is the
only code that moves data between them: :mod:`.plan` decides what to read,
:mod:`.source_read` turns one source's stream into index documents and state rows,
:mod:`.run` orders the commits, :mod:`.workers` reads sources on other processes and
:mod:`.chunks` carries their streams back. See :func:`scan`.
"""

from voyager_sessions.scan.run import scan
from voyager_sessions.scan.summary import ScanSummary, Skipped

__all__ = ["ScanSummary", "Skipped", "scan"]
